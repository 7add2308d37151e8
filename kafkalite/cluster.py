"""``kafkalite cluster``: N broker processes on 127.0.0.1, the first also the controller.

Broker i listens for clients on base_port + 2(i-1) (PLAINTEXT) and for the controller and the
other brokers on the next port (INTERNAL, the inter-broker and so privileged listener), keeps its
data in DIR/broker-i, and finds the controller through controller.quorum.bootstrap.servers. With
metrics, broker i serves Prometheus metrics on metrics_base + (i-1). The
command checks that every port is free, waits until every broker is registered (each broker's
Metadata, from this cluster's id, lists them all), prints the bootstrap servers and each process
id, and stops them all on Ctrl-C or SIGTERM.

Every broker gets the same ``--config`` file and ``--override``s, after the cluster's own settings;
a ``request.log.dir`` becomes one directory per broker below it. The brokers run in a session of
their own, so that a terminal's Ctrl-C (SIGINT to the whole foreground group) reaches only this
command, which then stops each broker once, gracefully.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from kafkalite.clients import BlockingClient
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import metadata
from kafkalite.server.config import load_properties_file
from kafkalite.server.meta_properties import new_cluster_id

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
    cluster_id = new_cluster_id()
    os.makedirs(directory, exist_ok=True)
    with open(path, "w") as f:
        f.write(cluster_id + "\n")
    return cluster_id


class ClusterError(Exception):
    """The cluster cannot start (one line that says why)."""


def broker_args(node_id: int, directory: str, base_port: int, cluster_id: str,
                extra: Sequence[str] = (), metrics_port: int | None = None,
                config_file: str | None = None) -> list[str]:
    client, internal = base_port + 2 * (node_id - 1), base_port + 2 * (node_id - 1) + 1
    overrides = {
        "node.id": str(node_id),
        "process.roles": "broker,controller" if node_id == 1 else "broker",
        "listeners": f"PLAINTEXT://{HOST}:{client},INTERNAL://{HOST}:{internal}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "controller.quorum.bootstrap.servers": f"{HOST}:{base_port + 1}",
        "controller.quorum.voters": "",
        "controller.listener.names": "",
        "log.dirs": os.path.join(directory, f"broker-{node_id}"),
        "cluster.id": cluster_id,
        # A group forms at once, as in Kafka's sample server.properties for development.
        "group.initial.rebalance.delay.ms": "0",
    }
    if metrics_port is not None:
        overrides["metrics.port"] = str(metrics_port)
    args = [sys.executable, "-m", "kafkalite", "broker"]
    if config_file is not None:
        args += ["--config", config_file]
    for key, value in overrides.items():
        args += ["--override", f"{key}={value}"]
    for item in extra:
        key, _, value = item.partition("=")
        if key.strip() == "request.log.dir" and value.strip():
            item = f"request.log.dir={os.path.join(value.strip(), f'broker-{node_id}')}"
        args += ["--override", item]
    return args


def _request_log_dir(config_file: str | None) -> list[str]:
    """The config file's request.log.dir as an override, so that it too is split per broker."""
    if config_file is None:
        return []
    value = load_properties_file(config_file).get("request.log.dir", "").strip()
    return [f"request.log.dir={value}"] if value else []


def check_ports_free(ports: Sequence[int]) -> None:
    """ClusterError naming the first port already taken (another cluster, Kafka, anything)."""
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError as e:
                raise ClusterError(
                    f"port {port} on {HOST} is in use ({e.strerror}): another cluster may be running "
                    "there; stop it or choose another --base-port") from None


def free_base_port(brokers: int = 3) -> int:
    """A base port whose ``2 * brokers`` ports are free now, below the kernel's ephemeral range: a
    port in that range may be taken as the source port of any outgoing connection between this
    check and the brokers' bind."""
    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(10000, max(10001, low - 2 * brokers))
        try:
            check_ports_free(range(base, base + 2 * brokers))
        except ClusterError:
            continue
        return base
    raise ClusterError(f"no run of {2 * brokers} free ports below {low}")


def registered_brokers(port: int, cluster_id: str | None = None) -> set[int]:
    """The brokers that the broker at ``port`` knows, if it belongs to ``cluster_id`` (when given)."""
    client = BlockingClient(HOST, port, "kafkalite-cluster", 2.0)
    try:
        response = client.send_and_receive(ApiKey.METADATA, 12, metadata.REQUEST(topics=[]))
        if cluster_id is not None and response.cluster_id != cluster_id:
            return set()
        return {b.node_id for b in response.brokers}
    except OSError:
        return set()
    finally:
        client.close()


