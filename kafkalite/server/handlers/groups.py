"""Consumer groups: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, DescribeGroups, ListGroups, DeleteGroups and OffsetDelete (Kafka's KafkaApis
handlers of the group coordinator's requests), translated to and from GroupCoordinator calls.

FindCoordinator answers with the leader of the group's partition of ``__consumer_offsets``,
creating that topic (through the controller, as Kafka's AutoTopicCreationManager does for
internal topics whatever auto.create.topics.enable says) the first time a group is looked for;
until it has a leader the answer is COORDINATOR_NOT_AVAILABLE, which clients retry. JoinGroup and
SyncGroup answer later, from whichever thread completes them (the coordinator's callbacks).
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kafkalite.common.java import partition_for_key
from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    consumer_group_describe,
    consumer_group_heartbeat,
    delete_groups,
    describe_groups,
    find_coordinator,
    heartbeat,
    join_group,
    leave_group,
    list_groups,
    offset_commit,
    offset_delete,
    offset_fetch,
    sync_group,
)

from ..coordinator.consumer_group.manager import HeartbeatRequest, HeartbeatResult
from ..coordinator.group import CommittedOffset
from ..coordinator.group_coordinator import GroupCoordinator
from ..coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from ..coordinator.results import NO_MEMBER, JoinResult, SyncResult
from ..coordinator.share_group.manager import ShareGroupManager
from ..coordinator.transaction.log_records import TRANSACTION_STATE_TOPIC
from ..coordinator.transaction.log_records import partition_for as txn_partition_for
from ..metadata_cache import MetadataCache
from ..responses import respond
from ..share_coordinator.coordinator import SHARE_GROUP_STATE_TOPIC
from ..share_coordinator.group_offsets import ShareGroupOffsets
from .metadata import AutoTopicCreator

# ConsumerGroupDescribe v1's MemberType (KIP-1099).
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1
SHARE_KEY_TYPE = 2  # FindCoordinator's CoordinatorType.SHARE (v6+, KIP-932)

log = logging.getLogger("kafkalite.server.handlers.groups")


def requested_offsets(topics: Any, metadata_cache: MetadataCache | None, with_leader_epoch: bool
                      ) -> tuple[dict[tuple[str, int], CommittedOffset], set[tuple[str, int]]]:
    """(offsets to commit, partitions refused) of an OffsetCommit's or TxnOffsetCommit's topics:
    a partition the metadata does not know is refused on its own, the others are committed
    (Kafka's handleOffsetCommitRequest and handleTxnOffsetCommitRequest)."""
    now = int(time.time() * 1000)
    offsets: dict[tuple[str, int], CommittedOffset] = {}
    unknown: set[tuple[str, int]] = set()
    known_topics = metadata_cache.snapshot.topics if metadata_cache is not None else None
    for t in topics:
        known = known_topics.get(t.name) if known_topics is not None else None
        for p in t.partitions:
            if known_topics is not None and (known is None or p.partition_index not in known.partitions):
                unknown.add((t.name, p.partition_index))
                continue
            offsets[(t.name, p.partition_index)] = CommittedOffset(
                p.committed_offset, p.committed_leader_epoch if with_leader_epoch else -1,
                p.committed_metadata or "", now)
    return offsets, unknown


class GroupApis:
    def __init__(self, coordinator: GroupCoordinator | None, send_response: Callable[[Response], None],
                 metadata_cache: MetadataCache | None = None,
                 auto_create: AutoTopicCreator | None = None,
                 share_groups: ShareGroupManager | None = None,
                 share_offsets: ShareGroupOffsets | None = None) -> None:
        self.coordinator = coordinator  # None: a KafkaApis without a broker (no groups)
        self.share_groups = share_groups  # ListGroups lists them too (type "share")
        self.share_offsets = share_offsets  # DeleteGroups deletes a share group's state with it
        self.send_response = send_response
        self.metadata_cache = metadata_cache
        # creates __consumer_offsets and __transaction_state (whatever auto.create.topics.enable)
        self.auto_create = auto_create

    # --- FindCoordinator ---------------------------------------------------------------------

    def find_coordinator(self, request: Request) -> Response:
        body, version = request.body, request.api_version
        R = find_coordinator.RESPONSE
        keys = list(body.coordinator_keys) if version >= 4 else [body.key]
        key_type = body.key_type if version >= 1 else 0
        found = [self._share_coordinator_for(k, version, request.listener) if key_type == SHARE_KEY_TYPE
                 else self._coordinator_for(k, key_type, request.listener) for k in keys]
        if version >= 4:
            return respond(request, R(throttle_time_ms=0, coordinators=[
                R["coordinators"](key=k, node_id=n, host=h, port=p, error_code=e, error_message=m)
                for k, (e, m, n, h, p) in zip(keys, found, strict=True)]))
        error, message, node, host, port = found[0]
        return respond(request, R(throttle_time_ms=0, error_code=error, error_message=message, node_id=node,
                                  host=host, port=port))

    def _share_coordinator_for(self, key: str, version: int,
                               listener: str) -> tuple[int, str | None, int, str, int]:
        """A share-partition key (FindCoordinator v6+, KIP-932): Kafka checks its form
        (SharePartitionKey.validate: "groupId:topicId:partition"); the coordinator is the leader
        of the key's partition of __share_group_state (ShareCoordinatorService.partitionFor: the
        Java hash of the whole key), the topic created when first asked for."""
        if version < 6:
            return E.INVALID_REQUEST, "Share coordinators need FindCoordinator v6+.", -1, "", -1
        parts = key.split(":")
        valid = len(parts) == 3 and parts[0].strip() != "" and _is_uuid(parts[1])
        if valid:
            try:
                int(parts[2])
            except ValueError:
                valid = False
        if not valid:
            return E.INVALID_REQUEST, f"Invalid share partition key {key!r}.", -1, "", -1
        return self._leader_of(SHARE_GROUP_STATE_TOPIC, partition_for_key, key, listener)

    def _coordinator_for(self, key: str, key_type: int,
                         listener: str) -> tuple[int, str | None, int, str, int]:
        """(error, message, node id, host, port) of the coordinator of group (key type 0) or
        transactional id (key type 1) ``key``: the leader of its partition of __consumer_offsets
        or __transaction_state."""
        if key_type not in (0, 1):
            return E.INVALID_REQUEST, f"Unknown coordinator type {key_type}.", -1, "", -1
        if not key:
            return E.INVALID_REQUEST, "A group id or transactional id is needed.", -1, "", -1
        name = OFFSETS_TOPIC if key_type == 0 else TRANSACTION_STATE_TOPIC
        return self._leader_of(name, partition_for if key_type == 0 else txn_partition_for, key, listener)

    def _leader_of(self, name: str, which: Callable[[str, int], int], key: str,
                   listener: str) -> tuple[int, str | None, int, str, int]:
        """The leader of ``key``'s partition of internal topic ``name`` (created if missing)."""
        if self.metadata_cache is None:
            return E.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1
        snap = self.metadata_cache.snapshot
        topic = snap.topics.get(name)
        if topic is None:
            if self.auto_create is not None:
                self.auto_create.create(name, snap)
            return E.COORDINATOR_NOT_AVAILABLE, f"The topic {name} is being created.", -1, "", -1
        info = topic.partitions.get(which(key, len(topic.partitions)))
        broker = snap.brokers.get(info.leader) if info is not None else None
        endpoint = broker.endpoint(listener) if broker is not None else None
        if endpoint is None:
            return E.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1
        return E.NONE, None, broker.id, endpoint.host, endpoint.port  # type: ignore[union-attr]

    # --- offsets -----------------------------------------------------------------------------------

    def offset_commit(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = offset_commit.RESPONSE
        offsets, unknown = requested_offsets(body.topics, self.metadata_cache, with_leader_epoch=version >= 6)

        def answer(error: int) -> Response:
            return respond(request, R(throttle_time_ms=0, topics=[R["topics"](name=t.name, partitions=[
                R["topics"]["partitions"](partition_index=p.partition_index,
                                          error_code=E.UNKNOWN_TOPIC_OR_PARTITION
                                          if (t.name, p.partition_index) in unknown else error)
                for p in t.partitions]) for t in body.topics]))

        if self.coordinator is None:
            return answer(E.COORDINATOR_NOT_AVAILABLE)
        if not offsets:
            return answer(E.NONE)
        generation = _generation(body) if version >= 1 else -1
        member_id = body.member_id if version >= 1 else NO_MEMBER
        instance_id = body.group_instance_id if version >= 7 else None
        self.coordinator.commit_offsets(body.group_id, member_id, instance_id, generation, offsets,
                                        lambda error: self.send_response(answer(error)),
                                        group_id_not_found=version >= 9)
        return None

    def offset_fetch(self, request: Request) -> Response:
        body, version = request.body, request.api_version
        R = offset_fetch.RESPONSE
        if version >= 8:
            groups = [(g.group_id, None if g.topics is None else
                       [(t.name, list(t.partition_indexes)) for t in g.topics]) for g in body.groups]
            # v9+: the member asking, checked for a consumer group (KIP-848).
            members = [(g.member_id, g.member_epoch) if version >= 9 else (None, -1) for g in body.groups]
        else:
            groups = [(body.group_id, None if body.topics is None else
                       [(t.name, list(t.partition_indexes)) for t in body.topics])]
            members = [(None, -1)]
        answers = []
        for (group_id, topics), (member_id, member_epoch) in zip(groups, members, strict=True):
            wanted = None if topics is None else [(t, p) for t, ps in topics for p in ps]
            found: dict[tuple[str, int], CommittedOffset | None] = {}
            if self.coordinator is None:
                error = E.COORDINATOR_NOT_AVAILABLE
            else:
                error, found = self.coordinator.fetch_offsets(group_id, wanted, member_id, member_epoch)
            if error and wanted is not None:
                found = dict.fromkeys(wanted)
            # v7+ require_stable: a partition with transactional offsets pending is UNSTABLE_OFFSET_COMMIT.
            unstable = (self.coordinator.unstable_partitions(group_id, list(found))
                        if version >= 7 and body.require_stable and not error and self.coordinator is not None
                        else set())
            by_topic: dict[str, list[Any]] = {}
            for (t, p), o in sorted(found.items()):
                by_topic.setdefault(t, []).append((p, None, E.UNSTABLE_OFFSET_COMMIT) if (t, p) in unstable
                                                  else (p, o, error))
            answers.append((group_id, error, by_topic))
        if version >= 8:
            G = R["groups"]
            GP = G["topics"]["partitions"]
            return respond(request, R(throttle_time_ms=0, groups=[G(group_id=g, error_code=e, topics=[
                G["topics"](name=t, partitions=[_fetched(GP, p, o, pe) for p, o, pe in ps])
                for t, ps in by_topic.items()]) for g, e, by_topic in answers]))
        _, error, by_topic = answers[0]
        T = R["topics"]
        # Before v2 a group-level error goes into every partition (there is no top-level one).
        return respond(request, R(throttle_time_ms=0, error_code=error, topics=[
            T(name=t, partitions=[_fetched(T["partitions"], p, o, pe) for p, o, pe in ps])
            for t, ps in by_topic.items()]))

    def offset_delete(self, request: Request) -> Response | None:
        body = request.body
        R = offset_delete.RESPONSE
        wanted = [(t.name, p.partition_index) for t in body.topics for p in t.partitions]

        def answer(error: int, per_partition: dict[tuple[str, int], int]) -> Response:
            return respond(request, R(error_code=error, throttle_time_ms=0, topics=[R["topics"](
                name=t.name, partitions=[R["topics"]["partitions"](
                    partition_index=p.partition_index,
                    error_code=per_partition.get((t.name, p.partition_index), E.NONE))
                    for p in t.partitions]) for t in body.topics]))

        if self.coordinator is None:
            return answer(E.COORDINATOR_NOT_AVAILABLE, {})
        self.coordinator.delete_offsets(body.group_id, wanted,
                                        lambda error, per: self.send_response(answer(error, per)))
        return None

    def list_groups(self, request: Request) -> Response:
        body, version = request.body, request.api_version
        R = list_groups.RESPONSE
        states = set(body.states_filter) if version >= 4 and body.states_filter else None
        types = set(body.types_filter) if version >= 5 and body.types_filter else None
        groups: list[tuple[str, str, str, str]] = []
        if self.coordinator is None:
            error = E.COORDINATOR_NOT_AVAILABLE
        else:
            error, groups = self.coordinator.list_groups(states, types)
        listed = [R["groups"](group_id=g, protocol_type=t, group_state=s, group_type=k)
                  for g, t, s, k in groups]
        listed += _share_groups_listed(R, self.share_groups, states, types, error)
        return respond(request, R(throttle_time_ms=0, error_code=error, groups=listed))

    # --- consumer groups (KIP-848) ------------------------------------------------------------

    def consumer_group_heartbeat(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = consumer_group_heartbeat.RESPONSE
        A = R["assignment"]

        def answer(result: HeartbeatResult) -> Response:
            assignment = None if result.assignment is None or result.error else A(topic_partitions=[
                A["topic_partitions"](topic_id=t, partitions=sorted(ps))
                for t, ps in sorted(result.assignment.items()) if ps])
            return respond(request, R(
                throttle_time_ms=0, error_code=result.error, error_message=result.message,
                member_id=None if result.error else result.member_id,
                member_epoch=0 if result.error else result.member_epoch,
                heartbeat_interval_ms=0 if result.error else result.heartbeat_interval_ms,
                assignment=assignment))

        if self.coordinator is None:
            return answer(HeartbeatResult(E.COORDINATOR_NOT_AVAILABLE))
        if not self.coordinator.config.consumer_protocol_enabled:
            return answer(HeartbeatResult(
                E.UNSUPPORTED_VERSION,
                "The consumer rebalance protocol is not enabled (group.coordinator.rebalance.protocols)."))
        owned = None if body.topic_partitions is None else {
            tp.topic_id: frozenset(tp.partitions) for tp in body.topic_partitions}
        self.coordinator.consumer_group_heartbeat(HeartbeatRequest(
            body.group_id, body.member_id, body.member_epoch, body.instance_id, body.rack_id,
            body.rebalance_timeout_ms,
            None if body.subscribed_topic_names is None else tuple(body.subscribed_topic_names),
            body.subscribed_topic_regex if version >= 1 else None, body.server_assignor, owned,
            request.header.client_id or "",
            "/" + request.client_address.rsplit(":", 1)[0] if request.client_address else "", version),
            lambda result: self.send_response(answer(result)))
        return None

    def consumer_group_describe(self, request: Request) -> Response:
        R = consumer_group_describe.RESPONSE
        G = R["groups"]
        M = G["members"]
        A = M["assignment"]
        snap = self.metadata_cache.snapshot if self.metadata_cache is not None else None

        def assignment(a: dict) -> Any:
            tps = []
            for t, ps in sorted(a.items()):
                info = snap.topic_by_id(t) if snap is not None else None
                tps.append(A["topic_partitions"](topic_id=t, topic_name=info.name if info else "",
                                                 partitions=sorted(ps)))
            return A(topic_partitions=tps)

        described = []
        coordinator = self.coordinator
        for group_id in request.body.group_ids:
            if self.coordinator is None:
                error, group = E.COORDINATOR_NOT_AVAILABLE, None
            elif not self.coordinator.config.consumer_protocol_enabled:
                error, group = E.UNSUPPORTED_VERSION, None
            else:
                error, group = self.coordinator.describe_consumer_group(group_id)
            if error or group is None:
                error = error or E.GROUP_ID_NOT_FOUND
                described.append(G(error_code=error, error_message=f"Group {group_id} not found."
                                   if error == E.GROUP_ID_NOT_FOUND else None, group_id=group_id,
                                   group_state="Dead" if error == E.GROUP_ID_NOT_FOUND else "", members=[]))
                continue
            described.append(G(
                error_code=E.NONE, group_id=group_id, group_state=group.state.value,
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                assignor_name=coordinator.consumer.preferred_assignor(group) if coordinator else "",
                members=[M(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                           member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                           subscribed_topic_names=list(m.subscribed_topic_names),
                           subscribed_topic_regex=m.subscribed_topic_regex,
                           assignment=assignment(m.rec.assigned),
                           target_assignment=assignment(group.target.get(m.member_id, {})),
                           member_type=CLASSIC_MEMBER if m.classic is not None else CONSUMER_MEMBER)
                         for m in group.members.values()]))
        return respond(request, R(throttle_time_ms=0, groups=described))

    # --- membership --------------------------------------------------------------------------

    def join_group(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = join_group.RESPONSE

        def answer(result: JoinResult) -> Response:
            members = [R["members"](member_id=m, group_instance_id=i, metadata=md)
                       for m, i, md in result.members]
            return respond(request, R(throttle_time_ms=0, error_code=result.error,
                                      generation_id=result.generation_id, protocol_type=result.protocol_type,
                                      protocol_name=result.protocol_name if result.protocol_name is not None
                                      else ("" if version < 7 else None),
                                      leader=result.leader_id, member_id=result.member_id, members=members))

        if self.coordinator is None:
            return answer(JoinResult(E.COORDINATOR_NOT_AVAILABLE, member_id=body.member_id))
        # v0 has no rebalance timeout: the session timeout serves (as Kafka does).
        rebalance_timeout = body.rebalance_timeout_ms if version >= 1 else body.session_timeout_ms
        self.coordinator.join_group(
            body.group_id, body.member_id, body.group_instance_id, version >= 4,
            request.header.client_id or "",
            "/" + request.client_address.rsplit(":", 1)[0] if request.client_address else "",
            rebalance_timeout, body.session_timeout_ms, body.protocol_type,
            [(p.name, bytes(p.metadata)) for p in body.protocols],
            lambda result: self.send_response(answer(result)))
        return None

    def sync_group(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        R = sync_group.RESPONSE

        def answer(result: SyncResult) -> Response:
            return respond(request, R(throttle_time_ms=0, error_code=result.error,
                                      protocol_type=result.protocol_type, protocol_name=result.protocol_name,
                                      assignment=result.assignment))

        if self.coordinator is None:
            return answer(SyncResult(E.COORDINATOR_NOT_AVAILABLE))
        self.coordinator.sync_group(
            body.group_id, body.generation_id, body.member_id, body.group_instance_id,
            body.protocol_type if version >= 5 else None, body.protocol_name if version >= 5 else None,
            {a.member_id: bytes(a.assignment) for a in body.assignments},
            lambda result: self.send_response(answer(result)))
        return None

    def heartbeat(self, request: Request) -> Response:
        body = request.body
        error = (E.COORDINATOR_NOT_AVAILABLE if self.coordinator is None else
                 self.coordinator.heartbeat(body.group_id, body.member_id, body.group_instance_id,
                                            body.generation_id))
        return respond(request, heartbeat.RESPONSE(throttle_time_ms=0, error_code=error))

    def leave_group(self, request: Request) -> Response:
        body, version = request.body, request.api_version
        R = leave_group.RESPONSE
        if version < 3:
            members: list[tuple[str, str | None]] = [(body.member_id, None)]
        else:
            members = [(m.member_id, m.group_instance_id) for m in body.members]
        errors: list[int] = []
        if self.coordinator is None:
            error = E.COORDINATOR_NOT_AVAILABLE
        else:
            error, errors = self.coordinator.leave_group(body.group_id, members)
        if version < 3:
            # One member: its error is the request's (Kafka's v0-2 answer).
            first = errors[0] if errors else E.NONE
            return respond(request, R(throttle_time_ms=0, error_code=error or first))
        return respond(request, R(throttle_time_ms=0, error_code=error, members=[
            R["members"](member_id=m or NO_MEMBER, group_instance_id=i, error_code=e)
            for (m, i), e in zip(members, errors or [error] * len(members), strict=True)]))

    # --- groups ----------------------------------------------------------------------------------

    def describe_groups(self, request: Request) -> Response:
        R = describe_groups.RESPONSE
        described = []
        for group_id in request.body.groups:
            if self.coordinator is None:
                error, group = E.COORDINATOR_NOT_AVAILABLE, None
            else:
                error, group = self.coordinator.describe_group(group_id)
            if error or group is None:
                message = None
                if not error and request.api_version >= 6:  # KIP-1043
                    error, message = E.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."
                described.append(R["groups"](error_code=error, error_message=message, group_id=group_id,
                                             group_state="Dead" if error in (E.NONE, E.GROUP_ID_NOT_FOUND)
                                             else "", protocol_type="", protocol_data="", members=[]))
                continue
            described.append(R["groups"](
                error_code=E.NONE, group_id=group_id, group_state=group.state,
                protocol_type=group.protocol_type, protocol_data=group.protocol_data,
                members=[R["groups"]["members"](
                    member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                    client_host=m.client_host, member_metadata=m.metadata, member_assignment=m.assignment)
                    for m in group.members]))
        return respond(request, R(throttle_time_ms=0, groups=described))

    def delete_groups(self, request: Request) -> Response | None:
        R = delete_groups.RESPONSE
        names = list(request.body.groups_names)

        def answer(results: dict[str, int]) -> Response:
            return respond(request, R(throttle_time_ms=0, results=[
                R["results"](group_id=g, error_code=results.get(g, E.UNKNOWN_SERVER_ERROR)) for g in names]))

        if self.coordinator is None:
            return answer({g: E.COORDINATOR_NOT_AVAILABLE for g in names})
        # Share groups: their share-partition state deleted on the share coordinators, then the
        # group by its manager (NON_EMPTY_GROUP while it has members), as Kafka's deleteGroups.
        shares, share_offsets = self.share_groups, self.share_offsets
        share_ids = [g for g in dict.fromkeys(names) if shares is not None and shares.is_share_group(g)]
        others = [g for g in names if g not in share_ids]
        if not share_ids and not others:
            return answer({})
        results: dict[str, int] = {}
        lock = threading.Lock()
        pending = [len(share_ids) + (1 if others else 0)]
        ready: list[Response] = []
        returned = [False]  # once the handler returned, the answer is sent instead

        def answered(found: dict[str, int]) -> None:
            with lock:
                results.update(found)
                pending[0] -= 1
                if pending[0]:
                    return
                response = answer(results)
                if not returned[0]:
                    ready.append(response)
                    return
            self.send_response(response)

        for g in share_ids:
            assert shares is not None
            if share_offsets is None:  # no share coordinator here: the membership only
                answered({g: shares.delete_group(g)})
            else:
                def deleted(error: int, g: str = g) -> None:
                    answered({g: error})
                share_offsets.delete_group(g, shares.delete_group, deleted)
        if others:
            self.coordinator.delete_groups(others, answered)
        with lock:
            returned[0] = True
            return ready[0] if ready else None


def _share_groups_listed(R: Any, share_groups: ShareGroupManager | None, states: set[str] | None,
                         types: set[str] | None, error: int) -> list[Any]:
    """ListGroups' entries of the share groups coordinated here (type and protocol type "share")."""
    if share_groups is None or error or (types is not None and "share" not in {x.lower() for x in types}):
        return []
    return [R["groups"](group_id=g, protocol_type="share", group_state=s, group_type="share")
            for g, s in share_groups.list_groups() if not states or s in states]


def _is_uuid(text: str) -> bool:
    """Kafka's Uuid.fromString would take it: base64url of 16 bytes."""
    try:
        return len(text) <= 24 and len(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))) == 16
    except (ValueError, binascii.Error):
        return False


def _generation(body: Any) -> int:
    """OffsetCommit's generation (renamed generation_id_or_member_epoch by KIP-848)."""
    value = getattr(body, "generation_id_or_member_epoch", None)
    return int(value if value is not None else body.generation_id)


def _fetched(cls: Any, partition: int, offset: CommittedOffset | None, error: int) -> Any:
    if offset is None:
        return cls(partition_index=partition, committed_offset=-1, committed_leader_epoch=-1, metadata="",
                   error_code=error)
    return cls(partition_index=partition, committed_offset=offset.offset,
               committed_leader_epoch=offset.leader_epoch, metadata=offset.metadata, error_code=error)
