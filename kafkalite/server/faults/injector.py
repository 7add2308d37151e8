"""Faults a test injects into one broker: librdkafka's mock cluster and franz-go's kfake together.

- Error stacks: per api key, error codes answered to the next requests of that key, in order, for
  the whole broker or for one partition (librdkafka's ``rd_kafka_mock_push_request_errors``,
  kfake's ``AddFault``). A request answered with an injected error is not handled: a Produce so
  answered appended nothing, as when a real broker refuses it. A partition's error answers that
  partition only; the rest of the request is handled as usual.
- Added round-trip time: every response waits that long before it goes to its Processor.
- Request capture: the api, version, client and fields of every request received.
- Older maximum versions advertised in ApiVersions (kfake's ``MaxVersions``).

All of them concern the client listeners only: the inter-broker listener, where the controller,
the heartbeats and the replica fetchers talk, is left alone, so that a fault a test aims at its
client does not also fence brokers or shrink an ISR. kafkalite.testing applies them to a whole
cluster (every broker holds its own copy of a cluster-wide error stack), ``kafkalite fault`` over
a broker's HTTP port (``fault_ops``).
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import heapq
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkalite.network.request_channel import Request, Response
from kafkalite.protocol import APIS_BY_KEY, ApiKey, api_name
from kafkalite.protocol import error_codes as E

from ..responses import respond

log = logging.getLogger("kafkalite.server.faults.injector")

CAPTURE_LIMIT = 100_000  # requests kept by a capture, the newest


class FaultError(ValueError):
    """A fault that cannot be injected (an api without an error to answer, a bad argument)."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where an api's request and response list topics and partitions (field names)."""

    req_topics: str
    req_name: str
    req_partitions: str
    req_index: str | None  # None: the request lists partitions as bare indexes
    resp_topics: str
    resp_name: str
    resp_partitions: str
    resp_index: str
    resp_error: str = "error_code"
    versions: range | None = None  # the versions laid out so (None: every version)

    def index(self, partition: Any) -> int:
        return partition if self.req_index is None else getattr(partition, self.req_index)


# The apis whose errors are per partition: a partition's fault answers it alone.
PARTITIONED: dict[int, Layout] = {
    ApiKey.PRODUCE: Layout("topic_data", "name", "partition_data", "index",
                           "responses", "name", "partition_responses", "index"),
    ApiKey.FETCH: Layout("topics", "topic", "partitions", "partition",
                         "responses", "topic", "partitions", "partition_index"),
    ApiKey.LIST_OFFSETS: Layout("topics", "name", "partitions", "partition_index",
                                "topics", "name", "partitions", "partition_index"),
    ApiKey.OFFSET_COMMIT: Layout("topics", "name", "partitions", "partition_index",
                                 "topics", "name", "partitions", "partition_index"),
    ApiKey.TXN_OFFSET_COMMIT: Layout("topics", "name", "partitions", "partition_index",
                                     "topics", "name", "partitions", "partition_index"),
    # A producer's versions (0-3); 4+ are the brokers' batched form, with a top-level error.
    ApiKey.ADD_PARTITIONS_TO_TXN: Layout("v3_and_below_topics", "name", "partitions", None,
                                         "results_by_topic_v3_and_below", "name", "results_by_partition",
                                         "partition_index", "partition_error_code", range(0, 4)),
    ApiKey.DESCRIBE_PRODUCERS: Layout("topics", "name", "partition_indexes", None,
                                      "topics", "name", "partitions", "partition_index"),
}


def layout_for(api_key: int, version: int) -> Layout | None:
    """How ``api_key`` at ``version`` lists partitions, if its errors are per partition."""
    layout = PARTITIONED.get(api_key)
    if layout is None or (layout.versions is not None and version not in layout.versions):
        return None
    return layout


# The apis that name topics by id from a version on (KIP-516): Fetch from 13, Produce from 13.
TOPIC_IDS_FROM: dict[int, int] = {ApiKey.FETCH: 13, ApiKey.PRODUCE: 13}


def names_topics_by_id(api_key: int, version: int) -> bool:
    return version >= TOPIC_IDS_FROM.get(api_key, 1 << 15)


def _top_level_error(api_key: int, version: int) -> bool:
    f = next((f for f in APIS_BY_KEY[api_key].response.fields if f.name == "error_code"), None)
    return f is not None and f.present_in(version)


