"""Client quotas, as Kafka's ClientQuotaManager, ClientRequestQuotaManager and
ControllerMutationQuotaManager (KIP-13, KIP-55, KIP-124, KIP-219, KIP-599).

- Quota values per entity (``QuotaEntity``: a user, a client id, or both; a None name is that
  type's default entity, Kafka's ``<default>``), kept by ``ClientQuotas``: set by the controller's
  pushes of AlterClientQuotas (handlers/client_quotas.py), read by every quota manager.
- Which entity's quota a request counts against: Kafka's 8 levels, most specific first
  (``quota_metric_tags`` then ``quota_limit``, as DefaultQuotaCallback):
  /config/users/<user>/clients/<client-id>, /config/users/<user>/clients/<default>,
  /config/users/<user>, /config/users/<default>/clients/<client-id>,
  /config/users/<default>/clients/<default>, /config/users/<default>, /config/clients/<client-id>,
  /config/clients/<default>. The level found names the sensor (user and client-id tags) that every
  connection resolving to it shares.
- Rates: ``quota.window.num`` samples of ``quota.window.size.seconds`` (Kafka's Rate over a SampledStat:
  the window is the time since the oldest sample began, at least samples-1 full windows). Over the
  bound, the throttle time is Kafka's QuotaUtils.throttleTime: round((rate - bound) / bound x window ms);
  the request quota caps it at one window.
- controller_mutation_rate: a token bucket per sensor (Kafka's TokenBucket), burst = rate x samples x
  window seconds of ``controller.quota.window.*``; strict for the versions that carry
  THROTTLING_QUOTA_EXCEEDED (checked before recording: an empty bucket refuses), permissive before.
- ``Throttler``: Kafka's ThrottledChannel delay queue: a throttled connection is muted
  (StartThrottlingResponse, before its response) and unmuted once its throttle time is over
  (EndThrottlingResponse), KIP-219.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafkalite.common.config_def import Setting, at_least, fields_from
from kafkalite.controller.quotas import CLIENT_ID, IP, USER
from kafkalite.network.request_channel import EndThrottlingResponse, StartThrottlingResponse

log = logging.getLogger("kafkalite.server.client_quotas")

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"

QUOTA_SETTINGS: tuple[Setting, ...] = (
    Setting("quota.window.num", "int", 11,
            "The number of samples to retain in memory for client quotas.",
            validator=at_least(1), group="quotas"),
    Setting("quota.window.size.seconds", "int", 1,
            "The time span of each sample for client quotas.",
            validator=at_least(1), group="quotas"),
    Setting("controller.quota.window.num", "int", 11,
            "The number of samples to retain in memory for alter topics and partitions mutation quotas.",
            validator=at_least(1), group="quotas"),
    Setting("controller.quota.window.size.seconds", "int", 1,
            "The time span of each sample for controller mutations quotas.",
            validator=at_least(1), group="quotas"),
)

_field = fields_from(QUOTA_SETTINGS)


@dataclasses.dataclass(frozen=True)
class QuotaSettings:
    window_num: int = _field("quota.window.num")
    window_size_seconds: int = _field("quota.window.size.seconds")
    controller_window_num: int = _field("controller.quota.window.num")
    controller_window_size_seconds: int = _field("controller.quota.window.size.seconds")


# --- entities ---------------------------------------------------------------------------------

# An entity: ((type, name-or-None), ...) sorted by type; a None name is the default entity.
INT32_MAX = 2**31 - 1  # a Fetch's largest max_bytes
QuotaEntity = tuple[tuple[str, str | None], ...]
DEFAULT = None


ABSENT: Any = object()


def entity(user: str | None = ABSENT, client_id: str | None = ABSENT) -> QuotaEntity:
    """The entity of a user and/or a client id (left out: that type absent; None: its default)."""
    parts: list[tuple[str, str | None]] = []
    if client_id is not ABSENT:
        parts.append((CLIENT_ID, client_id))
    if user is not ABSENT:
        parts.append((USER, user))
    return tuple(sorted(parts))


def render(e: QuotaEntity) -> str:
    """Kafka's path form: users/<user>/clients/<client-id>, <default> for a default."""
    names = dict(e)
    out = []
    if USER in names:
        out.append(f"users/{names[USER] if names[USER] is not None else '<default>'}")
    if CLIENT_ID in names:
        out.append(f"clients/{names[CLIENT_ID] if names[CLIENT_ID] is not None else '<default>'}")
    if IP in names:
        out.append(f"ips/{names[IP] if names[IP] is not None else '<default>'}")
    return "/".join(out)


