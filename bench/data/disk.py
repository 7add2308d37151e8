"""The write ceiling for a broker's log on this machine: a process pinned to the server core
``pwrite``s 1 MiB chunks (the size of the raw sender's batches) to a new file in the directory
brokers keep their logs in, as a broker appends a batch, with nothing received, checked or
answered. It first writes ``warmup`` bytes untimed, as much as the broker has taken before its
1 MiB measurement, because the rate falls once a GB or so is in the page cache (seen here: about
1 GB/s for the first GB, 0.4 GB/s after). What it reaches is the most a broker could append here.
Run as ``python -m bench.data.disk SECONDS WARMUP_BYTES``: it prints MB/s."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

from . import servers

CHUNK = 1 << 20


def write_rate(seconds: float, warmup: int) -> float:
    """MB/s of 1 MiB ``pwrite``s to a new file for ``seconds``, after ``warmup`` bytes."""
    work = tempfile.mkdtemp(prefix="kafkalite-bench-disk-")
    chunk = os.urandom(CHUNK)
    fd = os.open(os.path.join(work, "00000000000000000000.log"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        pos = 0
        while pos < warmup:
            pos += os.pwrite(fd, chunk, pos)
        start, written = time.perf_counter(), 0
        while (elapsed := time.perf_counter() - start) < seconds:
            n = os.pwrite(fd, chunk, pos)
            pos += n
            written += n
        return written / elapsed / 1e6
    finally:
        os.close(fd)
        shutil.rmtree(work, ignore_errors=True)


def measure(seconds: float, warmup: int, pin: bool = True) -> float:
    """:func:`write_rate` in a process of its own, started as the servers are (on the server
    core when pinning)."""
    log = tempfile.NamedTemporaryFile(prefix="kafkalite-bench-disk-", suffix=".log", delete=False)
    log.close()
    proc = servers._popen([sys.executable, "-m", "bench.data.disk", str(seconds), str(warmup)], log.name,
                          pin and servers.pinning())
    try:
        if proc.wait(seconds + 300) != 0:
            raise RuntimeError(f"the write ceiling failed: {open(log.name).read()}")
        with open(log.name) as f:
            return float(f.read().split()[-1])
    finally:
        servers._stop(proc)
        os.unlink(log.name)


if __name__ == "__main__":
    print(f"{write_rate(float(sys.argv[1]), int(sys.argv[2])):.1f}")
