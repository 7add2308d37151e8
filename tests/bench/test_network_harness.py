"""The network benchmark's premises: every peer answers the same bytes as kafkalite for the same
requests, and the load generator counts and times what it gets."""

from __future__ import annotations

import pytest

from bench.network import loadgen, run
from bench.network.workload import request_frames
from bench.ports import free_port

from ..kafka_client import Client


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


@pytest.mark.parametrize("peer", ["asyncio", "uvloop", "threaded", "selectors"])
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
