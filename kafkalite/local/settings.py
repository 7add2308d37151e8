"""What a local cluster's brokers share, whether they run as processes (``kafkalite cluster``,
kafkalite/local/processes.py) or in one process (kafkalite.testing): the host, each broker's
settings, a run of free ports, and which brokers a broker knows as registered."""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Sequence

from kafkalite.clients import BlockingClient
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import metadata

HOST = "127.0.0.1"


class ClusterError(Exception):
    """The cluster cannot start (one line that says why)."""


def broker_settings(node_id: int, directory: str, client_port: int, internal_port: int,
                    controller_port: int, cluster_id: str, voters: str = "",
                    controller_listener_port: int = 0, controller_only: bool = False) -> dict[str, str]:
    """The settings of node ``node_id`` in a local cluster; shared by ``kafkalite cluster`` and
    kafkalite.testing. Without ``voters``, one controller: broker 1, which listens for the
    controller on ``controller_port`` (its INTERNAL listener). With ``voters``
    (controller.quorum.voters, ``id@host:port,...``), a quorum: the nodes it lists run a controller
    on a CONTROLLER listener (``controller_listener_port``; 0: any free port, the voters' addresses
    then being proxies in front of it), broker and controller both unless ``controller_only``."""
    settings = {
        "node.id": str(node_id),
        "process.roles": "broker,controller" if node_id == 1 else "broker",
        "listeners": f"PLAINTEXT://{HOST}:{client_port},INTERNAL://{HOST}:{internal_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "controller.quorum.bootstrap.servers": f"{HOST}:{controller_port}",
        "controller.quorum.voters": "",
        "controller.listener.names": "",
        "log.dirs": os.path.join(directory, f"broker-{node_id}"),
        "cluster.id": cluster_id,
        # A group forms at once, as in Kafka's sample server.properties for development.
        "group.initial.rebalance.delay.ms": "0",
    }
    if voters:
        voter_ids = {int(v.partition("@")[0]) for v in voters.split(",")}
        controller = f"CONTROLLER://{HOST}:{controller_listener_port}"
        is_voter = node_id in voter_ids
        settings.update({
            "process.roles": ("controller" if controller_only else "broker,controller") if is_voter
            else "broker",
            "controller.quorum.bootstrap.servers": "",
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
        })
        if is_voter and controller_only:
            settings["listeners"] = controller
            settings["log.dirs"] = os.path.join(directory, f"controller-{node_id}")
        elif is_voter:
            settings["listeners"] += "," + controller
    return settings


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
