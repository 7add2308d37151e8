"""TransactionMarkerChannelManager's in-process path: the markers of partitions this broker leads
go to its ``local_writer`` as one WriteTxnMarkers (no sender thread), are answered as a sent one
is, and a writer that fails or answers a retriable error has them written again."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import write_txn_markers
from kafkalite.server.coordinator.transaction.coordinator import MarkerRequest
from kafkalite.server.coordinator.transaction.markers import TransactionMarkerChannelManager
from tests.support.wait import wait_for

R = write_txn_markers.RESPONSE


def cache(leaders: dict[tuple[str, int], int]) -> SimpleNamespace:
    topics: dict[str, SimpleNamespace] = {}
    for (topic, index), leader in leaders.items():
        info = topics.setdefault(topic, SimpleNamespace(partitions={}))
        info.partitions[index] = SimpleNamespace(leader=leader)
    return SimpleNamespace(snapshot=SimpleNamespace(topics=topics, brokers={}))


class Writer:
    """Answers each request with the next of ``errors`` for every partition (raises for None)."""

    def __init__(self, *errors: int | None) -> None:
        self.errors = list(errors)
        self.requests: list[object] = []
        self.threads: list[str] = []

    def __call__(self, body, done) -> None:  # type: ignore[no-untyped-def]
        self.requests.append(body)
        self.threads.append(threading.current_thread().name)
        error = self.errors.pop(0) if self.errors else E.NONE
        if error is None:
            raise RuntimeError("the log refused")
        M = R["markers"]
        T = M["topics"]
        P = T["partitions"]
        done(R(markers=[M(producer_id=m.producer_id, topics=[
            T(name=t.name, partitions=[P(partition_index=i, error_code=error) for i in t.partition_indexes])
            for t in m.topics]) for m in body.markers]))


def request(written: threading.Event, partitions: frozenset[tuple[str, int]]) -> MarkerRequest:
    return MarkerRequest("tx", 0, 3, True, 7, 1, partitions, on_written=written.set)


def test_local_markers_written_in_the_callers_thread():
    writer = Writer()
    manager = TransactionMarkerChannelManager(1, cache({("t", 0): 1, ("t", 1): 1}), "PLAINTEXT",  # type: ignore[arg-type]
                                              local_writer=writer)
    manager.start()
    try:
        written = threading.Event()
        manager.add_markers(request(written, frozenset({("t", 0), ("t", 1)})))
        assert written.is_set()  # at once
        [body] = writer.requests
        [m] = body.markers  # type: ignore[attr-defined]
        assert (m.producer_id, m.producer_epoch, m.transaction_result, m.coordinator_epoch) == (7, 1, True, 3)
        assert [(t.name, t.partition_indexes) for t in m.topics] == [("t", [0, 1])]
        assert writer.threads == [threading.current_thread().name]
        assert manager.markers_sent == 2 and manager.pending_transactions == 0
        assert not manager._senders
    finally:
        manager.shutdown()


def test_local_markers_retried_after_a_failure_or_a_retriable_error():
    writer = Writer(None, E.NOT_LEADER_OR_FOLLOWER, E.NONE)
    manager = TransactionMarkerChannelManager(1, cache({("t", 0): 1}), "PLAINTEXT",  # type: ignore[arg-type]
                                              local_writer=writer)
    manager.start()
    try:
        written = threading.Event()
        manager.add_markers(request(written, frozenset({("t", 0)})))
        assert not written.is_set() and manager.pending_transactions == 1
        assert written.wait(5)  # by the retry thread, after its backoff, twice
        assert len(writer.requests) == 3 and writer.threads[1:] == ["TxnMarkerSenderThread-1"] * 2
        assert wait_for(lambda: manager.pending_transactions == 0, timeout=5)
    finally:
        manager.shutdown()


def test_fenced_local_markers_stop():
    writer = Writer(E.TRANSACTION_COORDINATOR_FENCED)
    manager = TransactionMarkerChannelManager(1, cache({("t", 0): 1}), "PLAINTEXT",  # type: ignore[arg-type]
                                              local_writer=writer)
    manager.start()
    try:
        written = threading.Event()
        manager.add_markers(request(written, frozenset({("t", 0)})))
        assert not written.is_set() and manager.pending_transactions == 0 and len(writer.requests) == 1
    finally:
        manager.shutdown()
