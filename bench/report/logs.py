"""Request logs for the report benchmark: ``records`` lines in the broker's own format, JSON or csv
(request.log.format: :func:`kafkalite.metrics.request_log.format_line` or ``format_csv_line``, so
the files are what brokers write), with a
mix of apis, listeners, Processors and clients like a busy cluster's, spread over an hour and over
several rolled files. Seeded: the same arguments give the same files."""

from __future__ import annotations

import os
import types

from kafkalite.metrics.request_log import (
    EXTENSIONS,
    format_controller_csv_line,
    format_controller_line,
    format_csv_line,
    format_line,
)

# (api key, version, share of requests, typical total time in us): the apis kafkalite serves
MIX = ((3, 12, 0.50, 300), (18, 3, 0.20, 100), (63, 0, 0.15, 150), (19, 7, 0.05, 20_000),
       (20, 6, 0.03, 15_000), (6, 8, 0.04, 2_000), (4, 7, 0.03, 3_000))
CLIENTS = (("librdkafka", "2.3.0"), ("apache-kafka-java", "3.7.0"), ("kafka-python", "2.0.2"))
LISTENERS = ("PLAINTEXT", "INTERNAL")
CONNECTIONS = 600
CONTROLLER_EVERY = 1000  # one controller line per this many request lines
HOUR_MS = 3_600_000
T0_MS = 1_790_000_000_000


def _request(conn: int, api_key: int, version: int) -> types.SimpleNamespace:
    listener = LISTENERS[conn % 7 == 0]  # one connection in seven is inter-broker
    name, software_version = CLIENTS[conn % len(CLIENTS)]
    header = types.SimpleNamespace(request_api_key=api_key, request_api_version=version,
                                   correlation_id=0, client_id=f"client-{conn % 50}")
    return types.SimpleNamespace(
        header=header, connection_id=f"127.0.0.1:9092-10.0.{conn // 250}.{conn % 250}:5{conn:04d}-{conn}",
        listener=listener, security_protocol="PLAINTEXT", processor=conn % 3, size=0,
        client_software_name=name, client_software_version=software_version)


def write(directory: str, records: int, files: int = 16, seed: int = 1,
          log_format: str = "json") -> list[str]:
    """Write the logs into ``directory`` (made if absent) in ``log_format`` ("json" or "csv": the
    same records either way); returns the files' paths."""
    import numpy as np

    line_of, controller_line = ((format_csv_line, format_controller_csv_line) if log_format == "csv"
                                else (format_line, format_controller_line))
    rng = np.random.default_rng(seed)
    os.makedirs(directory, exist_ok=True)
    keys = [(k, v) for k, v, _, _ in MIX]
    shares = np.array([s for _, _, s, _ in MIX])
    typical = np.array([t for _, _, _, t in MIX])
    templates: dict = {}
    requests: dict[tuple[int, int], types.SimpleNamespace] = {}  # (connection, api) -> what format_line reads
    paths = []
    per_file = -(-records // files)
    done = 0
    for n in range(files):
        count = min(per_file, records - done)
        path = os.path.join(directory, f"requests-{T0_MS + n}-{n + 1}.{EXTENSIONS[log_format]}")
        with open(path, "w", encoding="ascii") as f:
            for start in range(0, count, 100_000):
                m = min(100_000, count - start)
                api = rng.choice(len(MIX), size=m, p=shares)
                conn = rng.integers(0, CONNECTIONS, size=m)
                total = (rng.lognormal(0.0, 1.0, size=m) * typical[api]).astype(np.int64) + 1
                # total = queue + local + response queue + send, in rough proportions (no remote time)
                parts = rng.dirichlet((1.0, 6.0, 1.0, 2.0), size=m)
                queue, local, response_queue = (parts[:, :3] * total[:, None]).astype(np.int64).T
                send = total - queue - local - response_queue
                at = T0_MS + (done + start + np.arange(m)) * HOUR_MS // records
                size = rng.integers(40, 2_000, size=m)
                response = rng.integers(40, 20_000, size=m)
                error = np.where(rng.random(m) < 0.01, 6, 0)  # NOT_LEADER_OR_FOLLOWER, 1%
                lines = []
                for i in range(m):
                    key = (int(conn[i]), int(api[i]))
                    request = requests.get(key)
                    if request is None:
                        request = requests[key] = _request(key[0], *keys[key[1]])
                    request.header.correlation_id = done + start + i
                    request.size = int(size[i])
                    lines.append(line_of(
                        request, (int(queue[i]), int(local[i]), 0, int(response_queue[i]), int(send[i]),
                                  int(total[i])), int(response[i]), int(error[i]), int(at[i]), templates))
                    if (done + start + i) % CONTROLLER_EVERY == 0:
                        lines.append(controller_line(1 + i % 3, 4, 7, int(total[i]) * 1000,
                                                    int(at[i]) / 1000))
                f.write("".join(lines))
        done += count
        paths.append(path)
    return paths
