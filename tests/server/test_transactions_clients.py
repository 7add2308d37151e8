"""Transactions with real, unmodified clients against a kafkalite broker process (issue 27):
confluent-kafka, kafka-python and aiokafka transactional producers commit and abort;
read_committed consumers of each client see only what was committed, read_uncommitted ones see
everything; a second producer with the same transactional id fences the first; a transaction left
hanging by a SIGKILLed producer is aborted by the coordinator after its timeout, and the LSO and
the aborted-transaction index (.txnindex) survive a broker restart.

``KAFKALITE_TXN_TARGET=mock`` runs the tests the mock can host against librdkafka's mock cluster
(tests/support/transactions.py says what the mock lacks: its read_committed consumers see aborted
records, it fences nobody; those checks say so where they differ)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.support.broker_process import BrokerProcess
from tests.support.transactions import (
    CONSUMERS,
    FENCES,
    PRODUCERS,
    SINGLE_BROKER,
    all_values,
    clients_for,
    committed_values,
    confluent_transactions,
    create_topic,
    lso_and_hw,
    read_values,
    target,
    txnindex_files,
    txns,
)
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with target(tmp_path_factory.mktemp("txn-clients")) as t:
        yield t


@pytest.mark.parametrize("client", sorted(PRODUCERS))
def test_committed_and_aborted_transactions(server, client):
    """Committed and aborted transactions, one of them over two partitions, from ``client``'s
    transactional producer; each client's consumers read them read_committed and
    read_uncommitted."""
    topic = f"txn-{client}"
    server.create_topic(topic, 2)
    transactions = [
        *txns(f"{client}-one", [(5, True), (4, False), (3, True)]),
        *txns(f"{client}-two", [(6, False), (6, True)], partitions=(0, 1)),
        *txns(f"{client}-last", [(2, False), (2, True)], partitions=(1, 0)),  # read last of all
    ]
    if client not in clients_for(server.kind):
        pytest.skip(f"{client} does not run against the {server.kind}")
    PRODUCERS[client](server.bootstrap, topic, f"committer-{client}", transactions)
    last = transactions[-1].values
    everything, committed = all_values(transactions), committed_values(transactions)
    for consumer in clients_for(server.kind):
        got = read_values(consumer, server.bootstrap, topic, [0, 1], "read_uncommitted", last)
        assert got == everything, consumer
        got = read_values(consumer, server.bootstrap, topic, [0, 1], "read_committed", last)
        # The mock returns no aborted transactions in Fetch: its read_committed reads them all.
        assert got == (everything if server.mock else committed), consumer


@pytest.mark.parametrize("client", sorted(FENCES))
def test_a_second_producer_with_the_same_transactional_id_fences_the_first(server, client):
    topic = f"fence-{client}"
    server.create_topic(topic, 1)
    first = [b"first-%d" % i for i in range(3)]
    second = [b"second-%d" % i for i in range(3)]
    if client not in clients_for(server.kind):
        pytest.skip(f"{client} does not run against the {server.kind}")
    fence, is_fenced = FENCES[client]
    raised = fence(server.bootstrap, topic, f"fenced-{client}", first, second)
    if server.mock:
        pytest.skip(f"the mock fences no producer (the first one's commit raised {raised!r})")
    assert raised is not None and is_fenced(raised), repr(raised)
    # The first producer's transaction was aborted by the coordinator when the second one bumped
    # the epoch: read_committed consumers see the second one's records only.
    got = read_values("confluent-kafka", server.bootstrap, topic, [0], "read_committed", second)
    assert got == second
    got = read_values("confluent-kafka", server.bootstrap, topic, [0], "read_uncommitted", second)
    assert got[:len(first)] == first and got[len(first):] == second


# --- a transaction left hanging ------------------------------------------------------------------

HANGER = textwrap.dedent("""
    import sys, time
    from confluent_kafka import Producer
    bootstrap, topic, txn_id, timeout_ms, count = sys.argv[1:6]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                  "transaction.timeout.ms": int(timeout_ms), "linger.ms": 0})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(int(count)):
        p.produce(topic, b"hanging-%d" % i, partition=0)
    assert p.flush(30) == 0  # AddPartitionsToTxn answered, the records in the log
    print("produced", flush=True)
    time.sleep(600)  # SIGKILLed by the test long before
