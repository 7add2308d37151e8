"""Request handlers by area of Kafka's apis (Kafka's KafkaApis, split): each module holds one
class whose methods answer the apis of its area. Which method answers which api, in which
versions and on which listeners, is the served-apis table (``kafkalite/server/apis.py``);
``KafkaApis`` (``kafka_apis.py``) dispatches from it.

- ``api_versions``: ApiVersions, and SASL requests that come after authentication
- ``metadata``: Metadata
- ``topics``: CreateTopics, DeleteTopics (passed to the controller)
- ``control``: LeaderAndIsr, StopReplica, UpdateMetadata (from the controller)
- ``registration``: BrokerRegistration, BrokerHeartbeat (served by the controller)
- ``isr``: AlterPartition (served by the controller)
- ``configs``: DescribeConfigs
- ``produce``, ``fetch``, ``offsets``: Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords
- ``producers``: InitProducerId, AllocateProducerIds; ``producers_state``: DescribeProducers
- ``groups``: FindCoordinator and the classic group and offset apis
- ``transactions``: the transaction coordinator's apis; ``txn_markers``: WriteTxnMarkers;
  ``txn_offsets``: TxnOffsetCommit
- ``cluster``: DescribeCluster; ``topic_partitions``: DescribeTopicPartitions; ``log_dirs``:
  DescribeLogDirs; ``elections``: ElectLeaders (on the controller's broker); ``reassignments``:
  AlterPartitionReassignments, ListPartitionReassignments (on the controller's broker)
"""
