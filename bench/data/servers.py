"""The servers the data benchmarks measure, each a process of its own, pinned to core 0 when the
machine has two cores or more (the clients run on core 1): a kafkalite broker with a temporary
log dir, librdkafka's mock cluster (mock_server.py), and the bare server (bare_server.py). Each is
stopped, and its directory removed, when its ``with`` block ends, however it ends."""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from kafkalite.local.settings import registered_brokers

from ..ports import free_port

_prctl: Any
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _prctl = None

HOST = "127.0.0.1"
SERVER_CORE, CLIENT_CORE = 0, 1
KINDS = ("bare", "kafkalite", "mock")


def pinning() -> bool:
    return (os.cpu_count() or 1) > 1 and hasattr(os, "sched_setaffinity")


@dataclasses.dataclass
class Server:
    kind: str
    port: int
    proc: subprocess.Popen
    log_path: str
    log_dir: str | None = None  # kafkalite's data

    @property
    def pid(self) -> int:
        return int(self.proc.pid)

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    def log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


def _popen(args: list[str], log_path: str, pin: bool) -> subprocess.Popen:
    def child() -> None:
        # Out of the benchmark's process group: Ctrl-C interrupts the benchmark and its client
        # process, and the benchmark then stops its servers with SIGTERM, the way they stop
        # cleanly. Sent SIGTERM too if the benchmark dies without stopping it (PR_SET_PDEATHSIG).
        os.setpgrp()
        if _prctl is not None:
            _prctl(1, signal.SIGTERM)
        if pin:
            os.sched_setaffinity(0, {SERVER_CORE})

    with open(log_path, "ab") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                preexec_fn=child, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _wait(server: Server, ready: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            break
        if ready():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise RuntimeError(f"{server.kind} did not start; its log ends with:\n{server.log_tail()}")


@contextlib.contextmanager
def started(kind: str, *, pin: bool = True, topic: str = "bench", message_bytes: int = 16384,
            batch_records: int = 63, log_batches: int = 0,
            overrides: tuple[str, ...] = (), mock_settings: tuple[str, ...] = ()) -> Iterator[Server]:
    """A running server of ``kind``: kafkalite (with ``overrides``), mock (with ``mock_settings``,
    mock_server.py's ``SETTING=VALUE`` and ``topic:NAME=PARTITIONS``) or bare (which serves
    ``topic`` with a log of ``log_batches`` batches, 0 for endless, of ``batch_records`` records of
    ``message_bytes`` bytes)."""
    work = tempfile.mkdtemp(prefix=f"kafkalite-bench-{kind}-")
    log_path = os.path.join(work, "server.log")
    pin = pin and pinning()
    server = None
    try:
        if kind == "kafkalite":
            port = free_port()
            args = [sys.executable, "-m", "kafkalite", "broker", "--log-level", "WARNING"]
            for o in ("node.id=1", f"listeners=PLAINTEXT://{HOST}:{port}", f"log.dirs={work}/data",
                      *overrides):
                args += ["--override", o]
            server = Server(kind, port, _popen(args, log_path, pin), log_path, f"{work}/data")
            _wait(server, lambda: registered_brokers(port) == {1})
        elif kind == "mock":
            args = [sys.executable, "-m", "kafkalite_bench.data.mock_server", "1", *mock_settings]
            server = Server(kind, 0, _popen(args, log_path, pin), log_path)

            def mock_ready() -> bool:
                with open(log_path, errors="replace") as f:
                    lines = f.read().splitlines()
                if "ready" not in lines:
                    return False
                # librdkafka's own log lines come between: take the first "1 host:port".
                ports = [m.group(1) for m in map(re.compile(r"^1 [\d.]+:(\d+)$").match, lines) if m]
                server.port = int(ports[0])  # type: ignore[union-attr]
                return True

            _wait(server, mock_ready)
        elif kind == "bare":
            port = free_port()
            args = [sys.executable, "-m", "kafkalite_bench.data.bare_server", str(port), topic,
                    str(message_bytes), str(batch_records), str(log_batches)]
            server = Server(kind, port, _popen(args, log_path, pin), log_path)

            def listening() -> bool:
                import socket

                try:
                    socket.create_connection((HOST, port), timeout=1).close()
                    return True
                except OSError:
                    return False

            _wait(server, listening)
        else:
            raise ValueError(f"unknown server {kind!r}")
        yield server
    finally:
        if server is not None:
            _stop(server.proc)
        shutil.rmtree(work, ignore_errors=True)


def write_back(path: str | None) -> None:
    """Write back every file under ``path`` (fsync each): what a benchmark wrote there is on disk
    before its next measurement. Only its own files, not the machine's (``sync`` would wait for
    whatever else runs here too, a test suite's writes included)."""
    if path is None:
        return
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
            except OSError:
                continue  # gone meanwhile (a deleted segment)
            try:
                os.fsync(fd)
            except OSError:
                pass
            finally:
                os.close(fd)


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` now, in MiB (VmRSS from /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """user + system CPU time of process ``pid`` so far (its threads included)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