# Apis answered per item of a list with no error above it: a fault answers every item.
PER_ITEM: dict[int, tuple[str, str, str]] = {
    ApiKey.DESCRIBE_TRANSACTIONS: ("transactional_ids", "transaction_states", "transactional_id"),
}


def faultable(api_key: int) -> bool:
    """True if kafkalite can answer some version of ``api_key`` with an error of its choosing."""
    if api_key in PARTITIONED or api_key in PER_ITEM or api_key in (ApiKey.METADATA, ApiKey.FIND_COORDINATOR):
        return True
    api = APIS_BY_KEY.get(api_key)
    return api is not None and any(_top_level_error(api_key, v) for v in range(api.versions.low,
                                                                              api.versions.high + 1))


@dataclasses.dataclass
class Injected:
    """Errors a response carries besides what the handler put there (see ``overlay``)."""

    every_topic: int | None = None  # Metadata: every topic of the answer gets this code
    # (topic name or id as the request names it, partition index, error code)
    partitions: list[tuple[Any, int, int]] = dataclasses.field(default_factory=list)

    def overlay(self, request: Request, body: Any) -> None:
        """Put these errors into the response ``body`` of ``request`` (``respond`` calls it, before
        encoding)."""
        injected = self
        key, version = request.api_key, request.api_version
        if injected.every_topic is not None:
            for t in getattr(body, "topics", None) or ():
                t.error_code = injected.every_topic
            return
        layout = layout_for(key, version)
        assert layout is not None
        name = FaultInjector._name_field(key, version, layout.resp_name)
        resp = APIS_BY_KEY[key].response
        topic_struct, part_struct = resp[layout.resp_topics], resp[layout.resp_topics][layout.resp_partitions]
        topics = getattr(body, layout.resp_topics)
        by_key = {getattr(t, name): t for t in topics}
        for topic_key, index, code in injected.partitions:
            t = by_key.get(topic_key)
            if t is None:
                t = by_key[topic_key] = topic_struct(**{name: topic_key})
                topics.append(t)
            entry = part_struct(**{layout.resp_index: index, layout.resp_error: code})
            for field, value in (("high_watermark", -1), ("base_offset", -1), ("offset", -1)):
                if any(f.name == field for f in part_struct.fields):
                    setattr(entry, field, value)
            getattr(t, layout.resp_partitions).append(entry)


@dataclasses.dataclass(frozen=True)
class CapturedRequest:
    api_key: int
    api_name: str
    api_version: int
    correlation_id: int
    client_id: str | None
    listener: str
    connection_id: str
    body: dict

    def to_json(self) -> dict:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**fields, "body": _jsonable(self.body)}


def _owned(v: Any) -> Any:
    """``v`` with its views of the request's buffer copied out (the buffer is reused)."""
    if isinstance(v, dict):
        return {k: _owned(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_owned(x) for x in v]
    if isinstance(v, (memoryview, bytearray)):
        return bytes(v)
    return v


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"base64": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, uuid.UUID):
        return str(v)
    return v


