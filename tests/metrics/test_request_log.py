"""The request log: one JSON line per completed request, written off the hot path, rolled by
size, and lines dropped and counted (never blocking) when the disk fails or the writer lags."""

from __future__ import annotations

import glob
import json
import os
import time
import types

import pytest

from kafkalite.metrics.request_log import RequestLog, TopicTraffic, format_line, topics_json
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import api_versions
from tests.support.brokers import running_broker
from tests.support.channel import request
from tests.support.small_disk import fill, small_disk
from tests.support.wait import wait_for
from tests.support.wire_client import Client

TIMES = (1, 2, 0, 3, 4, 10)  # microseconds: queue, local, remote, response queue, send, total


def request_log_lines(directory) -> list[dict]:
    """Every line of the request log files in ``directory``, parsed, oldest file first."""
    out = []
    for path in sorted(glob.glob(os.path.join(str(directory), "requests-*.jsonl"))):
        with open(path) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


@pytest.mark.integration
def test_a_broker_logs_every_completed_request(tmp_path):
    logs = tmp_path / "requests"
    before_ms = time.time_ns() // 1_000_000
    with running_broker(tmp_path / "data", request_log_dir=str(logs)) as broker:
        with Client("127.0.0.1", broker.bound_port("PLAINTEXT")) as c:
            for _ in range(7):
                c.call(18, 3, api_versions.REQUEST(client_software_name="probe", client_software_version="9"))

        def mine() -> list[dict]:
            return [x for x in request_log_lines(logs)
                    if x.get("clientInformation", {}).get("softwareName") == "probe"]

        assert wait_for(lambda: len(mine()) == 7)
        line = mine()[0]
        assert line["requestHeader"]["requestApiKeyName"] == "ApiVersions"
        assert line["requestHeader"]["requestApiVersion"] == 3
        assert line["listener"] == "PLAINTEXT" and line["securityProtocol"] == "PLAINTEXT"
        assert line["clientInformation"]["softwareVersion"] == "9"
        assert line["errorCode"] == 0 and line["responseBytes"] > 0 and line["requestBytes"] > 0
        assert line["errorCounts"] == {}  # nonzero codes only
        parts = (line["requestQueueTimeMs"] + line["localTimeMs"] + line["responseQueueTimeMs"]
                 + line["sendTimeMs"])
        assert line["totalTimeMs"] >= 0 and abs(parts - line["totalTimeMs"]) < 1.0
        # the wall clock, from the completion's monotonic time and the writer's clock offset
        assert before_ms <= line["timestamp"] <= time.time_ns() // 1_000_000
    assert broker.request_log.dropped == 0 and broker.request_log.written >= 7
    # This broker is the controller: what it sent itself is logged too, with its queue time.
    sent = [x for x in request_log_lines(logs) if x.get("type") == "controller"]
    assert sent and all(x["brokerId"] == 1 and x["queueTimeMs"] >= 0 for x in sent)
    assert "UpdateMetadata" in {x["requestHeader"]["requestApiKeyName"] for x in sent}


def test_error_counts_hold_every_nonzero_code_the_response_carried():
    """``errorCounts``: code (a string key) -> count, nonzero codes only, beside ``errorCode``."""
    templates: dict = {}
    cases = [
        (0, {0: 2, 36: 1}, {"36": 1}),  # CreateTopics: one topic of three exists
        (0, {0: 3}, {}),
        (0, {3: 2, 5: 1, 0: 1}, {"3": 2, "5": 1}),
        (35, None, {"35": 1}),  # only the top-level code (ApiVersions of an unknown version)
        (0, None, {}),
        (0, {}, {}),  # no response (the connection was closed)
    ]
    for error_code, counts, expected in cases:
        for cache in (None, templates):  # the cached template writes the same line
            line = json.loads(format_line(request(1), TIMES, 10, error_code, 1_700_000_000_000, cache,
                                          counts))
            assert line["errorCounts"] == expected and line["errorCode"] == error_code


