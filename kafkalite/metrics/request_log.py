"""The request log: every completed request as one JSON line, with the fields of Kafka's request
logger (``kafka.request.logger``, "Completed request") that apply.

The Processor formats the line where it completes the request (it holds its turn already, so
this takes no lock and no hand-over of the GIL: a line costs about 1 us) and appends it to a
bounded deque; it never writes or waits. A writer thread of its own takes what has gathered every
FLUSH_INTERVAL and writes it with one call per file, outside the GIL. When the writer falls behind
(the deque is full) or the disk fails, lines are dropped and counted (``dropped``), and the failure
is logged once until writing works again. Files are rolled by size and by age in the directory:
``requests-<start ms>-<n>.jsonl``.

Timings are milliseconds to the microsecond, as Kafka logs them, written as whole microseconds
with an exponent (``"totalTimeMs":90e-3`` is 0.090 ms), a JSON number that costs an integer's
formatting instead of a float's.
"""

from __future__ import annotations

import collections
import functools
import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from kafkalite.protocol.api_keys import api_name

from .request_metrics import Times
from .settings import RequestLogSettings

log = logging.getLogger("kafkalite.metrics.request_log")

FORMATS = ("json", "csv")
EXTENSIONS = {"json": "jsonl", "csv": "csv"}  # a request log file's name ends with its format's
FLUSH_INTERVAL = 0.05  # seconds between the writer's rounds
TEMPLATES_MAX = 10_000  # cached line templates (per connection, api, version and client)
_DEFAULTS = RequestLogSettings()  # request.log.segment.bytes and .roll.ms unless given


class TopicTraffic(NamedTuple):
    """What a Produce or Fetch request did to one topic, for its line's ``topics``: the topic's
    partition results in the response (anything with an ``error_code``, read when the line is
    written, so an acks=all produce's timeouts are in), the records appended (-1: not counted,
    Fetch) and the record bytes appended (Produce) or sent (Fetch)."""

    topic: str
    partitions: Sequence[Any]
    records: int
    record_bytes: int


class RequestLog:
    def __init__(self, directory: str, segment_bytes: int = _DEFAULTS.segment_bytes,
                 roll_ms: int = _DEFAULTS.roll_ms, format: str = _DEFAULTS.format,
                 queue_max: int = 100_000) -> None:
        if format not in FORMATS:
            raise ValueError(f"request log format must be one of {FORMATS}, not {format!r}")
        self.directory = directory
        self.format = format
        self._format_line = format_csv_line if format == "csv" else format_line
        self._format_controller = format_controller_csv_line if format == "csv" else format_controller_line
        self.segment_bytes = segment_bytes
        self.roll_ns = roll_ms * 1_000_000
        self.queue_max = queue_max
        self.written = 0
        self.dropped = 0
        self._lines: collections.deque[str] = collections.deque()
        self._templates: dict[tuple, str] = {}
        self._stop = threading.Event()
        self._file: Any = None
        self._path = ""
        self._file_bytes = 0
        self._file_opened_ns = 0
        self._segments = 0
        self._failing = False
        self._wall_offset_ns = _wall_offset_ns()  # wall clock minus monotonic, renewed every round
        self._thread = threading.Thread(target=self._run, name="kafkalite-request-log", daemon=True)

    def start(self) -> None:
        os.makedirs(self.directory, exist_ok=True)
        self._thread.start()

    # --- the callers' side: format, append, never block ------------------------------------------

    def append(self, request: Any, times_us: Times, response_bytes: int,
               error_code: int, error_counts: Mapping[int, int] | None = None,
               now_ns: int | None = None) -> None:
        """A completed request (``times_us``: :func:`~kafkalite.metrics.request_metrics.request_times_us`;
        ``error_counts``: every error code its response carried, None for ``error_code`` alone;
        ``now_ns``: when it completed, on the monotonic clock, else now). Its timestamp is the
        wall clock: the monotonic time plus the writer's latest offset between the two clocks (a
        clock call less per request; the writer follows the wall clock's steps every round)."""
        lines = self._lines
        if len(lines) >= self.queue_max:
            self.dropped += 1
            return
        wall_ms = (time.time_ns() if now_ns is None else now_ns + self._wall_offset_ns) // 1_000_000
        lines.append(self._format_line(request, times_us, response_bytes, error_code, wall_ms,
                                       self._templates, error_counts, request.topic_traffic))

    def append_controller(self, broker_id: int, api_key: int, version: int, queue_ns: int) -> None:
        """A control request the controller's send thread took from its queue for ``broker_id``."""
        if len(self._lines) >= self.queue_max:
            self.dropped += 1
            return
        self._lines.append(self._format_controller(broker_id, api_key, version, queue_ns, time.time()))

    # --- the writer -----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_INTERVAL):
            self._wall_offset_ns = _wall_offset_ns()
            self._write_pending()
        self._write_pending()
        self._close_file()

    def _write_pending(self) -> None:
        lines = self._lines
        if not lines:
            return
        pending = [lines.popleft() for _ in range(len(lines))]
        done = 0
        try:
            while done < len(pending):
                done += self._write(pending, done)
        except OSError as e:
            self.dropped += len(pending) - done
            self._cut_partial_line()
            self._close_file()
            if not self._failing:
                self._failing = True
                log.error("Request log: cannot write to %s (%s); dropping lines until it works again",
                          self.directory, e)
            return
        if self._failing:
            self._failing = False
            log.warning("Request log: writing to %s again", self.directory)

    def _write(self, lines: list[str], start: int) -> int:
        """Write lines from ``start`` into the current file, starting a new one when it is full or
        old: all of them if they fit, else as many as fit (at least one). Returns how many."""
        if self._file is not None and (self._file_bytes >= self.segment_bytes or
                                       time.monotonic_ns() - self._file_opened_ns >= self.roll_ns):
            self._close_file()
        if self._file is None:
            self._open_file()
        rest = lines[start:] if start else lines
        text = "".join(rest)  # ASCII only (JSON escapes the rest): its length is its size
        room = self.segment_bytes - self._file_bytes
        if len(text) > room:  # this round ends the file: only whole lines that fit, at least one
            size, n = len(rest[0]), 1
            while n < len(rest) and size + len(rest[n]) <= room:
                size += len(rest[n])
                n += 1
            rest, text = rest[:n], text[:size]
        data = memoryview(text.encode("ascii"))
        while data:  # an unbuffered file: what write() took is on its way to the disk
            data = data[self._file.write(data):]
        self._file_bytes += len(text)
        self.written += len(rest)
        return len(rest)

    def _open_file(self) -> None:
        self._segments += 1
        name = f"requests-{int(time.time() * 1000)}-{self._segments}.{EXTENSIONS[self.format]}"
        self._path = os.path.join(self.directory, name)
        self._file = open(self._path, "ab", buffering=0)
        self._file_bytes = 0
        self._file_opened_ns = time.monotonic_ns()

    def _cut_partial_line(self) -> None:
        """After a failed write (a full disk), drop the part of a line the disk took: the file
        keeps whole lines only, so every reader can parse all of it."""
        if self._file is not None:
            try:
                os.truncate(self._path, self._file_bytes)
            except OSError:
                pass

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


