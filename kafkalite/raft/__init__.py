"""KRaft: the Raft quorum of controllers over the ``__cluster_metadata`` log (KIP-595, KIP-630,
KIP-996). ``messages`` holds the requests and responses as the Raft logic sees them (no wire
format); ``node`` the I/O-free RaftNode; ``manager`` the thread that drives it over the network."""
