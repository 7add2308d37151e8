"""The error-code table: one row per code, unique codes and names, Kafka's values and flags."""

from __future__ import annotations

import pytest

from kafkalite.protocol import error_codes as E


def test_codes_are_unique_and_contiguous():
    codes = [e.code for e in E.ERROR_CODES]
    assert len(codes) == len(set(codes))
    assert codes == list(range(-1, max(codes) + 1))  # Kafka has no gaps from -1 up


def test_names_are_unique():
    names = [e.name for e in E.ERROR_CODES]
    assert len(names) == len(set(names))


def test_lookups_cover_the_table():
    assert len(E.BY_CODE) == len(E.BY_NAME) == len(E.ERROR_CODES)
    for e in E.ERROR_CODES:
        assert E.BY_CODE[e.code] is e
        assert E.BY_NAME[e.name] is e


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (-1, "UNKNOWN_SERVER_ERROR"),
        (0, "NONE"),
        (3, "UNKNOWN_TOPIC_OR_PARTITION"),
        (6, "NOT_LEADER_OR_FOLLOWER"),
        (11, "STALE_CONTROLLER_EPOCH"),
        (17, "INVALID_TOPIC_EXCEPTION"),
        (35, "UNSUPPORTED_VERSION"),
        (36, "TOPIC_ALREADY_EXISTS"),
        (41, "NOT_CONTROLLER"),
        (42, "INVALID_REQUEST"),
        (44, "POLICY_VIOLATION"),
        (74, "FENCED_LEADER_EPOCH"),
        (77, "STALE_BROKER_EPOCH"),
        (89, "THROTTLING_QUOTA_EXCEEDED"),
        (100, "UNKNOWN_TOPIC_ID"),
        (103, "INCONSISTENT_TOPIC_ID"),
    ],
)
def test_spot_checks(code, name):
    assert E.BY_CODE[code].name == name
    assert E.BY_NAME[name].code == code


@pytest.mark.parametrize(
    ("name", "retriable"),
    [
        ("UNKNOWN_SERVER_ERROR", False),
        ("NONE", False),
        ("UNKNOWN_TOPIC_OR_PARTITION", True),
        ("LEADER_NOT_AVAILABLE", True),
        ("NOT_LEADER_OR_FOLLOWER", True),
        ("REQUEST_TIMED_OUT", True),
        ("BROKER_NOT_AVAILABLE", False),
        ("STALE_CONTROLLER_EPOCH", False),
        ("NOT_CONTROLLER", True),
        ("UNSUPPORTED_VERSION", False),
        ("TOPIC_ALREADY_EXISTS", False),
        ("INVALID_REPLICATION_FACTOR", False),
        ("CONCURRENT_TRANSACTIONS", True),
        ("KAFKA_STORAGE_ERROR", True),
        ("FENCED_LEADER_EPOCH", True),
        ("STALE_BROKER_EPOCH", False),
        ("THROTTLING_QUOTA_EXCEEDED", True),
        ("PRODUCER_FENCED", False),
        ("UNKNOWN_TOPIC_ID", True),
        ("INCONSISTENT_TOPIC_ID", True),
    ],
)
def test_retriable_flags(name, retriable):
    assert E.BY_NAME[name].retriable is retriable


def test_int_constants_match_the_table():
    names = [
        "NONE", "UNKNOWN_SERVER_ERROR", "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE",
        "NOT_LEADER_OR_FOLLOWER", "STALE_CONTROLLER_EPOCH", "NOT_CONTROLLER", "UNSUPPORTED_VERSION",
        "TOPIC_ALREADY_EXISTS", "INVALID_PARTITIONS", "INVALID_REPLICATION_FACTOR",
        "INVALID_REPLICA_ASSIGNMENT", "INVALID_CONFIG", "INVALID_REQUEST", "INVALID_TOPIC_EXCEPTION",
        "STALE_BROKER_EPOCH", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH", "POLICY_VIOLATION",
        "CLUSTER_AUTHORIZATION_FAILED", "TOPIC_AUTHORIZATION_FAILED", "REQUEST_TIMED_OUT",
        "BROKER_NOT_AVAILABLE", "INCONSISTENT_TOPIC_ID", "UNKNOWN_TOPIC_ID",
        "THROTTLING_QUOTA_EXCEEDED",
    ]
    for name in names:
        value = getattr(E, name)
        assert type(value) is int
        assert value == E.BY_NAME[name].code
    assert (E.NONE, E.UNSUPPORTED_VERSION, E.NOT_CONTROLLER) == (0, 35, 41)


def test_unknown_code_reads_as_unknown_server_error():
    assert E.for_code(32000).name == "UNKNOWN_SERVER_ERROR"
    assert E.for_code(41).name == "NOT_CONTROLLER"


def test_messages_are_present():
    assert E.BY_NAME["NONE"].message == ""
    assert all(e.message for e in E.ERROR_CODES if e.code != 0)
