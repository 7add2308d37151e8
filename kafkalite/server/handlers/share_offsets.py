"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932), on the
group's coordinator, translated to and from ShareGroupOffsets (share_coordinator/group_offsets.py):
answered once the share coordinators have answered every share-partition."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group_offsets,
)

from ..responses import respond
from ..share_coordinator.group_offsets import PartitionOffset, ShareGroupOffsets, TopicOffsets


def _message(error: int) -> str | None:
    return None if error == E.NONE else E.for_code(error).message


class _Later:
    """A response built on whichever thread answers last: returned by the handler if that is
    before it returns, else sent."""

    def __init__(self, send: Callable[[Response], None]) -> None:
        self.send, self.lock, self.returned = send, threading.Lock(), False
        self.ready: list[Response] = []

    def answer(self, response: Response) -> None:
        with self.lock:
            later = self.returned
            if not later:
                self.ready.append(response)
        if later:
            self.send(response)

    def result(self) -> Response | None:
        with self.lock:
            self.returned = True
            return self.ready[0] if self.ready else None


class ShareOffsetApis:
    def __init__(self, offsets: ShareGroupOffsets | None, send_response: Callable[[Response], None]) -> None:
        self.offsets = offsets  # None: a KafkaApis without a broker (COORDINATOR_NOT_AVAILABLE)
        self.send_response = send_response

    def describe_share_group_offsets(self, request: Request) -> Response | None:
        body = request.body
        R = describe_share_group_offsets.RESPONSE
        G = R["groups"]
        T, P = G["topics"], G["topics"]["partitions"]
        later = _Later(self.send_response)
        answers: dict[int, Any] = {}
        lock = threading.Lock()

        def group_answer(g: Any, error: int, topics: list[TopicOffsets]) -> Any:
            return G(group_id=g.group_id, error_code=error, error_message=_message(error), topics=[
                T(topic_name=t.name, topic_id=t.topic_id, partitions=[
                    P(partition_index=p.partition, start_offset=p.start_offset, leader_epoch=p.leader_epoch,
                      error_code=p.error, error_message=_message(p.error)) for p in t.partitions])
                for t in topics])

        def finish() -> None:
            later.answer(respond(request, R(throttle_time_ms=0,
                                            groups=[answers[i] for i in range(len(body.groups))])))

        if not body.groups:
            finish()
        for i, g in enumerate(body.groups):
            def done(error: int, topics: list[TopicOffsets], i: int = i, g: Any = g) -> None:
                with lock:
                    answers[i] = group_answer(g, error, topics)
                    last = len(answers) == len(body.groups)
                if last:
                    finish()
            if self.offsets is None:
                done(E.COORDINATOR_NOT_AVAILABLE, [])
                continue
            asked = None if g.topics is None else [(t.topic_name, list(t.partitions)) for t in g.topics]
            self.offsets.describe(g.group_id, asked, done)
        return later.result()

    def alter_share_group_offsets(self, request: Request) -> Response | None:
        body = request.body
        R = alter_share_group_offsets.RESPONSE
        T, P = R["responses"], R["responses"]["partitions"]
        later = _Later(self.send_response)

        def done(error: int, topics: list[TopicOffsets]) -> None:
            if error:  # the group's error, for every partition too (as Kafka's response has it)
                topics = [TopicOffsets(t.topic_name, uuid.UUID(int=0), tuple(
                    PartitionOffset(p.partition_index, -1, -1, error) for p in t.partitions))
                    for t in body.topics]
            later.answer(respond(request, R(
                throttle_time_ms=0, error_code=error, error_message=_message(error), responses=[
                    T(topic_name=t.name, topic_id=t.topic_id, partitions=[
                        P(partition_index=p.partition, error_code=p.error, error_message=_message(p.error))
                        for p in t.partitions]) for t in topics])))

        if self.offsets is None:
            done(E.COORDINATOR_NOT_AVAILABLE, [])
        else:
            self.offsets.alter(body.group_id, [(t.topic_name, [(p.partition_index, p.start_offset)
                                                               for p in t.partitions]) for t in body.topics],
                               done)
        return later.result()

    def delete_share_group_offsets(self, request: Request) -> Response | None:
        body = request.body
        R = delete_share_group_offsets.RESPONSE
        T = R["responses"]
        later = _Later(self.send_response)

        def done(error: int, topics: list[tuple[str, uuid.UUID, int]]) -> None:
            later.answer(respond(request, R(
                throttle_time_ms=0, error_code=error, error_message=_message(error), responses=[
                    T(topic_name=name, topic_id=tid, error_code=e, error_message=_message(e))
                    for name, tid, e in topics])))

        if self.offsets is None:
            done(E.COORDINATOR_NOT_AVAILABLE, [])
        else:
            self.offsets.delete(body.group_id, [t.topic_name for t in body.topics], done)
        return later.result()

