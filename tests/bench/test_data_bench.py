"""The data benchmarks' premises and output, at a tiny size (no timing is checked): the raw Fetch
reader finds the records where the codec does, the bare server answers the clients, each command
prints and writes its section with every table row and goal, and every server process and
directory is gone afterwards, Ctrl-C included."""

from __future__ import annotations

import glob
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading

import pytest
from click.testing import CliRunner

from kafkalite.cli import main
from kafkalite.protocol import decode_response, encode_response
from kafkalite.protocol.messages import fetch
from kafkalite_bench.data import run, servers, tasks, wire
from tests.support.wait import wait_for

pytestmark = pytest.mark.integration


def _leftovers() -> set[str]:
    """The data benchmarks' temporary directories and files (servers' and the loopback file)."""
    return {p for kind in (*servers.KINDS, "loopback", "disk")
            for p in glob.glob(os.path.join(tempfile.gettempdir(), f"kafkalite-bench-{kind}-*"))}


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid``."""
    out = set()
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.split("/")[2]))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sizes_and_requests_of_one_mib():
    assert run.parse_size("5GB") == 5_000_000_000
    assert run.parse_size("512MiB") == 512 << 20
    assert run.parse_size("1000") == 1000
    with pytest.raises(ValueError):
        run.parse_size("lots")
    n = run.records_per_request(16384, 1 << 20)
    assert tasks.batch_bytes(16384, n) <= 1 << 20 < tasks.batch_bytes(16384, n + 1)


def test_the_fetch_reader_finds_the_records_where_the_codec_does():
    batch = wire.record_batch(1000, 3)
    R = fetch.RESPONSE
    body = R(throttle_time_ms=0, error_code=0, session_id=0, responses=[R["responses"](
        topic="bench", partitions=[R["responses"]["partitions"](
            partition_index=0, error_code=0, high_watermark=9, last_stable_offset=9, log_start_offset=0,
            aborted_transactions=[R["responses"]["partitions"]["aborted_transactions"](
                producer_id=1, first_offset=2)], preferred_read_replica=-1, records=batch)])])
    payload = encode_response(fetch.FETCH.key, wire.FETCH_VERSION, 7, body)[4:]
    error, pos, length = wire.fetch_records(payload)
    assert (error, payload[pos:pos + length]) == (0, batch)
    _, decoded = decode_response(payload, fetch.FETCH.key, wire.FETCH_VERSION)
    assert decoded.responses[0].partitions[0].records == batch


def test_the_bare_server_answers_the_raw_clients_and_confluent_kafka():
    per_request, message = 3, 1000
    size = tasks.batch_bytes(message, per_request)
    with servers.started("bare", pin=False, message_bytes=message, batch_records=per_request,
                         log_batches=4) as bare:
        sent = tasks.raw_produce(bare.port, "bench", message, per_request, 2, requests=10)
        assert (sent.requests, sent.record_bytes) == (10, 10 * size)
        read = tasks.raw_fetch(bare.port, "bench", per_request, size, 4, 2)
        assert (read.requests, read.record_bytes) == (4, 4 * size)
        produced = tasks.produce_rate(bare.port, "bench", 100, 0.2, 5)
        assert produced.messages > 0
        consumed = tasks.consume_rate(bare.port, "bench", 4 * per_request, None)
        assert (consumed.messages, consumed.value_bytes) == (4 * per_request, 4 * per_request * message)


@pytest.mark.parametrize("command, rows", [
    ("produce", ["`produce()` per message: messages/s", "`produce_batch()` of 1000", "raw Produce of",
                 "server CPU during the raw Produce", "produce() to delivery report",
                 "raw: Produce request to response", "Ceilings (bench/data/disk.py)", "Kafka's 100 KiB",
                 "Broker RSS while producing",
                 "- producer, 100 B, linger 5 ms", "- 1 MiB Produce requests", "- one message at a time",
                 "- producing 0.01 GB: broker RSS flat",
                 "server CPU ms per MB of values produced, `produce()`",
                 "kafkalite, the first round only, 1,000 partitions and 50 producers",
                 "- server CPU per MB produced", "- 1,000 partitions, 50 producer connections >= 0.9x"]),
    ("fetch", ["Loopback ceiling", "raw Fetch, 4 in flight: GB/s", "server CPU during the raw Fetch",
               "confluent-kafka Consumer, `assign()`: GB/s", "| raw Fetch, 4 in flight |",
               "| confluent-kafka Consumer, `assign()` |", "- one consumer reading a 0.01 GB log",
               "server CPU ms per MB of values fetched", "- server CPU per MB fetched",
               "- the confluent-kafka Consumer on the 0.01 GB log"]),
])
def test_each_command_writes_its_section_and_leaves_nothing_behind(tmp_path, command, rows):
    before = _leftovers()
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", command, "--seconds", "0.2", "--rounds", "1", "--size", "8MB",
                                       "--no-pin", "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert f"<!-- bench:{command}:begin -->" in doc and f"<!-- bench:{command}:end -->" in doc
    assert "| | bare | kafkalite | mock | kafkalite / mock |" in doc
    for row in rows:
        assert row in doc, row
    assert f"Command: `kafkalite bench {command} --servers bare,kafkalite,mock --seconds 0.2" in doc
    # every server measured every row; not the CPU rows' ratios: in a 0.2 s window the mock's CPU
    # time may be under /proc's 10 ms tick, 0, and kafkalite / mock then n/a
    rows_measured = [line for line in doc.split("Goals:")[0].split("| |")[1].splitlines()
                     if "server CPU" not in line]
    assert "n/a" not in "\n".join(rows_measured)
    assert _leftovers() <= before


def _answers(pid: int) -> bool:
    """Whether the broker process ``pid`` accepts connections on its listener."""
    cmdline = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
    found = re.search(r"PLAINTEXT://127\.0\.0\.1:(\d+)", cmdline)
    if found is None:
        return False
    try:
        socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=1).close()
    except OSError:
        return False
    return True


def test_ctrl_c_stops_every_server_and_removes_their_directories():
    before = _leftovers()
    proc = subprocess.Popen([sys.executable, "-m", "kafkalite", "bench", "produce", "--servers", "kafkalite",
                             "--seconds", "30", "--rounds", "1", "--size", "0", "--no-pin"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    output: list[str] = []
    reader = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if "round 1/1: kafkalite" in line:
                break
        # The rest read as it comes: a full pipe would stop the benchmark, not Ctrl-C.
        reader = threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True)
        reader.start()
        assert wait_for(lambda: any("kafkalite" in open(f"/proc/{c}/cmdline").read()
                                    for c in _children(proc.pid) if _alive(c)), timeout=30)
        # Interrupted mid-run: once the broker answers on its port, not while it starts.
        assert wait_for(lambda: any(_answers(c) for c in _children(proc.pid) if _alive(c)), timeout=30)
        started = {c for c in _children(proc.pid)}
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGUSR1)  # its threads' stacks (kafkalite's thread dump)
            wait_for(lambda: "Thread 0x" in "".join(output), timeout=5)
            pytest.fail("still running 60 s after Ctrl-C; its output ends with:\n" + "".join(output)[-8000:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if reader is not None:
            reader.join(10)
    assert wait_for(lambda: not [c for c in started if _alive(c)], timeout=30)
    assert _leftovers() <= before
