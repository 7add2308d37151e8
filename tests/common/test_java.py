"""Java's String.hashCode, as Kafka computes partitions and fetcher ids with it."""

from __future__ import annotations

from kafkalite.common.java import java_string_hash


def test_java_string_hash_is_javas():
    # Values of String.hashCode() in Java.
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00  # a surrogate pair: two UTF-16 units
