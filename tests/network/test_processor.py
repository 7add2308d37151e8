"""The Processor's loop steps driven one at a time by the test, over real loopback sockets, where a
case needs a state that a running loop would not reach on its own."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import pytest

from kafkalite.network.mute import ON_REQUEST, MuteState
from kafkalite.network.processor import Processor, ProcessorSettings
from kafkalite.network.quotas import ConnectionQuotas
from kafkalite.network.request_channel import RequestChannel
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.schema import Versions
from tests.support.wire_client import Client

from .conftest import API_VERSIONS_V0, answer, take

pytestmark = pytest.mark.integration


UNLIMITED = 2**31 - 1


@contextlib.contextmanager
def processor_with_clients(count: int) -> Iterator[tuple[Processor, RequestChannel, list[Client]]]:
    """A Processor that is not started (the test runs its steps) with ``count`` connected clients."""
    channel = RequestChannel(queue_size=10)
    quotas = ConnectionQuotas(UNLIMITED, UNLIMITED, {})
    settings = ProcessorSettings("PLAINTEXT", "PLAINTEXT", {ApiKey.API_VERSIONS: Versions(0, 3)})
    p = Processor(0, settings, channel, quotas)
    channel.add_processor(p)
    clients: list[Client] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        try:
            for _ in range(count):
                clients.append(Client("127.0.0.1", listener.getsockname()[1]))
                sock, (ip, _port) = listener.accept()
                sock.setblocking(False)
                quotas.inc("PLAINTEXT", ip)
                assert p.accept(sock, ip, may_block=False)
            p.configure_new_connections()
            assert len(p.connections) == count
            yield p, channel, clients
        finally:
            for c in clients:
                c.close()
            p._close_all()
            p._give_turn()


def poll_until(p: Processor, predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the Processor's polls never got there"
        p.poll()


def test_an_illegal_mute_transition_closes_only_its_connection():
    """Two connections' requests complete in the same poll; one connection is in a state where
    REQUEST_RECEIVED is illegal. It is closed, and the other's request is still handed over and
    answered (the error used to escape the loop, dropping the poll's requests)."""
    with processor_with_clients(2) as (p, channel, (bad, good)):
        bad.send(18, 0, API_VERSIONS_V0)
        corr = good.send(18, 0, API_VERSIONS_V0)
        poll_until(p, lambda: len(p._completed_receives) == 2)
        bad_address = f"127.0.0.1:{bad.sock.getsockname()[1]}"
        bad_id = next(i for i in p.connections if i.split("-")[1] == bad_address)
        broken = p.connections[bad_id]
        broken.handle(ON_REQUEST)  # as if a request of it were already with the handlers
        assert broken.mute_state is MuteState.MUTED_AND_RESPONSE_PENDING

        p.process_completed_receives()

        assert bad_id not in p.connections and len(p.connections) == 1
        assert p.quotas.total == 1
        request = take(channel, timeout=0)
        assert request.connection_id != bad_id and request.correlation_id == corr
        answer(channel, request)
        p.process_new_responses()
        assert good.receive(18, 0)[0] == corr
        p.process_completed_sends()
        assert next(iter(p.connections.values())).mute_state is MuteState.NOT_MUTED
        assert bad.closed_by_server()
