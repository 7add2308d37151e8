"""ACL bindings, their filters, and the controller's set of them (Kafka's AclBinding,
AclBindingFilter and AclControlManager).

A binding is a resource pattern (type, name, LITERAL or PREFIXED) with an access control entry
(principal, host, operation, ALLOW or DENY). CreateAcls adds bindings (one already there is
not added twice), DeleteAcls removes those matching each filter, DescribeAcls lists those
matching one filter. The controller writes the set to the metadata log (AccessControlEntryRecord) and
pushes the whole set to every broker after each change and to a broker that registers (a
CreateAcls request from the controller's client id, which the broker takes as "these are all the
ACLs": server/handlers/acls.py); each broker's StandardAuthorizer then decides on its own copy.
The event thread alone changes the set, replacing it whole, so readers need no lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import (
    CLUSTER_NAME,
    WILDCARD,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from kafkalite.protocol.messages import create_acls as ca

PUSH_VERSION = 3  # CreateAcls' version of the controller's pushes


def _enum(cls: Any, code: int) -> Any:
    """Kafka's fromCode: an unknown code is UNKNOWN."""
    try:
        return cls(code)
    except ValueError:
        return cls.UNKNOWN


@dataclasses.dataclass(frozen=True, order=True)
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    @classmethod
    def of(
        cls,
        resource_type: int,
        resource_name: str,
        pattern_type: int,
        principal: str,
        host: str,
        operation: int,
        permission_type: int,
    ) -> AclBinding:
        return cls(
            _enum(ResourceType, resource_type),
            resource_name,
            _enum(PatternType, pattern_type),
            principal,
            host,
            _enum(AclOperation, operation),
            _enum(AclPermissionType, permission_type),
        )

    @classmethod
    def from_creation(cls, c: Any) -> AclBinding:
        return cls.of(
            c.resource_type,
            c.resource_name,
            c.resource_pattern_type,
            c.principal,
            c.host,
            c.operation,
            c.permission_type,
        )

    def __str__(self) -> str:
        return (
            f"(pattern=ResourcePattern(resourceType={self.resource_type.name}, name={self.resource_name}, "
            f"patternType={self.pattern_type.name}), entry=(principal={self.principal}, host={self.host}, "
            f"operation={self.operation.name}, permissionType={self.permission_type.name}))"
        )