def start(brokers: int, directory: str, base_port: int, extra: Sequence[str] = (),
          log_files: bool = True, metrics_base: int | None = None,
          node_extra: dict[int, tuple[str, ...]] | None = None,
          config_file: str | None = None) -> list[Node]:
    """Start the brokers; ``node_extra`` adds overrides for single brokers (after ``extra``)."""
    cluster_id = _cluster_id(directory)
    nodes = []
    extra = [*_request_log_dir(config_file), *extra]
    for node_id in range(1, brokers + 1):
        out = open(os.path.join(directory, f"broker-{node_id}.log"), "ab") if log_files else None
        metrics = None if metrics_base is None else metrics_base + node_id - 1
        overrides = [*extra, *(node_extra or {}).get(node_id, ())]
        args = broker_args(node_id, directory, base_port, cluster_id, overrides, metrics, config_file)
        proc = subprocess.Popen(args, stdout=out or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                start_new_session=True)
        if out:
            out.close()
        nodes.append(Node(node_id, base_port + 2 * (node_id - 1), base_port + 2 * (node_id - 1) + 1, proc,
                          metrics))
    return nodes


def wait_registered(nodes: list[Node], timeout: float = 60.0, cluster_id: str | None = None) -> bool:
    """True once every broker lists them all (and, given ``cluster_id``, belongs to it); False at
    once if one of them exits."""
    want = {n.node_id for n in nodes}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(n.process.poll() is not None for n in nodes):
            return False
        if all(registered_brokers(n.client_port, cluster_id) >= want for n in nodes):
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


def _log(directory: str, node_id: int) -> str:
    return os.path.join(directory, f"broker-{node_id}.log")


def _last_error(path: str) -> str:
    """The broker's last error line, to say why it exited."""
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if "Error" in line or "ERROR" in line]
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


def run(brokers: int, directory: str, base_port: int, metrics_base: int | None = None,
        config_file: str | None = None, overrides: Sequence[str] = ()) -> int:
    ports = [base_port + i for i in range(2 * brokers)]
    if metrics_base is not None:
        ports += [metrics_base + i for i in range(brokers)]
    check_ports_free(ports)
    os.makedirs(directory, exist_ok=True)
    nodes = start(brokers, directory, base_port, overrides, metrics_base=metrics_base,
                  config_file=config_file)
    stopping = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stopping.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"starting {brokers} brokers in {directory} ...", flush=True)
        if not wait_registered(nodes, cluster_id=_cluster_id(directory)):
            exited = [n for n in nodes if n.process.poll() is not None]
            why = "".join(f"\n  broker {n.node_id} exited with {n.process.returncode}"
                          f"{_last_error(_log(directory, n.node_id))}" for n in exited)
            print(f"the cluster did not come up; see the logs in {directory}{why}", file=sys.stderr)
            return 1
        servers = ",".join(f"{HOST}:{n.client_port}" for n in nodes)
        print(f"kafkalite cluster is up: bootstrap.servers={servers}")
        for n in nodes:
            role = " (controller)" if n.node_id == 1 else ""
            metrics = f", metrics http://{HOST}:{n.metrics_port}/metrics" if n.metrics_port else ""
            print(f"  broker {n.node_id}{role}: {HOST}:{n.client_port}, pid {n.process.pid}, "
                  f"log {_log(directory, n.node_id)}{metrics}")
        print("Consumer groups rebalance without group.initial.rebalance.delay.ms (set to 0 here; "
              "Kafka's default is 3000).")
        print("Ctrl-C stops every broker.", flush=True)
        reported: set[int] = set()
        while not stopping.wait(0.5):
            for n in nodes:
                if n.node_id not in reported and n.process.poll() is not None:
                    reported.add(n.node_id)
                    print(f"broker {n.node_id} exited with {n.process.returncode}"
                          f"{_last_error(_log(directory, n.node_id))} (log {_log(directory, n.node_id)})",
                          file=sys.stderr, flush=True)
            if len(reported) == len(nodes):
                print("every broker has exited", file=sys.stderr)
                return 1
        return 0
    finally:
        stop(nodes)
        for s, h in previous.items():
            signal.signal(s, h)
        print("all brokers stopped", flush=True)
