"""The share coordinator's apis (KIP-932), sent by partition leaders' persisters: InitializeShareGroupState,
ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState and ReadShareGroupStateSummary,
each partition of a request handed to the ShareCoordinator and the request answered once every
partition has its answer (the writes once stored, acks=all). Without a coordinator (a KafkaApis
without a broker) every partition answers COORDINATOR_NOT_AVAILABLE.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import (
    delete_share_group_state,
    initialize_share_group_state,
    read_share_group_state,
    read_share_group_state_summary,
    write_share_group_state,
)

from ..responses import respond
from ..share.persister import ReadStateResult, ShareStateKey, StateBatch, StateSummary
from ..share_coordinator.coordinator import ShareCoordinator

Start = Callable[[ShareStateKey, Any, Callable[[Any], None]], None]


class _Gather:
    """Answers in request order, the response sent when the last partition has answered."""

    def __init__(self, parts: list[tuple[Any, Any]], finish: Callable[[list[Any]], None]) -> None:
        self.answers: list[Any] = [None] * len(parts)
        self.left = len(parts)
        self.finish = finish
        self.lock = threading.Lock()

    def answer(self, i: int) -> Callable[[Any], None]:
        def done(value: Any) -> None:
            with self.lock:
                self.answers[i] = value
                self.left -= 1
                last = self.left == 0
            if last:
                self.finish(self.answers)
        return done


class ShareStateApis:
    def __init__(self, coordinator: ShareCoordinator | None,
                 send_response: Callable[[Response], None]) -> None:
        self.coordinator = coordinator
        self.send_response = send_response

    def _run(self, request: Request, start: Start, refused: Callable[[int], Any],
             result: Callable[[Any, Any], Any], topic_result: Callable[[Any, list[Any]], Any],
             response: Callable[[list[Any]], Any]) -> Response | None:
        body = request.body
        parts = [(t, p) for t in body.topics for p in t.partitions]

        def finish(answers: list[Any]) -> Response:
            by_topic: dict[Any, list[Any]] = {}
            for (t, p), a in zip(parts, answers, strict=True):
                by_topic.setdefault(t.topic_id, []).append(result(p, a))
            return respond(request, response([topic_result(tid, rs) for tid, rs in by_topic.items()]))

        if not parts:
            return finish([])
        if self.coordinator is None:
            return finish([refused(E.COORDINATOR_NOT_AVAILABLE) for _ in parts])
        # Answered before this thread returned: returned from here; else sent by whoever answered last.
        lock = threading.Lock()
        sent: list[Response] = []
        returned = [False]

        def done(answers: list[Any]) -> None:
            r = finish(answers)
            with lock:
                later = returned[0]
                if not later:
                    sent.append(r)
            if later:
                self.send_response(r)

        gather = _Gather(parts, done)
        for i, (t, p) in enumerate(parts):
            start(ShareStateKey(body.group_id, t.topic_id.bytes, p.partition), p, gather.answer(i))
        with lock:
            returned[0] = True
            return sent[0] if sent else None

    def initialize_share_group_state(self, request: Request) -> Response | None:
        R = initialize_share_group_state.RESPONSE
        T = R["results"]
        P = T["partitions"]
        c = self.coordinator
        return self._run(
            request, lambda key, p, done: c.initialize_state(key, p.state_epoch, p.start_offset, done)  # type: ignore[union-attr]
            , lambda e: e, lambda p, e: P(partition=p.partition, error_code=e, error_message=_message(e)),
            lambda tid, rs: T(topic_id=tid, partitions=rs), lambda ts: R(results=ts))

    def write_share_group_state(self, request: Request) -> Response | None:
        R = write_share_group_state.RESPONSE
        T = R["results"]
        P = T["partitions"]
        c = self.coordinator

        def start(key: ShareStateKey, p: Any, done: Callable[[Any], None]) -> None:
            batches = [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                       for b in p.state_batches]
            c.write_state(key, p.state_epoch, p.leader_epoch, p.start_offset, batches, done)  # type: ignore[union-attr]
        return self._run(request, start, lambda e: e,
                         lambda p, e: P(partition=p.partition, error_code=e, error_message=_message(e)),
                         lambda tid, rs: T(topic_id=tid, partitions=rs), lambda ts: R(results=ts))

    def delete_share_group_state(self, request: Request) -> Response | None:
        R = delete_share_group_state.RESPONSE
        T = R["results"]
        P = T["partitions"]
        c = self.coordinator
        return self._run(request, lambda key, p, done: c.delete_state(key, done),  # type: ignore[union-attr]
                         lambda e: e,
                         lambda p, e: P(partition=p.partition, error_code=e, error_message=_message(e)),
                         lambda tid, rs: T(topic_id=tid, partitions=rs), lambda ts: R(results=ts))

    def read_share_group_state(self, request: Request) -> Response | None:
        R = read_share_group_state.RESPONSE
        T = R["results"]
        P = T["partitions"]
        B = P["state_batches"]
        c = self.coordinator

        def result(p: Any, r: ReadStateResult) -> Any:
            return P(partition=p.partition, error_code=r.error, error_message=_message(r.error),
                     state_epoch=r.state_epoch, start_offset=r.start_offset,
                     state_batches=[B(first_offset=b.first_offset, last_offset=b.last_offset,
                                      delivery_state=b.delivery_state, delivery_count=b.delivery_count)
                                    for b in r.batches])
        return self._run(request, lambda key, p, done: c.read_state(key, p.leader_epoch, done),  # type: ignore[union-attr]
                         ReadStateResult, result, lambda tid, rs: T(topic_id=tid, partitions=rs),
                         lambda ts: R(results=ts))

    def read_share_group_state_summary(self, request: Request) -> Response | None:
        R = read_share_group_state_summary.RESPONSE
        T = R["results"]
        P = T["partitions"]
        c = self.coordinator

        def result(p: Any, r: StateSummary) -> Any:
            return P(partition=p.partition, error_code=r.error, error_message=_message(r.error),
                     state_epoch=r.state_epoch, start_offset=r.start_offset)
        return self._run(request, lambda key, p, done: c.read_summary(key, p.leader_epoch, done),  # type: ignore[union-attr]
                         StateSummary, result, lambda tid, rs: T(topic_id=tid, partitions=rs),
                         lambda ts: R(results=ts))


def _message(error: int) -> str | None:
    return None if error == E.NONE else E.for_code(error).message
