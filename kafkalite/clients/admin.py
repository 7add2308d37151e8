"""A small blocking admin client on kafkalite's own codec, for the operators' commands
(``kafkalite topics``, ``configs``, ``consumer-groups``, ``leader-election``,
``reassign-partitions``) and for any Kafka-protocol cluster, not only kafkalite's.

What Kafka's AdminClient does, without its threads: a bootstrap (the first of the bootstrap
servers that answers Metadata), ApiVersions once per broker connection (each api sent at the
highest version both sides know: min(broker max, our max), refused when the ranges do not meet),
and routing: topic changes, elections and reassignments to the controller (Metadata's controller id), group
requests to the group's coordinator (FindCoordinator), ListOffsets to each partition's leader,
broker configs to that broker, everything else to any broker. Errors Kafka's clients retry
(:data:`RETRIABLE`: the controller or a coordinator moved or is loading, a leader being elected,
a connection lost) are retried, the metadata and coordinators looked up again, until ``timeout``;
any other error raises :class:`AdminError`, which names Kafka's error (TOPIC_ALREADY_EXISTS, ...).

PLAINTEXT only: SSL and SASL listeners are not supported by this client yet.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kafkalite.common.errors import ApiError
from kafkalite.protocol import APIS_BY_KEY, ApiKey, ProtocolError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    alter_partition_reassignments,
    api_versions,
    create_partitions,
    create_topics,
    delete_groups,
    delete_topics,
    describe_configs,
    describe_groups,
    elect_leaders,
    find_coordinator,
    incremental_alter_configs,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    metadata,
    offset_commit,
    offset_fetch,
)

from .blocking import BlockingClient
from .security import PLAINTEXT, AuthenticationError, ClientSecurity

T = TypeVar("T")

EARLIEST = -2  # ListOffsets' timestamps for the log start and end offsets
LATEST = -1
NO_OFFSET = -1  # OffsetFetch's committed offset of a partition without one

# The errors this client retries (until its timeout), looking the routing up again first: the
# controller, a coordinator or a leader moved, is being elected or is loading, or a connection
# was lost. Kafka marks more errors retriable (UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT),
# which an operator's command reports at once instead.
RETRIABLE = frozenset(E.BY_NAME[name].code for name in (
    "NOT_CONTROLLER", "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE",
    "LEADER_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER", "REPLICA_NOT_AVAILABLE", "FENCED_LEADER_EPOCH",
    "UNKNOWN_LEADER_EPOCH", "NETWORK_EXCEPTION", "THROTTLING_QUOTA_EXCEEDED",
))
ELECTION_NOT_NEEDED = E.BY_NAME["ELECTION_NOT_NEEDED"].code
GROUP_ID_NOT_FOUND = E.BY_NAME["GROUP_ID_NOT_FOUND"].code

# Kafka's ConfigResource types.
TOPIC = describe_configs.RESOURCE_TOPIC
BROKER = describe_configs.RESOURCE_BROKER
BROKER_LOGGER = describe_configs.RESOURCE_BROKER_LOGGER
GROUP = 32  # ConfigResource.Type.GROUP (KIP-848 group configs)

# Kafka's ConfigEntry.ConfigSource names, by DescribeConfigs' source ids.
CONFIG_SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG",
                  3: "DYNAMIC_DEFAULT_BROKER_CONFIG", 4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG",
                  6: "DYNAMIC_BROKER_LOGGER_CONFIG", 7: "CLIENT_METRICS_CONFIG", 8: "GROUP_CONFIG"}

OP_SET = incremental_alter_configs.OP_SET  # Kafka's AlterConfigOp.OpType
OP_DELETE = incremental_alter_configs.OP_DELETE
SOURCE_DEFAULT = describe_configs.SOURCE_DEFAULT_CONFIG
SOURCE_UNKNOWN = describe_configs.SOURCE_UNKNOWN

RETRY_BACKOFF = 0.05  # seconds, doubled after each retry up to RETRY_BACKOFF_MAX
RETRY_BACKOFF_MAX = 1.0


class AdminError(ApiError):
    """A request refused with Kafka's error ``code``; ``name`` is Kafka's name for it."""

    def __init__(self, code: int, message: str | None = None, what: str | None = None) -> None:
        entry = E.for_code(code)
        self.name = entry.name
        detail = message or entry.message
        text = f"{entry.name}: {detail}" if detail else entry.name
        super().__init__(code, f"{what}: {text}" if what else text)

    @property
    def retriable(self) -> bool:
        return self.code in RETRIABLE


class AdminTimeout(AdminError):
    """The retries ran out: nothing answered, or only with retriable errors, within the timeout."""

    def __init__(self, message: str) -> None:
        super().__init__(E.REQUEST_TIMED_OUT, message)


Errors = AdminError | None  # per topic, group or partition: None when it succeeded


class UnsupportedApi(AdminError):
    """The broker does not serve an api in any version this client knows."""

    def __init__(self, message: str) -> None:
        super().__init__(E.UNSUPPORTED_VERSION, message)


@dataclass(frozen=True)
class Node:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> tuple[str, int]:
        return (self.host, self.port)


@dataclass
class PartitionInfo:
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline: list[int]
    error_code: int = 0


@dataclass
class TopicInfo:
    name: str
    topic_id: Any
    is_internal: bool
    partitions: dict[int, PartitionInfo]
    error_code: int = 0


@dataclass
class ClusterInfo:
    cluster_id: str | None
    controller_id: int
    brokers: dict[int, Node]
    topics: dict[str, TopicInfo]


@dataclass
class ConfigEntry:
    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    synonyms: list[tuple[str, str | None, int]] = field(default_factory=list)
    config_type: int = 0
    documentation: str | None = None

    @property
    def source_name(self) -> str:
        return CONFIG_SOURCES.get(self.source, "UNKNOWN")

    @property
    def is_default(self) -> bool:
        return self.source == describe_configs.SOURCE_DEFAULT_CONFIG


@dataclass(frozen=True)
class NewTopic:
    name: str
    num_partitions: int = -1  # -1: the broker's num.partitions
    replication_factor: int = -1  # -1: the broker's default.replication.factor
    configs: Mapping[str, str] = field(default_factory=dict)
    assignments: Mapping[int, Sequence[int]] | None = None  # {partition: replicas}


@dataclass
class GroupListing:
    group_id: str
    protocol_type: str
    state: str  # "" when the broker's ListGroups is older than v4


@dataclass
class MemberInfo:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: list[tuple[str, int]]


@dataclass
class GroupInfo:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberInfo]
    coordinator: Node


def consumer_assignment(data: bytes) -> list[tuple[str, int]]:
    """The partitions of a ConsumerProtocolAssignment (Kafka's consumer protocol, every version:
    int16 version, [string topic, [int32 partition]], then fields this does not need)."""
    try:
        if len(data) < 6:
            return []
        pos = 2
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out: list[tuple[str, int]] = []
        for _ in range(max(count, 0)):
            (n,) = struct.unpack_from(">h", data, pos)
            pos += 2
            topic = bytes(data[pos:pos + n]).decode()
            pos += n
            (parts,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for p in struct.unpack_from(f">{max(parts, 0)}i", data, pos):
                out.append((topic, p))
            pos += 4 * max(parts, 0)
        return out
    except (struct.error, UnicodeDecodeError):
        return []


def parse_bootstrap(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = []
    for item in (i.strip() for i in items):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{item!r} is not HOST:PORT")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("no bootstrap server")
    return out


class AdminClient:
    """Blocking admin calls on one cluster. Not thread-safe: one caller at a time. ``timeout`` bounds
    each call, retries included; ``request_timeout`` each request on the wire."""

    def __init__(self, bootstrap_servers: str | Sequence[str], *, client_id: str = "kafkalite-admin",
                 timeout: float = 30.0, request_timeout: float = 10.0,
                 security: ClientSecurity = PLAINTEXT) -> None:
        """``security``: how to reach the brokers (TLS, SASL), e.g. from a Kafka client properties
        file through ``client_security_from_properties``; PLAINTEXT by default."""
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        self.security = security
        self.client_id = client_id
        self.timeout = timeout
        self.request_timeout = request_timeout
        self._clients: dict[tuple[str, int], BlockingClient] = {}
        self._versions: dict[tuple[str, int], dict[int, tuple[int, int]]] = {}
        self._cluster: ClusterInfo | None = None
        self._coordinators: dict[str, Node] = {}

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    # --- the wire ---------------------------------------------------------------------------

    def _client(self, address: tuple[str, int]) -> BlockingClient:
        client = self._clients.get(address)
        if client is None:
            # Trailing bytes are ignored, as Kafka's clients ignore them (librdkafka's mock cluster
            # sends one after its flexible Metadata responses).
            client = self._clients[address] = BlockingClient(address[0], address[1], self.client_id,
                                                             self.request_timeout, strict=False,
                                                             security=self.security)
        if not client.connected:
            self._versions.pop(address, None)
            client.connect()
        if address not in self._versions:
            self._versions[address] = self._negotiate(client)
        return client

    def _negotiate(self, client: BlockingClient) -> dict[int, tuple[int, int]]:
        """The broker's version ranges: ApiVersions v3, and v0 if it answers v3 with an error
        (a broker older than v3 answers UNSUPPORTED_VERSION in v0's form, and closes nothing)."""
        request = api_versions.REQUEST(client_software_name="kafkalite-admin", client_software_version="1")
        try:
            response = client.send_and_receive(ApiKey.API_VERSIONS, 3, request)
            if response.error_code != E.NONE:
                raise AdminError(response.error_code)
        except (AdminError, ProtocolError):
            client.close()
            client.connect()
            response = client.send_and_receive(ApiKey.API_VERSIONS, 0, api_versions.REQUEST())
            if response.error_code != E.NONE:
                where = f"ApiVersions from {client.host}:{client.port}"
                raise AdminError(response.error_code, what=where) from None
        return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}

    def api_version(self, address: tuple[str, int], api_key: int) -> int:
        """The version to send ``api_key`` in to this broker: the highest both sides know."""
        self._client(address)
        ours = APIS_BY_KEY[api_key].versions
        theirs = self._versions[address].get(api_key)
        name = APIS_BY_KEY[api_key].name
        if theirs is None:
            raise UnsupportedApi(f"{address[0]}:{address[1]} does not serve {name}")
        version = min(ours.high, theirs[1])
        if version < max(ours.low, theirs[0]):
            raise UnsupportedApi(f"{address[0]}:{address[1]} serves {name} v{theirs[0]}-{theirs[1]}, "
                                 f"this client v{ours}")
        return version

    def _send(self, address: tuple[str, int], api_key: int, build: Callable[[int], Any]) -> tuple[int, Any]:
        """Send the request ``build(version)`` makes; (version, response)."""
        version = self.api_version(address, api_key)
        client = self._client(address)
        try:
            return version, client.send_and_receive(api_key, version, build(version))
        except (OSError, ProtocolError):
            self._versions.pop(address, None)
            raise

    def _retrying(self, what: str, attempt: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.timeout
        backoff = RETRY_BACKOFF
        while True:
            try:
                return attempt()
            except AdminError as e:
                if not e.retriable:
                    raise
                last: Exception = e
            except AuthenticationError:
                raise  # refused credentials do not get better by retrying (Kafka's clients stop too)
            except (OSError, ProtocolError) as e:
                last = e
            # Whatever moved is looked up again: the controller, the coordinators, the leaders.
            self._cluster = None
            self._coordinators.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise AdminTimeout(f"{what}: no answer within {self.timeout:g} s (last: {_describe(last)})")
            time.sleep(min(backoff, left))
            backoff = min(backoff * 2, RETRY_BACKOFF_MAX)

    def _timeout_ms(self) -> int:
        """The timeout a request asks the broker to wait for its change (topics, elections)."""
        return int(self.timeout * 1000)

    # --- metadata and routing ---------------------------------------------------------------

    def _addresses(self) -> list[tuple[str, int]]:
        """The brokers to try for a request any broker answers: the known ones, then the bootstrap."""
        known = [n.address for n in self._cluster.brokers.values()] if self._cluster else []
        connected = [a for a in known if a in self._clients and self._clients[a].connected]
        return list(dict.fromkeys([*connected, *known, *self.bootstrap]))

    def _to_any(self, api_key: int, build: Callable[[int], Any]) -> tuple[int, Any]:
        last: Exception | None = None
        for address in self._addresses():
            try:
                return self._send(address, api_key, build)
            except AuthenticationError:
                raise
            except (OSError, ProtocolError) as e:
                last = e
        assert last is not None
        raise last

    def describe_cluster(self, topics: Iterable[str] | None = ()) -> ClusterInfo:
        """Metadata: the brokers, the controller, and ``topics`` (None: every topic)."""
        names = None if topics is None else list(topics)
        return self._retrying("Metadata", lambda: self._metadata(names))

    def _metadata(self, names: list[str] | None) -> ClusterInfo:
        T_ = metadata.REQUEST["topics"]

        def build(version: int) -> Any:
            topics: list[Any] | None
            if names is None:
                topics = [] if version == 0 else None
            else:
                topics = [T_(name=n) for n in names]
            return metadata.REQUEST(topics=topics, allow_auto_topic_creation=False)

        _, r = self._to_any(ApiKey.METADATA, build)
        brokers = {b.node_id: Node(b.node_id, b.host, b.port, b.rack) for b in r.brokers}
        topics = {t.name: TopicInfo(t.name, t.topic_id, t.is_internal, {
            p.partition_index: PartitionInfo(p.partition_index, p.leader_id, p.leader_epoch,
                                             list(p.replica_nodes), list(p.isr_nodes),
                                             list(p.offline_replicas), p.error_code)
            for p in t.partitions}, t.error_code) for t in r.topics}
        cluster = ClusterInfo(r.cluster_id, r.controller_id, brokers, topics)
        if names is None or not names:
            self._cluster = cluster
        elif self._cluster is None:
            self._cluster = ClusterInfo(cluster.cluster_id, cluster.controller_id, brokers, {})
        return cluster

    def _known(self) -> ClusterInfo:
        if self._cluster is None:
            self._metadata([])
        assert self._cluster is not None
        return self._cluster

    def _node(self, node_id: int) -> Node:
        node = self._known().brokers.get(node_id)
        if node is None:  # a broker registered since the metadata was read?
            node = self._metadata([]).brokers.get(node_id)
        if node is None:
            raise AdminError(E.BROKER_NOT_AVAILABLE, f"broker {node_id} is not in the cluster's metadata")
        return node

    def _controller(self) -> Node:
        """The broker Metadata names the controller; any broker when it names none of them (a
        KRaft cluster's brokers forward controller requests; one that cannot answers NOT_CONTROLLER)."""
        cluster = self._known()
        node = cluster.brokers.get(cluster.controller_id)
        if node is None:
            if not cluster.brokers:
                raise AdminError(E.BROKER_NOT_AVAILABLE, "the metadata names no broker")
            node = cluster.brokers[min(cluster.brokers)]
        return node

    def _coordinator(self, group: str) -> Node:
        node = self._coordinators.get(group)
        if node is not None:
            return node

        def build(version: int) -> Any:
            return find_coordinator.REQUEST(key=group, key_type=0, coordinator_keys=[group])

        version, r = self._to_any(ApiKey.FIND_COORDINATOR, build)
        if version >= 4:
            c = r.coordinators[0]
            code, message, node = c.error_code, c.error_message, Node(c.node_id, c.host, c.port)
        else:
            code, message, node = r.error_code, r.error_message, Node(r.node_id, r.host, r.port)
        if code != E.NONE:
            raise AdminError(code, message, f"FindCoordinator for group {group!r}")
        self._coordinators[group] = node
        return node

    # --- topics -----------------------------------------------------------------------------

    def list_topics(self, include_internal: bool = True) -> list[str]:
        topics = self.describe_cluster(None).topics.values()
        return sorted(t.name for t in topics if include_internal or not t.is_internal)

    def describe_topics(self, names: Iterable[str] | None = None) -> dict[str, TopicInfo]:
        """The topics (None: every topic); an unknown name raises UNKNOWN_TOPIC_OR_PARTITION."""
        cluster = self.describe_cluster(None if names is None else list(names))
        for t in cluster.topics.values():
            if t.error_code not in (E.NONE, E.LEADER_NOT_AVAILABLE):
                raise AdminError(t.error_code, what=f"topic {t.name!r}")
        return cluster.topics

    def create_topic(self, topic: NewTopic, validate_only: bool = False) -> None:
        C = create_topics.REQUEST["topics"]

        def attempt() -> None:
            def build(version: int) -> Any:
                assignments = [C["assignments"](partition_index=p, broker_ids=list(rs))
                               for p, rs in sorted((topic.assignments or {}).items())]
                configs = [C["configs"](name=k, value=v) for k, v in topic.configs.items()]
                t = C(name=topic.name, num_partitions=-1 if assignments else topic.num_partitions,
                      replication_factor=-1 if assignments else topic.replication_factor,
                      assignments=assignments, configs=configs)
                return create_topics.REQUEST(topics=[t], timeout_ms=self._timeout_ms(),
                                             validate_only=validate_only)

            _, r = self._send(self._controller().address, ApiKey.CREATE_TOPICS, build)
            for result in r.topics:
                if result.error_code != E.NONE:
                    raise AdminError(result.error_code, result.error_message)

        self._retrying(f"CreateTopics {topic.name}", attempt)

    def delete_topics(self, names: Sequence[str]) -> dict[str, AdminError | None]:
        """Each topic's error (None: deleted)."""
        D = delete_topics.REQUEST["topics"]

        def attempt() -> dict[str, AdminError | None]:
            def build(version: int) -> Any:
                return delete_topics.REQUEST(topics=[D(name=n) for n in names], topic_names=list(names),
                                             timeout_ms=self._timeout_ms())

            _, r = self._send(self._controller().address, ApiKey.DELETE_TOPICS, build)
            return _per_name({x.name: (x.error_code, x.error_message) for x in r.responses})

        return self._retrying("DeleteTopics", attempt)

    def create_partitions(self, counts: Mapping[str, int],
                          assignments: Mapping[str, Sequence[Sequence[int]]] | None = None,
                          validate_only: bool = False) -> dict[str, Errors]:
        """Raise topics' partition counts; each topic's error (None: done)."""
        P = create_partitions.REQUEST["topics"]

        def attempt() -> dict[str, AdminError | None]:
            def build(version: int) -> Any:
                topics = [P(name=n, count=c, assignments=None if not assignments or n not in assignments else
                            [P["assignments"](broker_ids=list(b)) for b in assignments[n]])
                          for n, c in counts.items()]
                return create_partitions.REQUEST(topics=topics, timeout_ms=self._timeout_ms(),
                                                 validate_only=validate_only)

            _, r = self._send(self._controller().address, ApiKey.CREATE_PARTITIONS, build)
            return _per_name({x.name: (x.error_code, x.error_message) for x in r.results})

        return self._retrying("CreatePartitions", attempt)

    # --- configs ----------------------------------------------------------------------------

    def describe_configs(self, resource_type: int, name: str, keys: Sequence[str] | None = None,
                         synonyms: bool = True, documentation: bool = False) -> list[ConfigEntry]:
        """A resource's configs: a topic's, a broker's (``name`` its id; "" the cluster default) or a
        broker's loggers. A named broker (or its loggers) is asked itself, anything else any broker."""
        R = describe_configs.REQUEST["resources"]

        def attempt() -> list[ConfigEntry]:
            def build(version: int) -> Any:
                return describe_configs.REQUEST(
                    resources=[R(resource_type=resource_type, resource_name=name,
                                 configuration_keys=None if keys is None else list(keys))],
                    include_synonyms=synonyms, include_documentation=documentation)

            if resource_type in (BROKER, BROKER_LOGGER) and name:
                if not name.isdigit():
                    raise AdminError(E.INVALID_REQUEST, f"{name!r} is not a broker id")
                version, r = self._send(self._node(int(name)).address, ApiKey.DESCRIBE_CONFIGS, build)
            else:
                version, r = self._to_any(ApiKey.DESCRIBE_CONFIGS, build)
            result = r.results[0]
            if result.error_code != E.NONE:
                raise AdminError(result.error_code, result.error_message, f"DescribeConfigs {name!r}")
            entries = []
            for c in result.configs:
                if version == 0:
                    source = SOURCE_DEFAULT if c.is_default else SOURCE_UNKNOWN
                else:
                    source = c.config_source
                entries.append(ConfigEntry(c.name, c.value, source, c.read_only, c.is_sensitive,
                                           [(s.name, s.value, s.source) for s in c.synonyms],
                                           c.config_type, c.documentation))
            return entries

        return self._retrying("DescribeConfigs", attempt)

    def incremental_alter_configs(self, resource_type: int, name: str, set_: Mapping[str, str],
                                  delete: Sequence[str], validate_only: bool = False) -> None:
        """Set and delete a resource's configs (IncrementalAlterConfigs, SET and DELETE): a topic's,
        a broker's (``name`` its id; "" the cluster-wide default) or a broker's loggers. A named
        broker (or its loggers) is asked itself, anything else any broker (which forwards it to
        the controller)."""
        R = incremental_alter_configs.REQUEST["resources"]

        def build(version: int) -> Any:
            configs = [R["configs"](name=k, config_operation=OP_SET, value=v) for k, v in set_.items()]
            configs += [R["configs"](name=k, config_operation=OP_DELETE, value=None) for k in delete]
            return incremental_alter_configs.REQUEST(
                resources=[R(resource_type=resource_type, resource_name=name, configs=configs)],
                validate_only=validate_only)

        def attempt() -> None:
            if resource_type in (BROKER, BROKER_LOGGER) and name:
                _, r = self._send(self._node(int(name)).address, ApiKey.INCREMENTAL_ALTER_CONFIGS, build)
            else:
                _, r = self._to_any(ApiKey.INCREMENTAL_ALTER_CONFIGS, build)
            result = r.responses[0]
            if result.error_code != E.NONE:
                raise AdminError(result.error_code, result.error_message)

        self._retrying("IncrementalAlterConfigs", attempt)

    # --- consumer groups --------------------------------------------------------------------

    def list_groups(self) -> list[GroupListing]:
        """Every broker's groups (each broker lists the groups it coordinates)."""
        def attempt() -> list[GroupListing]:
            found: dict[str, GroupListing] = {}
            for node in self._known().brokers.values():
                _, r = self._send(node.address, ApiKey.LIST_GROUPS, lambda v: list_groups.REQUEST())
                if r.error_code != E.NONE:
                    raise AdminError(r.error_code, what=f"ListGroups on broker {node.node_id}")
                for g in r.groups:
                    found[g.group_id] = GroupListing(g.group_id, g.protocol_type, g.group_state)
            return sorted(found.values(), key=lambda g: g.group_id)

        return self._retrying("ListGroups", attempt)

    def describe_group(self, group: str) -> GroupInfo:
        def attempt() -> GroupInfo:
            coordinator = self._coordinator(group)
            _, r = self._send(coordinator.address, ApiKey.DESCRIBE_GROUPS,
                              lambda v: describe_groups.REQUEST(groups=[group]))
            g = r.groups[0]
            if g.error_code == GROUP_ID_NOT_FOUND:  # v6+ (Kafka 4.0); older versions answer Dead
                return GroupInfo(group, "Dead", "", "", [], coordinator)
            if g.error_code != E.NONE:
                raise AdminError(g.error_code, what=f"DescribeGroups {group!r}")
            consumer = g.protocol_type == "consumer"
            members = [MemberInfo(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                  consumer_assignment(m.member_assignment) if consumer else [])
                       for m in g.members]
            return GroupInfo(g.group_id, g.group_state, g.protocol_type, g.protocol_data, members,
                             coordinator)

        return self._retrying(f"DescribeGroups {group}", attempt)

    def list_group_offsets(self, group: str,
                           partitions: Iterable[tuple[str, int]] | None = None) -> dict[tuple[str, int], int]:
        """The group's committed offsets (None: of every partition it committed): {(topic,
        partition): offset}, without the partitions it has none for."""
        wanted: dict[str, list[int]] | None = None
        if partitions is not None:
            wanted = {}
            for t, p in partitions:
                wanted.setdefault(t, []).append(p)

        def build(version: int) -> Any:
            Old = offset_fetch.REQUEST["topics"]
            G = offset_fetch.REQUEST["groups"]
            old = new = None
            if wanted is not None:
                old = [Old(name=t, partition_indexes=ps) for t, ps in wanted.items()]
                new = [G["topics"](name=t, partition_indexes=ps) for t, ps in wanted.items()]
            return offset_fetch.REQUEST(group_id=group, topics=old, groups=[G(group_id=group, topics=new)])

        def attempt() -> dict[tuple[str, int], int]:
            version, r = self._send(self._coordinator(group).address, ApiKey.OFFSET_FETCH, build)
            if version >= 8:
                code, topics = r.groups[0].error_code, r.groups[0].topics
            else:
                code, topics = (r.error_code if version >= 2 else E.NONE), r.topics
            if code != E.NONE:
                raise AdminError(code, what=f"OffsetFetch {group!r}")
            out = {}
            for t in topics:
                for p in t.partitions:
                    if p.error_code != E.NONE:
                        raise AdminError(p.error_code, what=f"OffsetFetch {t.name}-{p.partition_index}")
                    if p.committed_offset >= 0:
                        out[(t.name, p.partition_index)] = p.committed_offset
            return out

        return self._retrying(f"OffsetFetch {group}", attempt)

    def alter_group_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit ``offsets`` for a group without members (as Kafka's alterConsumerGroupOffsets: a
        group with members refuses it, UNKNOWN_MEMBER_ID)."""
        by_topic: dict[str, list[tuple[int, int]]] = {}
        for (t, p), o in sorted(offsets.items()):
            by_topic.setdefault(t, []).append((p, o))
        CT = offset_commit.REQUEST["topics"]

        def build(version: int) -> Any:
            topics = [CT(name=t, partitions=[CT["partitions"](partition_index=p, committed_offset=o,
                                                               committed_metadata="")
                                             for p, o in ps]) for t, ps in by_topic.items()]
            return offset_commit.REQUEST(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                                         topics=topics)

        def attempt() -> None:
            _, r = self._send(self._coordinator(group).address, ApiKey.OFFSET_COMMIT, build)
            for t in r.topics:
                for p in t.partitions:
                    if p.error_code != E.NONE:
                        raise AdminError(p.error_code, what=f"OffsetCommit {t.name}-{p.partition_index}")

        self._retrying(f"OffsetCommit {group}", attempt)

    def delete_groups(self, groups: Sequence[str]) -> dict[str, AdminError | None]:
        """Each group's error (None: deleted)."""
        out: dict[str, AdminError | None] = {}
        for group in groups:
            def attempt(group: str = group) -> AdminError | None:
                _, r = self._send(self._coordinator(group).address, ApiKey.DELETE_GROUPS,
                                  lambda v: delete_groups.REQUEST(groups_names=[group]))
                code = r.results[0].error_code
                if code in RETRIABLE:
                    raise AdminError(code)
                return None if code == E.NONE else AdminError(code)

            out[group] = self._retrying(f"DeleteGroups {group}", attempt)
        return out

    # --- offsets ----------------------------------------------------------------------------

    def list_offsets(self, specs: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """Each partition's offset for a timestamp, or EARLIEST / LATEST, asked of its leader:
        {(topic, partition): offset}, -1 where no record has that timestamp or a later one."""
        remaining = dict(specs)
        found: dict[tuple[str, int], int] = {}

        def attempt() -> dict[tuple[str, int], int]:
            cluster = self.describe_cluster(sorted({t for t, _ in remaining}))
            by_leader: dict[int, dict[tuple[str, int], int]] = {}
            for (t, p), ts in remaining.items():
                info = cluster.topics.get(t)
                if info is None or info.error_code not in (E.NONE, E.LEADER_NOT_AVAILABLE):
                    code = info.error_code if info else E.UNKNOWN_TOPIC_OR_PARTITION
                    raise AdminError(code, what=f"topic {t!r}")
                part = info.partitions.get(p)
                if part is None:
                    raise AdminError(E.UNKNOWN_TOPIC_OR_PARTITION, what=f"{t}-{p}")
                if part.leader < 0:
                    raise AdminError(E.LEADER_NOT_AVAILABLE, what=f"{t}-{p}")
                by_leader.setdefault(part.leader, {})[(t, p)] = ts
            retry: AdminError | None = None
            for leader, asks in by_leader.items():
                version, r = self._send(cluster.brokers[leader].address, ApiKey.LIST_OFFSETS,
                                        _same(_list_offsets_request(asks)))
                for t in r.topics:
                    for p in t.partitions:
                        tp = (t.name, p.partition_index)
                        if p.error_code in RETRIABLE:
                            retry = AdminError(p.error_code, what=f"ListOffsets {t.name}-{p.partition_index}")
                        elif p.error_code != E.NONE:
                            raise AdminError(p.error_code, what=f"ListOffsets {t.name}-{p.partition_index}")
                        else:
                            found[tp] = p.offset if version >= 1 else (p.old_style_offsets or [-1])[0]
                            remaining.pop(tp, None)
            if retry is not None:
                raise retry
            return found

        return self._retrying("ListOffsets", attempt)

    # --- elections --------------------------------------------------------------------------

    def elect_leaders(self, election_type: int,
                      partitions: Iterable[tuple[str, int]] | None) -> dict[tuple[str, int], Errors]:
        """Elect the preferred (or, UNCLEAN, any live) replica of ``partitions`` (None: every
        partition): each partition's error (None: elected; ELECTION_NOT_NEEDED: already led so)."""
        wanted: dict[str, list[int]] | None = None
        if partitions is not None:
            wanted = {}
            for t, p in partitions:
                wanted.setdefault(t, []).append(p)
        TP = elect_leaders.REQUEST["topic_partitions"]

        def attempt() -> dict[tuple[str, int], AdminError | None]:
            def build(version: int) -> Any:
                if version == 0 and election_type != elect_leaders.PREFERRED:
                    raise UnsupportedApi("the broker's ElectLeaders v0 elects only PREFERRED leaders")
                tps = None if wanted is None else [TP(topic=t, partitions=ps) for t, ps in wanted.items()]
                return elect_leaders.REQUEST(election_type=election_type, topic_partitions=tps,
                                             timeout_ms=self._timeout_ms())

            _, r = self._send(self._controller().address, ApiKey.ELECT_LEADERS, build)
            if r.error_code != E.NONE:
                raise AdminError(r.error_code, what="ElectLeaders")
            out: dict[tuple[str, int], AdminError | None] = {}
            for t in r.replica_election_results:
                for p in t.partition_result:
                    if p.error_code in RETRIABLE:
                        where = f"ElectLeaders {t.topic}-{p.partition_id}"
                        raise AdminError(p.error_code, p.error_message, where)
                    out[(t.topic, p.partition_id)] = (None if p.error_code == E.NONE
                                                      else AdminError(p.error_code, p.error_message))
            return out

        return self._retrying("ElectLeaders", attempt)

    # --- reassignments ----------------------------------------------------------------------

    def alter_partition_reassignments(self, targets: Mapping[tuple[str, int], Sequence[int] | None]
                                      ) -> dict[tuple[str, int], Errors]:
        """Start moving partitions to ``targets``' replicas (None: cancel the move in progress), at
        the controller: each partition's error (None: accepted)."""
        by_topic: dict[str, list[tuple[int, Sequence[int] | None]]] = {}
        for (t, p), replicas in sorted(targets.items()):
            by_topic.setdefault(t, []).append((p, replicas))
        RT = alter_partition_reassignments.REQUEST["topics"]

        def build(version: int) -> Any:
            topics = [RT(name=t, partitions=[RT["partitions"](partition_index=p,
                                                               replicas=None if rs is None else list(rs))
                                             for p, rs in ps]) for t, ps in by_topic.items()]
            return alter_partition_reassignments.REQUEST(timeout_ms=self._timeout_ms(), topics=topics)

        def attempt() -> dict[tuple[str, int], Errors]:
            _, r = self._send(self._controller().address, ApiKey.ALTER_PARTITION_REASSIGNMENTS, build)
            if r.error_code != E.NONE:
                raise AdminError(r.error_code, r.error_message, "AlterPartitionReassignments")
            out: dict[tuple[str, int], Errors] = {}
            for t in r.responses:
                for p in t.partitions:
                    if p.error_code in RETRIABLE:
                        raise AdminError(p.error_code, p.error_message, f"{t.name}-{p.partition_index}")
                    out[(t.name, p.partition_index)] = (None if p.error_code == E.NONE
                                                        else AdminError(p.error_code, p.error_message))
            return out

        return self._retrying("AlterPartitionReassignments", attempt)

    def list_partition_reassignments(self, partitions: Iterable[tuple[str, int]] | None
                                     ) -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]:
        """The reassignments in progress (of ``partitions``; None: all), at the controller:
        {(topic, partition): (replicas, adding, removing)}."""
        wanted: dict[str, list[int]] | None = None
        if partitions is not None:
            wanted = {}
            for t, p in partitions:
                wanted.setdefault(t, []).append(p)
        LT = list_partition_reassignments.REQUEST["topics"]

        def build(version: int) -> Any:
            topics = None
            if wanted is not None:
                topics = [LT(name=t, partition_indexes=ps) for t, ps in wanted.items()]
            return list_partition_reassignments.REQUEST(timeout_ms=self._timeout_ms(), topics=topics)

        def attempt() -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]:
            _, r = self._send(self._controller().address, ApiKey.LIST_PARTITION_REASSIGNMENTS, build)
            if r.error_code != E.NONE:
                raise AdminError(r.error_code, r.error_message, "ListPartitionReassignments")
            return {(t.name, p.partition_index): (list(p.replicas), list(p.adding_replicas),
                                                  list(p.removing_replicas))
                    for t in r.topics for p in t.partitions}

        return self._retrying("ListPartitionReassignments", attempt)

def _same(body: Any) -> Callable[[int], Any]:
    """A request body the same in every version."""
    return lambda version: body


def _list_offsets_request(asks: Mapping[tuple[str, int], int]) -> Any:
    LT = list_offsets.REQUEST["topics"]
    by_topic: dict[str, list[Any]] = {}
    for (t, p), ts in sorted(asks.items()):
        by_topic.setdefault(t, []).append(LT["partitions"](partition_index=p, timestamp=ts))
    return list_offsets.REQUEST(replica_id=-1, isolation_level=0,
                                topics=[LT(name=t, partitions=ps) for t, ps in by_topic.items()])


def _per_name(results: Mapping[str, tuple[int, str | None]]) -> dict[str, AdminError | None]:
    if any(code in RETRIABLE for code, _ in results.values()):
        code, message = next(r for r in results.values() if r[0] in RETRIABLE)
        raise AdminError(code, message)
    return {name: None if code == E.NONE else AdminError(code, message)
            for name, (code, message) in results.items()}


def _describe(error: Exception) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
