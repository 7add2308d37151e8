"""Authorization (Kafka's Authorizer): what every handler asks before it acts.

``Authorizer`` is what the handlers see; ``ALLOW_ALL`` stands in when ``authorizer.class.name``
is empty (Kafka's default: no authorizer, everything allowed). The StandardAuthorizer (the ACLs
the controller stores, super users, allow.everyone.if.no.acl.found) implements the same protocol.

Handlers ask through ``authorize(request, operation, resource_type, name)`` for one resource,
``authorized(request, operation, resource_type, names)`` for the subset of many and
``authorize_by_resource_type(request, operation, resource_type)`` for any of a type; both take the
request's principal and client address, and the denied ones are logged and counted by the
authorizer (Kafka's kafka.authorizer.logger), not by the handler.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from kafkalite.protocol.acl import AclOperation, ResourceType


class Authorizer(Protocol):
    def authorize(self, request: Any, operation: AclOperation, resource_type: ResourceType,
                  name: str, log_if_denied: bool = True) -> bool:
        """Whether the request's principal, from its client address, may do ``operation`` on the
        LITERAL resource (``resource_type``, ``name``)."""

    def authorized(self, request: Any, operation: AclOperation, resource_type: ResourceType,
                   names: Iterable[str], log_if_denied: bool = True) -> set[str]:
        """The names among ``names`` the request may do ``operation`` on."""

    def authorized_operations(self, request: Any, resource_type: ResourceType, name: str) -> int:
        """Kafka's authorized operations bit field of the resource for the request (each
        AclOperation code allowed sets bit 1 << code)."""

    def authorize_by_resource_type(self, request: Any, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Kafka's authorizeByResourceType: whether the request may do ``operation`` on at least
        one resource of the type (InitProducerId without a transactional id: WRITE on any topic)."""


class AllowAll:
    """No authorizer configured: everything is allowed, as in Kafka without authorizer.class.name."""

    def authorize(self, request: Any, operation: AclOperation, resource_type: ResourceType,
                  name: str, log_if_denied: bool = True) -> bool:
        return True

    def authorized(self, request: Any, operation: AclOperation, resource_type: ResourceType,
                   names: Iterable[str], log_if_denied: bool = True) -> set[str]:
        return set(names)

    def authorized_operations(self, request: Any, resource_type: ResourceType, name: str) -> int:
        return operations_bits(OPERATIONS_OF[resource_type])

    def authorize_by_resource_type(self, request: Any, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        return True


# The operations Kafka lists for each resource type (AclEntry.supportedOperations).
OPERATIONS_OF: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
                         AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                         AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                           AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                           AclOperation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


def operations_bits(operations: Iterable[AclOperation]) -> int:
    bits = 0
    for op in operations:
        bits |= 1 << int(op)
    return bits


ALLOW_ALL = AllowAll()
