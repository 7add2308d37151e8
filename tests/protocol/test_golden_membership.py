"""Golden bytes for the group membership apis' old, non-flexible versions (JoinGroup 0-5,
Heartbeat 0-3, LeaveGroup 0-3, SyncGroup 0-3, DescribeGroups 0-3, DeleteGroups 0-1), the ones old
clients (librdkafka before 1.x, kafka-python) send, from an independent implementation:
kafka-python's hand-written encoders (``kafka.protocol.old.group``, ``kafka.protocol.old.admin``),
not generated from Kafka's JSON specs as kafkalite's declarations and kio are.

Each case is one value written twice, once for kafkalite and once for kafka-python's class of that
version: kafkalite writes kafka-python's bytes, reads them back as the same value, and kafka-python
reads kafkalite's bytes back as its own value. Nulls (a group instance id, a protocol name) are
-1 lengths on both sides.
"""

from __future__ import annotations

import pytest
from kafka.protocol.old import admin as kp_admin
from kafka.protocol.old import group as kp_group

from kafkalite.protocol import encode_body
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import (
    delete_groups,
    describe_groups,
    heartbeat,
    join_group,
    leave_group,
    sync_group,
)

from .golden_bytes import check_kp_golden, i16, i32, kp_case, s16

META = b"\x00\x01\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"  # a consumer subscription to "t"
ASSIGNMENT = b"\x00\x01\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff"