class ClientQuotas:
    """Entity -> {key: value}: the quotas a broker was told (the controller's pushes). Read from any
    thread: the mapping is replaced whole on each change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entities: Mapping[QuotaEntity, Mapping[str, float]] = {}
        # The keys some entity has: a quota type without any costs a set lookup per request.
        self.keys: frozenset[str] = frozenset()
        self._listeners: list[Callable[[], None]] = []

    def add_listener(self, fn: Callable[[], None]) -> None:
        self._listeners.append(fn)

    def replace(self, e: QuotaEntity, values: Mapping[str, float]) -> None:
        with self._lock:
            new = dict(self.entities)
            if values:
                new[e] = dict(values)
            else:
                new.pop(e, None)
            self.entities = new
            self.keys = frozenset(k for values in new.values() for k in values)
        for fn in self._listeners:
            fn()

    def value(self, e: QuotaEntity, key: str) -> float | None:
        values = self.entities.get(e)
        return None if values is None else values.get(key)


def quota_metric_tags(quotas: ClientQuotas, key: str, user: str, client_id: str) -> tuple[str, str]:
    """Kafka's DefaultQuotaCallback.quotaMetricTags: the (user, client-id) tags of the sensor a
    request of ``user`` and ``client_id`` counts in, from the most specific level with a quota."""
    def has(e: QuotaEntity) -> bool:
        return quotas.value(e, key) is not None

    if has(entity(user, client_id)) or has(entity(user, DEFAULT)):  # levels 1, 2
        return user, client_id
    if has(entity(user)):  # 3
        return user, ""
    if has(entity(DEFAULT, client_id)) or has(entity(DEFAULT, DEFAULT)):  # 4, 5
        return user, client_id
    if has(entity(DEFAULT)):  # 6
        return user, ""
    return "", client_id  # 7, 8


def quota_limit(quotas: ClientQuotas, key: str, tags: tuple[str, str]) -> float | None:
    """Kafka's DefaultQuotaCallback.quotaLimit: the bound of the sensor with these tags (None:
    unlimited)."""
    user, client_id = tags
    v = quotas.value
    candidates: list[QuotaEntity]
    if user and client_id:
        candidates = [entity(user, client_id), entity(user, DEFAULT), entity(DEFAULT, client_id),
                      entity(DEFAULT, DEFAULT)]
    elif user:
        candidates = [entity(user), entity(DEFAULT)]
    elif client_id:
        candidates = [entity(client_id=client_id), entity(client_id=DEFAULT)]
    else:
        return None
    for c in candidates:
        found = v(c, key)
        if found is not None:
            return found
    return None


def user_of(principal: str) -> str:
    """The sanitized user name of a principal ("User:alice" -> "alice")."""
    return principal.split(":", 1)[1] if ":" in principal else principal


# --- rates ------------------------------------------------------------------------------------


class Rate:
    """Kafka's Rate over a SampledStat of ``samples`` windows of ``window_ms``: sum of the samples
    kept / the window size (time since the oldest sample began, at least samples-1 full windows)."""

    __slots__ = ("_current", "_samples", "samples", "window_ms")

    def __init__(self, samples: int, window_ms: float) -> None:
        self.samples = samples
        self.window_ms = window_ms
        self._samples: list[list[float]] = []  # [start ms, value]
        self._current = 0

    def _purge(self, now: float) -> None:
        expire = self.samples * self.window_ms
        for s in self._samples:
            if now - s[0] >= expire:
                s[0], s[1] = now, 0.0

    def record(self, value: float, now: float) -> None:
        if not self._samples:
            self._samples.append([now, 0.0])
            self._current = 0
        current = self._samples[self._current]
        if now - current[0] >= self.window_ms:  # the next sample
            self._current = (self._current + 1) % self.samples
            if self._current >= len(self._samples):
                self._samples.append([now, 0.0])
            else:
                self._samples[self._current][0], self._samples[self._current][1] = now, 0.0
            current = self._samples[self._current]
        current[1] += value

    def window_size(self, now: float) -> float:
        self._purge(now)
        oldest = min((s[0] for s in self._samples), default=now)
        elapsed = now - oldest
        full = int(elapsed // self.window_ms)
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now: float) -> float:
        """Per second."""
        self._purge(now)
        total = sum(s[1] for s in self._samples)
        return total / (self.window_size(now) / 1000.0)


def throttle_time_ms(observed: float, bound: float, window_ms: float) -> int:
    """Kafka's QuotaUtils.throttleTime: how long until the rate is back at the bound."""
    if observed <= bound or bound <= 0:
        return 0
    return round((observed - bound) / bound * window_ms)


