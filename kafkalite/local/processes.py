"""``kafkalite cluster``: N broker processes on 127.0.0.1, the first also the controller.

Broker i listens for clients on base_port + 2(i-1) (PLAINTEXT) and for the controller and the
other brokers on the next port (INTERNAL, the inter-broker and so privileged listener), keeps its
data in DIR/broker-i, and finds the controller through controller.quorum.bootstrap.servers. With
``controllers`` N > 1, brokers 1..N form a controller quorum instead: voter i also listens on a
CONTROLLER listener (``controller_base`` + (i-1)), and every node reaches each voter through a
TcpProxy of its own run by this command (kafkalite/local/proxy.py), which ``kafkalite fault
partition`` cuts. With metrics, broker i serves Prometheus metrics on metrics_base + (i-1). The
command checks that every port is free, waits until every broker is registered (each broker's
Metadata, from this cluster's id, lists them all), prints the bootstrap servers and each process
id, and stops them all on Ctrl-C or SIGTERM.

Every broker gets the same ``--config`` file and ``--override``s, after the cluster's own settings;
a ``request.log.dir`` becomes one directory per broker below it. The brokers run in a session of
their own, so that a terminal's Ctrl-C (SIGINT to the whole foreground group) reaches only this
command, which then stops each broker once, gracefully.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kafkalite.clients import BlockingClient
from kafkalite.common.properties import load_properties_file
from kafkalite.local.fault_admin import FaultAdmin, serve_admin
from kafkalite.local.fault_client import post_json
from kafkalite.local.proxy import TcpProxy
from kafkalite.local.settings import HOST, broker_settings, check_ports_free, registered_brokers
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import metadata
from kafkalite.server.faults.injector import FaultError
from kafkalite.server.meta_properties import new_cluster_id


@dataclass
class Node:
    node_id: int
    client_port: int
    internal_port: int
    process: subprocess.Popen
    metrics_port: int | None = None
    args: tuple[str, ...] = ()  # its command line, to start it again
    log_path: str | None = None
    killed: bool = False  # by a fault (``kafkalite fault kill``): its exit is no news


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


class Quorum:
    """The controller quorum of a local cluster: voters 1..N, voter i's CONTROLLER listener on
    ``controller_base`` + (i-1), and a TcpProxy per (node, voter) that node's connections to
    that voter go through."""

    def __init__(self, voters: int, nodes: int, controller_base: int) -> None:
        self.voter_ids = list(range(1, voters + 1))
        self.controller_base = controller_base
        self.proxies = {(n, v): TcpProxy((HOST, self.controller_port(v)), HOST, name=f"proxy-{n}-to-{v}")
                        for n in range(1, nodes + 1) for v in self.voter_ids}

    def controller_port(self, voter: int) -> int:
        return self.controller_base + voter - 1

    def voters_for(self, node_id: int) -> str:
        return ",".join(f"{v}@{HOST}:{self.proxies[(node_id, v)].port}" for v in self.voter_ids)

    def partition(self, node_id: int) -> None:
        if node_id not in self.voter_ids:
            raise FaultError(f"node {node_id} is not a voter (voters: {self.voter_ids})")
        for (src, dst), proxy in self.proxies.items():
            if (src == node_id) != (dst == node_id):
                proxy.cut()

    def heal(self, node_id: int) -> None:
        for (src, dst), proxy in self.proxies.items():
            if (src == node_id) != (dst == node_id):
                proxy.heal()

    def close(self) -> None:
        for proxy in self.proxies.values():
            proxy.close()


def broker_args(node_id: int, directory: str, base_port: int, cluster_id: str,
                extra: Sequence[str] = (), metrics_port: int | None = None,
                config_file: str | None = None, quorum: Quorum | None = None) -> list[str]:
    client, internal = base_port + 2 * (node_id - 1), base_port + 2 * (node_id - 1) + 1
    if quorum is None:
        overrides = broker_settings(node_id, directory, client, internal, base_port + 1, cluster_id)
    else:
        overrides = broker_settings(node_id, directory, client, internal, base_port + 1, cluster_id,
                                    voters=quorum.voters_for(node_id),
                                    controller_listener_port=quorum.controller_port(node_id))
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


def start(brokers: int, directory: str, base_port: int, extra: Sequence[str] = (),
          log_files: bool = True, metrics_base: int | None = None,
          node_extra: dict[int, tuple[str, ...]] | None = None,
          config_file: str | None = None, quorum: Quorum | None = None) -> list[Node]:
    """Start the brokers; ``node_extra`` adds overrides for single brokers (after ``extra``)."""
    cluster_id = _cluster_id(directory)
    nodes = []
    extra = [*_request_log_dir(config_file), *extra]
    for node_id in range(1, brokers + 1):
        log_path = os.path.join(directory, f"broker-{node_id}.log") if log_files else None
        metrics = None if metrics_base is None else metrics_base + node_id - 1
        overrides = [*extra, *(node_extra or {}).get(node_id, ())]
        args = tuple(broker_args(node_id, directory, base_port, cluster_id, overrides, metrics, config_file,
                                 quorum))
        nodes.append(Node(node_id, base_port + 2 * (node_id - 1), base_port + 2 * (node_id - 1) + 1,
                          _spawn(args, log_path), metrics, args, log_path))
    return nodes


def _spawn(args: Sequence[str], log_path: str | None) -> subprocess.Popen:
    out = open(log_path, "ab") if log_path else None
    try:
        return subprocess.Popen(args, stdout=out or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                start_new_session=True)
    finally:
        if out:
            out.close()


class ProcessFaults:
    """The cluster's faults for ``kafkalite fault`` (kafkalite/local/fault_admin.py): a broker's own
    operations go to its HTTP port; a kill is a SIGKILL that the controller (broker 1) is told of
    at once; a restart starts the process again with its command line."""

    def __init__(self, nodes: list[Node], cluster_id: str, quorum: Quorum | None = None) -> None:
        self.nodes = {n.node_id: n for n in nodes}
        self.cluster_id = cluster_id
        self.quorum = quorum

    def admin(self) -> FaultAdmin:
        q = self.quorum
        return FaultAdmin(self.brokers, self.kill, self.restart, self.describe,
                          partition=q.partition if q is not None else None,
                          heal=q.heal if q is not None else None)

    def brokers(self) -> dict[int, Callable[[dict], Any]]:
        return {n.node_id: functools.partial(post_json, HOST, n.metrics_port)
                for n in self.nodes.values() if n.metrics_port is not None and n.process.poll() is None}

    def _node(self, node_id: int) -> Node:
        if node_id not in self.nodes:
            raise FaultError(f"no broker {node_id} (brokers: {sorted(self.nodes)})")
        return self.nodes[node_id]

    def kill(self, node_id: int) -> None:
        """SIGKILL; the active controller (once there is one other than the killed node) fences
        it at once. With one controller, killing broker 1 leaves the cluster without one."""
        node = self._node(node_id)
        if node.process.poll() is not None:
            return
        node.killed = True
        node.process.kill()
        node.process.wait(10)
        active = self.active_controller(exclude=node_id)
        if active is not None and active.metrics_port is not None:
            post_json(HOST, active.metrics_port, {"op": "fence", "broker": node_id})

    def active_controller(self, exclude: int, timeout: float = 30.0) -> Node | None:
        """The node of the active controller as the running brokers' Metadata names it."""
        if self.quorum is None:
            return self.nodes[1] if exclude != 1 else None
        voters = set(self.quorum.voter_ids) - {exclude}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for n in self.nodes.values():
                if n.process.poll() is not None:
                    continue
                client = BlockingClient(HOST, n.client_port, "kafkalite-cluster", 2.0)
                try:
                    answer = client.send_and_receive(ApiKey.METADATA, 12, metadata.REQUEST(topics=[]))
                    found = answer.controller_id
                except OSError:
                    continue
                finally:
                    client.close()
                if found in voters and self.nodes[found].process.poll() is None:
                    return self.nodes[found]
            time.sleep(0.1)
        return None

    def restart(self, node_id: int) -> None:
        node = self._node(node_id)
        if node.process.poll() is None:
            return
        node.process = _spawn(node.args, node.log_path)
        node.killed = False
        if not wait_registered([node], 60, self.cluster_id):
            raise FaultError(f"broker {node_id} did not come back within 60 s (see {node.log_path})")

    def describe(self) -> dict:
        return {"cluster_id": self.cluster_id,
                "bootstrap_servers": ",".join(f"{HOST}:{n.client_port}" for n in self.nodes.values()),
                "brokers": {str(n.node_id): {"address": f"{HOST}:{n.client_port}",
                                             "alive": n.process.poll() is None, "pid": n.process.pid}
                            for n in self.nodes.values()}}


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


