"""Where a group lives in __consumer_offsets: the partition Kafka picks for it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkalite.server.coordinator.offsets_topic import java_string_hash, partition_for


def test_java_string_hash_is_javas():
    # Values of String.hashCode() in Java.
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00  # a surrogate pair: two UTF-16 units


def test_partition_for_is_kafkas():
    assert partition_for("hello", 50) == 22
    assert partition_for("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0


@given(st.text(max_size=40), st.integers(1, 200))
def test_every_group_has_one_partition_in_range(group, partitions):
    assert 0 <= partition_for(group, partitions) < partitions
