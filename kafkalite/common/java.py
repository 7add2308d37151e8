"""Java's arithmetic where Kafka's behaviour depends on it: which partition of __consumer_offsets
holds a group, which fetcher thread follows a partition."""

from __future__ import annotations


def java_string_hash(s: str) -> int:
    """Java's String.hashCode, over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h
