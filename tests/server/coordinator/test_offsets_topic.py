"""Where a group lives in __consumer_offsets: the partition Kafka picks for it (by Java's
String.hashCode, tests/common/test_java.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkalite.server.coordinator.offsets_topic import partition_for


def test_partition_for_is_kafkas():
    assert partition_for("hello", 50) == 22
    assert partition_for("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0


@given(st.text(max_size=40), st.integers(1, 200))
def test_every_group_has_one_partition_in_range(group, partitions):
    assert 0 <= partition_for(group, partitions) < partitions