def test_a_lines_topic_fields():
    """Produce's topics have records, Fetch's none; per-topic errorCounts; names escaped."""
    ok, bad = types.SimpleNamespace(error_code=0), types.SimpleNamespace(error_code=E.NOT_LEADER_OR_FOLLOWER)
    produce = [TopicTraffic("a", [ok, bad, bad], 7, 700), TopicTraffic('q"uote\u00e9', [ok], 1, 80)]
    text = topics_json(produce)
    assert text.isascii()
    line = json.loads("{" + text[1:] + "}")
    assert line == {"topics": [
        {"topic": "a", "partitions": 3, "records": 7, "recordBytes": 700, "errorCounts": {"6": 2}},
        {"topic": 'q"uote\u00e9', "partitions": 1, "records": 1, "recordBytes": 80, "errorCounts": {}}],
        "partitions": 4, "records": 8, "recordBytes": 780}
    long = "z" * 300  # longer than any legal name: written, not cached
    (named,) = json.loads("{" + topics_json([TopicTraffic(long, [], 0, 0)])[1:] + "}")["topics"]
    assert named["topic"] == long
    line = json.loads("{" + topics_json([TopicTraffic("f", [ok], -1, 50)])[1:] + "}")
    assert line == {"topics": [{"topic": "f", "partitions": 1, "recordBytes": 50, "errorCounts": {}}],
                    "partitions": 1, "recordBytes": 50}
    # In a whole line: after errorCounts; a line without traffic has none of these fields.
    for traffic in (None, produce):
        whole = json.loads(format_line(request(1), (1, 2, 0, 3, 4, 10), 10, 0, 1_700_000_000_000, {},
                                       None, traffic))
        assert whole["errorCounts"] == {} and ("topics" in whole) == (traffic is not None)


def test_files_roll_by_size(tmp_path):
    rl = RequestLog(str(tmp_path), segment_bytes=1024)
    rl.start()
    try:
        for corr in range(200):
            rl.append(request(corr), TIMES, 10, 0)
        assert wait_for(lambda: rl.written == 200)
    finally:
        rl.shutdown()
    files = glob.glob(os.path.join(str(tmp_path), "requests-*.jsonl"))
    assert len(files) > 1
    corrs = sorted(x["requestHeader"]["correlationId"] for x in request_log_lines(tmp_path))
    assert corrs == list(range(200))


def test_a_full_queue_drops_and_counts_without_blocking(tmp_path):
    rl = RequestLog(str(tmp_path), queue_max=5)  # not started: nothing drains the queue
    for corr in range(8):
        rl.append(request(corr), TIMES, 10, 0)
    assert rl.dropped == 3


def test_a_failing_disk_drops_lines_counts_them_and_the_writer_lives_on(tmp_path):
    target = tmp_path / "not-a-directory"
    rl = RequestLog(str(target))
    rl.start()
    try:
        os.rmdir(target)
        target.write_text("a file where the directory was")  # every open() now fails
        for corr in range(4):
            rl.append(request(corr), TIMES, 10, 0)
        assert wait_for(lambda: rl.dropped == 4)
        target.unlink()
        target.mkdir()  # the disk works again
        rl.append(request(9), TIMES, 10, 0)
        assert wait_for(lambda: rl.written == 1)
    finally:
        rl.shutdown()
    assert not rl._thread.is_alive()


def test_a_full_disk_drops_lines_keeps_whole_lines_and_writing_resumes(tmp_path):
    """On a real full file system (a small tmpfs): lines that do not fit are dropped and counted,
    no half line is left in a file, and lines are written again once space is freed."""
    with small_disk(tmp_path / "disk") as disk:
        rl = RequestLog(str(disk))
        rl.start()
        try:
            rl.append(request(0), TIMES, 10, 0)
            assert wait_for(lambda: rl.written == 1)
            filler = fill(disk)
            for corr in range(1, 200):
                rl.append(request(corr), TIMES, 10, 0)
            assert wait_for(lambda: rl.written + rl.dropped == 200)
            assert rl.dropped > 0
            filler.unlink()
            rl.append(request(500), TIMES, 10, 0)
            assert wait_for(lambda: rl.written + rl.dropped == 201)
            assert rl.written >= 2
        finally:
            rl.shutdown()
        # (json.loads: whole lines)
        corrs = [x["requestHeader"]["correlationId"] for x in request_log_lines(disk)]
        assert corrs[0] == 0 and corrs[-1] == 500 and len(corrs) == rl.written