class TokenBucket:
    """Kafka's TokenBucket (KIP-599): ``rate`` tokens per second up to a burst of rate x samples x
    window seconds; recording takes tokens (the level may go below zero)."""

    __slots__ = ("burst_s", "last_ms", "tokens")

    def __init__(self, burst_s: float, rate: float, now: float) -> None:
        self.burst_s = burst_s
        self.tokens = rate * burst_s
        self.last_ms = now

    def measure(self, rate: float, now: float) -> float:
        burst = rate * self.burst_s
        self.tokens = min(burst, self.tokens + rate * max(0.0, now - self.last_ms) / 1000.0)
        self.last_ms = now
        return self.tokens

    def record(self, value: float, rate: float, now: float) -> None:
        self.measure(rate, now)
        self.tokens -= value


# --- managers ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Sensor:
    """The stats of one (user, client-id) tag pair: what metrics show."""

    tags: tuple[str, str]
    rate: Rate
    throttle_ms_total: float = 0.0
    throttled: int = 0
    last_throttle_ms: int = 0
    bucket: TokenBucket | None = None


class ClientQuotaManager:
    """One quota type's sensors (Kafka's ClientQuotaManager: Produce, Fetch; Request with
    ``request_percentage``): ``record`` adds a value for a (user, client id) and returns the
    throttle time in ms (0 when within the quota or unlimited)."""

    def __init__(self, kind: str, key: str, quotas: ClientQuotas, samples: int, window_s: int,
                 clock: Callable[[], float] = time.monotonic, max_throttle_ms: int | None = None) -> None:
        self.kind = kind  # Kafka's QuotaType: Produce, Fetch, Request
        self.key = key
        self.quotas = quotas
        self.samples = samples
        self.window_ms = window_s * 1000.0
        self.clock = clock
        self.max_throttle_ms = max_throttle_ms
        self._lock = threading.Lock()
        self.sensors: dict[tuple[str, str], Sensor] = {}
        # Which sensor a (user, client-id) counts in, until the quotas change.
        self._tags: dict[tuple[str, str], tuple[str, str]] = {}
        quotas.add_listener(self._tags.clear)

    def _now_ms(self) -> float:
        return self.clock() * 1000.0

    @property
    def enabled(self) -> bool:
        return self.key in self.quotas.keys

    def tags(self, user: str, client_id: str) -> tuple[str, str]:
        k = (user, client_id)
        found = self._tags.get(k)
        if found is None:
            found = self._tags[k] = quota_metric_tags(self.quotas, self.key, user, client_id)
        return found

    def _sensor(self, tags: tuple[str, str]) -> Sensor:
        s = self.sensors.get(tags)
        if s is None:
            s = self.sensors[tags] = Sensor(tags, Rate(self.samples, self.window_ms))
        return s

    def record(self, user: str, client_id: str, value: float) -> int:
        """Record ``value`` (bytes, or percent-seconds for the request quota); the throttle ms."""
        if not self.enabled:
            return 0
        tags = self.tags(user, client_id)
        bound = quota_limit(self.quotas, self.key, tags)
        now = self._now_ms()
        with self._lock:
            s = self._sensor(tags)
            s.rate.record(value, now)
            if bound is None:
                return 0
            ms = throttle_time_ms(s.rate.measure(now), bound, s.rate.window_size(now))
            if self.max_throttle_ms is not None:
                ms = min(ms, self.max_throttle_ms)
            return ms

    def unrecord(self, user: str, client_id: str, value: float) -> None:
        """Take back a value (a throttled Fetch's bytes, as Kafka's unrecordQuotaSensor)."""
        tags = self.tags(user, client_id)
        with self._lock:
            self._sensor(tags).rate.record(-value, self._now_ms())

    def throttled(self, user: str, client_id: str, ms: int) -> None:
        """Count a throttle of ``ms`` (the throttle-time metric)."""
        with self._lock:
            s = self._sensor(self.tags(user, client_id))
            s.throttle_ms_total += ms
            s.throttled += 1
            s.last_throttle_ms = ms

    def snapshot(self) -> list[tuple[str, str, float, float, int]]:
        """(user, client id, rate, throttle ms in all, throttles) per sensor: the metrics."""
        now = self._now_ms()
        with self._lock:
            return [(s.tags[0], s.tags[1], s.rate.measure(now), s.throttle_ms_total, s.throttled)
                    for s in self.sensors.values()]

    def byte_rate(self, tags: tuple[str, str]) -> float:
        with self._lock:
            s = self.sensors.get(tags)
            return 0.0 if s is None else s.rate.measure(self._now_ms())


