"""The ACL model's enums as Kafka numbers them on the wire (clients' ResourceType, PatternType,
AclOperation, AclPermissionType): CreateAcls, DescribeAcls, DeleteAcls and the authorized
operations bit fields use these codes."""

from __future__ import annotations

import enum


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1  # filters only
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1  # filters only
    MATCH = 2  # filters only
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1  # filters only
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1  # filters only
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name
WILDCARD = "*"  # a literal resource name or host matching every one
WILDCARD_PRINCIPAL = "User:*"
# The authorized operations fields' value when the client did not ask for them.
AUTHORIZED_OPERATIONS_OMITTED = -2147483648
