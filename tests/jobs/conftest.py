"""The report's fixtures: the request logs of a two-broker cluster's run of one minute (client and
broker-internal traffic, errors inside responses, lines with and without ``errorCounts``, Produce
and Fetch lines with their topics, a follower's fetches among them), and
the real ``kafkalite report`` command run on them once, whose output test_report.py checks and
whose page test_report_browser.py looks at in a browser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from kafkalite.metrics.request_log import TopicTraffic, format_controller_line, format_line
from kafkalite.metrics.request_metrics import request_times_us

MS = 1_000_000
MINUTE = 1_780_000_020.0  # a whole minute (wall clock seconds): the run fits in it

# What the report must find in the cluster's logs below.
CLIENT = 82  # requests from clients
INTERNAL = 37  # brokers' and controllers' requests to each other
SENT = 4  # control requests the controller's send threads took from the queues
# A topic with a long name (its table must still fit the page) and a small one.
ORDERS, AUDIT = "orders.eu-west-1.payments.settlements-v2", "audit"


def request_line(api_key: int, version: int, total_ms: float, *, at: float, listener: str = "PLAINTEXT",
                 client: str | None = "librdkafka", client_id: str = "c", error: int = 0,
                 error_counts: dict[str, int] | None = None, old: bool = False,
                 traffic: list[TopicTraffic] | None = None) -> str:
    """A request as the broker's own request log writes it; ``error_counts`` as the response's
    error codes; ``old``: a line from before ``errorCounts`` was logged (no such field);
    ``traffic``: a Produce's or Fetch's topics."""
    header = types.SimpleNamespace(request_api_key=api_key, request_api_version=version, correlation_id=1,
                                   client_id=client_id)
    start, end = 10**12, 10**12 + round(total_ms * MS)
    request = types.SimpleNamespace(
        header=header, start_ns=start, dequeue_ns=start, api_local_complete_ns=end,
        response_enqueue_ns=end, response_dequeue_ns=end, connection_id="a-b-0-1",
        security_protocol="PLAINTEXT", listener=listener, client_software_name=client,
        client_software_version="2.3" if client else None, processor=0, size=60)
    line = json.loads(format_line(request, request_times_us(request, end), 300, error, round(at * 1000),
                                  traffic=traffic))
    line.pop("errorCounts", None)
    if error_counts is not None and not old:
        line["errorCounts"] = error_counts
    elif not old:
        line["errorCounts"] = {str(error): 1} if error else {}
    return json.dumps(line, separators=(",", ":")) + "\n"


def cluster_files() -> dict[str, list[str]]:
    """Each broker's request log files (path below the cluster directory -> lines), in the
    layout of brokers that each have their own request.log.dir."""
    def t(i: int, n: int) -> float:  # the i-th of n moments spread over the minute
        return MINUTE + 1 + 57 * i / max(1, n - 1)

    one = [request_line(18, 3, 1 + i % 5, at=t(i, 40)) for i in range(40)]
    one += [request_line(3, 12, 2 + i % 3, at=t(i, 19)) for i in range(19)]
    one.append(request_line(3, 12, 4, at=t(5, 10), error=3, old=True))  # UNKNOWN_TOPIC_OR_PARTITION
    # CreateTopics: no top-level error code; one response says two of its topics exist already
    one.append(request_line(19, 7, 30, at=t(1, 4), error_counts={"36": 2}))
    one.append(request_line(19, 7, 25, at=t(2, 4), error_counts={}))
    one.append(request_line(19, 7, 20, at=t(3, 4), old=True))
    # broker 2 registers and heartbeats to the controller (broker 1) on the inter-broker listener
    one.append(request_line(62, 4, 3, at=t(0, 30), listener="INTERNAL", client=None, client_id="broker-2"))
    one += [request_line(63, 1, 0.5, at=t(i, 28), listener="INTERNAL", client=None, client_id="broker-2")
            for i in range(28)]
    one += [request_line(6, 8, 2, at=t(i, 3), listener="INTERNAL", client=None, client_id="controller-1")
            for i in range(2)]
    one += [format_controller_line(b, 6, 8, q * MS, MINUTE + 10 + q)
            for b, q in ((1, 1), (2, 2), (1, 3), (2, 4))]
    two = [request_line(3, 12, 3, at=t(i, 10), client="kafka-python") for i in range(10)]
    two += [request_line(6, 8, 2, at=t(i, 3), listener="INTERNAL", client=None, client_id="controller-1")
            for i in range(2)]
    two.append(request_line(4, 7, 2, at=t(1, 3), listener="INTERNAL", client=None, client_id="controller-1"))
    # a client on the inter-broker listener
    two.append(request_line(18, 3, 1, at=t(2, 3), listener="INTERNAL", client="kcat"))
    ok, not_leader = types.SimpleNamespace(error_code=0), types.SimpleNamespace(error_code=6)
    # Produce: four of two partitions of ORDERS, two of ORDERS and AUDIT whose AUDIT partition's
    # leader moved; Fetch: three consumers' and two of broker 2's follower on INTERNAL.
    one += [request_line(0, 9, 4, at=t(i, 4), traffic=[TopicTraffic(ORDERS, [ok, ok], 20, 2400)])
            for i in range(4)]
    both = [TopicTraffic(ORDERS, [ok], 5, 600), TopicTraffic(AUDIT, [not_leader], 0, 0)]
    one += [request_line(0, 9, 5, at=t(i, 2), error_counts={"6": 1}, traffic=both) for i in range(2)]
    one += [request_line(1, 11, 500, at=t(i, 3), traffic=[TopicTraffic(ORDERS, [ok, ok], -1, 3000)])
            for i in range(3)]
    one += [request_line(1, 11, 500, at=t(i, 2), listener="INTERNAL", client=None, client_id="broker-2",
                         traffic=[TopicTraffic(ORDERS, [ok], -1, 1200)]) for i in range(2)]
    half = len(one) // 2
    return {"broker-1/requests/requests-1-1.jsonl": one[:half],
            "broker-1/requests/requests-2-2.jsonl": one[half:],
            "broker-2/requests/requests-1-1.jsonl": two}


@pytest.fixture(scope="session")
def cluster_logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster")
    for name, lines in cluster_files().items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))
    (root / "broker-1.log").write_text("a broker's own log: not a request log\n")
    return root


def run_cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``kafkalite report`` as a user runs it: its own process."""
    return subprocess.run([sys.executable, "-m", "kafkalite", "report", *args], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ))


@pytest.fixture(scope="session")
def cli_report(cluster_logs, tmp_path_factory):
    """The command run once on the cluster's logs: (its completed process, its output directory)."""
    out = tmp_path_factory.mktemp("cli-report")
    return run_cli("--logs", str(cluster_logs), "--out", str(out)), out
