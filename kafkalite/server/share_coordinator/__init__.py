"""The share coordinator (KIP-932): the state of share-partitions kept on ``__share_group_state``
(settings.py, state.py, coordinator.py, state_topic.py), and the broker's client of it, the
``DefaultStatePersister`` (persister.py) a share-partition's leader reads and writes through."""
