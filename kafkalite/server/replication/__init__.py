"""Replication (Kafka's ReplicaManager and Partition): the partitions this broker holds, their
leaders' ISR and high watermark, the follower's fetcher threads and the AlterPartition channel."""
