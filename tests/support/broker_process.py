"""Start ``kafkalite broker`` as a real subprocess for tests, and stop it (always)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from kafkalite_bench.ports import free_port

__all__ = ["BrokerProcess", "free_port", "wait_exit"]


class BrokerProcess:
    """``kafkalite broker`` in a subprocess; its log lines are collected for assertions."""

    def __init__(self, log_dir: Path, *overrides: str, node_id: int = 1) -> None:
        self.port = free_port()
        args = [sys.executable, "-m", "kafkalite", "broker",
                "--override", f"node.id={node_id}",
                "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.port}",
                "--override", f"log.dirs={log_dir}"]
        for o in overrides:
            args += ["--override", o]
        self.lines: list[str] = []
        self._started = threading.Event()
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if re.search(r"Broker \d+ started", line):
                self._started.set()

    def wait_started(self, timeout: float = 20.0) -> BrokerProcess:
        if not self._started.wait(timeout):
            self.stop()
            raise AssertionError("broker did not start:\n" + "\n".join(self.lines))
        return self

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._reader.join(5)
        if self.proc.stdout:
            self.proc.stdout.close()
        return int(self.proc.returncode)

    def __enter__(self) -> BrokerProcess:
        return self.wait_started()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_exit(proc: subprocess.Popen, timeout: float) -> int | None:
    """The exit code, or None if the process is still running after ``timeout``."""
    try:
        return int(proc.wait(timeout))
    except subprocess.TimeoutExpired:
        return None