class ThrottlingQuotaExceeded(Exception):
    def __init__(self, throttle_ms: int) -> None:
        super().__init__("The throttling quota has been exceeded.")
        self.throttle_ms = throttle_ms


class ControllerMutationQuotaManager(ClientQuotaManager):
    """controller_mutation_rate: partitions created or deleted per second, a token bucket."""

    def __init__(self, quotas: ClientQuotas, samples: int, window_s: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__("ControllerMutation", CONTROLLER_MUTATION_RATE, quotas, samples, window_s, clock)
        self.burst_s = samples * window_s

    def record_mutation(self, user: str, client_id: str, permits: float, strict: bool) -> int:
        """Take ``permits`` partitions. Strict: ThrottlingQuotaExceeded if the bucket is already
        empty (nothing taken). Returns the throttle ms after (-tokens / rate x 1000 when below 0)."""
        if not self.enabled:
            return 0
        tags = self.tags(user, client_id)
        rate = quota_limit(self.quotas, self.key, tags)
        if rate is None:
            return 0
        now = self._now_ms()
        with self._lock:
            s = self._sensor(tags)
            if s.bucket is None:
                s.bucket = TokenBucket(self.burst_s, rate, now)
            tokens = s.bucket.measure(rate, now)
            if strict and tokens < 0:
                raise ThrottlingQuotaExceeded(round(-tokens / rate * 1000))
            s.bucket.record(permits, rate, now)
            s.rate.record(permits, now)
            left = s.bucket.tokens
            return round(-left / rate * 1000) if left < 0 else 0


# --- throttled channels -----------------------------------------------------------------------


class Throttler:
    """Kafka's ThrottledChannel delay queue (KIP-219): ``throttle`` mutes a connection at once
    (StartThrottlingResponse, sent before the request's response) and unmutes it after ``ms``
    (EndThrottlingResponse) from its own thread."""

    def __init__(self, send: Callable[[Any], None], clock: Callable[[], float] = time.monotonic) -> None:
        self.send = send
        self.clock = clock
        self._heap: list[tuple[float, int, Any]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="ThrottledChannelReaper", daemon=True)
        self._thread.start()

    def throttle(self, request: Any, ms: int) -> None:
        if ms <= 0:
            return
        self.send(StartThrottlingResponse(request))
        with self._cond:
            heapq.heappush(self._heap, (self.clock() + ms / 1000.0, next(self._seq), request))
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (not self._heap or self._heap[0][0] > self.clock()):
                    self._cond.wait(None if not self._heap else max(0.0, self._heap[0][0] - self.clock()))
                if self._stopped:
                    return
                _, _, request = heapq.heappop(self._heap)
            try:
                self.send(EndThrottlingResponse(request))
            except Exception:
                log.exception("Could not end the throttling of %s", request.connection_id)

    def close(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(5)


# --- the broker's quotas ------------------------------------------------------------------------


class QuotaManagers:
    """Kafka's QuotaFactory.QuotaManagers for one broker: Produce, Fetch, Request and
    ControllerMutation, over one ClientQuotas, with the Throttler."""

    def __init__(self, settings: QuotaSettings, send: Callable[[Any], None],
                 clock: Callable[[], float] = time.monotonic,
                 node_listeners: frozenset[str] = frozenset()) -> None:
        self.quotas = ClientQuotas()
        self.node_listeners = node_listeners  # controller.listener.names: other nodes' requests
        n, w = settings.window_num, settings.window_size_seconds
        self.produce = ClientQuotaManager("Produce", PRODUCER_BYTE_RATE, self.quotas, n, w, clock)
        self.fetch = ClientQuotaManager("Fetch", CONSUMER_BYTE_RATE, self.quotas, n, w, clock)
        self.request = ClientQuotaManager("Request", REQUEST_PERCENTAGE, self.quotas, n, w, clock,
                                          max_throttle_ms=w * 1000)
        self.controller_mutation = ControllerMutationQuotaManager(
            self.quotas, settings.controller_window_num, settings.controller_window_size_seconds, clock)
        self.throttler = Throttler(send, clock)

    def close(self) -> None:
        self.throttler.close()

    @staticmethod
    def who(request: Any) -> tuple[str, str]:
        return user_of(request.principal), request.header.client_id or ""

    def max_value_in_window(self, manager: ClientQuotaManager, request: Any) -> int:
        """Kafka's getMaxValueInQuotaWindow: quota x (samples - 1) x window seconds (a fetch
        never returns more, so that one response can pass the quota)."""
        user, client_id = self.who(request)
        bound = quota_limit(self.quotas, manager.key, manager.tags(user, client_id))
        if bound is None:
            return INT32_MAX
        return int(min(INT32_MAX, bound * (manager.samples - 1) * manager.window_ms / 1000))

    def exempt(self, request: Any) -> bool:
        """Requests of other nodes (the privileged listener, controller listeners) are exempt,
        as Kafka's cluster-action requests."""
        return bool(request.privileged) or request.listener in self.node_listeners

    def on_response(self, request: Any, body: Any) -> None:
        """Called as a response is encoded: the request quota on the handler's time (KIP-124),
        the larger of it and what the handler set (Produce, Fetch) becomes the response's
        throttle_time_ms, and the connection is muted for it."""
        if self.exempt(request):
            return
        user, client_id = self.who(request)
        ms = int(getattr(body, "throttle_time_ms", 0) or 0)
        if self.request.enabled:
            thread_ns = request.thread_ns or max(0, time.monotonic_ns() - request.dequeue_ns)
            req_ms = self.request.record(user, client_id, thread_ns * 100 / 1e9)
            if req_ms > 0:
                self.request.throttled(user, client_id, req_ms)
            ms = max(ms, req_ms)
        if ms > 0:
            body.throttle_time_ms = ms
            self.throttler.throttle(request, ms)
