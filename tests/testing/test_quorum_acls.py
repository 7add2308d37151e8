"""ACLs in a controller quorum (kafkalite.testing, three controller-only voters, StandardAuthorizer):
every voter's authorizer follows the ACLs of the metadata it replays, the standbys' too, so the
brokers' registrations are authorized whichever voter is active and an ACL created through a
broker is in force on every controller node; after a failover the new active controller has it."""

from __future__ import annotations

from kafkalite.controller.acls import AclBinding
from kafkalite.protocol.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from kafkalite.testing import Cluster
from tests.support.wait import wait_for

SETTINGS = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true", "super.users": "User:ANONYMOUS",
            "controller.quorum.election.timeout.ms": 300, "controller.quorum.fetch.timeout.ms": 600}
BINDING = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ,
                     AclPermissionType.ALLOW)


def test_every_controller_node_authorizes_from_the_replayed_acls():
    with Cluster(1, controllers=3, controller_only=True, offsets_topic=False, settings=SETTINGS) as cluster:
        voters = [cluster.nodes[v].broker for v in cluster.voter_ids]
        assert all(v.standard_authorizer.loaded for v in voters)  # an empty set is a set
        active = cluster.active_controller(10)
        assert active.controller.create_acls([BINDING]).result(10) == [(0, None)]
        assert wait_for(lambda: all(BINDING in v.standard_authorizer.acls for v in voters), timeout=10)
        cluster.kill(active.node_id)
        successor = cluster.active_controller(10)
        assert successor.node_id != active.node_id
        assert BINDING in successor.controller.acls.acls
        cluster.create_topic("after-failover", partitions=1, replication_factor=1)  # registration authorized
