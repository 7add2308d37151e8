"""Share groups (KIP-932): ShareGroupHeartbeat and ShareGroupDescribe (the group coordinator's
share groups, coordinator/share_group/), ShareFetch and ShareAcknowledge (the partition leader's
share-partitions, share/manager.py) — Kafka's KafkaApis handlers of them.

ShareFetch applies the acknowledgements it carries first (answered in the same response, once
written), then acquires records of the session's partitions. With nothing acquired it waits in
the fetch purgatory, watching its partitions, until an append, a release or an expired lock makes
records available, or MaxWaitMs passes. The leader checks only the share session, not group
membership (as Kafka's SharePartitionManager does).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
)

from ..coordinator.share_group.manager import ASSIGNOR, HeartbeatResult, ShareGroupManager
from ..metadata_cache import MetadataCache
from ..purgatory import DelayedOperation, DelayedOperationPurgatory
from ..replication.replica_manager import partition_key
from ..responses import respond
from ..share.manager import PartitionFetch, SharePartitionManager
from ..share.session import FINAL_EPOCH, INITIAL_EPOCH, SharePartitionRef
from ..share.share_partition import AckBatch

SendResponse = Callable[[Response], None]
NO_RECORD_LIMIT = 0x7FFFFFFF

HB = share_group_heartbeat.RESPONSE
SD = share_group_describe.RESPONSE
SF = share_fetch.RESPONSE
SA = share_acknowledge.RESPONSE


class ShareApis:
    def __init__(self, groups: ShareGroupManager | None, partitions: SharePartitionManager | None,
                 send_response: SendResponse, metadata_cache: MetadataCache | None,
                 purgatory: DelayedOperationPurgatory | None) -> None:
        self.groups = groups
        self.partitions = partitions
        self.send_response = send_response
        self.metadata_cache = metadata_cache
        self.purgatory = purgatory  # the fetch purgatory: appends to a partition check its key

    # --- ShareGroupHeartbeat / ShareGroupDescribe --------------------------------------------

    def share_group_heartbeat(self, request: Request) -> Response | None:
        body = request.body
        if self.groups is None:
            return respond(request, HB(throttle_time_ms=0, error_code=E.COORDINATOR_NOT_AVAILABLE,
                                       member_epoch=0, heartbeat_interval_ms=0))

        def answer(result: HeartbeatResult) -> None:
            assignment = None
            if result.assignment is not None:
                A = HB["assignment"]
                assignment = A(topic_partitions=[A["topic_partitions"](topic_id=t, partitions=ps)
                                                 for t, ps in sorted(result.assignment.items())])
            self.send_response(respond(request, HB(
                throttle_time_ms=0, error_code=result.error, error_message=result.message,
                member_id=result.member_id, member_epoch=result.member_epoch,
                heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment)))

        self.groups.heartbeat_and_store(
            body.group_id, body.member_id, body.member_epoch, body.rack_id,
            None if body.subscribed_topic_names is None else list(body.subscribed_topic_names),
            request.header.client_id or "",
            "/" + request.client_address.rsplit(":", 1)[0] if request.client_address else "", answer)
        return None

    def share_group_describe(self, request: Request) -> Response:
        G = SD["groups"]
        M = G["members"]
        TP = M["assignment"]["topic_partitions"]
        snap = self.metadata_cache.snapshot if self.metadata_cache is not None else None

        def name(topic_id: uuid.UUID) -> str:
            info = snap.topic_by_id(topic_id) if snap is not None else None
            return info.name if info is not None else ""

        described = []
        for group_id in request.body.group_ids:
            if self.groups is None:
                error, group = E.COORDINATOR_NOT_AVAILABLE, None
            else:
                error, group = self.groups.describe(group_id)
            if error or group is None:
                message = None if error else f"Group {group_id} not found."
                described.append(G(error_code=error or E.GROUP_ID_NOT_FOUND, error_message=message,
                                   group_id=group_id, group_state="Dead" if not error else "",
                                   group_epoch=-1, assignment_epoch=-1, assignor_name=""))
                continue
            described.append(G(
                error_code=E.NONE, group_id=group_id, group_state=group.state.value,
                group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                assignor_name=ASSIGNOR,
                members=[M(member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                           client_id=m.client_id, client_host=m.client_host,
                           subscribed_topic_names=sorted(m.subscribed_topic_names),
                           assignment=M["assignment"](topic_partitions=[
                               TP(topic_id=t, topic_name=name(t), partitions=ps)
                               for t, ps in sorted(m.assignment.items())]))
                         for m in group.members.values()]))
        return respond(request, SD(throttle_time_ms=0, groups=described))

    # --- ShareFetch --------------------------------------------------------------------------

    def _ref(self, topic_id: uuid.UUID, partition: int) -> SharePartitionRef:
        snap = self.metadata_cache.snapshot if self.metadata_cache is not None else None
        info = snap.topic_by_id(topic_id) if snap is not None else None
        return SharePartitionRef(info.name if info is not None else None, topic_id, partition)

    def _acks(self, topics: Any) -> tuple[dict[SharePartitionRef, list[AckBatch]], list[SharePartitionRef]]:
        """(acknowledgements by partition, every partition named) of a request's topics."""
        acks: dict[SharePartitionRef, list[AckBatch]] = {}
        refs = []
        for t in topics:
            for p in t.partitions:
                ref = self._ref(t.topic_id, p.partition_index)
                refs.append(ref)
                if p.acknowledgement_batches:
                    acks[ref] = [AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                                 for b in p.acknowledgement_batches]
        return acks, refs

    def share_fetch(self, request: Request) -> Response | None:
        body, version = request.body, request.api_version
        manager = self.partitions
        if manager is None:
            return respond(request, _fetch_error(E.UNKNOWN_SERVER_ERROR, "Share groups are not served."))
        group_id, member_id, epoch = body.group_id, body.member_id, body.share_session_epoch
        if not group_id or not member_id:
            return respond(request, _fetch_error(E.INVALID_REQUEST, "GroupId and MemberId are needed."))
        acks, refs = self._acks(body.topics)
        if epoch == INITIAL_EPOCH and acks:
            return respond(request, _fetch_error(E.INVALID_REQUEST,
                                                 "Acknowledge data present in the initial share fetch."))
        forgotten = [(t.topic_id, p) for t in body.forgotten_topics_data for p in t.partitions]
        error, session_refs = manager.session(group_id, member_id, epoch, refs, forgotten)
        if error:
            return respond(request, _fetch_error(error, None))
        lock_ms = manager.config.lock_duration_ms(manager.group_settings(group_id).record_lock_duration_ms)
        max_records = body.max_records if version >= 1 and body.max_records > 0 else NO_RECORD_LIMIT
        shown = list(dict.fromkeys([*session_refs, *acks]))

        def after_acks(ack_errors: dict[SharePartitionRef, int]) -> None:
            if epoch == FINAL_EPOCH:
                manager.close_session(group_id, member_id)
                self.send_response(respond(request, self._fetch_response(request, version, lock_ms, shown,
                                                                         {}, ack_errors)))
                return
            operation = DelayedShareFetch(self, request, group_id, member_id, session_refs, max_records,
                                          body.max_bytes, body.max_wait_ms, lock_ms, shown, ack_errors)
            if body.max_wait_ms <= 0 or self.purgatory is None or not session_refs:
                operation.answer_now()
                return
            keys = [partition_key(r.topic, r.partition) for r in session_refs if r.topic is not None]
            self.purgatory.try_complete_else_watch(operation, keys)

        manager.acknowledge(group_id, member_id, acks, after_acks)
        return None

    def _fetch_response(self, request: Request, version: int, lock_ms: int, refs: list[SharePartitionRef],
                        fetched: dict[SharePartitionRef, PartitionFetch],
                        ack_errors: dict[SharePartitionRef, int]
                        ) -> Any:
        T = SF["responses"]
        P = T["partitions"]
        AR = P["acquired_records"]
        topics: dict[uuid.UUID, list[Any]] = {}
        leaders: dict[int, Any] = {}
        for ref in refs:
            got = fetched.get(ref, PartitionFetch(E.NONE))
            ack_error = ack_errors.get(ref, E.NONE)
            topics.setdefault(ref.topic_id, []).append(P(
                partition_index=ref.partition, error_code=got.error, acknowledge_error_code=ack_error,
                current_leader=self._leader(ref, got.error, request.listener, leaders),
                records=got.records or b"",
                acquired_records=[AR(first_offset=a.first_offset, last_offset=a.last_offset,
                                     delivery_count=a.delivery_count) for a in got.acquired]))
        return SF(throttle_time_ms=0, error_code=E.NONE, acquisition_lock_timeout_ms=lock_ms,
                  responses=[T(topic_id=t, partitions=ps) for t, ps in topics.items()],
                  node_endpoints=list(leaders.values()))

    def _leader(self, ref: SharePartitionRef, error: int, listener: str, leaders: dict[int, Any]) -> Any:
        """The partition's leader when this broker is not it (and its endpoint, in ``leaders``), so
        that the client goes there without a Metadata request first."""
        L = SF["responses"]["partitions"]["current_leader"]
        if error not in (E.NOT_LEADER_OR_FOLLOWER, E.FENCED_LEADER_EPOCH) or self.metadata_cache is None:
            return L(leader_id=-1, leader_epoch=-1)
        snap = self.metadata_cache.snapshot
        topic = snap.topics.get(ref.topic) if ref.topic is not None else None
        info = topic.partitions.get(ref.partition) if topic is not None else None
        if info is None:
            return L(leader_id=-1, leader_epoch=-1)
        broker = snap.brokers.get(info.leader)
        endpoint = broker.endpoint(listener) if broker is not None else None
        if broker is not None and endpoint is not None:
            leaders[info.leader] = SF["node_endpoints"](
                node_id=info.leader, host=endpoint.host, port=endpoint.port, rack=broker.rack)
        return L(leader_id=info.leader, leader_epoch=info.leader_epoch)

    # --- ShareAcknowledge --------------------------------------------------------------------

    def share_acknowledge(self, request: Request) -> Response | None:
        body = request.body
        manager = self.partitions
        if manager is None:
            return respond(request, SA(throttle_time_ms=0, error_code=E.UNKNOWN_SERVER_ERROR))
        group_id, member_id, epoch = body.group_id, body.member_id, body.share_session_epoch
        if not group_id or not member_id:
            return respond(request, SA(throttle_time_ms=0, error_code=E.INVALID_REQUEST))
        error = E.INVALID_SHARE_SESSION_EPOCH if epoch == INITIAL_EPOCH else manager.check_session(
            group_id, member_id, epoch)
        if error:
            return respond(request, SA(throttle_time_ms=0, error_code=error))
        acks, refs = self._acks(body.topics)

        def answered(errors: dict[SharePartitionRef, int]) -> None:
            if epoch == FINAL_EPOCH:
                manager.close_session(group_id, member_id)
            T = SA["responses"]
            P = T["partitions"]
            topics: dict[uuid.UUID, list[Any]] = {}
            leaders: dict[int, Any] = {}
            for ref in dict.fromkeys(refs):
                code = errors.get(ref, E.NONE)
                topics.setdefault(ref.topic_id, []).append(P(
                    partition_index=ref.partition, error_code=code,
                    current_leader=self._leader(ref, code, request.listener, leaders)))
            self.send_response(respond(request, SA(
                throttle_time_ms=0, error_code=E.NONE,
                responses=[T(topic_id=t, partitions=ps) for t, ps in topics.items()],
                node_endpoints=list(leaders.values()))))

        manager.acknowledge(group_id, member_id, acks, answered)
        return None


