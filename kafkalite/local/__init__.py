"""A local cluster's own pieces: the settings its brokers share (settings.py, used by
kafkalite.testing too), ``kafkalite cluster``'s broker processes (processes.py), and a cluster's
faults over HTTP for ``kafkalite fault`` (fault_admin.py)."""
