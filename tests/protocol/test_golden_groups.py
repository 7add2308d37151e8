"""Golden bytes for the offset and coordinator apis' old, non-flexible versions (OffsetCommit 0-7,
OffsetFetch 0-5, FindCoordinator 0-2, ListGroups 0-2), among them the ones kio (Kafka 4.0's
versions) lacks: OffsetCommit 0-1 and OffsetFetch 0, which old librdkafka and kafka-python send.
From an independent implementation: kafka-python's hand-written encoders
(``kafka.protocol.old.commit``, ``.find_coordinator``, ``.admin``), not generated from Kafka's JSON
specs as kafkalite's declarations and kio are. OffsetDelete (one version, in kio) by hand.

Each case is one value written twice, once for kafkalite and once for kafka-python's class of that
version: kafkalite writes kafka-python's bytes, reads them back as the same value, and kafka-python
reads kafkalite's bytes back as its own value. Null strings (committed metadata, an error message,
a group instance id) are -1 lengths on both sides.
"""

from __future__ import annotations

import pytest
from kafka.protocol.old import admin as kp_admin
from kafka.protocol.old import commit as kp_commit
from kafka.protocol.old import find_coordinator as kp_find_coordinator

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.errors import EncodeError
from kafkalite.protocol.messages import (
    find_coordinator,
    list_groups,
    offset_commit,
    offset_delete,
    offset_fetch,
)

from .golden_bytes import check_kp_golden, i16, i32, i64, kp_case, s16

TS = 1_700_000_000_000  # a commit timestamp (OffsetCommit v1)


def _commit_topic(name, *partitions):
    return offset_commit.OFFSET_COMMIT_REQUEST_TOPIC(name=name, partitions=[
        offset_commit.OFFSET_COMMIT_REQUEST_PARTITION(**p) for p in partitions])


def _fetched_topic(name, *partitions):
    return offset_fetch.OFFSET_FETCH_RESPONSE_TOPIC(name=name, partitions=[
        offset_fetch.OFFSET_FETCH_RESPONSE_PARTITION(**p) for p in partitions])