def validate_new_acl(b: AclBinding) -> None:
    """What Kafka checks of a binding to create (CreateAclsRequest, AclApis, AclControlManager's
    validateNewAcl): ApiError INVALID_REQUEST with Kafka's message."""
    if (
        b.resource_type == ResourceType.UNKNOWN
        or PatternType.UNKNOWN == b.pattern_type
        or AclOperation.UNKNOWN == b.operation
        or AclPermissionType.UNKNOWN == b.permission_type
    ):
        raise ApiError(E.INVALID_REQUEST, "CreatableAcl contains UNKNOWN elements")
    if b.resource_type == ResourceType.CLUSTER and b.resource_name != CLUSTER_NAME:
        raise ApiError(E.INVALID_REQUEST, f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not b.resource_name:
        raise ApiError(E.INVALID_REQUEST, "Invalid empty resource name")
    if b.resource_type == ResourceType.ANY:
        raise ApiError(E.INVALID_REQUEST, f"Invalid resourceType {b.resource_type.name}")
    if b.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise ApiError(E.INVALID_REQUEST, f"Invalid patternType {b.pattern_type.name}")
    if b.operation == AclOperation.ANY:
        raise ApiError(E.INVALID_REQUEST, f"Invalid operation {b.operation.name}")
    if b.permission_type == AclPermissionType.ANY:
        raise ApiError(E.INVALID_REQUEST, f"Invalid permissionType {b.permission_type.name}")
    if ":" not in b.principal:
        raise ApiError(
            E.INVALID_REQUEST,
            f"Could not parse principal from `{b.principal}` (no colon is present "
            "separating the principal type from the principal name)",
        )


@dataclasses.dataclass(frozen=True)
class AclBindingFilter:
    """Kafka's AclBindingFilter: ANY (or null for the strings) matches every value; the pattern
    type MATCH matches the bindings that would apply to the named resource (LITERAL of the name or
    of '*', PREFIXED of a prefix of it)."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    @classmethod
    def of(
        cls,
        resource_type: int,
        resource_name: str | None,
        pattern_type: int,
        principal: str | None,
        host: str | None,
        operation: int,
        permission_type: int,
    ) -> AclBindingFilter:
        return cls(
            _enum(ResourceType, resource_type),
            resource_name,
            _enum(PatternType, pattern_type),
            principal,
            host,
            _enum(AclOperation, operation),
            _enum(AclPermissionType, permission_type),
        )

    @classmethod
    def from_request(cls, f: Any) -> AclBindingFilter:
        return cls.of(
            f.resource_type_filter,
            f.resource_name_filter,
            f.pattern_type_filter,
            f.principal_filter,
            f.host_filter,
            f.operation,
            f.permission_type,
        )

    def validate(self) -> None:
        """Kafka's: a filter with an UNKNOWN element is INVALID_REQUEST."""
        if ResourceType.UNKNOWN == self.resource_type or PatternType.UNKNOWN == self.pattern_type:
            raise ApiError(E.INVALID_REQUEST, "Unknown patternFilter.")
        if AclOperation.UNKNOWN == self.operation or AclPermissionType.UNKNOWN == self.permission_type:
            raise ApiError(E.INVALID_REQUEST, "Unknown entryFilter.")

    def matches(self, b: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != b.resource_type:
            return False
        if (
            self.pattern_type not in (PatternType.ANY, PatternType.MATCH)
            and self.pattern_type != b.pattern_type
        ):
            return False
        if self.resource_name is not None:
            if self.pattern_type in (PatternType.ANY, b.pattern_type):
                if self.resource_name != b.resource_name:
                    return False
            elif b.pattern_type == PatternType.LITERAL:
                if b.resource_name not in (self.resource_name, WILDCARD):
                    return False
            elif not self.resource_name.startswith(b.resource_name):  # PREFIXED under MATCH
                return False
        if self.principal is not None and self.principal != b.principal:
            return False
        if self.host is not None and self.host != b.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != b.operation:
            return False
        return self.permission_type == AclPermissionType.ANY or self.permission_type == b.permission_type


def push_body(acls: Iterable[AclBinding]) -> Any:
    """The CreateAcls request that gives a broker the whole set."""
    C = ca.REQUEST["creations"]
    return ca.REQUEST(
        creations=[
            C(
                resource_type=b.resource_type,
                resource_name=b.resource_name,
                resource_pattern_type=b.pattern_type,
                principal=b.principal,
                host=b.host,
                operation=b.operation,
                permission_type=b.permission_type,
            )
            for b in sorted(acls)
        ]
    )


class AclControl:
    """The controller's ACLs (Kafka's AclControlManager): ``acls`` replaced whole on each change."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.acls: frozenset[AclBinding] = frozenset()

    def load(self) -> None:
        self.acls = frozenset(self.store.load_acls())

    def create(self, bindings: list[AclBinding]) -> tuple[list[tuple[int, str | None]], bool]:
        """Each binding checked and added (an existing one is a success adding nothing):
        [(error code, message)] in order, and whether the set changed. Raises ApiError
        (NOT_CONTROLLER) when the write fails (nothing changed then)."""
        results: list[tuple[int, str | None]] = []
        new: list[AclBinding] = []
        for b in bindings:
            try:
                validate_new_acl(b)
            except ApiError as e:
                results.append((e.code, e.message))
                continue
            if b not in self.acls and b not in new:
                new.append(b)
            results.append((E.NONE, None))
        if new:
            self.store.add_acls(new)
            self.acls = self.acls | frozenset(new)
        return results, bool(new)

    def delete(
        self, filters: list[AclBindingFilter]
    ) -> tuple[list[tuple[int, str | None, list[AclBinding]]], bool]:
        """Each filter's (error code, message, the bindings it removed); all removed at once."""
        results: list[tuple[int, str | None, list[AclBinding]]] = []
        gone: set[AclBinding] = set()
        for f in filters:
            try:
                f.validate()
            except ApiError as e:
                results.append((e.code, e.message, []))
                continue
            matched = sorted(b for b in self.acls if f.matches(b))
            gone.update(matched)
            results.append((E.NONE, None, matched))
        if gone:
            self.store.delete_acls(gone)
            self.acls = self.acls - gone
        return results, bool(gone)

    def describe(self, f: AclBindingFilter) -> list[AclBinding]:
        f.validate()
        return sorted(b for b in self.acls if f.matches(b))
