"""The apis this broker serves: one table, from which everything that depends on it follows.

Each row names the api (``ApiKey``), the versions served, the listeners that serve it, the
handler method that answers it, and how it waits. From this table alone come the ApiVersions
answer of each listener (``apis_for``), the Processors' check of every request (the same
``apis_for``, handed to the SocketServer), KafkaApis' dispatch (``kafka_apis.py``) and the served
apis table of docs/protocol.md (``render_markdown``; a test keeps the docs equal to it).

Only versions served fully are listed: clients use min(their max, our max), so advertising
more than is served breaks them.

The ranges are one Kafka release's (``KAFKA_RELEASE``): for every api served, the versions a
broker of that release advertises (its message specs' validVersions, less a last version marked
latestVersionUnstable), so that clients which infer the broker's version from ApiVersions (e.g.
kafka-python) infer that release. A request of a version not served closes the connection, as
Kafka 4.x's SocketServer does (parseRequestHeader: UnsupportedVersionException); ApiVersions of an
unknown version alone is answered (v0, UNSUPPORTED_VERSION). The one api advertised wider than
served is Kafka's own exception: Produce from v0 (KAFKA-18659,
ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkalite.protocol import APIS_BY_KEY, ApiKey
from kafkalite.protocol.schema import Versions

from .handlers.acls import AclApis
from .handlers.api_versions import ApiTable, ApiVersionsApis
from .handlers.client_quotas import ClientQuotaApis
from .handlers.cluster import ClusterApis
from .handlers.configs import ConfigApis
from .handlers.control import ControlApis
from .handlers.elections import ElectionApis
from .handlers.fetch import FetchApis
from .handlers.groups import GroupApis
from .handlers.isr import IsrApis
from .handlers.log_dirs import LogDirApis
from .handlers.metadata import MetadataApis
from .handlers.offsets import OffsetApis
from .handlers.produce import ProduceApis
from .handlers.producers import ProducerIdApis
from .handlers.producers_state import ProducerStateApis
from .handlers.raft import RaftApis
from .handlers.reassignments import ReassignmentApis
from .handlers.registration import RegistrationApis
from .handlers.scram import ScramApis
from .handlers.share import ShareApis
from .handlers.share_offsets import ShareOffsetApis
from .handlers.share_state import ShareStateApis
from .handlers.topic_partitions import TopicPartitionsApis
from .handlers.topics import TopicApis
from .handlers.transactions import TransactionApis
from .handlers.txn_markers import TxnMarkerApis
from .handlers.txn_offsets import TxnOffsetApis


class Where(enum.Enum):
    """Which listeners serve an api (and advertise it in ApiVersions)."""

    EVERY_LISTENER = "every listener"
    # Controller-to-broker requests: advertising them to clients makes e.g. kafka-python guess a
    # wrong broker version.
    PRIVILEGED = "the privileged listener (control plane, else inter-broker)"
    CONTROLLER = "on the node that runs the controller: its privileged listener and controller.listener.names"
    # KRaft's quorum: Kafka's specs say "listeners": ["controller"].
    QUORUM = "controller.listener.names of a controller (a voter of the metadata quorum)"


class Waits(enum.Enum):
    """How a request of the api waits before its answer (never on a handler thread)."""

    NEVER = "answered at once"
    PRODUCE = ("acks=all: in the produce purgatory until the high watermark covers the batch, or "
               "the request's timeout")
    FETCH = "in the fetch purgatory until min_bytes are there (appends check it), or max_wait_ms"
    METADATA = ("in the topic purgatory, until the controller has answered and this broker's "
                "metadata shows the change, or the request's timeout")
    CONTROLLER = "until the controller's event thread has handled it (a callback answers it)"
    TOPIC_CONFIGS = ("for a topic whose settings this broker has not learned: until the controller "
                     "has told them (asked from a background thread, at most 5 s each try); else at once")
    REBALANCE = ("JoinGroup: in the Rebalance purgatory until every member has rejoined, or the "
                 "rebalance timeout; SyncGroup: until the leader's assignment is stored")
    SHARE_FETCH = ("ShareFetch: in the fetch purgatory until records can be acquired (appends, releases "
                   "and expired locks check it), or max_wait_ms; acknowledgements carried are answered once "
                   "written through the share-state persister")
    SHARE_ACK = "until the share-partition state it changed is written through the share-state persister"
    GROUP_LOG = ("until its records are committed in __consumer_offsets (acks=all), or "
                 "offsets.commit.timeout.ms")
    CONFIGS = ("until the controller has checked and stored the change (on its node: its event "
               "thread; elsewhere forwarded over the ControllerLink, at most 5 s each try)")
    TXN_LOG = ("until the transactional id's new state is committed in __transaction_state "
               "(acks=all), or request.timeout.ms")
    SHARE_STATE = ("until the share-partitions' state changes are committed in __share_group_state "
                   "(acks=all), or share.coordinator.write.timeout.ms; requests of one partition of it "
                   "one at a time")
    RAFT = ("until the RaftManager's thread has handled it (a Fetch of __cluster_metadata on a "
            "controller listener, also answered there, waits up to max_wait_ms for new entries)")


# The Kafka release whose ApiVersions answer kafkalite's is (docs/protocol.md says it from here):
# every range below is that release's, read from its message specs at the tag
# (clients/src/main/resources/common/message/*Request.json at 4.1.1, commit be816b82d253).
KAFKA_RELEASE = "4.1.1"
KAFKA_RELEASE_COMMIT = "be816b82d25370ceac697ccf7c88cea873e9b4e3"


@dataclass(frozen=True)
class ServedApi:
    key: ApiKey
    versions: Versions
    where: Where
    handler: Callable[[Any, Any], Any]  # a method of an area class in handlers/
    waits: Waits = Waits.NEVER
    note: str = ""
    # What ApiVersions advertises, when Kafka advertises more than it serves (Produce from v0).
    advertised_versions: Versions | None = None

    @property
    def name(self) -> str:
        return self.key.api_name

    @property
    def advertised(self) -> Versions:
        return self.advertised_versions or self.versions


def _served(key: ApiKey, versions: str, where: Where, handler: Callable[[Any, Any], Any],
            waits: Waits = Waits.NEVER, note: str = "", advertised: str | None = None) -> ServedApi:
    return ServedApi(key, Versions.parse(versions), where, handler, waits, note,
                     Versions.parse(advertised) if advertised is not None else None)


EVERY, PRIVILEGED, CONTROLLER, QUORUM = Where.EVERY_LISTENER, Where.PRIVILEGED, Where.CONTROLLER, Where.QUORUM

SERVED: tuple[ServedApi, ...] = (
    _served(ApiKey.PRODUCE, "3-13", EVERY, ProduceApis.handle_produce, Waits.PRODUCE, advertised="0-13",
            note="advertised from v0 as Kafka 4.x does for old librdkafka (KAFKA-18659), v0-2 not served; "
                 "v13 by topic id"),
    _served(ApiKey.FETCH, "4-18", EVERY, FetchApis.handle_fetch, Waits.FETCH,
            note="full fetches, no sessions; v18's follower high watermark is read and not used, as "
                 "Kafka 4.1's brokers do; of __cluster_metadata on a controller listener: the quorum's "
                 "(its RaftManager answers, Waits: until its thread has)"),
    _served(ApiKey.LIST_OFFSETS, "1-10", EVERY, OffsetApis.list_offsets,
            note="v10's timeout_ms is for remote (tiered) reads, which there are none of"),
    _served(ApiKey.METADATA, "0-13", EVERY, MetadataApis.handle_metadata,
            note="v13's top-level error code always NONE, as Kafka 4.1's brokers answer"),
    # Not in Kafka 4.x (ZooKeeper mode's controller requests; KRaft brokers follow the metadata log):
    # kafkalite's controller still drives its brokers with them, at Kafka 3.9's versions.
    _served(ApiKey.LEADER_AND_ISR, "0-7", PRIVILEGED, ControlApis.handle_leader_and_isr, Waits.TOPIC_CONFIGS,
            note="not a Kafka 4.x api; the settings of topics new to this broker are learned first, then "
                 "it is applied"),
    _served(ApiKey.STOP_REPLICA, "0-4", PRIVILEGED, ControlApis.handle_stop_replica,
            note="not a Kafka 4.x api"),
    _served(ApiKey.UPDATE_METADATA, "0-8", PRIVILEGED, ControlApis.handle_update_metadata,
            note="not a Kafka 4.x api"),
    _served(ApiKey.SASL_HANDSHAKE, "0-1", EVERY, ApiVersionsApis.handle_sasl_handshake,
            note="answered by the Processor while a connection authenticates"),
    _served(ApiKey.API_VERSIONS, "0-4", EVERY, ApiVersionsApis.handle_api_versions),
    _served(ApiKey.CREATE_TOPICS, "2-7", EVERY, TopicApis.create_topics, Waits.METADATA,
            note="NOT_CONTROLLER unless this broker runs the controller"),
    _served(ApiKey.DELETE_TOPICS, "1-6", EVERY, TopicApis.delete_topics, Waits.METADATA,
            note="NOT_CONTROLLER unless this broker runs the controller"),
    _served(ApiKey.DELETE_RECORDS, "0-2", EVERY, OffsetApis.delete_records),
    _served(ApiKey.INIT_PRODUCER_ID, "0-5", EVERY, ProducerIdApis.init_producer_id, Waits.TXN_LOG,
            note="idempotent producers answered at once; a transactional id by its transaction "
                 "coordinator, once its epoch is written"),
    _served(ApiKey.OFFSET_FOR_LEADER_EPOCH, "2-4", EVERY, OffsetApis.offset_for_leader_epoch),
    _served(ApiKey.DESCRIBE_ACLS, "1-3", EVERY, AclApis.describe_acls,
            note="from this broker's authorizer's copy of the controller's ACLs; SECURITY_DISABLED "
                 "without authorizer.class.name"),
    _served(ApiKey.CREATE_ACLS, "1-3", EVERY, AclApis.create_acls, Waits.CONFIGS,
            note="stored by the controller and pushed to every broker (the controller's pushes come as "
                 "this api, on the privileged listener from its client id)"),
    _served(ApiKey.DELETE_ACLS, "1-3", EVERY, AclApis.delete_acls, Waits.CONFIGS,
            note="by filters, in the controller; the new set pushed to every broker"),
    _served(ApiKey.DESCRIBE_CONFIGS, "1-4", EVERY, ConfigApis.describe_configs, Waits.TOPIC_CONFIGS,
            note="BROKER (this broker's id, and '' the cluster default), BROKER_LOGGER and TOPIC resources"),
    _served(ApiKey.ALTER_CONFIGS, "0-2", EVERY, ConfigApis.alter_configs, Waits.CONFIGS,
            note="the whole set of a TOPIC, of this broker's id or of '' (cluster default); also the "
                 "controller's pushes of the sets it stored (privileged listener, its client id)"),
    _served(ApiKey.INCREMENTAL_ALTER_CONFIGS, "0-1", EVERY, ConfigApis.incremental_alter_configs,
            Waits.CONFIGS, note="SET, DELETE, APPEND, SUBTRACT; BROKER_LOGGER applied on this broker alone"),
    _served(ApiKey.ALTER_REPLICA_LOG_DIRS, "1-2", EVERY, LogDirApis.alter_replica_log_dirs,
            note="a future log in the destination, copied by the ReplicaAlterLogDirsThread, then swapped in"),
    _served(ApiKey.DESCRIBE_LOG_DIRS, "1-4", EVERY, LogDirApis.describe_log_dirs,
            note="every log.dirs entry, future logs too; an offline dir KAFKA_STORAGE_ERROR; v4's "
                 "volume bytes -1 with log.storage=memory"),
    _served(ApiKey.SASL_AUTHENTICATE, "0-2", EVERY, ApiVersionsApis.handle_sasl_authenticate,
            note="answered by the Processor while a connection authenticates"),
    _served(ApiKey.CREATE_PARTITIONS, "0-3", EVERY, TopicApis.create_partitions, Waits.METADATA,
            note="NOT_CONTROLLER unless this broker runs the controller"),
    _served(ApiKey.ELECT_LEADERS, "0-2", EVERY, ElectionApis.elect_leaders, Waits.CONTROLLER,
            note="PREFERRED and UNCLEAN; NOT_CONTROLLER for each partition unless this broker runs "
                 "the controller"),
    _served(ApiKey.ALTER_PARTITION_REASSIGNMENTS, "0-1", EVERY,
            ReassignmentApis.alter_partition_reassignments, Waits.CONTROLLER,
            note="answered once each reassignment has started, been cancelled or refused; "
                 "NOT_CONTROLLER unless this broker runs the controller"),
    _served(ApiKey.LIST_PARTITION_REASSIGNMENTS, "0", EVERY, ReassignmentApis.list_partition_reassignments,
            Waits.CONTROLLER, note="NOT_CONTROLLER unless this broker runs the controller"),
    _served(ApiKey.BROKER_REGISTRATION, "0-4", CONTROLLER, RegistrationApis.broker_registration,
            Waits.CONTROLLER),
    _served(ApiKey.BROKER_HEARTBEAT, "0-1", CONTROLLER, RegistrationApis.broker_heartbeat),
    _served(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, "0", EVERY, ScramApis.describe_user_scram_credentials,
            note="answered from the credentials the controller pushed to this broker"),
    _served(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, "0", EVERY, ScramApis.alter_user_scram_credentials,
            Waits.CONFIGS, note="SCRAM-SHA-256 and -512, 4096 to 16384 iterations, stored as salted keys; "
                                "also the controller's pushes (privileged listener, its client id)"),
    _served(ApiKey.ALLOCATE_PRODUCER_IDS, "0", CONTROLLER, ProducerIdApis.allocate_producer_ids,
            Waits.CONTROLLER),
    _served(ApiKey.ALTER_PARTITION, "2-3", CONTROLLER, IsrApis.alter_partition, Waits.CONTROLLER),
    _served(ApiKey.VOTE, "0-2", QUORUM, RaftApis.vote, Waits.RAFT),
    _served(ApiKey.BEGIN_QUORUM_EPOCH, "0-1", QUORUM, RaftApis.begin_quorum_epoch, Waits.RAFT),
    _served(ApiKey.END_QUORUM_EPOCH, "0-1", QUORUM, RaftApis.end_quorum_epoch, Waits.RAFT),
    _served(ApiKey.DESCRIBE_QUORUM, "0-2", QUORUM, RaftApis.describe_quorum, Waits.RAFT,
            note="the leader answers, others NOT_LEADER_OR_FOLLOWER (Kafka's brokers forward it to the "
                 "controllers; kafkalite's answer it on controller listeners only)"),
    _served(ApiKey.FETCH_SNAPSHOT, "0-1", QUORUM, RaftApis.fetch_snapshot, Waits.RAFT),
    _served(ApiKey.OFFSET_COMMIT, "2-9", EVERY, GroupApis.offset_commit, Waits.GROUP_LOG,
            note="v9: GROUP_ID_NOT_FOUND for a generation of a group not known; a consumer group's "
                 "member epoch (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); "
                 "v10 is unstable in Kafka 4.1, not advertised"),
    _served(ApiKey.OFFSET_FETCH, "1-9", EVERY, GroupApis.offset_fetch,
            note="v7+ require_stable: UNSTABLE_OFFSET_COMMIT for a partition with transactional "
                 "offsets pending; v9's member id and epoch are checked for a consumer group (KIP-848), "
                 "unchecked for classic groups as in Kafka; v10 unstable, not advertised"),
    _served(ApiKey.FIND_COORDINATOR, "0-6", EVERY, GroupApis.find_coordinator,
            note="groups and transactions; creates __consumer_offsets / __transaction_state when "
                 "first asked; v6's share keys: INVALID_REQUEST if malformed, else COORDINATOR_NOT_AVAILABLE "
                 "(no share groups)"),
    _served(ApiKey.JOIN_GROUP, "0-9", EVERY, GroupApis.join_group, Waits.REBALANCE),
    _served(ApiKey.HEARTBEAT, "0-4", EVERY, GroupApis.heartbeat),
    _served(ApiKey.LEAVE_GROUP, "0-5", EVERY, GroupApis.leave_group),
    _served(ApiKey.SYNC_GROUP, "0-5", EVERY, GroupApis.sync_group, Waits.REBALANCE),
    _served(ApiKey.DESCRIBE_GROUPS, "0-6", EVERY, GroupApis.describe_groups,
            note="v6: GROUP_ID_NOT_FOUND for a group not known"),
    _served(ApiKey.LIST_GROUPS, "0-5", EVERY, GroupApis.list_groups,
            note="the groups this broker coordinates, as Kafka's brokers answer"),
    _served(ApiKey.DELETE_GROUPS, "0-2", EVERY, GroupApis.delete_groups, Waits.GROUP_LOG),
    _served(ApiKey.OFFSET_DELETE, "0", EVERY, GroupApis.offset_delete, Waits.GROUP_LOG),
    _served(ApiKey.CONSUMER_GROUP_HEARTBEAT, "0-1", EVERY, GroupApis.consumer_group_heartbeat,
            Waits.GROUP_LOG,
            note="the consumer rebalance protocol (KIP-848); not advertised without consumer in "
                 "group.coordinator.rebalance.protocols (then UNSUPPORTED_VERSION)"),
    _served(ApiKey.CONSUMER_GROUP_DESCRIBE, "0-1", EVERY, GroupApis.consumer_group_describe),
    _served(ApiKey.DESCRIBE_CLIENT_QUOTAS, "0-1", EVERY, ClientQuotaApis.describe_client_quotas,
            note="from this broker's copy of the quotas the controller pushed"),
    _served(ApiKey.ALTER_CLIENT_QUOTAS, "0-1", EVERY, ClientQuotaApis.alter_client_quotas, Waits.CONTROLLER,
            note="stored by the controller (forwarded to it) and pushed to every broker; also the "
                 "controller's pushes (privileged listener, its client id)"),
    # Kafka serves it on every broker listener and asks CLUSTER_ACTION of the sender: the
    # coordinators dial the inter-broker listener, which a control plane listener is not.
    _served(ApiKey.WRITE_TXN_MARKERS, "1", EVERY, TxnMarkerApis.write_txn_markers, Waits.PRODUCE,
            note="the transaction coordinators' (no authorizer yet: any listener); markers appended as "
                 "the coordinator, acks=all; a __consumer_offsets marker ends the producer's pending "
                 "group offsets"),
    _served(ApiKey.TXN_OFFSET_COMMIT, "0-5", EVERY, TxnOffsetApis.txn_offset_commit, Waits.GROUP_LOG,
            note="pending until the transaction's marker"),
    _served(ApiKey.DESCRIBE_PRODUCERS, "0", EVERY, ProducerStateApis.describe_producers,
            note="the partition's leader answers"),
    _served(ApiKey.ADD_PARTITIONS_TO_TXN, "0-5", EVERY, TransactionApis.add_partitions_to_txn, Waits.TXN_LOG,
            note="v4+ (batched, VerifyOnly) are partition leaders' (KIP-890); no authorizer"),
    _served(ApiKey.ADD_OFFSETS_TO_TXN, "0-4", EVERY, TransactionApis.add_offsets_to_txn, Waits.TXN_LOG),
    _served(ApiKey.END_TXN, "0-5", EVERY, TransactionApis.end_txn, Waits.TXN_LOG,
            note="answered once PrepareCommit/PrepareAbort is written; v5 bumps the epoch (KIP-890, "
                 "transaction.version 2)"),
    _served(ApiKey.DESCRIBE_TRANSACTIONS, "0", EVERY, TransactionApis.describe_transactions),
    _served(ApiKey.DESCRIBE_CLUSTER, "0-2", EVERY, ClusterApis.describe_cluster,
            note="brokers only (CONTROLLERS: MISMATCHED_ENDPOINT_TYPE), none fenced; the controller "
                 "is the broker that runs it"),
    _served(ApiKey.LIST_TRANSACTIONS, "0-2", EVERY, TransactionApis.list_transactions,
            note="the transactions this broker coordinates; v2's pattern is a Python regular expression"),
    _served(ApiKey.LIST_CONFIG_RESOURCES, "0-1", EVERY, ConfigApis.list_config_resources,
            note="v0: client metrics (none); v1: brokers (as BROKER and BROKER_LOGGER) and topics"),
    # The share coordinator's (KIP-932): partition leaders' persisters send them (CLUSTER_ACTION on
    # the cluster, as Kafka checks), on every broker listener as Kafka serves them.
    _served(ApiKey.INITIALIZE_SHARE_GROUP_STATE, "0", EVERY, ShareStateApis.initialize_share_group_state,
            Waits.SHARE_STATE, note="a new state epoch: FENCED_STATE_EPOCH unless newer"),
    _served(ApiKey.READ_SHARE_GROUP_STATE, "0", EVERY, ShareStateApis.read_share_group_state,
            Waits.SHARE_STATE, note="a newer leader epoch is written first (fences the old leader)"),
    _served(ApiKey.WRITE_SHARE_GROUP_STATE, "0", EVERY, ShareStateApis.write_share_group_state,
            Waits.SHARE_STATE, note="a ShareUpdate, a ShareSnapshot every "
                                    "share.coordinator.snapshot.update.records.per.snapshot updates"),
    _served(ApiKey.DELETE_SHARE_GROUP_STATE, "0", EVERY, ShareStateApis.delete_share_group_state,
            Waits.SHARE_STATE, note="tombstones for both records of the share-partition"),
    _served(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, "0", EVERY, ShareStateApis.read_share_group_state_summary,
            Waits.SHARE_STATE),
    _served(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, "0", EVERY, ShareOffsetApis.describe_share_group_offsets,
            Waits.SHARE_STATE, note="on the group's coordinator: each start offset read with "
                                    "ReadShareGroupStateSummary"),
    _served(ApiKey.ALTER_SHARE_GROUP_OFFSETS, "0", EVERY, ShareOffsetApis.alter_share_group_offsets,
            Waits.SHARE_STATE, note="an empty share group only (NON_EMPTY_GROUP): a new state epoch at "
                                    "each offset (InitializeShareGroupState)"),
    _served(ApiKey.DELETE_SHARE_GROUP_OFFSETS, "0", EVERY, ShareOffsetApis.delete_share_group_offsets,
            Waits.SHARE_STATE, note="an empty share group only: every partition's state of the topics "
                                    "deleted (DeleteShareGroupState)"),
    _served(ApiKey.DESCRIBE_TOPIC_PARTITIONS, "0", EVERY, TopicPartitionsApis.describe_topic_partitions,
            note="pages of at most max.request.partition.size.limit partitions; no eligible leader "
                 "replicas (empty lists)"),
    # Share groups (KIP-932): v1 is Kafka 4.1's stable version (v0 was 4.0's early access).
    _served(ApiKey.SHARE_GROUP_HEARTBEAT, "1", EVERY, ShareApis.share_group_heartbeat, Waits.GROUP_LOG,
            note="the `simple` assignor; a change waits for its share group records (key versions "
                 "9-15), a heartbeat that changes nothing is answered at once"),
    _served(ApiKey.SHARE_GROUP_DESCRIBE, "1", EVERY, ShareApis.share_group_describe),
    _served(ApiKey.SHARE_FETCH, "1", EVERY, ShareApis.share_fetch, Waits.SHARE_FETCH,
            note="the partition leader acquires records for the member (its share session: "
                 "ShareSessionEpoch 0 opens, -1 closes)"),
    _served(ApiKey.SHARE_ACKNOWLEDGE, "1", EVERY, ShareApis.share_acknowledge, Waits.SHARE_ACK),
)
SERVED_BY_KEY: dict[ApiKey, ServedApi] = {s.key: s for s in SERVED}


def apis_for(listener: str, privileged: bool, is_controller: bool = False,
             controller_listeners: frozenset[str] = frozenset(),
             advertised: bool = False) -> dict[int, Versions]:
    """{api key: versions} served on ``listener`` (``advertised``: the versions its ApiVersions
    answer lists, which differ only where Kafka's do, Produce's)."""
    def here(s: ServedApi) -> bool:
        if s.where is Where.EVERY_LISTENER:
            return True
        if s.where is Where.PRIVILEGED:
            return privileged
        if s.where is Where.QUORUM:
            return is_controller and listener in controller_listeners
        return is_controller and (privileged or listener in controller_listeners)

    return {s.key: s.advertised if advertised else s.versions
            for s in sorted(SERVED, key=lambda s: s.key) if here(s)}


__all__ = ["KAFKA_RELEASE", "KAFKA_RELEASE_COMMIT", "SERVED", "SERVED_BY_KEY", "ApiTable", "ServedApi",
           "Waits", "Where", "apis_for", "render_markdown"]


def _check() -> None:
    for s in SERVED:
        declared = APIS_BY_KEY[s.key].versions
        if not declared.low <= s.versions.low <= s.versions.high <= declared.high:
            raise ValueError(f"{s.name}: serves {s.versions}, declares only {declared}")
        if s.advertised.high != s.versions.high or s.advertised.low > s.versions.low:
            raise ValueError(f"{s.name}: advertises {s.advertised} but serves {s.versions}")


_check()


def _range(v: Versions) -> str:
    return f"{v.low}-{v.high}"


def render_markdown() -> str:
    """The served apis table of docs/protocol.md."""
    rows = [f"ApiVersions advertises Apache Kafka {KAFKA_RELEASE}'s version ranges (its message specs "
            f"at tag {KAFKA_RELEASE}, commit {KAFKA_RELEASE_COMMIT[:12]}) for every api served.", "",
            "| key | api | versions served | advertised | where | waits |",
            "| ---: | --- | --- | --- | --- | --- |"]
    for s in sorted(SERVED, key=lambda s: (list(Where).index(s.where), s.key)):
        where = s.where.value + (f" ({s.note})" if s.note else "")
        rows.append(f"| {int(s.key)} | {s.name} | {_range(s.versions)} | {_range(s.advertised)} | {where} | "
                    f"{s.waits.value} |")
    return "\n".join(rows) + "\n"
