"""Java's arithmetic where Kafka's behaviour depends on it: which partition of __consumer_offsets
holds a group (and of __transaction_state a transactional id), which fetcher thread follows a
partition."""

from __future__ import annotations


def java_string_hash(s: str) -> int:
    """Java's String.hashCode, over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: str, num_partitions: int) -> int:
    """Kafka's coordinators' partitionFor: Utils.abs(key.hashCode) % partitions, where Utils.abs
    maps Integer.MIN_VALUE to 0."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions
