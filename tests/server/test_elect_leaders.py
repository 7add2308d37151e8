"""ElectLeaders over the wire against a 3-broker Cluster (auto leader rebalance off, so only the
request moves leaders): PREFERRED puts a partition back on its first replica once that one is
back in the ISR, then ELECTION_NOT_NEEDED; UNCLEAN leads a partition with no live ISR member from
another live replica; per-partition errors as Kafka's controller answers them; NOT_CONTROLLER from
a broker without the controller; kafka-python's elect_leaders. (confluent-kafka 2.16.1's
AdminClient.elect_leaders fails in its own C binding before sending anything: TypeError without
keyword arguments, SystemError with them.)"""

from __future__ import annotations

import pytest

from kafkalite.controller.context import TopicPartition
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import elect_leaders as L
from tests.support.brokers import connect
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration

ELECT_LEADERS = 43
SETTINGS = {"auto.leader.rebalance.enable": "false"}


def elect(broker, election_type: int, partitions: dict[str, list[int]] | None, version: int = 2):
    asked = (None if partitions is None
             else [L.TOPIC_PARTITIONS(topic=t, partitions=ps) for t, ps in partitions.items()])
    body = L.REQUEST(election_type=election_type, timeout_ms=10000, topic_partitions=asked)
    with connect(broker) as c:
        response = c.call(ELECT_LEADERS, version, body)
    assert response.error_code == E.NONE
    return {(r.topic, p.partition_id): (p.error_code, p.error_message)
            for r in response.replica_election_results for p in r.partition_result}


def state(cluster, topic: str, partition: int = 0):
    """(leader, isr) as the controller has it."""
    lead = cluster.controller.controller.context.partition_leadership[TopicPartition(topic, partition)]
    return lead.leader, tuple(lead.isr)


def everyone_sees(cluster, topic: str, leader: int) -> bool:
    return all(b.metadata_cache.snapshot.topics[topic].partitions[0].leader == leader
               for b in (n.broker for n in cluster.nodes.values()) if b is not None)


@pytest.fixture()
def cluster():
    from kafkalite.testing import Cluster

    with Cluster(3, offsets_topic=False, settings=SETTINGS) as c:
        yield c


def _move_off_preferred(cluster, topic: str) -> None:
    """Broker 2 (the preferred replica) fails and comes back: broker 3 leads, 2 rejoins the ISR."""
    cluster.create_topic(topic, assignment={0: [2, 3, 1]})
    assert state(cluster, topic)[0] == 2
    cluster.kill(2)
    assert state(cluster, topic)[0] == 3
    cluster.restart(2)
    assert wait_for(lambda: 2 in state(cluster, topic)[1], timeout=20)
    assert state(cluster, topic)[0] == 3


def test_preferred_puts_the_first_replica_back_then_not_needed(cluster):
    _move_off_preferred(cluster, "moved")
    controller = cluster.controller
    # Asked of a broker without the controller: forwarded to it (Kafka 4's brokers forward
    # ElectLeaders), the controller's answer.
    got = elect(cluster.broker(3), L.PREFERRED, {"moved": [0], "nope": [0]})
    assert got == {("moved", 0): (E.NONE, None),
                   ("nope", 0): (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")}
    leader, isr = state(cluster, "moved")
    assert leader == 2 and set(isr) == {1, 2, 3}
    assert wait_for(lambda: everyone_sees(cluster, "moved", 2), timeout=10)
    # Again: it already leads.
    assert elect(controller, L.PREFERRED, {"moved": [0, 5]}) == {
        ("moved", 0): (E.ELECTION_NOT_NEEDED, None),
        ("moved", 5): (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")}
    # UNCLEAN on a partition that has a leader: not needed.
    assert elect(controller, L.UNCLEAN, {"moved": [0]}) == {("moved", 0): (E.ELECTION_NOT_NEEDED, None)}


def test_preferred_not_available_while_it_is_out_of_the_isr(cluster):
    cluster.create_topic("p", assignment={0: [3, 2, 1]})
    cluster.kill(3)
    assert state(cluster, "p")[0] == 2
    code, message = elect(cluster.controller, L.PREFERRED, {"p": [0]}, version=1)[("p", 0)]
    assert code == E.PREFERRED_LEADER_NOT_AVAILABLE and "p-0" in message
    assert state(cluster, "p")[0] == 2


def test_every_partition_lists_only_those_that_moved(cluster):
    """Null TopicPartitions: every partition; those already led by their preferred replica
    (ELECTION_NOT_NEEDED) are left out of the answer, as Kafka does."""
    cluster.create_topic("stay", assignment={0: [1, 2, 3]})
    _move_off_preferred(cluster, "moved")
    assert elect(cluster.controller, L.PREFERRED, None) == {("moved", 0): (E.NONE, None)}
    assert elect(cluster.controller, L.PREFERRED, None, version=0) == {}
    assert state(cluster, "moved")[0] == 2 and state(cluster, "stay")[0] == 1


def test_unclean_leads_a_partition_with_no_live_isr_member(cluster):
    """Brokers 2 then 3 fail: [2, 3] is left without a leader, its ISR (3). Broker 2 back is no ISR
    member (unclean.leader.election.enable is false): offline until UNCLEAN elects it."""
    cluster.create_topic("u", assignment={0: [2, 3]})
    cluster.create_topic("gone", assignment={0: [3]})
    cluster.kill(2)
    cluster.kill(3)
    assert state(cluster, "u") == (-1, (3,))
    cluster.restart(2)
    assert state(cluster, "u")[0] == -1
    got = elect(cluster.controller, L.UNCLEAN, {"u": [0], "gone": [0]})
    assert got[("u", 0)] == (E.NONE, None)
    assert got[("gone", 0)][0] == E.ELIGIBLE_LEADERS_NOT_AVAILABLE
    assert state(cluster, "u") == (2, (2,))
    assert wait_for(lambda: everyone_sees(cluster, "u", 2), timeout=10)
    assert elect(cluster.controller, L.UNCLEAN, {"u": [0]}) == {("u", 0): (E.ELECTION_NOT_NEEDED, None)}


def test_kafka_python_elect_leaders(cluster):
    from kafka import KafkaAdminClient

    _move_off_preferred(cluster, "moved")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=20000)
    try:
        with cluster.capture() as seen:
            response = admin.elect_leaders(0, {"moved": [0]})
    finally:
        admin.close()
    assert [r.api_key for r in seen if r.api_key == ELECT_LEADERS] == [ELECT_LEADERS]
    results = [(r.topic, [(p.partition_id, p.error_code) for p in r.partition_result])
               for r in response.replica_election_results]
    assert results == [("moved", [(0, E.NONE)])]
    assert state(cluster, "moved")[0] == 2