def _fetch_error(error: int, message: str | None) -> Any:
    return SF(throttle_time_ms=0, error_code=error, error_message=message, acquisition_lock_timeout_ms=0)


class DelayedShareFetch(DelayedOperation):
    """A ShareFetch that acquired nothing, waiting (Kafka's DelayedShareFetch): tried again on
    every append to, or release in, its partitions; answered with what there is at MaxWaitMs."""

    def __init__(self, apis: ShareApis, request: Request, group_id: str, member_id: str,
                 refs: list[SharePartitionRef], max_records: int, max_bytes: int, max_wait_ms: int,
                 lock_ms: int,
                 shown: list[SharePartitionRef], ack_errors: dict[SharePartitionRef, int]) -> None:
        super().__init__(max_wait_ms)
        self.apis, self.request = apis, request
        self.group_id, self.member_id, self.refs = group_id, member_id, refs
        self.max_records, self.max_bytes, self.lock_ms = max_records, max_bytes, lock_ms
        self.shown, self.ack_errors = shown, ack_errors
        self._fetched: dict[SharePartitionRef, PartitionFetch] | None = None

    def _fetch(self) -> dict[SharePartitionRef, PartitionFetch]:
        manager = self.apis.partitions
        assert manager is not None
        return manager.fetch(self.group_id, self.member_id, self.refs, self.max_records, self.max_bytes,
                             self._loaded)

    def _loaded(self) -> None:
        """A partition's share state is loaded: try again."""
        purgatory = self.apis.purgatory
        if purgatory is not None:
            for r in self.refs:
                if r.topic is not None:
                    purgatory.check_and_complete(partition_key(r.topic, r.partition))

    def try_complete(self) -> bool:
        # A try that acquires but loses the race with the expiry (which answers with a fetch of
        # its own) leaves its records locked until their lock expires: rare, and safe.
        fetched = self._fetch()
        return any(f.acquired or f.error for f in fetched.values()) and self.force_complete_with(fetched)

    def force_complete_with(self, fetched: dict[SharePartitionRef, PartitionFetch]) -> bool:
        self._fetched = fetched
        if self.force_complete():
            return True
        self._fetched = None
        return False

    def answer_now(self) -> None:
        self.force_complete_with(self._fetch())

    def on_complete(self) -> None:
        fetched = self._fetched if self._fetched is not None else self._fetch()
        self.apis.send_response(respond(self.request, self.apis._fetch_response(
            self.request, self.request.api_version, self.lock_ms, self.shown, fetched, self.ack_errors)))

    def on_expiration(self) -> None:
        pass
