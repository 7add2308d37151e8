"""Kafka's StandardAuthorizer (StandardAuthorizer, StandardAuthorizerData): who may do what, from
the ACL bindings the controller stores and pushes to every broker (controller/acls.py).

The rules, as Kafka's:

1. A principal in ``super.users`` is allowed everything.
2. Before the broker has the controller's ACLs (the first push after it registers) everyone
   else is denied (Kafka: AuthorizerNotReadyException).
3. The bindings that apply to an action on a LITERAL resource (type, name) are those of that
   type that are LITERAL of the name or of ``*``, or PREFIXED of a prefix of the name; of those
   the ones whose principal is the request's or ``User:*`` and whose host is the client's
   address or ``*``.
4. A binding of operation ALL matches every operation. An ALLOW of READ, WRITE, DELETE or ALTER
   also allows DESCRIBE, an ALLOW of ALTER_CONFIGS also DESCRIBE_CONFIGS; a DENY matches its own
   operation only (or ALL).
5. Any matching DENY wins over any ALLOW. With none matching: if the resource has no bindings
   at all (of any principal, host or operation) ``allow.everyone.if.no.acl.found`` decides,
   else denied.

Matching is by index, not by scan: per resource type a dict of LITERAL names (``*`` among
them) and one of PREFIXED names with the set of prefix lengths present, each name's bindings by
principal, so an action costs a few dict lookups and looks only at the bindings of its principal
and ``User:*`` whatever the number of bindings. Decisions are kept (principal, host, operation,
resource) until the next push, so a repeated check is one dict lookup. The index is rebuilt whole
on each push and swapped in with an empty set of decisions: request handlers read it without a
lock.

Each decision is logged as Kafka's ``kafka.authorizer.logger`` does (denied at INFO, allowed at
DEBUG, unless the handler asked not to) and counted (the authorizer metrics).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded on first use (kafkalite/metrics/prometheus.py)
    from prometheus_client.core import Metric

from kafkalite.controller.acls import AclBinding
from kafkalite.metrics.prometheus import CounterMetricFamily, GaugeMetricFamily
from kafkalite.protocol.acl import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from kafkalite.protocol.api_keys import api_name

from . import OPERATIONS_OF
from .settings import AuthorizerSettings

audit = logging.getLogger("kafka.authorizer.logger")

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
IMPLIES_DESCRIBE = frozenset(
    {AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
)
IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})
# Kafka's SecurityUtils.resourceTypeName.
RESOURCE_TYPE_NAMES = {
    ResourceType.TOPIC: "Topic",
    ResourceType.GROUP: "Group",
    ResourceType.CLUSTER: "Cluster",
    ResourceType.TRANSACTIONAL_ID: "TransactionalId",
    ResourceType.DELEGATION_TOKEN: "DelegationToken",
    ResourceType.USER: "User",
}

# Decisions kept per ACL set (a dict lookup instead of the matching); cleared when full.
DECISIONS_KEPT = 50_000
# An entry of the index: (host, operation, permission type, the binding).
Entry = tuple[str, AclOperation, AclPermissionType, AclBinding]
# The bindings of one resource pattern by principal (Kafka's wildcard User:* among them).
Section = dict[str, list[Entry]]


class _TypeIndex:
    __slots__ = ("literal", "prefix_lengths", "prefixed")

    def __init__(self) -> None:
        self.literal: dict[str, Section] = {}
        self.prefixed: dict[str, Section] = {}
        self.prefix_lengths: tuple[int, ...] = ()


def build_index(acls: Iterable[AclBinding]) -> dict[ResourceType, _TypeIndex]:
    index: dict[ResourceType, _TypeIndex] = {}
    for b in sorted(acls):
        t = index.setdefault(b.resource_type, _TypeIndex())
        table = t.literal if b.pattern_type == PatternType.LITERAL else t.prefixed
        section = table.setdefault(b.resource_name, {})
        section.setdefault(b.principal, []).append((b.host, b.operation, b.permission_type, b))
    for t in index.values():
        t.prefix_lengths = tuple(sorted({len(name) for name in t.prefixed}))
    return index


def _matches(entry: Entry, host: str, operation: AclOperation) -> bool:
    h, op, permission, _ = entry
    if h != host and h != WILDCARD:
        return False
    if op == AclOperation.ALL or op == operation:
        return True
    if permission != ALLOW:
        return False
    if operation == AclOperation.DESCRIBE:
        return op in IMPLIES_DESCRIBE
    if operation == AclOperation.DESCRIBE_CONFIGS:
        return op in IMPLIES_DESCRIBE_CONFIGS
    return False


class StandardAuthorizer:
    """The Authorizer protocol (authorizer/__init__.py) over the pushed ACLs."""

    def __init__(self, settings: AuthorizerSettings) -> None:
        self.settings = settings
        self.super_users = settings.super_users
        self.allow_if_no_acl = settings.allow_everyone_if_no_acl_found
        # The index and the decisions taken over it (swapped in together: a push starts both anew).
        self._state: tuple[dict[ResourceType, _TypeIndex], dict[tuple, tuple[bool, str | AclBinding]]] = (
            {},
            {},
        )
        self.acls: frozenset[AclBinding] = frozenset()
        self.loaded = False  # the controller's set has come
        self._lock = threading.Lock()
        self.allowed_count = 0
        self.denied_count = 0

    # --- the ACLs ---------------------------------------------------------------------------------

    def load(self, acls: Iterable[AclBinding]) -> None:
        """The controller's whole set (a push): swapped in at once."""
        acls = frozenset(acls)
        index = build_index(acls)
        self._state, self.acls = (index, {}), acls
        self.loaded = True

    # --- deciding ---------------------------------------------------------------------------------

    def _decide(
        self,
        index: dict[ResourceType, _TypeIndex],
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> tuple[bool, str | AclBinding]:
        """(allowed, the rule that decided: the matching binding, else its name as Kafka's
        MatchingRule prints it)."""
        if principal in self.super_users:
            return True, "SuperUser"
        if not self.loaded:
            return False, "AuthorizerNotReady"
        t = index.get(resource_type)
        if t is None:
            return self._no_acl()
        sections = []
        found = t.literal.get(name)
        if found:
            sections.append(found)
        if name != WILDCARD:
            found = t.literal.get(WILDCARD)
            if found:
                sections.append(found)
        if t.prefix_lengths:
            prefixed = t.prefixed
            size = len(name)
            for n in t.prefix_lengths:
                if n > size:
                    break
                found = prefixed.get(name[:n])
                if found:
                    sections.append(found)
        if not sections:
            return self._no_acl()
        allowed_by: AclBinding | None = None
        for section in sections:
            for who in (principal, WILDCARD_PRINCIPAL):
                entries = section.get(who)
                if entries is None:
                    continue
                for entry in entries:
                    if _matches(entry, host, operation):
                        if entry[2] == DENY:
                            return False, entry[3]
                        if allowed_by is None:
                            allowed_by = entry[3]
        if allowed_by is not None:
            return True, allowed_by
        return False, "DefaultRule(result=DENIED)"

    def _no_acl(self) -> tuple[bool, str | AclBinding]:
        if self.allow_if_no_acl:
            return True, "DefaultRule(result=ALLOWED, noAclFound)"
        return False, "DefaultRule(result=DENIED, noAclFound)"

    def _authorize(
        self,
        request: Any,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        log_if_allowed: bool,
        log_if_denied: bool,
        count: bool = True,
    ) -> bool:
        principal = request.principal
        host = request.client_address
        index, decided = self._state
        key = (principal, host, operation, resource_type, name)
        found = decided.get(key)
        if found is None:
            found = self._decide(index, *key)
            if self.loaded:  # not cached while not ready
                if len(decided) >= DECISIONS_KEPT:
                    decided.clear()
                decided[key] = found
        allowed, rule = found
        if count:
            with self._lock:
                if allowed:
                    self.allowed_count += 1
                else:
                    self.denied_count += 1
        if allowed:
            if log_if_allowed and audit.isEnabledFor(logging.DEBUG):
                audit.debug(
                    self._message(request, principal, host, operation, resource_type, name, allowed, rule)
                )
        elif log_if_denied and audit.isEnabledFor(logging.INFO):
            audit.info(self._message(request, principal, host, operation, resource_type, name, allowed, rule))
        return allowed

    @staticmethod
    def _message(
        request: Any,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        allowed: bool,
        rule: str | AclBinding,
    ) -> str:
        """Kafka's buildAuditMessage."""
        return (
            f"Principal = {principal} is {'Allowed' if allowed else 'Denied'} operation = {operation.name} "
            f"from host = {host} on resource = {RESOURCE_TYPE_NAMES.get(resource_type, resource_type.name)}"
            f":LITERAL:{name} for request = {api_name(request.api_key)} with resourceRefCount = 1 "
            f"based on rule {rule if isinstance(rule, str) else f'MatchingAcl(acl={rule})'}"
        )

    def authorize(
        self,
        request: Any,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        log_if_denied: bool = True,
    ) -> bool:
        return self._authorize(request, operation, resource_type, name, True, log_if_denied)

    def authorized(
        self,
        request: Any,
        operation: AclOperation,
        resource_type: ResourceType,
        names: Iterable[str],
        log_if_denied: bool = True,
    ) -> set[str]:
        return {
            n
            for n in set(names)
            if self._authorize(request, operation, resource_type, n, True, log_if_denied)
        }

    def authorized_operations(self, request: Any, resource_type: ResourceType, name: str) -> int:
        """Kafka's AuthHelper.authorizedOperations: every operation the resource type supports,
        asked without logging; bit 1 << code of each allowed."""
        bits = 0
        for op in OPERATIONS_OF[resource_type]:
            if self._authorize(request, op, resource_type, name, False, False, count=False):
                bits |= 1 << int(op)
        return bits

    def authorize_by_resource_type(
        self, request: Any, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Kafka's Authorizer.authorizeByResourceType (the default StandardAuthorizer keeps):
        allowed if a resource of the type named "hardcode" is (super users, or no ACL with
        allow.everyone.if.no.acl.found), else if the principal (or User:*) from this host has an
        ALLOW of the operation (or ALL) on a LITERAL ``*``, or on a LITERAL name no DENY names
        exactly and no PREFIXED DENY prefixes, or on a PREFIXED name no PREFIXED DENY prefixes. A
        LITERAL ``*`` DENY denies."""
        if self._authorize(request, operation, resource_type, "hardcode", True, False):
            return True
        principal, host = request.principal, request.client_address
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow: list[tuple[PatternType, str]] = []
        wildcard_allow = False
        for b in self.acls:
            if b.resource_type != resource_type:
                continue
            if b.host != host and b.host != WILDCARD:
                continue
            if b.principal != principal and b.principal != WILDCARD_PRINCIPAL:
                continue
            if b.operation != operation and b.operation != AclOperation.ALL:
                continue
            if b.permission_type == DENY:
                if b.pattern_type == PatternType.LITERAL:
                    if b.resource_name == WILDCARD:
                        return False
                    deny_literal.add(b.resource_name)
                elif b.pattern_type == PatternType.PREFIXED:
                    deny_prefixed.add(b.resource_name)
            elif b.permission_type == ALLOW:
                if b.pattern_type == PatternType.LITERAL and b.resource_name == WILDCARD:
                    wildcard_allow = True
                else:
                    allow.append((b.pattern_type, b.resource_name))
        if wildcard_allow:
            return True
        for pattern, name in allow:
            if pattern == PatternType.LITERAL and name in deny_literal:
                continue
            if not any(name[:n] in deny_prefixed for n in range(1, len(name) + 1)):
                return True
        return False

    # --- metrics ----------------------------------------------------------------------------------

    def metrics(self) -> Iterator[Metric]:
        """Kafka's authorizer-metrics (type=authorizer-metrics): decisions allowed and denied (as
        counters; Kafka reports their per-minute rates) and the ACLs in force."""
        yield CounterMetricFamily(
            "kafka_server_authorizer_metrics_authorization_allowed",
            "Authorization decisions that allowed (authorization-allowed).",
            value=self.allowed_count,
        )
        yield CounterMetricFamily(
            "kafka_server_authorizer_metrics_authorization_denied",
            "Authorization decisions that denied (authorization-denied).",
            value=self.denied_count,
        )
        yield CounterMetricFamily(
            "kafka_server_authorizer_metrics_authorization_request",
            "Authorization decisions (authorization-request).",
            value=self.allowed_count + self.denied_count,
        )
        yield GaugeMetricFamily(
            "kafka_server_authorizer_metrics_acls_total_count",
            "ACL bindings in force (acls-total-count).",
            value=len(self.acls),
        )
