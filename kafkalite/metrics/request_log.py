"""The request log: every completed request as one JSON line, with the fields of Kafka's request
logger (``kafka.request.logger``, "Completed request") that apply, written by a thread of its own.

The Processor only appends a tuple to a bounded deque: it never formats, writes or waits. When the
writer falls behind (the deque is full) or the disk fails, lines are dropped and counted
(``dropped``), and the failure is logged once until writing works again. Files are rolled by size
and by age in the directory: ``requests-<start ms>-<n>.jsonl``.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
import time
from typing import Any

from kafkalite.protocol.codec import api_name

from .request_metrics import request_stamps

log = logging.getLogger("kafkalite.metrics.request_log")

FLUSH_INTERVAL = 0.05  # seconds between the writer's rounds
CHUNK = 256  # lines formatted per turn: the writer takes turns with the Processors (turns.py)


class RequestLog:
    def __init__(self, directory: str, segment_bytes: int = 100 * 1024 * 1024,
                 roll_ms: int = 3_600_000, queue_max: int = 100_000, turns: Any = None) -> None:
        self.directory = directory
        self.segment_bytes = segment_bytes
        self.roll_ns = roll_ms * 1_000_000
        self.queue_max = queue_max
        # Formatting is Python work like the Processors': done in turns of CHUNK lines, it never
        # holds the GIL for a whole switch interval while requests wait.
        self.turns = turns
        self.written = 0
        self.dropped = 0
        self._lines: collections.deque[tuple] = collections.deque()
        self._controller_lines: collections.deque[tuple] = collections.deque()
        self._stop = threading.Event()
        self._file: Any = None
        self._file_bytes = 0
        self._file_opened_ns = 0
        self._segments = 0
        self._done = 0  # lines of the current round written
        self._failing = False
        self._thread = threading.Thread(target=self._run, name="kafkalite-request-log", daemon=True)

    def start(self) -> None:
        os.makedirs(self.directory, exist_ok=True)
        self._thread.start()

    # --- the Processor's side: one append, never blocks -----------------------------------------

    def append(self, request: Any, response_bytes: int, error_code: int, now_ns: int) -> None:
        if len(self._lines) >= self.queue_max:
            self.dropped += 1
            return
        self._lines.append((request, response_bytes, error_code, now_ns, time.time()))

    def append_controller(self, broker_id: int, api_key: int, version: int, queue_ns: int) -> None:
        """A control request the controller's send thread took from its queue for ``broker_id``."""
        if len(self._controller_lines) >= self.queue_max:
            self.dropped += 1
            return
        self._controller_lines.append((broker_id, api_key, version, queue_ns, time.time()))

    # --- the writer -----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_INTERVAL):
            self._write_pending()
        self._write_pending()
        self._close_file()

    def _write_pending(self) -> None:
        lines, controller = self._lines, self._controller_lines
        if not lines and not controller:
            return
        out: list[str] = []
        while lines or controller:
            held = self.turns.acquire() if self.turns is not None else False
            try:
                for _ in range(CHUNK):
                    if lines:
                        out.append(format_line(*lines.popleft()))
                    elif controller:
                        out.append(format_controller_line(*controller.popleft()))
                    else:
                        break
            finally:
                if held:
                    self.turns.release()
        try:
            self._write(out)
        except OSError as e:
            self.dropped += len(out) - self._done
            self._close_file()
            if not self._failing:
                self._failing = True
                log.error("Request log: cannot write to %s (%s); dropping lines until it works again",
                          self.directory, e)

    def _write(self, lines: list[str]) -> None:
        """Write ``lines``, starting a new file whenever the current one is full or old."""
        self._done = 0
        while self._done < len(lines):
            if self._file is not None and (self._file_bytes >= self.segment_bytes or
                                           time.monotonic_ns() - self._file_opened_ns >= self.roll_ns):
                self._close_file()
            if self._file is None:
                self._open_file()
            # As many lines as fit in this file (at least one).
            room = self.segment_bytes - self._file_bytes
            chunk: list[str] = []
            size = 0
            for line in lines[self._done:]:
                n = len(line)  # ASCII only (JSON escapes the rest)
                if chunk and size + n > room:
                    break
                chunk.append(line)
                size += n
            self._file.write("".join(chunk))
            self._file.flush()
            self._file_bytes += size
            self._done += len(chunk)
            self.written += len(chunk)
        if self._failing:
            self._failing = False
            log.warning("Request log: writing to %s again", self.directory)

    def _open_file(self) -> None:
        self._segments += 1
        name = f"requests-{int(time.time() * 1000)}-{self._segments}.jsonl"
        self._file = open(os.path.join(self.directory, name), "a", encoding="utf-8")
        self._file_bytes = 0
        self._file_opened_ns = time.monotonic_ns()

    def _close_file(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


def format_controller_line(broker_id: int, api_key: int, version: int, queue_ns: int, wall: float) -> str:
    """A control request sent by this broker's controller: which broker, and how long it waited
    in that broker's queue (Kafka's RequestRateAndQueueTimeMs, one request at a time)."""
    return json.dumps({
        "type": "controller",
        "timestamp": round(wall * 1000),
        "requestHeader": {"requestApiKeyName": api_name(api_key), "requestApiKey": api_key,
                          "requestApiVersion": version},
        "brokerId": broker_id,
        "queueTimeMs": queue_ns / 1e6,
    }, separators=(",", ":")) + "\n"


_QUOTED: dict[str, str] = {}  # JSON string literals of the strings that repeat (ids, names)


def _q(text: str | None) -> str:
    if text is None:
        return "null"
    quoted = _QUOTED.get(text)
    if quoted is None:
        quoted = json.dumps(text)  # ASCII-only output: a line's length is its size in bytes
        if len(_QUOTED) < 10_000:
            _QUOTED[text] = quoted
    return quoted


def _template(request: Any) -> str:
    """The line of a request with its per-request values left as % fields: what a connection's
    requests share (api, ids, listener, client) is formatted and quoted once."""
    header = request.header
    key = header.request_api_key
    return (
        '{"timestamp":%d,"requestHeader":{"requestApiKeyName":' + _q(api_name(key))
        + f',"requestApiKey":{key},"requestApiVersion":{header.request_api_version},'
        + '"correlationId":%d,"clientId":' + _q(header.client_id).replace("%", "%%")
        + '},"connection":' + _q(request.connection_id).replace("%", "%%")
        + ',"totalTimeMs":%.3f,"requestQueueTimeMs":%.3f,"localTimeMs":%.3f,"remoteTimeMs":0.0,'
        + '"throttleTimeMs":0,"responseQueueTimeMs":%.3f,"sendTimeMs":%.3f,"securityProtocol":'
        + _q(request.security_protocol) + ',"principal":"User:ANONYMOUS","listener":'
        + _q(request.listener) + ',"clientInformation":{"softwareName":'
        + _q(request.client_software_name).replace("%", "%%") + ',"softwareVersion":'
        + _q(request.client_software_version).replace("%", "%%")
        + f'}},"processor":{request.processor},"requestBytes":%d,"responseBytes":%d,"errorCode":%d}}\n'
    )


_TEMPLATES: dict[tuple, str] = {}


def format_line(request: Any, response_bytes: int, error_code: int, now_ns: int, wall: float) -> str:
    """One request as Kafka's request logger has it (times in ms, to the microsecond), plus
    kafkalite's fields. One % format over a template cached per connection, api and client: a
    third of the time of json.dumps over a dict, which matters at tens of thousands a second."""
    header = request.header
    key = (header.request_api_key, header.request_api_version, request.connection_id, header.client_id,
           request.client_software_name, request.client_software_version, request.processor,
           request.listener, request.security_protocol)
    template = _TEMPLATES.get(key)
    if template is None:
        if len(_TEMPLATES) >= 10_000:
            _TEMPLATES.clear()
        template = _TEMPLATES[key] = _template(request)
    start, dequeue, local, enqueue, taken = request_stamps(request)
    return template % (
        round(wall * 1000), header.correlation_id, (now_ns - start) / 1e6, (dequeue - start) / 1e6,
        (local - dequeue) / 1e6, (taken - enqueue) / 1e6, (now_ns - taken) / 1e6,
        request.size, response_bytes, error_code)
