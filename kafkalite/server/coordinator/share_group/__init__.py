"""Share groups' membership on the group coordinator (KIP-932): ShareGroupHeartbeat and
ShareGroupDescribe (``manager.py``), the group and member model (``group.py``) and the ``simple``
assignor (``assignor.py``)."""
