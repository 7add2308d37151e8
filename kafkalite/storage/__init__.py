"""Kafka's log of a partition on Kafka's own file formats (org.apache.kafka.storage.internals.log).

No network code and no threads: the broker calls in from its handler threads and schedules the
retention check itself.

Modules, lowest first: ``files`` (names of files and directories), ``config`` (LogConfig),
``errors``, ``checkpoint`` (Kafka's checkpoint files and the clean shutdown marker), ``index``
(OffsetIndex, TimeIndex), ``leader_epoch`` (LeaderEpochFileCache), ``segment`` (LogSegment),
``producer_state`` (ProducerStateManager: idempotent producers' epochs and sequences, snapshots),
``log`` (the segments of one partition), ``log_manager`` (the logs of every log dir).
"""