def stop(nodes: list[Node], timeout: float = 20.0, controllers: int = 1) -> None:
    """SIGTERM the brokers, the controllers' nodes (1..``controllers``) last: a broker's graceful
    stop asks the controller to move its leaderships first, and a controller's node that is itself
    stopping reads no more requests (stopped together, each other broker waited its whole
    controlled-shutdown timeout, 10 s, for an answer that could not come)."""
    for group in ([n for n in nodes if n.node_id > controllers],
                  [n for n in nodes if n.node_id <= controllers]):
        for n in group:
            if n.process.poll() is None:
                n.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for n in group:
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
        config_file: str | None = None, overrides: Sequence[str] = (), controllers: int = 1) -> int:
    ports = [base_port + i for i in range(2 * brokers)]
    if metrics_base is not None:
        ports += [metrics_base + i for i in range(brokers + 1)]  # and the fault admin's
    # The voters' CONTROLLER listeners: after the metrics ports and the fault admin's.
    controller_base = base_port + 3 * brokers + 1
    if controllers > 1:
        ports += [controller_base + i for i in range(controllers)]
    check_ports_free(ports)
    os.makedirs(directory, exist_ok=True)
    quorum = Quorum(controllers, brokers, controller_base) if controllers > 1 else None
    try:
        nodes = start(brokers, directory, base_port, overrides, metrics_base=metrics_base,
                      config_file=config_file, quorum=quorum)
    except BaseException:
        if quorum is not None:
            quorum.close()
        raise
    stopping = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stopping.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    admin = None
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
            voter = n.node_id in quorum.voter_ids if quorum is not None else n.node_id == 1
            role = " (controller)" if voter else ""
            metrics = f", metrics http://{HOST}:{n.metrics_port}/metrics" if n.metrics_port else ""
            print(f"  broker {n.node_id}{role}: {HOST}:{n.client_port}, pid {n.process.pid}, "
                  f"log {_log(directory, n.node_id)}{metrics}")
        if metrics_base is not None:
            admin = serve_admin(ProcessFaults(nodes, _cluster_id(directory), quorum).admin(), HOST,
                                metrics_base + brokers)
            print(f"Faults: kafkalite fault --admin {HOST}:{admin.port} ... (kafkalite fault --help)")
        print("Consumer groups rebalance without group.initial.rebalance.delay.ms (set to 0 here; "
              "Kafka's default is 3000).")
        print("Ctrl-C stops every broker.", flush=True)
        reported: set[int] = set()
        while not stopping.wait(0.5):
            for n in nodes:
                if n.killed:
                    reported.discard(n.node_id)  # restarted by a fault: reported again if it exits
                    continue
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
        if admin is not None:
            admin.shutdown()
        stop(nodes, controllers=controllers)
        if quorum is not None:
            quorum.close()
        for s, h in previous.items():
            signal.signal(s, h)
        print("all brokers stopped", flush=True)
