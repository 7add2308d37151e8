"""kafkalite for the network benchmark: one broker in-process, its metadata cache holding T topics
(the same cache the peers answer from), until SIGTERM. ``python -m kafkalite_bench.network.kafkalite_server
PORT TOPICS NETWORK_THREADS IO_THREADS [OBSERVABILITY]``.

OBSERVABILITY: ``metrics`` (the default: request metrics recorded, as in every broker), ``off``
(a completed request's metrics step, ``Processor._completed``, replaced by a no-op, to measure
what it costs) or ``log`` (metrics and the request log into a temporary directory)."""

from __future__ import annotations

import signal
import sys
import tempfile
import threading

from kafkalite.protocol.messages import leader_and_isr
from kafkalite.server.broker import Broker
from kafkalite.server.config import BrokerConfig

from .workload import PRODUCE_PARTITION, PRODUCE_TOPIC, metadata_cache


class _Broker(Broker):
    """A broker that registers nowhere: the benchmark measures the network layer and handlers
    alone, with no controller in the process (a broker-only node must name one; it is never
    contacted)."""

    def _start_lifecycle(self) -> None:
        pass


def main(port: int, topics: int, network_threads: int, io_threads: int,
         observability: str = "metrics") -> None:
    with tempfile.TemporaryDirectory() as log_dir:
        extra = {"request.log.dir": f"{log_dir}/requests"} if observability.startswith("log") else {}
        if observability == "log-csv":
            extra["request.log.format"] = "csv"
        broker = _Broker(BrokerConfig({
            **extra,
            # Clients on PLAINTEXT; the inter-broker (privileged) listener apart, as in a cluster,
            # so clients see the same ApiVersions as the peers give.
            "node.id": "1", "process.roles": "broker", "controller.quorum.bootstrap.servers": "127.0.0.1:9",
            "listeners": f"PLAINTEXT://127.0.0.1:{port},INTERNAL://127.0.0.1:0",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "log.dirs": log_dir, "num.network.threads": str(network_threads),
            "num.io.threads": str(io_threads), "socket.listen.backlog.size": "1024",
        }))
        broker.startup()
        if observability == "off":
            for p in broker.socket_server.processors:  # type: ignore[union-attr]
                p._completed = lambda *_: None  # type: ignore[method-assign]
        assert broker.metadata_cache is not None
        cache = metadata_cache(topics, port)
        broker.metadata_cache.update(lambda _: cache.snapshot)
        # The Produce of the metadata-produce mix: this broker leads its partition, with a log.
        assert broker.replica_manager is not None
        topic = cache.snapshot.topics[PRODUCE_TOPIC]
        state = leader_and_isr.LEADER_AND_ISR_PARTITION_STATE(
            partition_index=PRODUCE_PARTITION, controller_epoch=1, leader=1, leader_epoch=0, isr=[1],
            partition_epoch=0, replicas=[1], adding_replicas=[], removing_replicas=[], is_new=True)
        broker.replica_manager.become_leader_or_follower(1, -1, [(PRODUCE_TOPIC, topic.topic_id, state)])
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        print("ready", flush=True)
        stop.wait()
        broker.shutdown()


if __name__ == "__main__":
    port, topics, network_threads, io_threads = (int(a) for a in sys.argv[1:5])
    main(port, topics, network_threads, io_threads, *sys.argv[5:6])