CASES = [
    # --- JoinGroup (11) ---
    *kp_case(
        ApiKey.JOIN_GROUP, [0], False,
        join_group.REQUEST(group_id="g", session_timeout_ms=10000, member_id="",
                           protocol_type="consumer", protocols=[
                               join_group.JOIN_GROUP_REQUEST_PROTOCOL(name="range", metadata=META),
                               join_group.JOIN_GROUP_REQUEST_PROTOCOL(name="roundrobin", metadata=b"")]),
        kp_group.JoinGroupRequest,
        dict(group_id="g", session_timeout_ms=10000, member_id="", protocol_type="consumer",
             protocols=[("range", META), ("roundrobin", b"")]),
        "JoinGroup",
    ),
    *kp_case(
        ApiKey.JOIN_GROUP, [1, 2, 3, 4], False,
        join_group.REQUEST(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=300000,
                           member_id="m-1", protocol_type="consumer", protocols=[
                               join_group.JOIN_GROUP_REQUEST_PROTOCOL(name="range", metadata=META)]),
        kp_group.JoinGroupRequest,
        dict(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=300000, member_id="m-1",
             protocol_type="consumer", protocols=[("range", META)]),
        "JoinGroup",
    ),
    *kp_case(
        ApiKey.JOIN_GROUP, [5], False,
        join_group.REQUEST(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=300000,
                           member_id="", group_instance_id=None, protocol_type="consumer",
                           protocols=[join_group.JOIN_GROUP_REQUEST_PROTOCOL(name="range", metadata=META)]),
        kp_group.JoinGroupRequest,
        dict(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=300000, member_id="",
             group_instance_id=None, protocol_type="consumer", protocols=[("range", META)]),
        "JoinGroup-null-instance",
    ),
    *kp_case(
        ApiKey.JOIN_GROUP, [0, 1], True,
        join_group.RESPONSE(error_code=0, generation_id=3, protocol_name="range", leader="m-1",
                            member_id="m-1", members=[
                                join_group.JOIN_GROUP_RESPONSE_MEMBER(member_id="m-1", metadata=META),
                                join_group.JOIN_GROUP_RESPONSE_MEMBER(member_id="m-2", metadata=META)]),
        kp_group.JoinGroupResponse,
        dict(error_code=0, generation_id=3, protocol_name="range", leader="m-1", member_id="m-1",
             members=[("m-1", META), ("m-2", META)]),
        "JoinGroup",
    ),
    *kp_case(
        ApiKey.JOIN_GROUP, [2, 3, 4], True,
        join_group.RESPONSE(throttle_time_ms=5, error_code=79, generation_id=-1, protocol_name="",
                            leader="", member_id="m-9", members=[]),  # 79: MEMBER_ID_REQUIRED
        kp_group.JoinGroupResponse,
        dict(throttle_time_ms=5, error_code=79, generation_id=-1, protocol_name="", leader="",
             member_id="m-9", members=[]),
        "JoinGroup",
    ),
    *kp_case(
        ApiKey.JOIN_GROUP, [5], True,
        join_group.RESPONSE(throttle_time_ms=0, error_code=0, generation_id=1, protocol_name="range",
                            leader="m-1", member_id="m-2", members=[
                                join_group.JOIN_GROUP_RESPONSE_MEMBER(
                                    member_id="m-1", group_instance_id="i-1", metadata=META),
                                join_group.JOIN_GROUP_RESPONSE_MEMBER(
                                    member_id="m-2", group_instance_id=None, metadata=b"")]),
        kp_group.JoinGroupResponse,
        dict(throttle_time_ms=0, error_code=0, generation_id=1, protocol_name="range", leader="m-1",
             member_id="m-2", members=[("m-1", "i-1", META), ("m-2", None, b"")]),
        "JoinGroup",
    ),
    # --- Heartbeat (12) ---
    *kp_case(
        ApiKey.HEARTBEAT, [0, 1, 2], False,
        heartbeat.REQUEST(group_id="g", generation_id=3, member_id="m-1"),
        kp_group.HeartbeatRequest,
        dict(group_id="g", generation_id=3, member_id="m-1"),
        "Heartbeat",
    ),
    *kp_case(
        ApiKey.HEARTBEAT, [3], False,
        heartbeat.REQUEST(group_id="g", generation_id=3, member_id="m-1", group_instance_id="i-1"),
        kp_group.HeartbeatRequest,
        dict(group_id="g", generation_id=3, member_id="m-1", group_instance_id="i-1"),
        "Heartbeat",
    ),
    *kp_case(
        ApiKey.HEARTBEAT, [0], True,
        heartbeat.RESPONSE(error_code=27),  # REBALANCE_IN_PROGRESS
        kp_group.HeartbeatResponse, dict(error_code=27), "Heartbeat",
    ),
    *kp_case(
        ApiKey.HEARTBEAT, [1, 2, 3], True,
        heartbeat.RESPONSE(throttle_time_ms=100, error_code=0),
        kp_group.HeartbeatResponse, dict(throttle_time_ms=100, error_code=0), "Heartbeat",
    ),
    # --- LeaveGroup (13) ---
    *kp_case(
        ApiKey.LEAVE_GROUP, [0, 1, 2], False,
        leave_group.REQUEST(group_id="g", member_id="m-1"),
        kp_group.LeaveGroupRequest, dict(group_id="g", member_id="m-1"), "LeaveGroup",
    ),
    *kp_case(
        ApiKey.LEAVE_GROUP, [3], False,
        leave_group.REQUEST(group_id="g", members=[
            leave_group.MEMBER_IDENTITY(member_id="m-1", group_instance_id=None),
            leave_group.MEMBER_IDENTITY(member_id="", group_instance_id="i-2")]),
        kp_group.LeaveGroupRequest,
        dict(group_id="g", members=[("m-1", None), ("", "i-2")]),
        "LeaveGroup",
    ),
    *kp_case(
        ApiKey.LEAVE_GROUP, [0], True,
        leave_group.RESPONSE(error_code=25),  # UNKNOWN_MEMBER_ID
        kp_group.LeaveGroupResponse, dict(error_code=25), "LeaveGroup",
    ),
    *kp_case(
        ApiKey.LEAVE_GROUP, [1, 2], True,
        leave_group.RESPONSE(throttle_time_ms=1, error_code=0),
        kp_group.LeaveGroupResponse, dict(throttle_time_ms=1, error_code=0), "LeaveGroup",
    ),
    *kp_case(
        ApiKey.LEAVE_GROUP, [3], True,
        leave_group.RESPONSE(throttle_time_ms=0, error_code=0, members=[
            leave_group.MEMBER_RESPONSE(member_id="m-1", group_instance_id=None, error_code=0),
            leave_group.MEMBER_RESPONSE(member_id="", group_instance_id="i-2", error_code=25)]),
        kp_group.LeaveGroupResponse,
        dict(throttle_time_ms=0, error_code=0, members=[("m-1", None, 0), ("", "i-2", 25)]),
        "LeaveGroup",
    ),
    # --- SyncGroup (14) ---
    *kp_case(
        ApiKey.SYNC_GROUP, [0, 1, 2], False,
        sync_group.REQUEST(group_id="g", generation_id=3, member_id="m-1", assignments=[
            sync_group.SYNC_GROUP_REQUEST_ASSIGNMENT(member_id="m-1", assignment=ASSIGNMENT),
            sync_group.SYNC_GROUP_REQUEST_ASSIGNMENT(member_id="m-2", assignment=b"")]),
        kp_group.SyncGroupRequest,
        dict(group_id="g", generation_id=3, member_id="m-1",
             assignments=[("m-1", ASSIGNMENT), ("m-2", b"")]),
        "SyncGroup",
    ),
    *kp_case(
        ApiKey.SYNC_GROUP, [3], False,
        sync_group.REQUEST(group_id="g", generation_id=3, member_id="m-2", group_instance_id="i-2",
                           assignments=[]),  # a follower sends no assignments
        kp_group.SyncGroupRequest,
        dict(group_id="g", generation_id=3, member_id="m-2", group_instance_id="i-2", assignments=[]),
        "SyncGroup",
    ),
    *kp_case(
        ApiKey.SYNC_GROUP, [0], True,
        sync_group.RESPONSE(error_code=0, assignment=ASSIGNMENT),
        kp_group.SyncGroupResponse, dict(error_code=0, assignment=ASSIGNMENT), "SyncGroup",
    ),
    *kp_case(
        ApiKey.SYNC_GROUP, [1, 2, 3], True,
        sync_group.RESPONSE(throttle_time_ms=2, error_code=22, assignment=b""),  # ILLEGAL_GENERATION
        kp_group.SyncGroupResponse, dict(throttle_time_ms=2, error_code=22, assignment=b""),
        "SyncGroup",
    ),
    # --- DescribeGroups (15) ---
    *kp_case(
        ApiKey.DESCRIBE_GROUPS, [0, 1, 2], False,
        describe_groups.REQUEST(groups=["g", "h"]),
        kp_admin.DescribeGroupsRequest, dict(groups=["g", "h"]), "DescribeGroups",
    ),
    *kp_case(
        ApiKey.DESCRIBE_GROUPS, [3], False,
        describe_groups.REQUEST(groups=["g"], include_authorized_operations=True),
        kp_admin.DescribeGroupsRequest, dict(groups=["g"], include_authorized_operations=True),
        "DescribeGroups",
    ),
    *kp_case(
        ApiKey.DESCRIBE_GROUPS, [0], True,
        describe_groups.RESPONSE(groups=[describe_groups.DESCRIBED_GROUP(
            error_code=0, group_id="g", group_state="Stable", protocol_type="consumer",
            protocol_data="range", members=[describe_groups.DESCRIBED_GROUP_MEMBER(
                member_id="m-1", client_id="c", client_host="/10.0.0.1", member_metadata=META,
                member_assignment=ASSIGNMENT)])]),
        kp_admin.DescribeGroupsResponse,
        dict(groups=[(0, "g", "Stable", "consumer", "range",
                      [("m-1", "c", "/10.0.0.1", META, ASSIGNMENT)])]),
        "DescribeGroups",
    ),
    *kp_case(
        ApiKey.DESCRIBE_GROUPS, [1, 2], True,
        describe_groups.RESPONSE(throttle_time_ms=0, groups=[describe_groups.DESCRIBED_GROUP(
            error_code=0, group_id="h", group_state="Dead", protocol_type="", protocol_data="",
            members=[])]),
        kp_admin.DescribeGroupsResponse,
        dict(throttle_time_ms=0, groups=[(0, "h", "Dead", "", "", [])]),
        "DescribeGroups",
    ),
    *kp_case(
        ApiKey.DESCRIBE_GROUPS, [3], True,
        describe_groups.RESPONSE(throttle_time_ms=0, groups=[describe_groups.DESCRIBED_GROUP(
            error_code=0, group_id="g", group_state="Empty", protocol_type="consumer",
            protocol_data="", members=[], authorized_operations=(1 << 3) | (1 << 8))]),
        kp_admin.DescribeGroupsResponse,
        # kafka-python's bitfield is the set of bits: READ (3) and DESCRIBE (8)
        dict(throttle_time_ms=0, groups=[(0, "g", "Empty", "consumer", "", [], {3, 8})]),
        "DescribeGroups",
    ),
    *kp_case(
        ApiKey.DESCRIBE_GROUPS, [3], True,
        describe_groups.RESPONSE(throttle_time_ms=0, groups=[describe_groups.DESCRIBED_GROUP(
            error_code=0, group_id="g", group_state="Empty", protocol_type="", protocol_data="",
            members=[])]),  # authorized operations not asked for: INT32_MIN, the default
        kp_admin.DescribeGroupsResponse,
        dict(throttle_time_ms=0, groups=[(0, "g", "Empty", "", "", [], None)]),
        "DescribeGroups-no-operations",
    ),
    # --- DeleteGroups (42) ---
    *kp_case(
        ApiKey.DELETE_GROUPS, [0, 1], False,
        delete_groups.REQUEST(groups_names=["g", "h"]),
        kp_admin.DeleteGroupsRequest, dict(groups_names=["g", "h"]), "DeleteGroups",
    ),
    *kp_case(
        ApiKey.DELETE_GROUPS, [0, 1], True,
        delete_groups.RESPONSE(throttle_time_ms=0, results=[
            delete_groups.DELETABLE_GROUP_RESULT(group_id="g", error_code=0),
            delete_groups.DELETABLE_GROUP_RESULT(group_id="h", error_code=68)]),  # NON_EMPTY_GROUP
        kp_admin.DeleteGroupsResponse,
        dict(throttle_time_ms=0, results=[("g", 0), ("h", 68)]),
        "DeleteGroups",
    ),
]


