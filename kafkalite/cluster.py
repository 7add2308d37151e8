"""``kafkalite cluster``: N broker processes on 127.0.0.1, the first also the controller.

Broker i listens for clients on base_port + 2(i-1) (PLAINTEXT) and for the controller and the
other brokers on the next port (INTERNAL, the inter-broker and so privileged listener), keeps its
data in DIR/broker-i, and finds the controller through controller.quorum.bootstrap.servers. With
metrics, broker i serves Prometheus metrics on metrics_base + (i-1). The
command waits until every broker is registered (broker 1's Metadata lists them all), prints the
bootstrap servers and each process id, and stops them all on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass

from kafkalite.controller.network_client import BlockingClient
from kafkalite.protocol.messages import metadata

HOST = "127.0.0.1"


@dataclass
class Node:
    node_id: int
    client_port: int
    internal_port: int
    process: subprocess.Popen
    metrics_port: int | None = None


def _cluster_id(directory: str) -> str:
    path = os.path.join(directory, "cluster.id")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        f.write(cluster_id + "\n")
    return cluster_id


def broker_args(node_id: int, directory: str, base_port: int, cluster_id: str,
                extra: tuple[str, ...] = (), metrics_port: int | None = None) -> list[str]:
    client, internal = base_port + 2 * (node_id - 1), base_port + 2 * (node_id - 1) + 1
    overrides = {
        "node.id": str(node_id),
        "process.roles": "broker,controller" if node_id == 1 else "broker",
        "listeners": f"PLAINTEXT://{HOST}:{client},INTERNAL://{HOST}:{internal}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "controller.quorum.bootstrap.servers": f"{HOST}:{base_port + 1}",
        "log.dirs": os.path.join(directory, f"broker-{node_id}"),
        "cluster.id": cluster_id,
    }
    if metrics_port is not None:
        overrides["metrics.port"] = str(metrics_port)
    args = [sys.executable, "-m", "kafkalite", "broker"]
    for key, value in overrides.items():
        args += ["--override", f"{key}={value}"]
    for item in extra:
        args += ["--override", item]
    return args


def registered_brokers(port: int) -> set[int]:
    client = BlockingClient(HOST, port, "kafkalite-cluster", 2.0)
    try:
        response = client.send_and_receive(3, 12, metadata.REQUEST(topics=[]))
        return {b.node_id for b in response.brokers}
    except OSError:
        return set()
    finally:
        client.close()


def start(brokers: int, directory: str, base_port: int, extra: tuple[str, ...] = (),
          log_files: bool = True, metrics_base: int | None = None,
          node_extra: dict[int, tuple[str, ...]] | None = None) -> list[Node]:
    """Start the brokers; ``node_extra`` adds overrides for single brokers (after ``extra``)."""
    cluster_id = _cluster_id(directory)
    nodes = []
    for node_id in range(1, brokers + 1):
        out = open(os.path.join(directory, f"broker-{node_id}.log"), "ab") if log_files else None
        metrics = None if metrics_base is None else metrics_base + node_id - 1
        overrides = extra + (node_extra or {}).get(node_id, ())
        proc = subprocess.Popen(broker_args(node_id, directory, base_port, cluster_id, overrides, metrics),
                                stdout=out or subprocess.DEVNULL, stderr=subprocess.STDOUT)
        if out:
            out.close()
        nodes.append(Node(node_id, base_port + 2 * (node_id - 1), base_port + 2 * (node_id - 1) + 1, proc,
                          metrics))
    return nodes


def wait_registered(nodes: list[Node], timeout: float = 60.0) -> bool:
    want = {n.node_id for n in nodes}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(n.process.poll() is not None for n in nodes):
            return False
        if all(registered_brokers(n.client_port) >= want for n in nodes):
            return True
        time.sleep(0.1)
    return False


def stop(nodes: list[Node], timeout: float = 20.0) -> None:
    for n in nodes:
        if n.process.poll() is None:
            n.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for n in nodes:
        try:
            n.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            n.process.kill()
            n.process.wait(5)


def run(brokers: int, directory: str, base_port: int, metrics_base: int | None = None) -> int:
    os.makedirs(directory, exist_ok=True)
    nodes = start(brokers, directory, base_port, metrics_base=metrics_base)
    stopping = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stopping.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"starting {brokers} brokers in {directory} ...", flush=True)
        if not wait_registered(nodes):
            print(f"the cluster did not come up; see the logs in {directory}", file=sys.stderr)
            return 1
        servers = ",".join(f"{HOST}:{n.client_port}" for n in nodes)
        print(f"kafkalite cluster is up: bootstrap.servers={servers}")
        for n in nodes:
            role = " (controller)" if n.node_id == 1 else ""
            metrics = f", metrics http://{HOST}:{n.metrics_port}/metrics" if n.metrics_port else ""
            print(f"  broker {n.node_id}{role}: {HOST}:{n.client_port}, pid {n.process.pid}, "
                  f"log {os.path.join(directory, f'broker-{n.node_id}.log')}{metrics}")
        print("Ctrl-C stops every broker.", flush=True)
        while not stopping.wait(0.5):
            dead = [n.node_id for n in nodes if n.process.poll() is not None]
            if dead:
                print(f"broker(s) {dead} exited", file=sys.stderr)
        return 0
    finally:
        stop(nodes)
        for s, h in previous.items():
            signal.signal(s, h)
        print("all brokers stopped", flush=True)
