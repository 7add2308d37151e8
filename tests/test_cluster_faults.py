"""Faults in a real 3-broker cluster (processes): the controller killed in the middle of a batch
and restarted, and a broker killed in the middle of writing a response. The controller reaches
broker 3 through a TCP proxy (broker 3 advertises the proxy's port on its INTERNAL listener), so
the test decides which of the controller's requests arrive. One cluster for the module; each test
leaves it as it found it."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import struct
import subprocess
from collections.abc import Iterator

import pytest

from kafkalite.local import processes as C
from kafkalite.local.settings import free_base_port
from kafkalite.protocol import encode_request
from kafkalite.protocol.messages import metadata
from kafkalite_bench.tcp_proxy import TcpProxy
from tests.support.wait import wait_for

from .test_cluster import FAST, kcat_partitions, same_everywhere

pytestmark = pytest.mark.integration


@contextlib.contextmanager
def proxied_cluster(directory: str, settings: tuple[str, ...],
                    node_extra: dict[int, tuple[str, ...]] | None = None) -> Iterator[dict]:
    """Three broker processes; the controller and the other brokers reach broker 3's INTERNAL
    listener (base + 5) through ``proxy``, the faults' handle."""
    base = free_base_port()
    proxy = TcpProxy(("127.0.0.1", base + 5))
    extra = dict(node_extra or {})
    extra[3] = (*extra.get(3, ()),
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{base + 4},INTERNAL://127.0.0.1:{proxy.port}")
    nodes = C.start(3, directory, base, settings, node_extra=extra)
    cluster_id = open(f"{directory}/cluster.id").read().strip()
    args = {n.node_id: C.broker_args(n.node_id, directory, base, cluster_id,
                                     settings + extra.get(n.node_id, ())) for n in nodes}
    state = {"nodes": nodes, "dir": directory, "base": base, "proxy": proxy, "args": args}
    try:
        assert C.wait_registered(nodes, 60), "cluster did not come up"
        yield state
    finally:
        C.stop(nodes)
        proxy.stop()


# Broker 2's socket send buffer and the slow client's receive buffer: the least Linux allows
# (4608 and 2304 bytes; about 5 KB can be in the two sockets), so that a Metadata response of WIDE
# partitions (about 42 bytes each) cannot all be in them when the broker is killed. No more
# partitions than that needs: each one a broker comes to lead writes its leader-epoch checkpoint
# (two fsyncs), each one a killed broker recovers or a deletion renames is a few more file
# operations: with thousands, a minute of the test and its teardown.
SEND_BUFFER = 1
RECEIVE_BUFFER = 1
WIDE = 400


def effective_send_buffer() -> int:
    """The SO_SNDBUF the kernel gives a socket asked for SEND_BUFFER."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        return int(probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with proxied_cluster(str(tmp_path_factory.mktemp("cluster-faults")), FAST,
                         {2: (f"socket.send.buffer.bytes={SEND_BUFFER}",)}) as state:
        yield state


def restart(cluster, node_id: int) -> None:
    node = cluster["nodes"][node_id - 1]
    with open(f"{cluster['dir']}/broker-{node_id}.log", "ab") as out:
        node.process = subprocess.Popen(cluster["args"][node_id], stdout=out, stderr=subprocess.STDOUT)


def topic_view(view, name):
    return sorted((p, v) for (t, p), v in view.items() if t == name)


def create(cluster, name: str, partitions: int, rf: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{cluster['nodes'][0].client_port}"})
    for f in admin.create_topics([NewTopic(name, partitions, rf)], operation_timeout=30).values():
        f.result(60)


def delete(cluster, name: str) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{cluster['nodes'][0].client_port}"})
    for f in admin.delete_topics([name], operation_timeout=30).values():
        f.result(60)
    assert wait_for(lambda: same_everywhere(cluster, lambda v: not topic_view(v, name)), timeout=30)


def controller_epochs(cluster) -> list[int]:
    return [int(e) for e in re.findall(r"started with epoch (\d+)",
                                       open(f"{cluster['dir']}/broker-1.log").read())]


def test_controller_killed_mid_batch_and_restarted_converges(cluster):
    nodes, proxy = cluster["nodes"], cluster["proxy"]
    epochs_before = controller_epochs(cluster)
    proxy.stall()  # what the controller sends broker 3 from now on waits in the proxy
    try:
        create(cluster, "midbatch", 12, 3)
        # Brokers 1 and 2 have the batch; broker 3 has not: the controller is mid-batch.
        assert wait_for(lambda: len(topic_view(kcat_partitions(nodes[1].client_port), "midbatch")) == 12,
                        timeout=20)
        assert topic_view(kcat_partitions(nodes[2].client_port), "midbatch") == []
        nodes[0].process.send_signal(signal.SIGKILL)
        nodes[0].process.wait(10)
        restart(cluster, 1)
        assert C.wait_registered(nodes, 60)
    finally:
        # The old controller's requests (older epoch) and the new one's reach broker 3 together,
        # in either order: the older epoch must be fenced, whichever comes last.
        proxy.resume()
    assert controller_epochs(cluster)[-1] > epochs_before[-1]

    def converged(view):
        parts = topic_view(view, "midbatch")
        return len(parts) == 12 and all(len(r.split(",")) == 3 and ld in (1, 2, 3) for _, (ld, r, _) in parts)

    assert wait_for(lambda: same_everywhere(cluster, converged), timeout=30)
    delete(cluster, "midbatch")


def test_broker_killed_mid_response_others_serve_and_it_converges(cluster):
    nodes = cluster["nodes"]
    create(cluster, "wide", WIDE, 3)
    assert wait_for(lambda: same_everywhere(cluster, lambda v: len(topic_view(v, "wide")) == WIDE),
                    timeout=60)
    victim = nodes[1]  # broker 2
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)  # a slow reader: the broker blocks
        s.settimeout(10)
        s.connect(("127.0.0.1", victim.client_port))
        s.sendall(encode_request(3, 12, 1, "slow", metadata.REQUEST(topics=None)))
        head = s.recv(4096)
        size = struct.unpack(">i", head[:4])[0]
        # The response is far bigger than both sockets' buffers: the broker is mid-write.
        assert size > 2 * (effective_send_buffer() + s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
        assert len(head) < size
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait(10)
        got = len(head) - 4
        with pytest.raises((ConnectionError, AssertionError)):
            while got < size:
                chunk = s.recv(65536)
                assert chunk, "closed"
                got += len(chunk)
    assert got < size  # the client saw a cut response, not a whole one

    def moved(view):
        parts = topic_view(view, "wide")
        return len(parts) == WIDE and all(ld in (1, 3) and "2" not in isr.split(",")
                                          for _, (ld, _, isr) in parts)

    assert wait_for(lambda: same_everywhere(cluster, moved), timeout=30)
    restart(cluster, 2)
    assert C.wait_registered(nodes, 60)
    # Back, it has every partition, and every broker's view is the same.
    assert wait_for(lambda: same_everywhere(cluster, lambda v: len(topic_view(v, "wide")) == WIDE),
                    timeout=60)
    assert len(topic_view(kcat_partitions(victim.client_port), "wide")) == WIDE
    delete(cluster, "wide")
