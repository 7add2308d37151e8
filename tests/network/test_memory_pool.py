"""queued.max.request.bytes: the request memory pool. When it is empty, Processors stop reading
new requests until parsed requests give their bytes back, so a flood of large requests cannot
take the broker's memory; everyone is answered once memory frees."""

from __future__ import annotations

import socket
import struct
import threading

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafkalite.network.memory_pool import MemoryPool
from kafkalite.protocol.messages import api_versions
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

POOL = 1 << 20  # 1 MiB


class PoolMachine(RuleBasedStateMachine):
    """Any sequence of takes and releases: used is what is held, empty exactly when nothing is
    left, and the wake-up fires exactly when memory comes back."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = MemoryPool(1000)
        self.held: list[int] = []
        self.wakes = 0
        self.expected_wakes = 0
        self.pool.on_available.append(self._woken)

    def _woken(self) -> None:
        self.wakes += 1

    @precondition(lambda self: not self.pool.out_of_memory)
    @rule(n=st.integers(1, 800))
    def take(self, n: int) -> None:
        self.pool.take(n)
        self.held.append(n)

    @precondition(lambda self: self.held)
    @rule(i=st.integers(0, 100))
    def release(self, i: int) -> None:
        was_empty = self.pool.out_of_memory
        self.pool.release(self.held.pop(i % len(self.held)))
        if was_empty and not self.pool.out_of_memory:
            self.expected_wakes += 1

    @invariant()
    def consistent(self) -> None:
        assert self.pool.used == sum(self.held)
        assert self.pool.out_of_memory == (sum(self.held) >= 1000)
        assert self.pool.peak_used >= self.pool.used
        # Never more than one take past the size: a take needs memory left.
        assert self.pool.used < 1000 + 800
        assert self.wakes == self.expected_wakes


TestPoolMachine = PoolMachine.TestCase


def test_a_pool_needs_a_size():
    with pytest.raises(ValueError):
        MemoryPool(0)


def _padded_api_versions(client: Client, size: int) -> bytes:
    """A valid ApiVersions request frame of ``size`` bytes (Kafka ignores trailing bytes)."""
    payload = client.request_bytes(18, 3, api_versions.REQUEST(client_software_name="big",
                                                               client_software_version="1"))[4:]
    payload += b"\0" * (size - 4 - len(payload))
    return struct.pack(">i", len(payload)) + payload


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with running_broker(tmp_path_factory.mktemp("data"), queued_max_request_bytes=str(POOL),
                        socket_request_max_bytes=str(8 * POOL)) as b:
        yield b


@pytest.mark.integration
def test_reads_stop_while_the_pool_is_empty_and_resume_when_it_frees(broker):
    pool = broker.socket_server.memory_pool
    port = broker.bound_port("PLAINTEXT")
    with Client("127.0.0.1", port) as big, Client("127.0.0.1", port) as small:
        frame = _padded_api_versions(big, 2 * POOL)
        big.send_raw(frame[:4096])  # its size is in: 2 MiB counted, more than the pool holds
        assert wait_for(lambda: pool.out_of_memory)
        small.send(18, 3, api_versions.REQUEST(client_software_name="small", client_software_version="1"))
        small.sock.settimeout(0.5)
        with pytest.raises(socket.timeout):  # not read, so not answered, while memory is out
            small.sock.recv(1)
        assert pool.used == len(frame) - 4
        small.sock.settimeout(10)
        big.send_raw(frame[4096:])
        assert big.receive(18, 3)[1].error_code == 0
        assert small.receive(18, 3)[1].error_code == 0  # read once the big one was parsed
    assert wait_for(lambda: pool.used == 0)
    assert pool.peak_used <= POOL + 2 * POOL + 4096 and pool.depleted_ns > 0


@pytest.mark.integration
def test_a_flood_of_large_requests_is_answered_within_a_bounded_pool(broker):
    pool = broker.socket_server.memory_pool
    port = broker.bound_port("PLAINTEXT")
    size = POOL // 2
    peak_before, depleted_before = pool.peak_used, pool.depleted_ns
    pool.peak_used = 0
    errors: list[object] = []
    last_bytes = threading.Event()

    def one_client() -> None:
        try:
            with Client("127.0.0.1", port, timeout=30) as c:
                frame = _padded_api_versions(c, size)
                # All but the last byte: a request read this far holds its memory until it is
                # whole, so the pool runs out whatever the machine's speed.
                for start in range(0, len(frame) - 1, 64 * 1024):
                    c.sock.sendall(frame[start:min(start + 64 * 1024, len(frame) - 1)])
                assert last_bytes.wait(30)
                c.sock.sendall(frame[-1:])
                errors.append(c.receive(18, 3)[1].error_code)
        except Exception as e:  # reported below: a thread's exception would be lost
            errors.append(e)

    threads = [threading.Thread(target=one_client) for _ in range(12)]
    for t in threads:
        t.start()
    # 12 requests of half the pool each: reads stop once it is spent, until requests complete.
    assert wait_for(lambda: pool.available <= 0, timeout=30)
    last_bytes.set()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == [0] * 12
    processors = sum(1 for p in broker.socket_server.processors if p.memory_pool is pool)
    # The pool's size, plus at most one request per Processor taken while memory was left.
    assert 0 < pool.peak_used <= POOL + processors * size
    assert pool.depleted_ns > depleted_before  # 6 MiB of requests did not fit: reads stopped
    assert wait_for(lambda: pool.used == 0)
    pool.peak_used = max(pool.peak_used, peak_before)


@pytest.mark.integration
def test_an_unset_pool_counts_nothing(tmp_path):
    with running_broker(tmp_path) as b:
        assert b.socket_server.memory_pool is None
        assert all(p.memory_pool is None for p in b.socket_server.processors)
        with Client("127.0.0.1", b.bound_port("PLAINTEXT")) as c:
            assert c.call(18, 3, api_versions.REQUEST(client_software_name="x",
                                                      client_software_version="1")).error_code == 0


@pytest.mark.integration
def test_the_pool_is_in_the_brokers_metrics(broker):
    from kafkalite.metrics.collector import BrokerCollector

    values = {m.name: m.samples[0].value for m in BrokerCollector(broker).collect()
              if m.name.startswith("kafka_network_socketserver_memorypool")}
    pool = broker.socket_server.memory_pool
    assert values["kafka_network_socketserver_memorypoolavailable"] == pool.available
    assert values["kafka_network_socketserver_memorypoolused"] == pool.used
    assert values["kafka_network_socketserver_memorypooldepletedtime"] == pool.depleted_ns / 1e9
