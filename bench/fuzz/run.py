"""Drive hostile connections at a running broker while a well-behaved client (the canary) keeps
asking on its own connection; then check what the issue promises: no thread died, the canary
saw no error, the broker holds no connection or buffered request of the fuzzer, and its memory
stayed bounded. ``kafkalite bench fuzz`` runs it for a million frames against a broker process;
the test suite runs a short one in-process."""

from __future__ import annotations

import dataclasses
import random
import socket
import struct
import threading
import time
from typing import Any

from kafkalite.protocol import UNLIMITED_FRAME_SIZE, FrameDecoder, decode_response, encode_request
from kafkalite.protocol.messages import api_versions, metadata

from ..markdown import machine, write_section
from ..ports import free_port
from .frames import connection_plan

READ_WAIT = 0.02  # seconds a connection that reads waits for an answer


def send_plan(host: str, port: int, frames: list[bytes], write: str, ending: str,
              rng: random.Random) -> None:
    """One hostile connection: write ``frames`` as ``write`` says, end as ``ending`` says. Every
    step is bounded: the broker may close first, which is fine."""
    with socket.create_connection((host, port), timeout=2) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            data = b"".join(frames)
            if write == "whole":
                s.sendall(data)
            elif write == "byte_by_byte":
                for i in range(min(len(data), 64)):  # the first bytes one by one, then the rest
                    s.send(data[i:i + 1])
                s.sendall(data[64:])
            else:
                i = 0
                while i < len(data):
                    n = rng.randrange(1, 32)
                    s.sendall(data[i:i + n])
                    i += n
            if ending == "half_close":
                s.shutdown(socket.SHUT_WR)
                s.settimeout(READ_WAIT)
                while s.recv(65536):
                    pass
            elif ending == "read_then_close":
                s.settimeout(READ_WAIT)
                s.recv(65536)
            elif ending == "reset_before_answer":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif ending == "reset":
                s.settimeout(READ_WAIT)
                try:
                    s.recv(1)  # part of an answer, maybe, then a reset in the middle of it
                finally:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass  # closed or reset by the broker, or timed out waiting: all expected


