"""Load the broker must take without hurting anyone: many connections held at once, idle ones
expiring, slow writers (slowloris) served or expired by connections.max.idle.ms, all while a
well-behaved client on its own connection sees every answer right."""

from __future__ import annotations

import socket
import time

import pytest

from kafkalite.protocol import encode_request
from kafkalite.protocol.messages import api_versions
from kafkalite_bench.fuzz.run import Canary
from tests.support.brokers import running_broker
from tests.support.wait import wait_for
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


HELD = 1500  # connections held at once (the long run, 10k, is the network benchmark's)
REQUEST = encode_request(18, 3, 1, "slow", api_versions.REQUEST(client_software_name="slow",
                                                                 client_software_version="1"))


def _plaintext(broker) -> list:
    return [p for p in broker.socket_server.processors if p.listener == "PLAINTEXT"]


def test_many_connections_held_idle_ones_expire_and_slow_writers_are_served(tmp_path):
    # A listen backlog for them all: at Kafka's 50, a moment's lag of the Acceptor behind the
    # test's connects overflowed it, and each SYN dropped cost its connect a 1 s retransmission
    # (20 of the test's 24 s went there).
    with running_broker(tmp_path, connections_max_idle_ms="1500",
                        socket_listen_backlog_size=str(HELD + 100)) as broker:
        port = broker.bound_port("PLAINTEXT")
        created_before = sum(p.connections_created for p in _plaintext(broker))
        canary = Canary("127.0.0.1", port)
        canary.start()
        held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(HELD)]
        slow = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(20)]
        try:
            # All registered (the first may be expiring already: the idle time is short).
            assert wait_for(lambda: sum(p.connections_created for p in _plaintext(broker))
                            == created_before + HELD + 21, timeout=30)
            # Slow writers: one byte of a request each every 0.1 s, well inside the idle time, so
            # they are never idle; each gets its answer once its last byte is in.
            for i in range(len(REQUEST)):
                for s in slow:
                    s.send(REQUEST[i:i + 1])
                time.sleep(0.1)  # the slowness is the test's input, not a wait for an event
            for s in slow:
                assert s.recv(4)  # an answer's size
            # Meanwhile the silent connections passed connections.max.idle.ms: all expired.
            assert wait_for(lambda: sum(p.expired_connections_killed for p in _plaintext(broker)) >= HELD,
                            timeout=30)
            for s in held[:50]:
                s.settimeout(5)
                assert s.recv(1) == b""  # closed by the broker
        finally:
            for s in held + slow:
                s.close()
        canary.stop()
        assert canary.failures == [] and canary.ok > 0
        with Client("127.0.0.1", port) as c:  # and the broker takes new clients as before
            assert c.call(18, 3, api_versions.REQUEST(client_software_name="after",
                                                      client_software_version="1")).error_code == 0