def _wall_offset_ns() -> int:
    return time.time_ns() - time.monotonic_ns()


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


def _q(text: str | None) -> str:
    """A JSON string literal, ASCII only (so a line's length is its size in bytes), with % doubled
    for the template it goes into."""
    return "null" if text is None else json.dumps(text).replace("%", "%%")


def _template(request: Any) -> str:
    """The line of a request with its per-request values left as % fields: what a connection's
    requests share (api, ids, listener, client) is formatted and quoted once."""
    header = request.header
    key = header.request_api_key
    return (
        '{"timestamp":%d,"requestHeader":{"requestApiKeyName":' + _q(api_name(key))
        + f',"requestApiKey":{key},"requestApiVersion":{header.request_api_version},'
        + '"correlationId":%d,"clientId":' + _q(header.client_id) + '},"connection":'
        + _q(request.connection_id)
        + ',"totalTimeMs":%de-3,"requestQueueTimeMs":%de-3,"localTimeMs":%de-3,"remoteTimeMs":%de-3,'
        + '"throttleTimeMs":0,"responseQueueTimeMs":%de-3,"sendTimeMs":%de-3,"securityProtocol":'
        + _q(request.security_protocol) + ',"principal":"User:ANONYMOUS","listener":'
        + _q(request.listener) + ',"clientInformation":{"softwareName":'
        + _q(request.client_software_name) + ',"softwareVersion":' + _q(request.client_software_version)
        + f'}},"processor":{request.processor},"requestBytes":%d,"responseBytes":%d,"errorCode":%d,'
        + '"errorCounts":%s%s}\n'  # the second: Produce's and Fetch's topic fields, or nothing
    )


def error_counts_json(error_code: int, error_counts: Mapping[int, int] | None) -> str:
    """The ``errorCounts`` field: a JSON object from each nonzero error code the response carried
    (as a string key, in order) to how many times; ``{}`` when there is none (the common case)."""
    if error_counts is None:
        return f'{{"{error_code}":1}}' if error_code else "{}"
    if not error_counts or (len(error_counts) == 1 and 0 in error_counts):  # all NONE
        return "{}"
    nonzero = [f'"{code}":{n}' for code, n in sorted(error_counts.items()) if code]
    return "{" + ",".join(nonzero) + "}" if nonzero else "{}"