@pytest.mark.parametrize(("api_key", "version", "response", "value", "kp"), CASES)
def test_golden_from_kafka_python(api_key, version, response, value, kp):
    check_kp_golden(api_key, version, response, value, kp)


def test_every_kafka_python_version_is_covered():
    """Every version kafka-python hand-writes for these apis has a case, request and response."""
    kp_lists = {
        ApiKey.JOIN_GROUP: (kp_group.JoinGroupRequest, kp_group.JoinGroupResponse),
        ApiKey.HEARTBEAT: (kp_group.HeartbeatRequest, kp_group.HeartbeatResponse),
        ApiKey.LEAVE_GROUP: (kp_group.LeaveGroupRequest, kp_group.LeaveGroupResponse),
        ApiKey.SYNC_GROUP: (kp_group.SyncGroupRequest, kp_group.SyncGroupResponse),
        ApiKey.DESCRIBE_GROUPS: (kp_admin.DescribeGroupsRequest, kp_admin.DescribeGroupsResponse),
        ApiKey.DELETE_GROUPS: (kp_admin.DeleteGroupsRequest, kp_admin.DeleteGroupsResponse),
    }
    covered = {(c.values[0], c.values[1], c.values[2]) for c in CASES}
    wanted = {(key, cls.API_VERSION, response)
              for key, lists in kp_lists.items()
              for response, classes in enumerate(lists) for cls in classes}
    assert {(k, v, bool(r)) for k, v, r in wanted} == covered


def test_join_group_v0_request_by_hand():
    """The oldest JoinGroup, spelled out: no rebalance timeout before v1, no group instance id
    before v5, strings int16-length, bytes int32-length."""
    body = encode_body(ApiKey.JOIN_GROUP, 0, join_group.REQUEST(
        group_id="g", session_timeout_ms=6000, rebalance_timeout_ms=99, member_id="",
        group_instance_id="ignored", protocol_type="consumer",
        protocols=[join_group.JOIN_GROUP_REQUEST_PROTOCOL(name="range", metadata=b"\x01")]))
    assert body == (s16("g") + i32(6000) + s16("") + s16("consumer")
                    + i32(1) + s16("range") + i32(1) + b"\x01")


def test_leave_group_v0_response_by_hand():
    assert encode_body(ApiKey.LEAVE_GROUP, 0, leave_group.RESPONSE(
        throttle_time_ms=9, error_code=0), response=True) == i16(0)
