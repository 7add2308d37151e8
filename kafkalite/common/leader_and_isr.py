"""Kafka's LeaderAndIsr constants and sentinels (Kafka's LeaderAndIsr object), shared by the
controller that sends them and the broker that applies them."""

from __future__ import annotations

INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0
NO_LEADER = -1
NO_EPOCH = -1  # Kafka's LeaderAndIsr.NoEpoch
LEADER_DURING_DELETE = -2  # Kafka's LeaderAndIsr.LeaderDuringDelete
EPOCH_DURING_DELETE = -2  # Kafka's LeaderAndIsr.EpochDuringDelete
UNKNOWN_BROKER_EPOCH = -1  # a request that does not know the receiver's broker epoch