class FaultInjector:
    """One broker's faults. ``topic_name`` turns a topic id into its name (Fetch v13+);
    ``send_response`` answers a request (the broker's, through the channel of its plane)."""

    def __init__(self, node_id: int, topic_name: Callable[[uuid.UUID], str | None],
                 send_response: Callable[[Response], None]) -> None:
        self.node_id = node_id
        self.topic_name = topic_name
        self.send_response = send_response
        self._lock = threading.Lock()
        self._stacks: dict[tuple[int, tuple[str, int] | None], collections.deque[int]] = {}
        self._capture: collections.deque[CapturedRequest] | None = None
        self.rtt_ms = 0
        self.max_versions: dict[int, int] = {}
        self.on_max_versions: list[Callable[[], None]] = []  # ApiVersions' cached answers drop
        self._delayed: list[tuple[float, int, Response]] = []  # heap: (due, seq, response)
        self._seq = itertools.count()
        self._wake = threading.Condition(self._lock)
        self._delayer: threading.Thread | None = None
        self._stopping = False
        self.active = False  # any fault set: requests go through ``before`` (else untouched)

    def _refresh(self) -> None:
        self.active = bool(self._stacks or self._capture is not None or self.rtt_ms)

    # --- what a test sets ---------------------------------------------------------------------

    def push_errors(self, api_key: int, codes: Iterable[int], topic: str | None = None,
                    partition: int | None = None) -> None:
        """Answer the next requests of ``api_key`` with ``codes``, one each, in order; with
        ``topic`` and ``partition``, only that partition of them."""
        codes = [int(c) for c in codes]
        if not faultable(api_key):
            raise FaultError(f"{api_name(api_key)} has no error kafkalite can answer")
        unknown = [c for c in codes if c not in E.BY_CODE]
        if unknown:
            raise FaultError(f"unknown error codes {unknown}")
        where: tuple[str, int] | None = None
        if topic is not None or partition is not None:
            if api_key not in PARTITIONED:
                raise FaultError(f"{api_name(api_key)} has no per-partition errors; the apis that do: "
                                 f"{', '.join(api_name(k) for k in PARTITIONED)}")
            if topic is None or partition is None:
                raise FaultError("a partition's fault names both the topic and the partition")
            where = (topic, int(partition))
        with self._lock:
            self._stacks.setdefault((int(api_key), where), collections.deque()).extend(codes)
            self._refresh()

    def pending_errors(self) -> list[dict]:
        with self._lock:
            return [{"api": api_name(k), "topic": w[0] if w else None, "partition": w[1] if w else None,
                     "errors": list(codes)} for (k, w), codes in self._stacks.items() if codes]

    def clear_errors(self) -> None:
        with self._lock:
            self._stacks.clear()
            self._refresh()

    def set_rtt(self, ms: int) -> None:
        if ms < 0:
            raise FaultError("an added round-trip time is not negative")
        with self._lock:
            self.rtt_ms = int(ms)
            self._refresh()
            if ms and self._delayer is None and not self._stopping:
                self._delayer = threading.Thread(target=self._run_delayer, daemon=True,
                                                 name=f"fault-delayer-{self.node_id}")
                self._delayer.start()

    def start_capture(self) -> None:
        with self._lock:
            self._capture = collections.deque(maxlen=CAPTURE_LIMIT)
            self._refresh()

    def captured(self) -> list[CapturedRequest]:
        with self._lock:
            return list(self._capture or ())

    def stop_capture(self) -> list[CapturedRequest]:
        with self._lock:
            got, self._capture = list(self._capture or ()), None
            self._refresh()
            return got

    def set_max_versions(self, versions: Mapping[int, int]) -> None:
        """Advertise at most these versions (api key -> version) in ApiVersions; empty: the real ones."""
        for key, v in versions.items():
            if key not in APIS_BY_KEY:
                raise FaultError(f"unknown api key {key}")
            if v < 0:
                raise FaultError(f"{api_name(key)}: a version is not negative")
        self.max_versions = {int(k): int(v) for k, v in versions.items()}
        for drop in self.on_max_versions:
            drop()

    def max_versions_for(self, privileged: bool) -> Mapping[int, int]:
        return {} if privileged else self.max_versions

    def clear(self) -> None:
        """Every fault off (the errors not yet answered are forgotten)."""
        with self._lock:
            self._stacks.clear()
            self._capture = None
            self.rtt_ms = 0
            self._refresh()
        self.set_max_versions({})

    # --- the request path ---------------------------------------------------------------------

    def before(self, request: Request) -> Response | None:
        """Record the request; the error response that answers it, if a fault says so (it is then
        not handled); or None, after taking a partition's faulted entries out of its body (they
        come back with their errors in ``overlay``)."""
        if request.privileged or request.body is None:
            return None
        key, version = request.api_key, request.api_version
        with self._lock:
            if self._capture is not None:
                header = request.header
                self._capture.append(CapturedRequest(
                    key, api_name(key), version, request.correlation_id,
                    getattr(header, "client_id", None), request.listener, request.connection_id,
                    _owned(request.body.to_dict())))
            stack = self._stacks.get((key, None))
            code = stack.popleft() if stack and self._expressible(key, version) else None
        if code is not None:
            log.info("Broker %d answers %s v%d from %s with injected %s", self.node_id, api_name(key),
                     version, request.connection_id, E.for_code(code).name)
            return self._error_response(request, code)
        layout = layout_for(key, version)
        if layout is not None and any(k == key and w is not None for k, w in self._stacks):
            return self._take_partitions(request, layout)
        return None

    @staticmethod
    def _expressible(key: int, version: int) -> bool:
        return (layout_for(key, version) is not None or key in PER_ITEM
                or key in (ApiKey.METADATA, ApiKey.FIND_COORDINATOR)
                or _top_level_error(key, version))

    def _error_response(self, request: Request, code: int) -> Response | None:
        key, version, body = request.api_key, request.api_version, request.body
        api = APIS_BY_KEY[key]
        layout = layout_for(key, version)
        if layout is not None:
            name = self._name_field(key, version, layout.req_name)
            request.injected = Injected(partitions=[
                (getattr(t, name), layout.index(p), code)
                for t in getattr(body, layout.req_topics) for p in getattr(t, layout.req_partitions)])
            return respond(request, api.response())
        if key == ApiKey.METADATA:
            request.injected = Injected(every_topic=code)
            return None  # handled, then every topic answered with the error
        if key == ApiKey.FIND_COORDINATOR and version >= 4:
            item = api.response["coordinators"]
            return respond(request, api.response(coordinators=[
                item(key=k, node_id=-1, host="", port=-1, error_code=code) for k in body.coordinator_keys]))
        if key in PER_ITEM:
            asked, answered, name = PER_ITEM[key]
            item = api.response[answered]
            return respond(request, api.response(**{answered: [
                item(**{name: k, "error_code": code}) for k in getattr(body, asked)]}))
        return respond(request, api.response(error_code=code))

    @staticmethod
    def _name_field(key: int, version: int, name: str) -> str:
        return "topic_id" if names_topics_by_id(key, version) else name

    def _topic(self, key: int, version: int, topic_key: Any) -> str | None:
        if names_topics_by_id(key, version):
            return self.topic_name(topic_key)
        return topic_key

    def _take_partitions(self, request: Request, layout: Layout) -> Response | None:
        key, version, body = request.api_key, request.api_version, request.body
        name = self._name_field(key, version, layout.req_name)
        taken: list[tuple[Any, int, int]] = []
        kept_topics = []
        with self._lock:
            for t in getattr(body, layout.req_topics):
                topic = self._topic(key, version, getattr(t, name))
                kept = []
                for p in getattr(t, layout.req_partitions):
                    index = layout.index(p)
                    stack = self._stacks.get((key, (topic, index))) if topic is not None else None
                    if stack:
                        taken.append((getattr(t, name), index, stack.popleft()))
                    else:
                        kept.append(p)
                if kept:
                    setattr(t, layout.req_partitions, kept)
                    kept_topics.append(t)
        if not taken:
            return None
        for topic_key, index, code in taken:
            log.info("Broker %d answers %s v%d for %s-%d from %s with injected %s", self.node_id,
                     api_name(key), version, topic_key, index, request.connection_id, E.for_code(code).name)
        setattr(body, layout.req_topics, kept_topics)
        request.injected = Injected(partitions=taken)
        if kept_topics:
            return None  # the rest is handled; ``overlay`` adds the taken partitions' errors
        return respond(request, APIS_BY_KEY[key].response())

    # --- added round-trip time ----------------------------------------------------------------

    def delays(self, request: Request) -> bool:
        return bool(self.rtt_ms) and not request.privileged

    def later(self, response: Response) -> None:
        """Send ``response`` once the added round-trip time has passed."""
        with self._lock:
            if self._stopping:
                due = 0.0
            else:
                due = time.monotonic() + self.rtt_ms / 1000
                heapq.heappush(self._delayed, (due, next(self._seq), response))
                self._wake.notify()
                return
        self.send_response(response)

    def _run_delayer(self) -> None:
        while True:
            with self._lock:
                while not self._stopping and (not self._delayed or self._delayed[0][0] > time.monotonic()):
                    self._wake.wait(self._delayed[0][0] - time.monotonic() if self._delayed else None)
                if self._stopping:
                    due = [r for _, _, r in sorted(self._delayed)]
                    self._delayed.clear()
                else:
                    due = [heapq.heappop(self._delayed)[2]]
            for response in due:
                try:
                    self.send_response(response)
                except Exception:  # the delayer never dies of one response
                    log.exception("Broker %d: a delayed response could not be sent", self.node_id)
            if self._stopping:
                return

    def shutdown(self) -> None:
        """Send what waits at once and stop the delayer."""
        with self._lock:
            self._stopping = True
            self._wake.notify()
            thread = self._delayer
        if thread is not None:
            thread.join(5)