MAX_TOPIC_NAME = 249  # Kafka's longest legal topic name


@functools.lru_cache(maxsize=4096)
def _legal_topic_name(topic: str) -> str:
    return json.dumps(topic)


def _topic_name(topic: str) -> str:
    """A topic name as a JSON string (ASCII only: a client names the topic), cached only if it
    could be legal, so a client's made-up names cannot fill the cache with long strings."""
    return _legal_topic_name(topic) if len(topic) <= MAX_TOPIC_NAME else json.dumps(topic)


def _codes_json(counts: dict[int, int]) -> str:
    return "{" + ",".join(f'"{code}":{n}' for code, n in sorted(counts.items())) + "}" if counts else "{}"


def topics_json(traffic: Sequence[TopicTraffic]) -> str:
    """The topic fields of a Produce or Fetch line, after ``errorCounts``: ``topics``, one object
    per topic (``topic``, ``partitions``, ``records`` for Produce, ``recordBytes``, and its own
    ``errorCounts``: each nonzero code its partitions were answered with, and how many), then
    the request's totals ``partitions``, ``records`` (Produce) and ``recordBytes``."""
    topics, partitions, records, record_bytes = _topics(traffic)
    total = "" if records is None else f',"records":{records}'
    return f',"topics":{topics},"partitions":{partitions}{total},"recordBytes":{record_bytes}'


def topics_csv(traffic: Sequence[TopicTraffic]) -> str:
    """The csv line's columns ``topics`` (the JSON line's ``topics`` array, quoted), then
    ``partitions``, ``records`` (empty for Fetch) and ``recordBytes``."""
    topics, partitions, records, record_bytes = _topics(traffic)
    quoted = topics.replace('"', '""')
    return f'"{quoted}",{partitions},{"" if records is None else records},{record_bytes}'


def _topics(traffic: Sequence[TopicTraffic]) -> tuple[str, int, int | None, int]:
    """The ``topics`` JSON array and the request's totals: partitions, records (None: not
    counted, Fetch) and record bytes."""
    parts = []
    partitions = records = record_bytes = 0
    produce = False
    for t in traffic:
        codes: dict[int, int] = {}
        for p in t.partitions:
            code = p.error_code
            if code:
                codes[code] = codes.get(code, 0) + 1
        n = len(t.partitions)
        partitions += n
        record_bytes += t.record_bytes
        counted = ""
        if t.records >= 0:
            produce = True
            records += t.records
            counted = f',"records":{t.records}'
        parts.append(f'{{"topic":{_topic_name(t.topic)},"partitions":{n}{counted},'
                     f'"recordBytes":{t.record_bytes},"errorCounts":{_codes_json(codes)}}}')
    return f'[{",".join(parts)}]', partitions, records if produce else None, record_bytes


def _remember(templates: dict[tuple, str] | None, key: tuple, template: str) -> str:
    """A template new to ``templates`` kept there (all dropped at TEMPLATES_MAX: clients come and
    go), and returned."""
    if templates is not None:
        if len(templates) >= TEMPLATES_MAX:
            templates.clear()
        templates[key] = template
    return template


def format_line(request: Any, times_us: Times, response_bytes: int,
                error_code: int, wall_ms: int, templates: dict[tuple, str] | None = None,
                error_counts: Mapping[int, int] | None = None,
                traffic: Sequence[TopicTraffic] | None = None) -> str:
    """One request as Kafka's request logger has it, plus kafkalite's fields: one % of integers
    over a template cached in ``templates`` per connection, api, version and client (the
    connection id fixes the listener, protocol and Processor). ``traffic``: a Produce's or
    Fetch's topics (:func:`topics_json`)."""
    header = request.header
    key = (request.connection_id, header.request_api_key, header.request_api_version, header.client_id,
           request.client_software_name, request.client_software_version)
    template = templates.get(key) if templates is not None else None
    if template is None:
        template = _remember(templates, key, _template(request))
    queue, local, remote, response_queue, send, total = times_us
    return template % (wall_ms, header.correlation_id, total, queue, local, remote, response_queue, send,
                       request.size, response_bytes, error_code,
                       "{}" if error_counts is None and not error_code  # the common case, no call
                       else error_counts_json(error_code, error_counts),
                       "" if traffic is None else topics_json(traffic))


# --- the csv format (request.log.format=csv) ---------------------------------------------------