CASES = [
    # --- OffsetCommit (8) ---
    *kp_case(
        ApiKey.OFFSET_COMMIT, [0], False,
        offset_commit.REQUEST(group_id="g", topics=[
            _commit_topic("t", dict(partition_index=0, committed_offset=42, committed_metadata="m"),
                          dict(partition_index=1, committed_offset=7, committed_metadata=None))]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", topics=[("t", [(0, 42, "m"), (1, 7, None)])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [1], False,
        offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=3, member_id="m-1", topics=[
            _commit_topic("t", dict(partition_index=0, committed_offset=42, commit_timestamp=TS,
                                    committed_metadata=""),
                          dict(partition_index=2, committed_offset=0, commit_timestamp=-1,
                               committed_metadata=None))]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", generation_id_or_member_epoch=3, member_id="m-1",
             topics=[("t", [(0, 42, TS, ""), (2, 0, -1, None)])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [2, 3, 4], False,
        offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=-1, member_id="",
                              retention_time_ms=86_400_000, topics=[
                                  _commit_topic("t", dict(partition_index=0, committed_offset=42,
                                                          committed_metadata=None)),
                                  _commit_topic("u")]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", generation_id_or_member_epoch=-1, member_id="", retention_time_ms=86_400_000,
             topics=[("t", [(0, 42, None)]), ("u", [])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [5], False,
        offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=5, member_id="m-1", topics=[
            _commit_topic("t", dict(partition_index=1, committed_offset=9, committed_metadata=""))]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", generation_id_or_member_epoch=5, member_id="m-1", topics=[("t", [(1, 9, "")])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [6], False,
        offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=5, member_id="m-1", topics=[
            _commit_topic("t", dict(partition_index=1, committed_offset=9, committed_leader_epoch=4,
                                    committed_metadata="x"),
                          dict(partition_index=2, committed_offset=3, committed_leader_epoch=-1,
                               committed_metadata=None))]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", generation_id_or_member_epoch=5, member_id="m-1",
             topics=[("t", [(1, 9, 4, "x"), (2, 3, -1, None)])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [7], False,
        offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=5, member_id="m-1",
                              group_instance_id="i-1", topics=[
                                  _commit_topic("t", dict(partition_index=0, committed_offset=1,
                                                          committed_leader_epoch=2, committed_metadata=""))]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", generation_id_or_member_epoch=5, member_id="m-1", group_instance_id="i-1",
             topics=[("t", [(0, 1, 2, "")])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [7], False,
        offset_commit.REQUEST(group_id="g", generation_id_or_member_epoch=5, member_id="m-1",
                              group_instance_id=None, topics=[]),
        kp_commit.OffsetCommitRequest,
        dict(group_id="g", generation_id_or_member_epoch=5, member_id="m-1", group_instance_id=None,
             topics=[]),
        "OffsetCommit-null-instance",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [0, 1, 2], True,
        offset_commit.RESPONSE(topics=[offset_commit.OFFSET_COMMIT_RESPONSE_TOPIC(name="t", partitions=[
            offset_commit.OFFSET_COMMIT_RESPONSE_PARTITION(partition_index=0, error_code=0),
            offset_commit.OFFSET_COMMIT_RESPONSE_PARTITION(partition_index=1, error_code=22)])]),
        kp_commit.OffsetCommitResponse,  # 22: ILLEGAL_GENERATION
        dict(topics=[("t", [(0, 0), (1, 22)])]),
        "OffsetCommit",
    ),
    *kp_case(
        ApiKey.OFFSET_COMMIT, [3, 4, 5, 6, 7], True,
        offset_commit.RESPONSE(throttle_time_ms=12, topics=[offset_commit.OFFSET_COMMIT_RESPONSE_TOPIC(
            name="t", partitions=[offset_commit.OFFSET_COMMIT_RESPONSE_PARTITION(
                partition_index=0, error_code=25)])]),  # UNKNOWN_MEMBER_ID
        kp_commit.OffsetCommitResponse,
        dict(throttle_time_ms=12, topics=[("t", [(0, 25)])]),
        "OffsetCommit",
    ),
    # --- OffsetFetch (9) ---
    *kp_case(
        ApiKey.OFFSET_FETCH, [0, 1, 2, 3, 4, 5], False,
        offset_fetch.REQUEST(group_id="g", topics=[
            offset_fetch.OFFSET_FETCH_REQUEST_TOPIC(name="t", partition_indexes=[0, 1]),
            offset_fetch.OFFSET_FETCH_REQUEST_TOPIC(name="u", partition_indexes=[])]),
        kp_commit.OffsetFetchRequest,
        dict(group_id="g", topics=[("t", [0, 1]), ("u", [])]),
        "OffsetFetch",
    ),
    *kp_case(
        ApiKey.OFFSET_FETCH, [0, 1], True,
        offset_fetch.RESPONSE(topics=[_fetched_topic(
            "t", dict(partition_index=0, committed_offset=42, metadata="m", error_code=0),
            dict(partition_index=1, committed_offset=-1, metadata=None, error_code=0))]),
        kp_commit.OffsetFetchResponse,
        dict(topics=[("t", [(0, 42, "m", 0), (1, -1, None, 0)])]),
        "OffsetFetch",
    ),
    *kp_case(
        ApiKey.OFFSET_FETCH, [2], True,
        offset_fetch.RESPONSE(topics=[_fetched_topic(
            "t", dict(partition_index=0, committed_offset=42, metadata="", error_code=0))], error_code=0),
        kp_commit.OffsetFetchResponse,
        dict(topics=[("t", [(0, 42, "", 0)])], error_code=0),
        "OffsetFetch",
    ),
    *kp_case(
        ApiKey.OFFSET_FETCH, [3, 4], True,
        offset_fetch.RESPONSE(throttle_time_ms=0, topics=[], error_code=14),  # COORDINATOR_LOAD_IN_PROGRESS
        kp_commit.OffsetFetchResponse,
        dict(throttle_time_ms=0, topics=[], error_code=14),
        "OffsetFetch",
    ),
    *kp_case(
        ApiKey.OFFSET_FETCH, [5], True,
        offset_fetch.RESPONSE(throttle_time_ms=3, topics=[_fetched_topic(
            "t", dict(partition_index=0, committed_offset=42, committed_leader_epoch=7, metadata="m",
                      error_code=0),
            dict(partition_index=1, committed_offset=-1, committed_leader_epoch=-1, metadata=None,
                 error_code=0))], error_code=0),
        kp_commit.OffsetFetchResponse,
        dict(throttle_time_ms=3, topics=[("t", [(0, 42, 7, "m", 0), (1, -1, -1, None, 0)])], error_code=0),
        "OffsetFetch",
    ),
    # --- FindCoordinator (10) ---
    *kp_case(
        ApiKey.FIND_COORDINATOR, [0], False,
        find_coordinator.REQUEST(key="g"),
        kp_find_coordinator.FindCoordinatorRequest, dict(key="g"), "FindCoordinator",
    ),
    *kp_case(
        ApiKey.FIND_COORDINATOR, [1, 2], False,
        find_coordinator.REQUEST(key="tx-1", key_type=1),
        kp_find_coordinator.FindCoordinatorRequest, dict(key="tx-1", key_type=1), "FindCoordinator",
    ),
    *kp_case(
        ApiKey.FIND_COORDINATOR, [0], True,
        find_coordinator.RESPONSE(error_code=0, node_id=2, host="broker-2", port=9092),
        kp_find_coordinator.FindCoordinatorResponse,
        dict(error_code=0, node_id=2, host="broker-2", port=9092),
        "FindCoordinator",
    ),
    *kp_case(
        ApiKey.FIND_COORDINATOR, [1, 2], True,
        find_coordinator.RESPONSE(throttle_time_ms=0, error_code=15, error_message="not yet",
                                  node_id=-1, host="", port=-1),  # COORDINATOR_NOT_AVAILABLE
        kp_find_coordinator.FindCoordinatorResponse,
        dict(throttle_time_ms=0, error_code=15, error_message="not yet", node_id=-1, host="", port=-1),
        "FindCoordinator",
    ),
    *kp_case(
        ApiKey.FIND_COORDINATOR, [1, 2], True,
        find_coordinator.RESPONSE(throttle_time_ms=5, error_code=0, error_message=None,
                                  node_id=1, host="localhost", port=19092),
        kp_find_coordinator.FindCoordinatorResponse,
        dict(throttle_time_ms=5, error_code=0, error_message=None, node_id=1, host="localhost", port=19092),
        "FindCoordinator-null-message",
    ),
    # --- ListGroups (16) ---
    *kp_case(
        ApiKey.LIST_GROUPS, [0, 1, 2], False,
        list_groups.REQUEST(),
        kp_admin.ListGroupsRequest, dict(), "ListGroups",
    ),
    *kp_case(
        ApiKey.LIST_GROUPS, [0], True,
        list_groups.RESPONSE(error_code=0, groups=[
            list_groups.LISTED_GROUP(group_id="g", protocol_type="consumer"),
            list_groups.LISTED_GROUP(group_id="h", protocol_type="")]),
        kp_admin.ListGroupsResponse,
        dict(error_code=0, groups=[("g", "consumer"), ("h", "")]),
        "ListGroups",
    ),
    *kp_case(
        ApiKey.LIST_GROUPS, [1, 2], True,
        list_groups.RESPONSE(throttle_time_ms=1, error_code=0, groups=[
            list_groups.LISTED_GROUP(group_id="g", protocol_type="consumer")]),
        kp_admin.ListGroupsResponse,
        dict(throttle_time_ms=1, error_code=0, groups=[("g", "consumer")]),
        "ListGroups",
    ),
]


@pytest.mark.parametrize(("api_key", "version", "response", "value", "kp"), CASES)
def test_golden_from_kafka_python(api_key, version, response, value, kp):
    check_kp_golden(api_key, version, response, value, kp)


def test_every_kafka_python_version_is_covered():
    """Every version kafka-python hand-writes for these apis has a case, request and response
    (by position in its lists: its ListGroupsRequest v2 class says API_VERSION 1)."""
    kp_lists = {
        ApiKey.OFFSET_COMMIT: (kp_commit.OffsetCommitRequest, kp_commit.OffsetCommitResponse),
        ApiKey.OFFSET_FETCH: (kp_commit.OffsetFetchRequest, kp_commit.OffsetFetchResponse),
        ApiKey.FIND_COORDINATOR: (kp_find_coordinator.FindCoordinatorRequest,
                                  kp_find_coordinator.FindCoordinatorResponse),
        ApiKey.LIST_GROUPS: (kp_admin.ListGroupsRequest, kp_admin.ListGroupsResponse),
    }
    covered = {(c.values[0], c.values[1], c.values[2]) for c in CASES}
    wanted = {(key, v, bool(response))
              for key, lists in kp_lists.items()
              for response, classes in enumerate(lists) for v in range(len(classes))}
    assert wanted == covered


def test_offset_commit_v1_request_by_hand():
    """The commit timestamp (v1 only) sits between the offset and the metadata; no retention time
    before v2, no leader epoch before v6, no group instance id before v7."""
    body = encode_body(ApiKey.OFFSET_COMMIT, 1, offset_commit.REQUEST(
        group_id="g", generation_id_or_member_epoch=3, member_id="m", group_instance_id="ignored",
        retention_time_ms=99, topics=[_commit_topic("t", dict(
            partition_index=0, committed_offset=5, committed_leader_epoch=8, commit_timestamp=TS,
            committed_metadata=None))]))
    assert body == (s16("g") + i32(3) + s16("m")
                    + i32(1) + s16("t") + i32(1) + i32(0) + i64(5) + i64(TS) + i16(-1))


def test_offset_fetch_null_topics_from_v2_only():
    """v2+: null topics, for every partition the group has offsets for; v0-1 cannot say it."""
    value = offset_fetch.REQUEST(group_id="g", topics=None)
    for v in (2, 3, 4, 5):
        expected = kp_commit.OffsetFetchRequest[v](group_id="g", topics=None).encode()
        assert encode_body(ApiKey.OFFSET_FETCH, v, value) == expected == s16("g") + i32(-1)
        assert decode_body(ApiKey.OFFSET_FETCH, v, expected) == value
    for v in (0, 1):
        with pytest.raises(EncodeError):
            encode_body(ApiKey.OFFSET_FETCH, v, value)


def test_offset_delete_v0_by_hand():
    """The response's top-level error code comes before its throttle time."""
    request = offset_delete.REQUEST(group_id="g", topics=[offset_delete.OFFSET_DELETE_REQUEST_TOPIC(
        name="t", partitions=[offset_delete.OFFSET_DELETE_REQUEST_PARTITION(partition_index=i)
                              for i in (0, 2)])])
    request_bytes = s16("g") + i32(1) + s16("t") + i32(2) + i32(0) + i32(2)
    assert encode_body(ApiKey.OFFSET_DELETE, 0, request) == request_bytes
    assert decode_body(ApiKey.OFFSET_DELETE, 0, request_bytes) == request
    response = offset_delete.RESPONSE(error_code=0, throttle_time_ms=4, topics=[
        offset_delete.OFFSET_DELETE_RESPONSE_TOPIC(name="t", partitions=[
            offset_delete.OFFSET_DELETE_RESPONSE_PARTITION(partition_index=0, error_code=86)])])
    response_bytes = i16(0) + i32(4) + i32(1) + s16("t") + i32(1) + i32(0) + i16(86)
    assert encode_body(ApiKey.OFFSET_DELETE, 0, response, response=True) == response_bytes
    assert decode_body(ApiKey.OFFSET_DELETE, 0, response_bytes, response=True) == response
