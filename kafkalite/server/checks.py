"""What each api checks before it acts: Kafka's KafkaApis / AuthHelper authorization, api by api.

``Checks.check(request)`` runs before the request's handler (``KafkaApis.handle``) and asks the
broker's ``Authorizer`` (``ALLOW_ALL`` when ``authorizer.class.name`` is empty, so that nothing
changes without one). It either

- answers the whole request with Kafka's error (GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED
  as Kafka's ``getErrorResponse`` lays it out: the top-level error code, else every item), or
- takes the denied topics (partitions, groups, resources) out of the request, lets the handler
  answer the rest, and puts them back into the answer with their error (TOPIC_AUTHORIZATION_FAILED
  ...) when ``respond`` encodes it (``Denied.overlay``, the hook the fault injector uses too); the
  same hook hides what an all-topics / all-groups listing may not show and fills the authorized
  operations bit fields (Metadata v8+, DescribeGroups v3+, DescribeCluster, DescribeTopicPartitions).

The table of checks, api by api, is docs/security.md ("What each api checks").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.common.uuids import ZERO_UUID
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import APIS_BY_KEY, ApiKey
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.acl import AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_NAME, AclOperation, ResourceType

from .authorizer import ALLOW_ALL, Authorizer
from .forwarding import PUSHED
from .handlers.metadata import INTERNAL_TOPICS
from .metadata_cache import MetadataCache
from .responses import respond

Op = AclOperation
RT = ResourceType


# DescribeConfigs / AlterConfigs resource types (ConfigResource.Type) and who guards them.
CONFIG_TOPIC, CONFIG_BROKER, CONFIG_BROKER_LOGGER, CONFIG_CLIENT_METRICS, CONFIG_GROUP = 2, 4, 8, 16, 32
CONFIG_GUARD: dict[int, tuple[ResourceType, int]] = {
    CONFIG_TOPIC: (RT.TOPIC, E.TOPIC_AUTHORIZATION_FAILED),
    CONFIG_GROUP: (RT.GROUP, E.GROUP_AUTHORIZATION_FAILED),
    CONFIG_BROKER: (RT.CLUSTER, E.CLUSTER_AUTHORIZATION_FAILED),
    CONFIG_BROKER_LOGGER: (RT.CLUSTER, E.CLUSTER_AUTHORIZATION_FAILED),
    CONFIG_CLIENT_METRICS: (RT.CLUSTER, E.CLUSTER_AUTHORIZATION_FAILED),
}

# The apis only other nodes send (the controller, brokers): CLUSTER_ACTION on the cluster, else
# the whole request CLUSTER_AUTHORIZATION_FAILED (Kafka's authorizeClusterOperation).
CLUSTER_ACTION_APIS = frozenset({
    ApiKey.LEADER_AND_ISR, ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA, ApiKey.BROKER_REGISTRATION,
    ApiKey.BROKER_HEARTBEAT, ApiKey.ALTER_PARTITION, ApiKey.ALLOCATE_PRODUCER_IDS,
    # KRaft's quorum (Kafka's ControllerApis: handleVote, handleBeginQuorumEpoch, ...)
    ApiKey.VOTE, ApiKey.BEGIN_QUORUM_EPOCH, ApiKey.END_QUORUM_EPOCH, ApiKey.FETCH_SNAPSHOT,
})
# The share coordinator's (Kafka's handleInitializeShareGroupStateRequest, ...): CLUSTER_ACTION too,
# refused per partition (their answers have no top-level error code).
SHARE_STATE_APIS = frozenset({
    ApiKey.INITIALIZE_SHARE_GROUP_STATE, ApiKey.READ_SHARE_GROUP_STATE, ApiKey.WRITE_SHARE_GROUP_STATE,
    ApiKey.DELETE_SHARE_GROUP_STATE, ApiKey.READ_SHARE_GROUP_STATE_SUMMARY,
})

# The apis that answer authorized operations: checked even without an authorizer (every
# operation the resource supports, as Kafka's AuthHelper answers then).
OPERATIONS_APIS = frozenset({ApiKey.METADATA, ApiKey.DESCRIBE_CLUSTER, ApiKey.DESCRIBE_GROUPS,
                             ApiKey.DESCRIBE_TOPIC_PARTITIONS})

Hook = Callable[[Any], None]


class Denied:
    """What the checks took out of a request, put back into its answer (``respond`` calls
    ``overlay`` before encoding, as it does for the fault injector's ``Injected``)."""

    def __init__(self, previous: Any = None) -> None:
        self.hooks: list[Hook] = []
        self.previous = previous
        self.same_for_all = False  # the overlay is the same whoever asks (see Checks._metadata)

    def overlay(self, request: Request, body: Any) -> None:
        for hook in self.hooks:
            hook(body)
        if self.previous is not None:
            self.previous.overlay(request, body)


def _hook(request: Request, hook: Hook) -> None:
    denied = request.injected
    if not isinstance(denied, Denied):
        denied = request.injected = Denied(request.injected)
    denied.hooks.append(hook)


def _put_back_topics(group_id: str, topics: list[Any]) -> Hook:
    """Refused topics into their group's answer (DescribeShareGroupOffsets)."""
    def hook(response: Any) -> None:
        for g in response.groups:
            if g.group_id == group_id:
                g.topics.extend(topics)
    return hook


def _absent_or(version: int, struct: Any, field: str) -> bool:
    f = next((f for f in struct.fields if f.name == field), None)
    return f is not None and f.present_in(version)


class Checks:
    def __init__(self, metadata_cache: MetadataCache | None = None,
                 authorizer_of: Callable[[], Authorizer | None] | None = None,
                 auto_create_topics: bool = True) -> None:
        """``authorizer_of``: where the broker's authorizer is (asked at each request, so that one
        built or replaced after the apis is used); none there, or no ``authorizer_of``: ALLOW_ALL."""
        self.metadata_cache = metadata_cache
        self.auto_create_topics = auto_create_topics  # auto.create.topics.enable
        self.authorizer_of = authorizer_of
        self._authorizer: Authorizer | None = None
        self._checks: dict[int, Callable[[Request], Response | None]] = {
            ApiKey.PRODUCE: self._produce, ApiKey.FETCH: self._fetch,
            ApiKey.LIST_OFFSETS: self._list_offsets, ApiKey.METADATA: self._metadata,
            ApiKey.OFFSET_COMMIT: self._offset_commit, ApiKey.OFFSET_FETCH: self._offset_fetch,
            ApiKey.FIND_COORDINATOR: self._find_coordinator,
            ApiKey.JOIN_GROUP: self._group_read, ApiKey.SYNC_GROUP: self._group_read,
            ApiKey.HEARTBEAT: self._group_read, ApiKey.LEAVE_GROUP: self._group_read,
            ApiKey.CONSUMER_GROUP_HEARTBEAT: self._group_read,
            ApiKey.CONSUMER_GROUP_DESCRIBE: self._consumer_group_describe,
            ApiKey.DESCRIBE_GROUPS: self._describe_groups, ApiKey.LIST_GROUPS: self._list_groups,
            ApiKey.DELETE_GROUPS: self._delete_groups, ApiKey.OFFSET_DELETE: self._offset_delete,
            ApiKey.CREATE_TOPICS: self._create_topics, ApiKey.DELETE_TOPICS: self._delete_topics,
            ApiKey.CREATE_PARTITIONS: self._create_partitions, ApiKey.DELETE_RECORDS: self._delete_records,
            ApiKey.INIT_PRODUCER_ID: self._init_producer_id,
            ApiKey.OFFSET_FOR_LEADER_EPOCH: self._offset_for_leader_epoch,
            ApiKey.DESCRIBE_CONFIGS: self._describe_configs, ApiKey.ALTER_CONFIGS: self._alter_configs,
            ApiKey.INCREMENTAL_ALTER_CONFIGS: self._alter_configs,
            ApiKey.LIST_CONFIG_RESOURCES: self._list_config_resources,
            ApiKey.ALTER_REPLICA_LOG_DIRS: self._alter_replica_log_dirs,
            ApiKey.DESCRIBE_LOG_DIRS: self._describe_log_dirs, ApiKey.ELECT_LEADERS: self._elect_leaders,
            ApiKey.DESCRIBE_CLIENT_QUOTAS: self._cluster(Op.DESCRIBE_CONFIGS),
            ApiKey.ALTER_CLIENT_QUOTAS: self._alter_client_quotas,
            ApiKey.ALTER_PARTITION_REASSIGNMENTS: self._cluster(Op.ALTER),
            ApiKey.LIST_PARTITION_REASSIGNMENTS: self._cluster(Op.DESCRIBE),
            ApiKey.DESCRIBE_QUORUM: self._cluster(Op.DESCRIBE),
            ApiKey.ADD_PARTITIONS_TO_TXN: self._add_partitions_to_txn,
            ApiKey.ADD_OFFSETS_TO_TXN: self._add_offsets_to_txn, ApiKey.END_TXN: self._end_txn,
            ApiKey.TXN_OFFSET_COMMIT: self._txn_offset_commit,
            ApiKey.WRITE_TXN_MARKERS: self._write_txn_markers,
            ApiKey.DESCRIBE_PRODUCERS: self._describe_producers,
            ApiKey.DESCRIBE_TRANSACTIONS: self._describe_transactions,
            ApiKey.LIST_TRANSACTIONS: self._list_transactions,
            ApiKey.DESCRIBE_CLUSTER: self._describe_cluster,
            ApiKey.DESCRIBE_TOPIC_PARTITIONS: self._describe_topic_partitions,
            ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: self._describe_share_group_offsets,
            ApiKey.ALTER_SHARE_GROUP_OFFSETS: self._alter_share_group_offsets,
            ApiKey.DELETE_SHARE_GROUP_OFFSETS: self._delete_share_group_offsets,
        }
        for key in CLUSTER_ACTION_APIS:
            self._checks[key] = self._cluster(Op.CLUSTER_ACTION)
        for key in SHARE_STATE_APIS:
            self._checks[key] = self._share_state

    @property
    def authorizer(self) -> Authorizer:
        if self._authorizer is not None:
            return self._authorizer
        found = self.authorizer_of() if self.authorizer_of is not None else None
        return found if found is not None else ALLOW_ALL

    @authorizer.setter
    def authorizer(self, authorizer: Authorizer) -> None:
        self._authorizer = authorizer

    def check(self, request: Request) -> Response | None:
        """The whole answer when the request is refused (or nothing of it is left to handle);
        None to hand the (possibly narrowed) request to its handler."""
        if request.body is None:
            return None
        if self.authorizer is ALLOW_ALL and request.api_key not in OPERATIONS_APIS:
            return None  # nothing to refuse nor hide: no cost without an authorizer
        check = self._checks.get(request.api_key)
        return check(request) if check is not None else None

    # --- asking --------------------------------------------------------------------------------

    def _allowed(self, request: Request, op: AclOperation, rtype: ResourceType, name: str,
                 log_if_denied: bool = True) -> bool:
        return self.authorizer.authorize(request, op, rtype, name, log_if_denied)

    def _subset(self, request: Request, op: AclOperation, rtype: ResourceType,
                       names: Iterable[str]) -> set[str]:
        return self.authorizer.authorized(request, op, rtype, set(names))

    def _ops(self, request: Request, rtype: ResourceType, name: str) -> int:
        return self.authorizer.authorized_operations(request, rtype, name)

    def _cluster_allowed(self, request: Request, op: AclOperation, log_if_denied: bool = True) -> bool:
        return self._allowed(request, op, RT.CLUSTER, CLUSTER_NAME, log_if_denied)

    def _topic_name(self, topic_id: Any) -> str | None:
        if self.metadata_cache is None or topic_id is None:
            return None
        info = self.metadata_cache.snapshot.topic_by_id(topic_id)
        return info.name if info is not None else None

    # --- answering the whole request with one error --------------------------------------------

    @staticmethod
    def _whole(request: Request, code: int) -> Response:
        """Kafka's getErrorResponse for the apis answered by one top-level error code."""
        api = APIS_BY_KEY[request.api_key]
        if _absent_or(request.api_version, api.response, "error_code"):
            return respond(request, api.response(error_code=code))
        raise AssertionError(f"{api.name} v{request.api_version} has no top-level error code")

    def _cluster(self, op: AclOperation) -> Callable[[Request], Response | None]:
        def check(request: Request) -> Response | None:
            if self._cluster_allowed(request, op):
                return None
            return self._whole(request, E.CLUSTER_AUTHORIZATION_FAILED)
        return check

    def _share_state(self, request: Request) -> Response | None:
        """CLUSTER_ACTION, else every partition CLUSTER_AUTHORIZATION_FAILED (Kafka's
        getErrorResponse of the share coordinator's apis)."""
        if self._cluster_allowed(request, Op.CLUSTER_ACTION):
            return None
        R = APIS_BY_KEY[request.api_key].response
        T = R["results"]
        code = E.CLUSTER_AUTHORIZATION_FAILED
        return respond(request, R(results=[T(topic_id=t.topic_id, partitions=[
            T["partitions"](partition=p.partition, error_code=code, error_message=E.for_code(code).message)
            for p in t.partitions]) for t in request.body.topics]))

    def _drop_topics(self, request: Request, topics_field: str, name_field: str, allowed: set[str],
                     add: Callable[[Any, Any, int], None], code: int,
                     id_field: str | None = None) -> Response | None:
        """Take the topics not in ``allowed`` out of the request; ``add(body, topic, code)`` puts
        each back into the answer. A topic named by id is judged by its name (an id not known is
        left to the handler, which answers UNKNOWN_TOPIC_ID)."""
        body = request.body
        kept, denied = [], []
        for t in getattr(body, topics_field) or ():
            name = self._name_of(t, name_field, id_field)
            if name is None or name in allowed:
                kept.append(t)
            else:
                denied.append(t)
        if not denied:
            return None
        setattr(body, topics_field, kept)

        def put_back(response: Any) -> None:
            for t in denied:
                add(response, t, code)
        _hook(request, put_back)
        if not kept:
            return respond(request, APIS_BY_KEY[request.api_key].response())
        return None

    def _name_of(self, topic: Any, name_field: str, id_field: str | None) -> str | None:
        if id_field is None:
            return getattr(topic, name_field, None)
        return self._topic_name(getattr(topic, id_field))

    def _names(self, topics: Any, name_field: str, id_field: str | None = None) -> set[str]:
        names = set()
        for t in topics or ():
            name = self._name_of(t, name_field, id_field)
            if name is not None:
                names.add(name)
        return names

    # --- Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DeleteRecords, DescribeProducers ---

    def _produce(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        by_id = version >= 13
        R = APIS_BY_KEY[ApiKey.PRODUCE].response
        T, P = R["responses"], R["responses"]["partition_responses"]
        key = "topic_id" if by_id else "name"

        def add(response: Any, t: Any, code: int) -> None:
            response.responses.append(T(**{key: getattr(t, key)}, partition_responses=[
                P(index=p.index, error_code=code, base_offset=-1) for p in t.partition_data]))
        if body.transactional_id is not None and not self._allowed(
                request, Op.WRITE, RT.TRANSACTIONAL_ID, body.transactional_id):
            refused = body.topic_data
            body.topic_data = []

            def put_back(response: Any) -> None:
                for t in refused:
                    add(response, t, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            _hook(request, put_back)
            return respond(request, R()) if body.acks != 0 else None
        names = self._names(body.topic_data, "name", "topic_id" if by_id else None)
        allowed = self._subset(request, Op.WRITE, RT.TOPIC, names)
        return self._drop_topics(request, "topic_data", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED,
                                 "topic_id" if by_id else None)

    def _fetch(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        by_id = version >= 13
        R = APIS_BY_KEY[ApiKey.FETCH].response
        T, P = R["responses"], R["responses"]["partitions"]
        key = "topic_id" if by_id else "topic"

        def add(response: Any, t: Any, code: int) -> None:
            response.responses.append(T(**{key: getattr(t, key)}, partitions=[
                P(partition_index=p.partition, error_code=code, high_watermark=-1, last_stable_offset=-1,
                  log_start_offset=-1, records=None) for p in t.partitions]))
        replica_id = body.replica_id if version < 15 else body.replica_state.replica_id
        if replica_id >= 0:  # a follower: CLUSTER_ACTION, else every partition refused
            allowed = (self._names(body.topics, "topic", "topic_id" if by_id else None)
                       if self._cluster_allowed(request, Op.CLUSTER_ACTION) else set())
        else:
            allowed = self._subset(request, Op.READ, RT.TOPIC,
                                          self._names(body.topics, "topic", "topic_id" if by_id else None))
        return self._drop_topics(request, "topics", "topic", allowed, add, E.TOPIC_AUTHORIZATION_FAILED,
                                 "topic_id" if by_id else None)

    def _list_offsets(self, request: Request) -> Response | None:
        R = APIS_BY_KEY[ApiKey.LIST_OFFSETS].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, partitions=[
                P(partition_index=p.partition_index, error_code=code, timestamp=-1, offset=-1)
                for p in t.partitions]))
        allowed = self._subset(request, Op.DESCRIBE, RT.TOPIC, self._names(request.body.topics, "name"))
        return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    def _offset_for_leader_epoch(self, request: Request) -> Response | None:
        body = request.body
        R = APIS_BY_KEY[ApiKey.OFFSET_FOR_LEADER_EPOCH].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(topic=t.topic, partitions=[
                P(partition=p.partition, error_code=code, leader_epoch=-1, end_offset=-1)
                for p in t.partitions]))
        # CLUSTER_ACTION (a follower's right) covers every topic; else DESCRIBE on each, whoever
        # asks (KIP-320: consumers ask too).
        if self._cluster_allowed(request, Op.CLUSTER_ACTION, log_if_denied=False):
            return None
        allowed = self._subset(request, Op.DESCRIBE, RT.TOPIC, self._names(body.topics, "topic"))
        return self._drop_topics(request, "topics", "topic", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    def _delete_records(self, request: Request) -> Response | None:
        R = APIS_BY_KEY[ApiKey.DELETE_RECORDS].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, partitions=[
                P(partition_index=p.partition_index, low_watermark=-1, error_code=code)
                for p in t.partitions]))
        allowed = self._subset(request, Op.DELETE, RT.TOPIC, self._names(request.body.topics, "name"))
        return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    def _describe_producers(self, request: Request) -> Response | None:
        R = APIS_BY_KEY[ApiKey.DESCRIBE_PRODUCERS].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, partitions=[
                P(partition_index=i, error_code=code) for i in t.partition_indexes]))
        allowed = self._subset(request, Op.READ, RT.TOPIC, self._names(request.body.topics, "name"))
        return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    # --- Metadata, DescribeTopicPartitions, DescribeCluster ------------------------------------

    def _metadata(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        T = APIS_BY_KEY[ApiKey.METADATA].response["topics"]
        all_topics = body.topics is None or (version == 0 and not body.topics)
        denied: list[Any] = []
        # Without an authorizer nothing is denied (every topic described, any unknown one
        # creatable): the request stays as it is, with no per-topic work.
        if not all_topics and self.authorizer is ALLOW_ALL:
            v0_emptied = False  # (a v0 request naming no topic asks for all of them)
        elif not all_topics:
            snap = self.metadata_cache.snapshot if self.metadata_cache is not None else None
            named = self._names(body.topics, "name") | {
                n for t in body.topics if t.name is None and (n := self._topic_name(t.topic_id)) is not None}
            described = self._subset(request, Op.DESCRIBE, RT.TOPIC, named)
            auto_create = self.auto_create_topics and (version < 4 or body.allow_auto_topic_creation)
            unknown = {n for n in described if snap is not None and n not in snap.topics}
            creatable = unknown
            if unknown and auto_create and not self._cluster_allowed(request, Op.CREATE, log_if_denied=False):
                creatable = self._subset(request, Op.CREATE, RT.TOPIC, unknown)
            kept = []
            for t in body.topics:
                name = t.name if t.name is not None else self._topic_name(t.topic_id)
                if name is None:  # an id not known: the handler's UNKNOWN_TOPIC_ID
                    kept.append(t)
                elif name not in described:
                    # Named: told nothing, not even the id; by id: the id is no secret (as Kafka).
                    denied.append(T(error_code=E.TOPIC_AUTHORIZATION_FAILED, name=t.name, is_internal=False,
                                    topic_id=ZERO_UUID if t.name is not None else t.topic_id, partitions=[]))
                elif auto_create and name in unknown and name not in creatable:
                    denied.append(T(error_code=E.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID,
                                    is_internal=name in INTERNAL_TOPICS, partitions=[]))
                else:
                    kept.append(t)
            body.topics = kept
            v0_emptied = version == 0 and not kept
        else:
            v0_emptied = False
        with_topic_ops = version >= 8 and body.include_topic_authorized_operations
        with_cluster_ops = 8 <= version <= 10 and body.include_cluster_authorized_operations

        def overlay(response: Any) -> None:
            if v0_emptied:
                response.topics = []
            elif all_topics:
                shown = self._visible(request, Op.DESCRIBE, RT.TOPIC,
                                                  [t.name for t in response.topics])
                response.topics = [t for t in response.topics if t.name in shown]
            if with_topic_ops:
                for t in response.topics:
                    if t.name is not None:
                        t.topic_authorized_operations = self._ops(request, RT.TOPIC, t.name)
            response.topics.extend(denied)
            if with_cluster_ops:
                response.cluster_authorized_operations = self._cluster_operations(request)
        _hook(request, overlay)
        # Without an authorizer this overlay does the same for every principal: the handler may
        # reuse the answer (handlers/metadata.py); a test's faults (``previous``) forbid it.
        hooks = request.injected
        assert isinstance(hooks, Denied)
        hooks.same_for_all = self.authorizer is ALLOW_ALL and hooks.previous is None and len(hooks.hooks) == 1
        return None

    def _visible(self, request: Request, op: AclOperation, rtype: ResourceType,
                             names: Iterable[str]) -> set[str]:
        """Listings drop what may not be seen without logging each as denied (Kafka's
        filterByAuthorized with logIfDenied = false)."""
        return self.authorizer.authorized(request, op, rtype, set(names), log_if_denied=False)

    def _cluster_operations(self, request: Request) -> int:
        if not self._cluster_allowed(request, Op.DESCRIBE, log_if_denied=False):
            return 0
        return self._ops(request, RT.CLUSTER, CLUSTER_NAME)

    def _describe_cluster(self, request: Request) -> Response | None:
        if request.body.include_cluster_authorized_operations:
            def overlay(response: Any) -> None:
                if response.error_code == E.NONE:
                    response.cluster_authorized_operations = self._cluster_operations(request)
            _hook(request, overlay)
        return None

    def _describe_topic_partitions(self, request: Request) -> Response | None:
        body = request.body
        T = APIS_BY_KEY[ApiKey.DESCRIBE_TOPIC_PARTITIONS].response["topics"]
        listing = not body.topics
        denied: list[Any] = []
        if not listing:
            allowed = self._subset(request, Op.DESCRIBE, RT.TOPIC, self._names(body.topics, "name"))
            kept = [t for t in body.topics if t.name in allowed]
            denied = [T(error_code=E.TOPIC_AUTHORIZATION_FAILED, name=t.name, topic_id=ZERO_UUID,
                        is_internal=False, partitions=[],
                        topic_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)
                      for t in body.topics if t.name not in allowed]
            if not kept:
                response = APIS_BY_KEY[ApiKey.DESCRIBE_TOPIC_PARTITIONS].response(topics=denied,
                                                                                  next_cursor=None)
                return respond(request, response)
            body.topics = kept

        def overlay(response: Any) -> None:
            if listing:
                shown = self._visible(request, Op.DESCRIBE, RT.TOPIC, [t.name for t in response.topics])
                response.topics = [t for t in response.topics if t.name in shown]
            for t in response.topics:  # as Kafka: every topic answered, known or not
                t.topic_authorized_operations = self._ops(request, RT.TOPIC, t.name)
            response.topics.extend(denied)
        _hook(request, overlay)
        return None

    # --- topics --------------------------------------------------------------------------------

    def _create_topics(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        T = APIS_BY_KEY[ApiKey.CREATE_TOPICS].response["topics"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, error_code=code, error_message=None,
                                     topic_config_error_code=E.NONE, num_partitions=-1, replication_factor=-1,
                                     configs=None if version >= 5 else []))
        names = self._names(body.topics, "name")
        allowed = (names if self._cluster_allowed(request, Op.CREATE, log_if_denied=False)
                   else self._subset(request, Op.CREATE, RT.TOPIC, names))
        answer = self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)
        if version >= 5 and answer is None:
            def configs(response: Any) -> None:
                created = [t for t in response.topics if t.error_code == E.NONE]
                shown = self._subset(request, Op.DESCRIBE_CONFIGS, RT.TOPIC, [t.name for t in created])
                for t in created:
                    if t.name not in shown:
                        t.topic_config_error_code = E.TOPIC_AUTHORIZATION_FAILED
                        t.configs = None
            _hook(request, configs)
        return answer

    def _delete_topics(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        T = APIS_BY_KEY[ApiKey.DELETE_TOPICS].response["responses"]
        if version < 6:
            allowed = self._subset(request, Op.DELETE, RT.TOPIC, body.topic_names)
            denied = [n for n in body.topic_names if n not in allowed]
            if not denied:
                return None
            body.topic_names = [n for n in body.topic_names if n in allowed]
            _hook(request, lambda r: r.responses.extend(
                T(name=n, error_code=E.TOPIC_AUTHORIZATION_FAILED) for n in denied))
            if body.topic_names:
                return None
            return respond(request, APIS_BY_KEY[ApiKey.DELETE_TOPICS].response())
        by_name = {n for t in body.topics
                   if (n := t.name if t.name is not None else self._topic_name(t.topic_id))}
        allowed = self._subset(request, Op.DELETE, RT.TOPIC, by_name)
        by_id = [n for t in body.topics if t.name is None and (n := self._topic_name(t.topic_id)) is not None]
        if by_id:  # by id: also DESCRIBE, else its name is not told
            allowed &= self._subset(request, Op.DESCRIBE, RT.TOPIC, by_id) | {
                t.name for t in body.topics if t.name is not None}

        def add(response: Any, t: Any, code: int) -> None:
            response.responses.append(T(name=t.name, topic_id=t.topic_id if t.name is None else ZERO_UUID,
                                        error_code=code))
        kept: list[Any] = []
        denied_topics: list[Any] = []
        for t in body.topics:
            name = t.name if t.name is not None else self._topic_name(t.topic_id)
            (kept if name is None or name in allowed else denied_topics).append(t)
        if not denied_topics:
            return None
        body.topics = kept

        def put_back(response: Any) -> None:
            for t in denied_topics:
                add(response, t, E.TOPIC_AUTHORIZATION_FAILED)
        _hook(request, put_back)
        return respond(request, APIS_BY_KEY[ApiKey.DELETE_TOPICS].response()) if not kept else None

    def _create_partitions(self, request: Request) -> Response | None:
        T = APIS_BY_KEY[ApiKey.CREATE_PARTITIONS].response["results"]

        def add(response: Any, t: Any, code: int) -> None:
            response.results.append(T(name=t.name, error_code=code, error_message=None))
        allowed = self._subset(request, Op.ALTER, RT.TOPIC, self._names(request.body.topics, "name"))
        return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    # --- configs -------------------------------------------------------------------------------

    def _config_resources(self, request: Request, op: AclOperation, results_field: str) -> Response | None:
        body = request.body
        R = APIS_BY_KEY[request.api_key].response
        item = R[results_field]
        kept, denied = [], []
        by_type: dict[ResourceType, set[str]] = {}
        for r in body.resources:
            guard = CONFIG_GUARD.get(r.resource_type)
            if guard is not None:
                name = CLUSTER_NAME if guard[0] == RT.CLUSTER else r.resource_name
                by_type.setdefault(guard[0], set()).add(name)
        allowed = {rtype: self._subset(request, op, rtype, names) for rtype, names in by_type.items()}
        for r in body.resources:
            guard = CONFIG_GUARD.get(r.resource_type)
            name = CLUSTER_NAME if guard is not None and guard[0] == RT.CLUSTER else r.resource_name
            if guard is None or name in allowed[guard[0]]:
                kept.append(r)
            else:
                denied.append(item(error_code=guard[1], error_message=None, resource_type=r.resource_type,
                                   resource_name=r.resource_name))
        if not denied:
            return None
        body.resources = kept
        _hook(request, lambda resp: getattr(resp, results_field).extend(denied))
        return respond(request, R()) if not kept else None

    def _describe_configs(self, request: Request) -> Response | None:
        return self._config_resources(request, Op.DESCRIBE_CONFIGS, "results")

    def _alter_configs(self, request: Request) -> Response | None:
        if (request.api_key == ApiKey.ALTER_CONFIGS and request.privileged
                and PUSHED.fullmatch(request.header.client_id or "")):
            # The controller's push of a stored set: CLUSTER_ACTION, as every controller-to-broker api.
            if self._cluster_allowed(request, Op.CLUSTER_ACTION):
                return None
            R = APIS_BY_KEY[ApiKey.ALTER_CONFIGS].response
            return respond(request, R(responses=[
                R["responses"](error_code=E.CLUSTER_AUTHORIZATION_FAILED, resource_type=r.resource_type,
                               resource_name=r.resource_name) for r in request.body.resources]))
        return self._config_resources(request, Op.ALTER_CONFIGS, "responses")

    def _alter_client_quotas(self, request: Request) -> Response | None:
        """ALTER_CONFIGS on the cluster (the controller's push of the stored quotas: CLUSTER_ACTION);
        refused, every entry answers CLUSTER_AUTHORIZATION_FAILED (Kafka's getErrorResponse)."""
        pushed = request.privileged and PUSHED.fullmatch(request.header.client_id or "")
        if self._cluster_allowed(request, Op.CLUSTER_ACTION if pushed else Op.ALTER_CONFIGS):
            return None
        R = APIS_BY_KEY[ApiKey.ALTER_CLIENT_QUOTAS].response
        entry_, entity_ = R["entries"], R["entries"]["entity"]
        return respond(request, R(throttle_time_ms=0, entries=[
            entry_(error_code=E.CLUSTER_AUTHORIZATION_FAILED, error_message=None,
                   entity=[entity_(entity_type=e.entity_type, entity_name=e.entity_name)
                           for e in entry.entity])
            for entry in request.body.entries]))

    def _list_config_resources(self, request: Request) -> Response | None:
        if self._cluster_allowed(request, Op.DESCRIBE_CONFIGS):
            return None
        return self._whole(request, E.CLUSTER_AUTHORIZATION_FAILED)

    # --- log dirs, elections ---------------------------------------------------------------------

    def _alter_replica_log_dirs(self, request: Request) -> Response | None:
        if self._cluster_allowed(request, Op.ALTER):
            return None
        R = APIS_BY_KEY[ApiKey.ALTER_REPLICA_LOG_DIRS].response
        T, P = R["results"], R["results"]["partitions"]
        results: dict[str, Any] = {}
        for d in request.body.dirs:
            for t in d.topics:
                result = results.setdefault(t.name, T(topic_name=t.name, partitions=[]))
                result.partitions.extend(P(partition_index=i, error_code=E.CLUSTER_AUTHORIZATION_FAILED)
                                         for i in t.partitions)
        return respond(request, R(results=list(results.values())))

    def _describe_log_dirs(self, request: Request) -> Response | None:
        if self._cluster_allowed(request, Op.DESCRIBE):
            return None
        R = APIS_BY_KEY[ApiKey.DESCRIBE_LOG_DIRS].response
        if request.api_version >= 3:
            return respond(request, R(error_code=E.CLUSTER_AUTHORIZATION_FAILED, results=[]))
        return respond(request, R(results=[]))

    def _elect_leaders(self, request: Request) -> Response | None:
        if self._cluster_allowed(request, Op.ALTER):
            return None
        R = APIS_BY_KEY[ApiKey.ELECT_LEADERS].response
        T, P = R["replica_election_results"], R["replica_election_results"]["partition_result"]
        results = [T(topic=t.topic, partition_result=[
            P(partition_id=p, error_code=E.CLUSTER_AUTHORIZATION_FAILED, error_message=None)
            for p in t.partitions])
            for t in request.body.topic_partitions or ()]
        body = R(replica_election_results=results)
        if request.api_version >= 1:
            body.error_code = E.CLUSTER_AUTHORIZATION_FAILED
        return respond(request, body)

    # --- groups --------------------------------------------------------------------------------

    def _find_coordinator(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = APIS_BY_KEY[ApiKey.FIND_COORDINATOR].response

        def refusal(key: str) -> int | None:
            if body.key_type == 0:
                allowed = self._allowed(request, Op.DESCRIBE, RT.GROUP, key)
                return None if allowed else E.GROUP_AUTHORIZATION_FAILED
            if body.key_type == 1:
                return (None if self._allowed(request, Op.DESCRIBE, RT.TRANSACTIONAL_ID, key)
                        else E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            allowed = self._cluster_allowed(request, Op.CLUSTER_ACTION)
            return None if allowed else E.CLUSTER_AUTHORIZATION_FAILED
        if version < 4:
            code = refusal(body.key)
            if code is None:
                return None
            return respond(request, R(error_code=code, node_id=-1, host="", port=-1))
        C = R["coordinators"]
        kept, denied = [], []
        for key in body.coordinator_keys:
            code = refusal(key)
            if code is None:
                kept.append(key)
            else:
                denied.append(C(key=key, node_id=-1, host="", port=-1, error_code=code))
        if not denied:
            return None
        body.coordinator_keys = kept
        _hook(request, lambda r: r.coordinators.extend(denied))
        return respond(request, R(coordinators=[])) if not kept else None

    def _group_read(self, request: Request) -> Response | None:
        if self._allowed(request, Op.READ, RT.GROUP, request.body.group_id):
            return None
        R = APIS_BY_KEY[request.api_key].response
        body = R(error_code=E.GROUP_AUTHORIZATION_FAILED)
        if request.api_key == ApiKey.JOIN_GROUP:
            body.generation_id, body.member_id, body.leader = -1, "", ""
        return respond(request, body)

    def _offset_commit(self, request: Request) -> Response | None:
        body = request.body
        R = APIS_BY_KEY[ApiKey.OFFSET_COMMIT].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, partitions=[
                P(partition_index=p.partition_index, error_code=code) for p in t.partitions]))
        if not self._allowed(request, Op.READ, RT.GROUP, body.group_id):
            return self._drop_topics(request, "topics", "name", set(), add, E.GROUP_AUTHORIZATION_FAILED) or \
                respond(request, R())
        allowed = self._subset(request, Op.READ, RT.TOPIC, self._names(body.topics, "name"))
        return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    def _offset_fetch(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = APIS_BY_KEY[ApiKey.OFFSET_FETCH].response
        if version < 8:
            if not self._allowed(request, Op.DESCRIBE, RT.GROUP, body.group_id):
                if version >= 2:
                    return respond(request, R(error_code=E.GROUP_AUTHORIZATION_FAILED, topics=[]))
                T, P = R["topics"], R["topics"]["partitions"]
                return respond(request, R(topics=[T(name=t.name, partitions=[
                    P(partition_index=i, committed_offset=-1, metadata="",
                      error_code=E.GROUP_AUTHORIZATION_FAILED)
                    for i in t.partition_indexes]) for t in body.topics or ()]))
            self._offset_fetch_topics(request, body, R["topics"], "topics")
            return None
        G = R["groups"]
        kept, denied = [], []
        for g in body.groups:
            if self._allowed(request, Op.DESCRIBE, RT.GROUP, g.group_id):
                kept.append(g)
                self._offset_fetch_topics(request, g, G["topics"], None)
            else:
                denied.append(G(group_id=g.group_id, topics=[], error_code=E.GROUP_AUTHORIZATION_FAILED))
        if denied:
            body.groups = kept
            _hook(request, lambda r: r.groups.extend(denied))
            if not kept:
                return respond(request, R(groups=[]))
        return None

    def _offset_fetch_topics(self, request: Request, asked: Any, T: Any, response_field: str | None) -> None:
        """Named topics not DESCRIBE-authorized: TOPIC_AUTHORIZATION_FAILED per partition; an
        all-topics fetch (null) leaves them out of the answer."""
        P = T["partitions"]
        group_id = getattr(asked, "group_id", None)

        def topics_of(response: Any) -> Any:
            if response_field is not None:
                return response
            return next((g for g in response.groups if g.group_id == group_id), None)
        if asked.topics is None:
            def hide(response: Any) -> None:
                holder = topics_of(response)
                if holder is not None:
                    shown = self._visible(request, Op.DESCRIBE, RT.TOPIC, [t.name for t in holder.topics])
                    holder.topics = [t for t in holder.topics if t.name in shown]
            _hook(request, hide)
            return
        allowed = self._subset(request, Op.DESCRIBE, RT.TOPIC, self._names(asked.topics, "name"))
        denied = [t for t in asked.topics if t.name not in allowed]
        if not denied:
            return
        asked.topics = [t for t in asked.topics if t.name in allowed]

        def put_back(response: Any) -> None:
            holder = topics_of(response)
            if holder is not None:
                holder.topics.extend(T(name=t.name, partitions=[
                    P(partition_index=i, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                      error_code=E.TOPIC_AUTHORIZATION_FAILED) for i in t.partition_indexes]) for t in denied)
        _hook(request, put_back)

    # --- share groups' offsets (KIP-932; Kafka's handleDescribe/Alter/DeleteShareGroupOffsets) ---

    def _describe_share_group_offsets(self, request: Request) -> Response | None:
        """DESCRIBE on each group (else the group GROUP_AUTHORIZATION_FAILED) and on each named
        topic (else its partitions TOPIC_AUTHORIZATION_FAILED); a describe of all topics leaves
        out those not visible."""
        body = request.body
        G = APIS_BY_KEY[ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS].response["groups"]
        T, P = G["topics"], G["topics"]["partitions"]
        kept, denied = [], []
        for g in body.groups:
            if not self._allowed(request, Op.DESCRIBE, RT.GROUP, g.group_id):
                denied.append(G(group_id=g.group_id, topics=[], error_code=E.GROUP_AUTHORIZATION_FAILED,
                                error_message=E.for_code(E.GROUP_AUTHORIZATION_FAILED).message))
                continue
            kept.append(g)
            if g.topics is None:
                continue
            allowed = self._subset(request, Op.DESCRIBE, RT.TOPIC, {t.topic_name for t in g.topics})
            refused = [T(topic_name=t.topic_name, partitions=[
                P(partition_index=p, start_offset=-1, leader_epoch=-1,
                  error_code=E.TOPIC_AUTHORIZATION_FAILED) for p in t.partitions])
                for t in g.topics if t.topic_name not in allowed]
            if refused:
                g.topics = [t for t in g.topics if t.topic_name in allowed]
                _hook(request, _put_back_topics(g.group_id, refused))
        body.groups = kept

        def overlay(response: Any) -> None:
            asked_all = {g.group_id for g in kept if g.topics is None}
            for g in response.groups:
                if g.group_id in asked_all:
                    shown = self._visible(request, Op.DESCRIBE, RT.TOPIC, [t.topic_name for t in g.topics])
                    g.topics = [t for t in g.topics if t.topic_name in shown]
            response.groups.extend(denied)
        _hook(request, overlay)
        return respond(request, APIS_BY_KEY[request.api_key].response(groups=[])) if not kept else None

    def _alter_share_group_offsets(self, request: Request) -> Response | None:
        body = request.body
        if not self._allowed(request, Op.READ, RT.GROUP, body.group_id):
            return self._whole(request, E.GROUP_AUTHORIZATION_FAILED)
        T = APIS_BY_KEY[ApiKey.ALTER_SHARE_GROUP_OFFSETS].response["responses"]

        def add(response: Any, t: Any, code: int) -> None:
            response.responses.append(T(topic_name=t.topic_name, partitions=[
                T["partitions"](partition_index=p.partition_index, error_code=code) for p in t.partitions]))
        allowed = self._subset(request, Op.READ, RT.TOPIC, self._names(body.topics, "topic_name"))
        return self._drop_topics(request, "topics", "topic_name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    def _delete_share_group_offsets(self, request: Request) -> Response | None:
        body = request.body
        if not self._allowed(request, Op.DELETE, RT.GROUP, body.group_id):
            return self._whole(request, E.GROUP_AUTHORIZATION_FAILED)
        T = APIS_BY_KEY[ApiKey.DELETE_SHARE_GROUP_OFFSETS].response["responses"]

        def add(response: Any, t: Any, code: int) -> None:
            response.responses.append(T(topic_name=t.topic_name, error_code=code))
        allowed = self._subset(request, Op.READ, RT.TOPIC, self._names(body.topics, "topic_name"))
        return self._drop_topics(request, "topics", "topic_name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    def _describe_groups(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = APIS_BY_KEY[ApiKey.DESCRIBE_GROUPS].response
        G = R["groups"]
        allowed = self._subset(request, Op.DESCRIBE, RT.GROUP, body.groups)
        denied = [G(error_code=E.GROUP_AUTHORIZATION_FAILED, group_id=g, group_state="", protocol_type="",
                    protocol_data="", members=[]) for g in body.groups if g not in allowed]
        body.groups = [g for g in body.groups if g in allowed]
        with_ops = version >= 3 and body.include_authorized_operations

        def overlay(response: Any) -> None:
            if with_ops:
                for g in response.groups:
                    if g.error_code == E.NONE:
                        g.authorized_operations = self._ops(request, RT.GROUP, g.group_id)
            response.groups.extend(denied)
        _hook(request, overlay)
        return respond(request, R(groups=[])) if not body.groups else None

    def _consumer_group_describe(self, request: Request) -> Response | None:
        """DESCRIBE on each group (Kafka's consumerGroupDescribe); the others answered
        GROUP_AUTHORIZATION_FAILED."""
        body = request.body
        R = APIS_BY_KEY[ApiKey.CONSUMER_GROUP_DESCRIBE].response
        allowed = self._subset(request, Op.DESCRIBE, RT.GROUP, body.group_ids)
        denied = [R["groups"](error_code=E.GROUP_AUTHORIZATION_FAILED, group_id=g, members=[])
                  for g in body.group_ids if g not in allowed]
        body.group_ids = [g for g in body.group_ids if g in allowed]
        _hook(request, lambda response: response.groups.extend(denied))
        return respond(request, R(groups=[])) if not body.group_ids else None

    def _list_groups(self, request: Request) -> Response | None:
        if self._cluster_allowed(request, Op.DESCRIBE, log_if_denied=False):
            return None

        def hide(response: Any) -> None:
            shown = self._visible(request, Op.DESCRIBE, RT.GROUP, [g.group_id for g in response.groups])
            response.groups = [g for g in response.groups if g.group_id in shown]
        _hook(request, hide)
        return None

    def _delete_groups(self, request: Request) -> Response | None:
        body = request.body
        R = APIS_BY_KEY[ApiKey.DELETE_GROUPS].response
        allowed = self._subset(request, Op.DELETE, RT.GROUP, body.groups_names)
        denied = [R["results"](group_id=g, error_code=E.GROUP_AUTHORIZATION_FAILED)
                  for g in body.groups_names if g not in allowed]
        if not denied:
            return None
        body.groups_names = [g for g in body.groups_names if g in allowed]
        _hook(request, lambda r: r.results.extend(denied))
        return respond(request, R(results=[])) if not body.groups_names else None

    def _offset_delete(self, request: Request) -> Response | None:
        body = request.body
        if not self._allowed(request, Op.DELETE, RT.GROUP, body.group_id):
            return self._whole(request, E.GROUP_AUTHORIZATION_FAILED)
        R = APIS_BY_KEY[ApiKey.OFFSET_DELETE].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, partitions=[
                P(partition_index=p.partition_index, error_code=code) for p in t.partitions]))
        allowed = self._subset(request, Op.READ, RT.TOPIC, self._names(body.topics, "name"))
        return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)

    # --- producers and transactions --------------------------------------------------------------

    def _init_producer_id(self, request: Request) -> Response | None:
        txn_id = request.body.transactional_id
        if txn_id is not None:
            if self._allowed(request, Op.WRITE, RT.TRANSACTIONAL_ID, txn_id):
                return None
            return self._init_producer_id_refused(request, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        if self._cluster_allowed(request, Op.IDEMPOTENT_WRITE, log_if_denied=False):
            return None
        # Kafka 3.0+: WRITE on any topic will do too (authorizeByResourceType).
        if self.authorizer.authorize_by_resource_type(request, Op.WRITE, RT.TOPIC):
            return None
        return self._init_producer_id_refused(request, E.CLUSTER_AUTHORIZATION_FAILED)

    @staticmethod
    def _init_producer_id_refused(request: Request, code: int) -> Response:
        R = APIS_BY_KEY[ApiKey.INIT_PRODUCER_ID].response
        return respond(request, R(error_code=code, producer_id=-1, producer_epoch=-1))

    def _add_partitions_to_txn(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = APIS_BY_KEY[ApiKey.ADD_PARTITIONS_TO_TXN].response
        if version >= 4:  # the brokers' batched verification
            if self._cluster_allowed(request, Op.CLUSTER_ACTION):
                return None
            return respond(request, R(error_code=E.CLUSTER_AUTHORIZATION_FAILED, results_by_transaction=[]))
        T, P = R["results_by_topic_v3_and_below"], R["results_by_topic_v3_and_below"]["results_by_partition"]

        def every(code_of: Callable[[str], int]) -> Response:
            return respond(request, R(results_by_topic_v3_and_below=[T(name=t.name, results_by_partition=[
                P(partition_index=p, partition_error_code=code_of(t.name)) for p in t.partitions])
                for t in body.v3_and_below_topics]))
        if not self._allowed(request, Op.WRITE, RT.TRANSACTIONAL_ID, body.v3_and_below_transactional_id):
            return every(lambda _: E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        names = self._names(body.v3_and_below_topics, "name")
        allowed = self._subset(request, Op.WRITE, RT.TOPIC, names)
        if allowed == names:
            return None
        # Nothing is added when one is refused: the rest OPERATION_NOT_ATTEMPTED (as Kafka).
        return every(lambda n: E.OPERATION_NOT_ATTEMPTED if n in allowed else E.TOPIC_AUTHORIZATION_FAILED)

    def _add_offsets_to_txn(self, request: Request) -> Response | None:
        body = request.body
        if not self._allowed(request, Op.WRITE, RT.TRANSACTIONAL_ID, body.transactional_id):
            return self._whole(request, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        if not self._allowed(request, Op.READ, RT.GROUP, body.group_id):
            return self._whole(request, E.GROUP_AUTHORIZATION_FAILED)
        return None

    def _end_txn(self, request: Request) -> Response | None:
        if self._allowed(request, Op.WRITE, RT.TRANSACTIONAL_ID, request.body.transactional_id):
            return None
        R = APIS_BY_KEY[ApiKey.END_TXN].response
        return respond(request, R(error_code=E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producer_id=-1,
                                  producer_epoch=-1))

    def _txn_offset_commit(self, request: Request) -> Response | None:
        body = request.body
        R = APIS_BY_KEY[ApiKey.TXN_OFFSET_COMMIT].response
        T, P = R["topics"], R["topics"]["partitions"]

        def add(response: Any, t: Any, code: int) -> None:
            response.topics.append(T(name=t.name, partitions=[
                P(partition_index=p.partition_index, error_code=code) for p in t.partitions]))
        if not self._allowed(request, Op.WRITE, RT.TRANSACTIONAL_ID, body.transactional_id):
            code = E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        elif not self._allowed(request, Op.READ, RT.GROUP, body.group_id):
            code = E.GROUP_AUTHORIZATION_FAILED
        else:
            allowed = self._subset(request, Op.READ, RT.TOPIC, self._names(body.topics, "name"))
            return self._drop_topics(request, "topics", "name", allowed, add, E.TOPIC_AUTHORIZATION_FAILED)
        return respond(request, R(topics=[T(name=t.name, partitions=[
            P(partition_index=p.partition_index, error_code=code) for p in t.partitions])
            for t in body.topics]))

    def _write_txn_markers(self, request: Request) -> Response | None:
        if (self._cluster_allowed(request, Op.ALTER, log_if_denied=False)
                or self._cluster_allowed(request, Op.CLUSTER_ACTION)):
            return None
        R = APIS_BY_KEY[ApiKey.WRITE_TXN_MARKERS].response
        M = R["markers"]
        T, P = M["topics"], M["topics"]["partitions"]
        return respond(request, R(markers=[M(producer_id=m.producer_id, topics=[T(name=t.name, partitions=[
            P(partition_index=i, error_code=E.CLUSTER_AUTHORIZATION_FAILED) for i in t.partition_indexes])
            for t in m.topics]) for m in request.body.markers]))

    def _describe_transactions(self, request: Request) -> Response | None:
        body = request.body
        R = APIS_BY_KEY[ApiKey.DESCRIBE_TRANSACTIONS].response
        S = R["transaction_states"]
        allowed = self._subset(request, Op.DESCRIBE, RT.TRANSACTIONAL_ID, body.transactional_ids)
        # As Kafka: the id and the error, the rest the schema's defaults.
        denied = [S(error_code=E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactional_id=t, topics=[])
                  for t in body.transactional_ids if t not in allowed]
        body.transactional_ids = [t for t in body.transactional_ids if t in allowed]

        def overlay(response: Any) -> None:
            # The partitions of topics the client may not describe are left out (as Kafka).
            for s in response.transaction_states:
                if s.topics:
                    shown = self._visible(request, Op.DESCRIBE, RT.TOPIC, [t.topic for t in s.topics])
                    s.topics = [t for t in s.topics if t.topic in shown]
            response.transaction_states.extend(denied)
        _hook(request, overlay)
        return respond(request, R(transaction_states=[])) if not body.transactional_ids else None

    def _list_transactions(self, request: Request) -> Response | None:
        def hide(response: Any) -> None:
            shown = self._visible(request, Op.DESCRIBE, RT.TRANSACTIONAL_ID,
                                              [s.transactional_id for s in response.transaction_states])
            response.transaction_states = [
                s for s in response.transaction_states if s.transactional_id in shown]
        _hook(request, hide)
        return None