""")


def hang_a_transaction(tmp_path, bootstrap: str, topic: str, timeout_ms: int, count: int) -> float:
    """A producer process opens a transaction, produces ``count`` records to partition 0 and is
    SIGKILLed; when its transaction began (time.monotonic(), a little after: an upper bound of
    when its timeout runs out is this plus the timeout)."""
    script = tmp_path / "hanger.py"
    script.write_text(HANGER)
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(script), bootstrap, topic, f"hanger-{topic}",
                             str(timeout_ms), str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "produced", or "" if it died: bounded by its own timeouts
        assert line.strip() == "produced", line
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    return began


def restart(broker: BrokerProcess, log_dir, sig: int) -> BrokerProcess:
    """``broker`` stopped by ``sig`` (SIGKILL: no clean shutdown) and started again on its files."""
    broker.signal(sig)
    broker.proc.wait(30)
    broker.stop()
    return BrokerProcess(log_dir, *SINGLE_BROKER).wait_started(60)


def test_a_hanging_transaction_is_aborted_after_its_timeout_and_the_index_survives_restarts(tmp_path):
    """transaction.timeout.ms 5000; the broker looks for timed-out transactions every 500 ms.
    Before the timeout the LSO stays at the hanging transaction's first offset; after it, the
    coordinator aborts the transaction, the LSO reaches the high watermark, read_committed
    consumers read past it, and the partition's .txnindex records the aborted transaction. After
    a clean restart and after a SIGKILL and restart, the index is there and read_committed
    consumers still skip the aborted records."""
    if server_is_mock():
        pytest.skip("the mock has no transaction timeout and no broker process to restart")
    log_dir = tmp_path / "data"
    broker = BrokerProcess(log_dir, *SINGLE_BROKER).wait_started(60)
    try:
        topic = "hanging"
        create_topic(broker.bootstrap, topic, 1)
        before = txns("before", [(4, True)])
        confluent_transactions(broker.bootstrap, topic, "before-the-hang", before)
        began = hang_a_transaction(tmp_path, broker.bootstrap, topic, 5000, 3)
        after = txns("after", [(4, True)])
        confluent_transactions(broker.bootstrap, topic, "after-the-hang", after)
        lso, hw = lso_and_hw(broker.bootstrap, topic, 0)
        if time.monotonic() - began < 4.0:  # still well inside its timeout
            # before's 4 records and their marker: the hanging transaction begins at offset 5.
            assert (lso, hw) == (5, 5 + 3 + 4 + 1), (lso, hw)
        assert wait_for(lambda: lso_and_hw(broker.bootstrap, topic, 0) == (hw + 1, hw + 1), timeout=30), \
            lso_and_hw(broker.bootstrap, topic, 0)  # the abort marker is offset hw
        hanging = [b"hanging-%d" % i for i in range(3)]
        want = committed_values(before) + committed_values(after)
        for consumer in sorted(CONSUMERS):
            got = read_values(consumer, broker.bootstrap, topic, [0], "read_committed", after[0].values)
            assert got == want, consumer
        got = read_values("confluent-kafka", broker.bootstrap, topic, [0], "read_uncommitted",
                          after[0].values)
        assert got == [*before[0].values, *hanging, *after[0].values]
        assert txnindex_files(log_dir, topic, 0), sorted(p.name for p in (log_dir / f"{topic}-0").iterdir())
        done = (hw + 1, hw + 1)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            broker = restart(broker, log_dir, sig)
            assert txnindex_files(log_dir, topic, 0), sig
            assert wait_for(lambda b=broker.bootstrap: lso_and_hw(b, topic, 0) == done, timeout=30)
            for consumer in sorted(CONSUMERS):
                got = read_values(consumer, broker.bootstrap, topic, [0], "read_committed", after[0].values)
                assert got == want, (sig, consumer)
    finally:
        broker.stop()


def test_an_open_transaction_holds_the_lso_across_a_broker_restart(tmp_path):
    """A transaction open when the broker is SIGKILLed (its producer SIGKILLed too) still holds
    the LSO after the restart (the producer state and the coordinator's __transaction_state are
    recovered), and is aborted once its timeout (10 s) runs out. The hang, the transactions after it
    and the restart take about 2 s (5 s on a loaded machine): the LSO is checked well inside the
    timeout."""
    if server_is_mock():
        pytest.skip("the mock has no broker process to restart")
    log_dir = tmp_path / "data"
    broker = BrokerProcess(log_dir, *SINGLE_BROKER).wait_started(60)
    try:
        topic = "open-across-restart"
        create_topic(broker.bootstrap, topic, 1)
        timeout_ms = 10000
        began = hang_a_transaction(tmp_path, broker.bootstrap, topic, timeout_ms, 3)
        after = txns("after", [(2, True)])
        confluent_transactions(broker.bootstrap, topic, "after-the-open-one", after)
        assert lso_and_hw(broker.bootstrap, topic, 0) == (0, 3 + 2 + 1)
        broker = restart(broker, log_dir, signal.SIGKILL)
        lso, hw = lso_and_hw(broker.bootstrap, topic, 0)
        if time.monotonic() - began < timeout_ms / 1000 - 3:
            assert (lso, hw) == (0, 6)
        bootstrap = broker.bootstrap
        assert wait_for(lambda: lso_and_hw(bootstrap, topic, 0) == (7, 7), timeout=timeout_ms / 1000 + 30)
        got = read_values("confluent-kafka", broker.bootstrap, topic, [0], "read_committed", after[0].values)
        assert got == list(after[0].values)
        assert txnindex_files(log_dir, topic, 0)
    finally:
        broker.stop()


def server_is_mock() -> bool:
    from tests.support.transactions import target_kind

    return target_kind() == "mock"