# Its columns, in order, no header: the JSON line's fields flattened, timings in whole
# microseconds (the JSON line's ``...TimeMs`` times 1000, so integers), a control request's queue
# time in nanoseconds; ``type`` empty for a request, "controller" for a control request sent (whose
# line has only type, timestamp, the three api columns, brokerId and queueTimeNs).
CSV_COLUMNS = (
    "type", "timestamp", "requestApiKeyName", "requestApiKey", "requestApiVersion", "correlationId",
    "clientId", "connection", "totalTimeUs", "requestQueueTimeUs", "localTimeUs", "remoteTimeUs",
    "throttleTimeMs", "responseQueueTimeUs", "sendTimeUs", "securityProtocol", "principal", "listener",
    "softwareName", "softwareVersion", "processor", "requestBytes", "responseBytes", "errorCode",
    "errorCounts", "topics", "partitions", "records", "recordBytes", "brokerId", "queueTimeNs",
)
_CSV_TOPIC_COLUMNS = ("topics", "partitions", "records", "recordBytes")  # one %s: topics_csv's


def _c(text: str | None) -> str:
    """A csv field: empty for None (read as null), else quoted with quotes doubled (RFC 4180);
    ASCII only (others as backslash escapes, so a line's length is its size) and on one line (a
    CR or LF as ``\\r`` or ``\\n``, so readers can split files by lines); % doubled for the template."""
    if text is None:
        return ""
    text = text.encode("ascii", "backslashreplace").decode("ascii").replace("\r", "\\r").replace("\n", "\\n")
    return '"' + text.replace('"', '""').replace("%", "%%") + '"'


def _csv_line(values: Mapping[str, str], topics_in_one: bool = False) -> str:
    """``values`` by column name in column order, the others empty; ``topics_in_one``: the value
    of ``topics`` stands for the four topic columns."""
    skip = _CSV_TOPIC_COLUMNS[1:] if topics_in_one else ()
    return ",".join(values.get(c, "") for c in CSV_COLUMNS if c not in skip) + "\n"


def _csv_template(request: Any) -> str:
    """:func:`_template` for the csv format: the same % fields in the same order."""
    header = request.header
    key = header.request_api_key
    return _csv_line({
        "timestamp": "%d", "requestApiKeyName": _c(api_name(key)), "requestApiKey": str(key),
        "requestApiVersion": str(header.request_api_version), "correlationId": "%d",
        "clientId": _c(header.client_id), "connection": _c(request.connection_id), "totalTimeUs": "%d",
        "requestQueueTimeUs": "%d", "localTimeUs": "%d", "remoteTimeUs": "%d", "throttleTimeMs": "0",
        "responseQueueTimeUs": "%d", "sendTimeUs": "%d", "securityProtocol": _c(request.security_protocol),
        "principal": '"User:ANONYMOUS"', "listener": _c(request.listener),
        "softwareName": _c(request.client_software_name),
        "softwareVersion": _c(request.client_software_version),
        "processor": str(request.processor), "requestBytes": "%d", "responseBytes": "%d", "errorCode": "%d",
        "errorCounts": "%s", "topics": "%s",  # topics_csv's four columns, or ",,," without topics
    }, topics_in_one=True)


def error_counts_csv(error_code: int, error_counts: Mapping[int, int] | None) -> str:
    """:func:`error_counts_json` for the csv format: ``code:count`` pairs joined by ``;``, empty
    when there is none."""
    if error_counts is None:
        return f"{error_code}:1" if error_code else ""
    return ";".join(f"{code}:{n}" for code, n in sorted(error_counts.items()) if code)


def format_csv_line(request: Any, times_us: Times, response_bytes: int,
                    error_code: int, wall_ms: int, templates: dict[tuple, str] | None = None,
                    error_counts: Mapping[int, int] | None = None,
                    traffic: Sequence[TopicTraffic] | None = None) -> str:
    """:func:`format_line` in the csv format (:data:`CSV_COLUMNS`); its own ``templates``."""
    header = request.header
    key = (request.connection_id, header.request_api_key, header.request_api_version, header.client_id,
           request.client_software_name, request.client_software_version)
    template = templates.get(key) if templates is not None else None
    if template is None:
        template = _remember(templates, key, _csv_template(request))
    queue, local, remote, response_queue, send, total = times_us
    return template % (wall_ms, header.correlation_id, total, queue, local, remote, response_queue, send,
                       request.size, response_bytes, error_code,
                       "" if error_counts is None and not error_code  # the common case, no call
                       else error_counts_csv(error_code, error_counts),
                       ",,," if traffic is None else topics_csv(traffic))


def format_controller_csv_line(broker_id: int, api_key: int, version: int, queue_ns: int, wall: float) -> str:
    """:func:`format_controller_line` in the csv format."""
    return _csv_line({"type": "controller", "timestamp": str(round(wall * 1000)),
                      "requestApiKeyName": _c(api_name(api_key)), "requestApiKey": str(api_key),
                      "requestApiVersion": str(version), "brokerId": str(broker_id),
                      "queueTimeNs": str(queue_ns)}).replace("%%", "%")
