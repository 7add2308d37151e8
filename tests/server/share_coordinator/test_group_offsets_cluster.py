"""Describe/Alter/DeleteShareGroupOffsets on a 3-broker in-process cluster, over the wire (v0), the
share group's membership given by a lookup (the share-group coordinator's, injected at merge): a
new start offset per partition, read back; deletion forgets a topic's state; a group with members
is NON_EMPTY_GROUP; an unknown one GROUP_ID_NOT_FOUND; a broker that is not the group's
coordinator NOT_COORDINATOR."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafkalite.clients import BlockingClient
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import (
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group_offsets,
    find_coordinator,
)
from kafkalite.server.share_coordinator.group_offsets import ShareGroupFacts
from kafkalite.testing import Cluster

GROUP = "sg"
FACTS: dict[str, ShareGroupFacts] = {}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(3, settings={"share.coordinator.state.topic.num.partitions": 3}) as c:
        c.create_topic("t", 2)
        for n in (1, 2, 3):
            offsets = c.broker(n).share_offsets
            assert offsets is not None
            offsets.lookup = FACTS.get
        yield c


def call(cluster: Cluster, node: int, api: ApiKey, body: Any) -> Any:
    client = BlockingClient("127.0.0.1", cluster.nodes[node].client_port, "test", 30)
    try:
        return client.send_and_receive(api, 6 if api == ApiKey.FIND_COORDINATOR else 0, body)
    finally:
        client.close()


def coordinator(cluster: Cluster) -> int:
    R = find_coordinator.REQUEST
    (answer,) = call(cluster, 1, ApiKey.FIND_COORDINATOR,
                     R(key_type=0, coordinator_keys=[GROUP])).coordinators
    assert answer.error_code == E.NONE
    return answer.node_id


def describe(cluster: Cluster, node: int, topics: list[tuple[str, list[int]]] | None) -> Any:
    R = describe_share_group_offsets.REQUEST
    G = R["groups"]
    asked = None if topics is None else [G["topics"](topic_name=t, partitions=ps) for t, ps in topics]
    return call(cluster, node, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
                R(groups=[G(group_id=GROUP, topics=asked)]))


def alter(cluster: Cluster, node: int, offsets: dict[tuple[str, int], int]) -> Any:
    R = alter_share_group_offsets.REQUEST
    T = R["topics"]
    by_topic: dict[str, list[Any]] = {}
    for (t, p), o in offsets.items():
        by_topic.setdefault(t, []).append(T["partitions"](partition_index=p, start_offset=o))
    return call(cluster, node, ApiKey.ALTER_SHARE_GROUP_OFFSETS, R(group_id=GROUP, topics=[
        T(topic_name=t, partitions=ps) for t, ps in by_topic.items()]))


def starts(answer: Any) -> dict[tuple[str, int], tuple[int, int]]:
    (group,) = answer.groups
    assert group.error_code == E.NONE, group
    return {(t.topic_name, p.partition_index): (p.start_offset, p.error_code)
            for t in group.topics for p in t.partitions}


def test_unknown_share_group_and_not_coordinator(cluster):
    FACTS.clear()
    node = coordinator(cluster)
    assert describe(cluster, node, None).groups[0].error_code == E.GROUP_ID_NOT_FOUND
    other = next(n for n in (1, 2, 3) if n != node)
    assert describe(cluster, other, None).groups[0].error_code == E.NOT_COORDINATOR


def test_alter_then_describe_then_delete(cluster):
    FACTS[GROUP] = ShareGroupFacts(is_empty=True, topics=frozenset({"t"}))
    node = coordinator(cluster)
    answer = alter(cluster, node, {("t", 0): 5, ("t", 1): 7, ("missing", 0): 1})
    assert answer.error_code == E.NONE
    errors = {(t.topic_name, p.partition_index): p.error_code for t in answer.responses for p in t.partitions}
    assert errors == {("t", 0): E.NONE, ("t", 1): E.NONE, ("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert starts(describe(cluster, node, None)) == {("t", 0): (5, E.NONE), ("t", 1): (7, E.NONE)}
    # altered again: a newer state epoch each time, so never fenced
    assert alter(cluster, node, {("t", 0): 9}).error_code == E.NONE
    assert starts(describe(cluster, node, [("t", [0])])) == {("t", 0): (9, E.NONE)}

    R = delete_share_group_offsets.REQUEST
    deleted = call(cluster, node, ApiKey.DELETE_SHARE_GROUP_OFFSETS, R(group_id=GROUP, topics=[
        R["topics"](topic_name="t"), R["topics"](topic_name="missing")]))
    assert deleted.error_code == E.NONE
    assert {t.topic_name: t.error_code for t in deleted.responses} == {
        "t": E.NONE, "missing": E.UNKNOWN_TOPIC_OR_PARTITION}
    assert starts(describe(cluster, node, None)) == {("t", 0): (-1, E.NONE), ("t", 1): (-1, E.NONE)}


def test_a_group_with_members_is_not_altered(cluster):
    FACTS[GROUP] = ShareGroupFacts(is_empty=False, topics=frozenset({"t"}))
    node = coordinator(cluster)
    answer = alter(cluster, node, {("t", 0): 1})
    assert answer.error_code == E.NON_EMPTY_GROUP
    assert [p.error_code for t in answer.responses for p in t.partitions] == [E.NON_EMPTY_GROUP]
    R = delete_share_group_offsets.REQUEST
    deleted = call(cluster, node, ApiKey.DELETE_SHARE_GROUP_OFFSETS,
                   R(group_id=GROUP, topics=[R["topics"](topic_name="t")]))
    assert deleted.error_code == E.NON_EMPTY_GROUP
