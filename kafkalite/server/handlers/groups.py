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

import logging
from collections.abc import Callable

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    delete_groups,
    describe_groups,
    heartbeat,
    join_group,
    leave_group,
    sync_group,
)

from ..coordinator.group_coordinator import NO_MEMBER, GroupCoordinator, JoinResult, SyncResult
from ..responses import respond

log = logging.getLogger("kafkalite.server.handlers.groups")


class GroupApis:
    def __init__(self, coordinator: GroupCoordinator | None,
                 send_response: Callable[[Response], None]) -> None:
        self.coordinator = coordinator  # None: a KafkaApis without a broker (no groups)
        self.send_response = send_response

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
                described.append(R["groups"](error_code=error, group_id=group_id,
                                             group_state="Dead" if not error else "", protocol_type="",
                                             protocol_data="", members=[]))
                continue
            with self.coordinator._lock:  # type: ignore[union-attr]
                stable = group.state.value in ("Stable",)
                protocol = group.protocol_name or ""
                members = [R["groups"]["members"](
                    member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata(protocol) if stable and protocol else b"",
                    member_assignment=m.assignment if stable else b"") for m in group.members.values()]
                described.append(R["groups"](
                    error_code=E.NONE, group_id=group_id, group_state=group.state.value,
                    protocol_type=group.protocol_type or "", protocol_data=protocol if stable else "",
                    members=members))
        return respond(request, R(throttle_time_ms=0, groups=described))

    def delete_groups(self, request: Request) -> Response | None:
        R = delete_groups.RESPONSE
        names = list(request.body.groups_names)

        def answer(results: dict[str, int]) -> Response:
            return respond(request, R(throttle_time_ms=0, results=[
                R["results"](group_id=g, error_code=results.get(g, E.UNKNOWN_SERVER_ERROR)) for g in names]))

        if self.coordinator is None:
            return answer({g: E.COORDINATOR_NOT_AVAILABLE for g in names})
        self.coordinator.delete_groups(names, lambda results: self.send_response(answer(results)))
        return None