class Canary(threading.Thread):
    """A well-behaved client: ApiVersions and Metadata in turn on one connection, each answer
    checked (correlation id, error code), until stopped. Any failure is kept."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(name="fuzz-canary", daemon=True)
        self.host, self.port = host, port
        self.ok = 0
        self.failures: list[str] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            with socket.create_connection((self.host, self.port), timeout=10) as s:
                decoder = FrameDecoder(UNLIMITED_FRAME_SIZE)
                corr = 0
                while not self._stop_event.is_set():
                    corr += 1
                    key, version, body = ((18, 3, api_versions.REQUEST(client_software_name="canary",
                                                                        client_software_version="1"))
                                          if corr % 2 else (3, 12, metadata.REQUEST(topics=None)))
                    s.sendall(encode_request(key, version, corr, "canary", body))
                    frame = None
                    while frame is None:
                        data = s.recv(65536)
                        if not data:
                            raise ConnectionError("the broker closed the canary's connection")
                        decoder.feed(data)
                        frame = next(iter(decoder.frames()), None)
                    got, response = decode_response(frame, key, version)
                    if got != corr or getattr(response, "error_code", 0) != 0:
                        self.failures.append(f"request {corr}: correlation {got}, {response!r}"[:300])
                    else:
                        self.ok += 1
        except Exception as e:
            self.failures.append(repr(e))

    def stop(self) -> None:
        self._stop_event.set()
        self.join(15)


@dataclasses.dataclass
class Outcome:
    connections: int = 0
    frames: int = 0
    kinds: dict[str, int] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0


def fuzz(host: str, port: int, frames: int, seed: int = 1, progress: Any = None,
         max_frames_per_connection: int = 8) -> Outcome:
    """Hostile connections until ``frames`` frames were sent."""
    rng = random.Random(seed)
    out = Outcome()
    start = time.perf_counter()
    next_report = 10_000
    while out.frames < frames:
        plan, write, ending = connection_plan(rng, max_frames_per_connection)
        send_plan(host, port, [f for _, f in plan], write, ending, rng)
        out.connections += 1
        out.frames += len(plan)
        for kind, _ in plan:
            out.kinds[kind] = out.kinds.get(kind, 0) + 1
        if progress is not None and out.frames >= next_report:
            next_report += 10_000
            progress(f"{out.frames:,} frames, {out.connections:,} connections, "
                     f"{time.perf_counter() - start:.0f} s")
    out.seconds = time.perf_counter() - start
    return out


def _proc_status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "Threads"):
                out[key] = int(value.split()[0])
    return out


def bench(frames: int = 1_000_000, seed: int = 1, write_md: str | None = None,
          progress: Any = print) -> str:
    """The long run: a broker process (``kafkalite broker``), the canary, ``frames`` hostile
    frames; the broker's RSS sampled every second; its threads counted before and after."""
    import subprocess
    import sys
    import tempfile

    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafkalite", "broker", "--log-level", "ERROR",
             "--override", "node.id=1", "--override", f"log.dirs={data}",
             "--override", f"listeners=PLAINTEXT://127.0.0.1:{port},INTERNAL://127.0.0.1:0",
             "--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
             "--override", "inter.broker.listener.name=INTERNAL"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError("the broker did not start") from None
                    time.sleep(0.1)
            time.sleep(1)  # its own registration settles (threads counted after)
            before = _proc_status(proc.pid)
            rss = [before["VmRSS"]]
            sampling = threading.Event()

            def sample() -> None:
                while not sampling.wait(1.0):
                    rss.append(_proc_status(proc.pid)["VmRSS"])

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            canary = Canary("127.0.0.1", port)
            canary.start()
            out = fuzz("127.0.0.1", port, frames, seed, progress)
            canary.stop()
            sampling.set()
            sampler.join(5)
            after = _proc_status(proc.pid)
            alive = proc.poll() is None
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
    quarter = max(1, len(rss) // 4)
    kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(out.kinds.items()))
    ok = (alive and not canary.failures and canary.ok > 0 and after["Threads"] == before["Threads"])
    body = "\n".join([
        f"## Fuzz: {out.frames:,} hostile frames against a broker", "",
        f"Command: `kafkalite bench fuzz --frames {frames} --seed {seed} --write docs/benchmarks.md`", "",
        f"Machine: {machine()}. One broker process (`kafkalite broker`); {out.connections:,} hostile "
        f"connections in {out.seconds:.0f} s, one after another, each with 1 to 8 frames written "
        "whole, byte by byte or in pieces and ended by close, half-close, reset, or reset before "
        "the answer (bench/fuzz/frames.py); a canary client on its own connection asked "
        "ApiVersions and Metadata in turn throughout.", "",
        "| | |", "| --- | --- |",
        f"| frames by kind | {kinds} |",
        f"| canary answers | {canary.ok:,} right, {len(canary.failures)} wrong or missing |",
        f"| broker threads | {before['Threads']} before, {after['Threads']} after; process "
        f"{'alive' if alive else 'DEAD'} |",
        f"| broker RSS (MB) | {before['VmRSS'] / 1024:.0f} before; first quarter's peak "
        f"{max(rss[:quarter]) / 1024:.0f}, last quarter's peak {max(rss[-quarter:]) / 1024:.0f}; "
        f"after {after['VmRSS'] / 1024:.0f} |", "",
        f"Goal (no thread dies, memory bounded, the canary sees no error): "
        f"{'met' if ok else 'NOT met'}" + (f"; canary: {canary.failures[:3]}" if canary.failures else ""), "",
    ])
    progress(body)
    if write_md:
        write_section(write_md, "fuzz", body)
    return body
