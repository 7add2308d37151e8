"""ConsumerGroupHeartbeat, ConsumerGroupDescribe and ListGroups v5 on the wire of a real broker:
v0's member id made by the coordinator, the group described and listed with its type; and
``group.coordinator.rebalance.protocols`` without ``consumer``: the apis not advertised, a
heartbeat answered UNSUPPORTED_VERSION."""

from __future__ import annotations

import pytest

from kafkalite.protocol import ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    find_coordinator,
    join_group,
    list_groups,
    share_group_heartbeat,
)
from tests.support.brokers import connect, running_broker
from tests.support.raw_requests import create_topic
from tests.support.wait import wait_for

HB = consumer_group_heartbeat.REQUEST


def join_request(member_id: str = "") -> object:
    return HB(group_id="wire", member_id=member_id, member_epoch=0, rebalance_timeout_ms=30000,
              subscribed_topic_names=["w"], topic_partitions=[])


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("cg-apis"), offsets_topic_num_partitions="1") as b:
        with connect(b) as c:
            create_topic(c, "w", 2)

            def ready() -> bool:
                r = c.call(ApiKey.FIND_COORDINATOR, 4,
                           find_coordinator.REQUEST(key_type=0, coordinator_keys=["wire"]))
                return r.coordinators[0].error_code == E.NONE

            assert wait_for(ready, timeout=20, interval=0.05)
            yield c


def test_v0_member_id_is_the_coordinators_and_the_group_is_described_and_listed(client):
    answer = client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, join_request())
    assert answer.error_code == E.NONE and answer.member_id and answer.member_epoch == 1
    assert sorted(answer.assignment.topic_partitions[0].partitions) == [0, 1]
    # v1: the client names itself (KIP-1082); an empty id is INVALID_REQUEST.
    assert client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_request()).error_code == E.INVALID_REQUEST
    described = client.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, consumer_group_describe.REQUEST(
        group_ids=["wire", "nothing"], include_authorized_operations=False)).groups
    assert (described[0].error_code, described[0].group_state, described[0].assignor_name) == (
        E.NONE, "Stable", "uniform")
    member = described[0].members[0]
    assert member.member_id == answer.member_id and member.subscribed_topic_names == ["w"]
    assert member.member_type == 1  # v1 (KIP-1099): a consumer-protocol member
    v0 = client.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, consumer_group_describe.REQUEST(
        group_ids=["wire"], include_authorized_operations=False)).groups[0].members[0]
    assert v0.member_id == answer.member_id and v0.member_type == -1  # not on v0's wire
    assert member.assignment.topic_partitions[0].topic_name == "w"
    assert described[1].error_code == E.GROUP_ID_NOT_FOUND
    listed = client.call(ApiKey.LIST_GROUPS, 5,
                         list_groups.REQUEST(states_filter=[], types_filter=["consumer"])).groups
    assert [(g.group_id, g.group_type, g.group_state) for g in listed] == [("wire", "consumer", "Stable")]
    left = client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, HB(group_id="wire", member_id=answer.member_id,
                                                              member_epoch=-1))
    assert (left.error_code, left.member_epoch) == (E.NONE, -1)


def test_without_the_consumer_protocol_the_apis_are_not_offered(tmp_path):
    with running_broker(tmp_path, group_coordinator_rebalance_protocols="classic",
                        offsets_topic_num_partitions="1") as b, connect(b) as c:
        offered = {k.api_key for k in c.call(ApiKey.API_VERSIONS, 3, api_versions.REQUEST(
            client_software_name="t", client_software_version="1")).api_keys}
        assert ApiKey.JOIN_GROUP in offered
        assert not {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE} & offered
        answer = c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_request("m"))
        assert answer.error_code == E.UNSUPPORTED_VERSION


def test_share_consumer_and_classic_groups_share_one_namespace_of_ids(client):
    """A share group's id is not a consumer or classic group's (GROUP_ID_NOT_FOUND,
    INCONSISTENT_GROUP_PROTOCOL), and a consumer group's is not a share group's."""
    share = client.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, share_group_heartbeat.REQUEST(
        group_id="ns-share", member_id="s1", member_epoch=0, subscribed_topic_names=["w"]))
    assert share.error_code == E.NONE
    consumer = client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, HB(
        group_id="ns-share", member_id="c1", member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["w"], topic_partitions=[]))
    assert consumer.error_code == E.GROUP_ID_NOT_FOUND
    classic = client.call(ApiKey.JOIN_GROUP, 9, join_group.REQUEST(
        group_id="ns-share", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
        group_instance_id=None, protocol_type="consumer",
        protocols=[join_group.REQUEST["protocols"](name="range", metadata=b"")], reason=None))
    assert classic.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    joined = client.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, HB(
        group_id="ns-consumer", member_id="c2", member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["w"], topic_partitions=[]))
    assert joined.error_code == E.NONE
    refused = client.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, share_group_heartbeat.REQUEST(
        group_id="ns-consumer", member_id="s2", member_epoch=0, subscribed_topic_names=["w"]))
    assert refused.error_code == E.GROUP_ID_NOT_FOUND
