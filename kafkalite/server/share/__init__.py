"""Share groups on the partition leader (KIP-932): each share-partition's in-flight records and
their locks, the share sessions of ShareFetch / ShareAcknowledge, and the persister through which
a share-partition's state is read from and written to the share coordinator."""
