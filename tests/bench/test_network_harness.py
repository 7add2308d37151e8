"""The network benchmark's premises: every peer answers the same bytes as kafkalite for the same
requests, and the load generator counts and times what it gets."""

from __future__ import annotations

import struct

import pytest

from kafkalite.protocol import ApiKey, decode_response
from kafkalite_bench.network import loadgen, run
from kafkalite_bench.network.workload import request_frames
from kafkalite_bench.ports import free_port
from tests.support.wire_client import Client

pytestmark = pytest.mark.integration


def _answers(port: int, frames: list[bytes]) -> list[bytes]:
    with Client("127.0.0.1", port) as c:
        c.send_raw(b"".join(frames))
        return [c.receive_frame() for _ in frames]


@pytest.fixture(scope="module")
def kafkalite_answers():
    port = free_port()
    proc = run._start("kafkalite", port, 5, 1, 1)
    try:
        yield _answers(port, request_frames("mixed", 4))
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.mark.parametrize("peer", ["asyncio", "asyncio-bytes", "uvloop", "threaded", "selectors"])
def test_peers_answer_byte_identical_responses(peer, kafkalite_answers):
    port = free_port()
    proc = run._start(peer, port, 5, 1, 1)
    try:
        answers = _answers(port, request_frames("mixed", 4))
    finally:
        proc.terminate()
        proc.wait(20)
    # The broker advertises its own port in Metadata; peers were given theirs: compare the rest.
    assert len(answers) == len(kafkalite_answers) == 4
    assert answers[0] == kafkalite_answers[0] and answers[2] == kafkalite_answers[2]  # ApiVersions
    assert len(answers[1]) == len(kafkalite_answers[1])  # Metadata, same size, own port


@pytest.mark.parametrize("server", ["kafkalite", "asyncio", "asyncio-bytes", "selectors"])
def test_the_metadata_produce_mix_is_answered_by_every_server(server):
    """Metadata for the 10 topics and an accepted Produce, in turn, each with its correlation id
    (kafkalite appends the records: its offsets go up; the peers answer offset 0)."""
    port = free_port()
    proc = run._start(server, port, 10, 1, 1)
    frames = request_frames("metadata-produce", 4)
    try:
        answers = _answers(port, frames)
    finally:
        proc.terminate()
        proc.wait(20)
    offsets = []
    for i, (frame, answer) in enumerate(zip(frames, answers, strict=True)):
        key, version = struct.unpack_from(">hh", frame, 4)
        correlation_id, body = decode_response(answer, key, version)
        assert correlation_id == i
        if key == ApiKey.METADATA:
            assert [t.name for t in body.topics] == [f"topic-{t:04d}" for t in range(10)]
            assert all(t.error_code == 0 for t in body.topics)
        else:
            (partition,) = body.responses[0].partition_responses
            assert (body.responses[0].name, partition.index, partition.error_code) == ("topic-0000", 0, 0)
            offsets.append(partition.base_offset)
    assert offsets == ([0, 1] if server == "kafkalite" else [0, 0])


def test_load_generator_counts_every_response():
    port = free_port()
    proc = run._start("selectors", port, 2, 1, 1)
    try:
        done, latencies, elapsed, cpu = loadgen.run(port, 3, 4, request_frames("apiversions", 8), 0.3,
                                                     server_pid=proc.pid)
    finally:
        proc.terminate()
        proc.wait(20)
    assert done > 0 and len(latencies) == done
    assert all(ns > 0 for ns in latencies)
    assert 0.3 <= elapsed < 5 and cpu >= 0


def _result(name: str, threads, throughput: float, cpu: float, p99: float) -> run.Result:
    return run.Result(name, threads, run.Scenario(50, 1), int(throughput), 1.0, p99 / 2, p99, p99 * 2,
                      cpu, 20.0)


def test_goals_are_checked_against_the_runs_of_one_scenario():
    rows = [_result("kafkalite", (3, 8), 50_000, 18.0, 2000),
            _result("kafkalite", (1, 1), 52_000, 17.0, 1900),
            _result("asyncio", None, 45_000, 20.0, 1000),
            _result("threaded", None, 20_000, 30.0, 3000)]
    text = run.goals(rows)
    assert "- CPU/req <= 1.0x asyncio: 0.90x, met" in text
    assert "- throughput >= 1.0x asyncio: 1.11x, met" in text
    assert "- p99 <= 1.5x asyncio: 2.00x, NOT met" in text
    assert "- throughput >= 2x threaded: 2.50x, met" in text
    assert "- CPU/req at 3+8 <= 1.1x 1+1: 1.06x, met" in text
    assert "uvloop" not in text  # not measured: no verdict
    table = run.table(rows)
    assert table.count("\n") == len(rows) + 1 and "| kafkalite 3+8 | 50,000 |" in table


def test_idle_connections_memory_is_measured_per_connection():
    before, after, per_connection = run.idle_memory("selectors", 50)
    assert before > 0 and after >= before and per_connection >= 0


def test_the_cli_runs_scenario_lists_and_writes_the_section_and_plot(tmp_path):
    from click.testing import CliRunner

    from kafkalite.cli import main

    md, png = tmp_path / "bench.md", tmp_path / "bench.png"
    result = CliRunner().invoke(main, [
        "bench", "network", "--servers", "kafkalite,selectors", "--connections", "2", "--depth", "1,2",
        "--threads", "1+1", "--seconds", "0.3", "--warmup", "0.1", "--write", str(md), "--plot", str(png),
        "--section", "smoke"])
    assert result.exit_code == 0, result.output
    assert "[4/4]" in result.output  # progress: 2 scenarios x 2 servers
    doc = md.read_text()
    assert "<!-- bench:network-smoke:begin -->" in doc and "### 2 conn x 2 in flight" in doc
    assert "| kafkalite 1+1 |" in doc and "| selectors |" in doc and "![smoke](bench.png)" in doc
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
