"""Topic-level settings on a broker: each topic's overrides as this broker knows them
(``TopicConfigCache``). What the settings are (Kafka's names, types, bounds, broker-level synonyms
and meaning) is the storage's table, ``kafkalite.storage.config.TOPIC_SETTINGS``.

The controller keeps every topic's overrides (CreateTopics' configs, then AlterConfigs'), and pushes
a topic's new set to every broker when it changes (``update``: docs/configs.md). LeaderAndIsr carries none
(in ZooKeeper-era Kafka a broker read them from ZooKeeper), so a broker that is not the
controller asks the controller for them with DescribeConfigs when LeaderAndIsr first brings a
partition of the topic (or a client describes the topic), and keeps them until the topic leaves
its metadata. The asking is done on a thread of ``ControllerLink``, bounded by its timeout; the
request that needs the answer waits for it without holding a handler thread or any lock. On the
controller's own node the controller's copy is read directly and nothing is asked.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from kafkalite.clients.security import PLAINTEXT, ClientSecurity
from kafkalite.common.errors import ConfigError
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.api_keys import ApiKey
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log_manager import LogManager

from .controller_node import ControllerClient, ControllerNodeProvider, active, as_provider
from .metadata_cache import Snapshot

log = logging.getLogger("kafkalite.server.topic_configs")

DESCRIBE_CONFIGS_VERSION = 4
CONTROLLER_TIMEOUT = 5.0  # seconds a request to the controller may take (connect, send, answer)


class ControllerLink:
    """A broker's own requests to the controller beyond membership (Kafka's
    BrokerToControllerChannelManager): topic configs, auto-created topics and the client requests
    forwarded to the controller. Each ``lane`` is one thread with its own connection, one request
    at a time, so a CreateTopics waiting for metadata never holds up the configs a LeaderAndIsr
    waits for. Each request goes to the controller the broker's ControllerNodeProvider believes
    active, and to the next voter after a connection failure or a NOT_CONTROLLER answer (every
    voter tried once, then once more from the start on a fresh connection); each try is bounded
    by ``timeout``. Nothing here runs on a request handler thread."""

    # "alter-configs": AlterConfigs / IncrementalAlterConfigs forwarded (its client id,
    # broker-<id>-alter-configs, tells the controller's node the request was forwarded).
    # "alter-scram": AlterUserScramCredentials forwarded (server/handlers/scram.py).
    # "topics": CreateTopics, DeleteTopics and CreatePartitions forwarded (handlers/topics.py).
    LANES = ("configs", "creations", "alter-configs", "acls", "alter-scram",
             "client-quotas", "topics", "partitions")

    def __init__(self, node_id: int, controller: ControllerNodeProvider | tuple[str, int],
                 timeout: float = CONTROLLER_TIMEOUT, security: ClientSecurity = PLAINTEXT) -> None:
        self.provider = as_provider(controller)
        self._stopping = threading.Event()
        self._lanes: dict[str, tuple[concurrent.futures.ThreadPoolExecutor, ControllerClient]] = {
            lane: (concurrent.futures.ThreadPoolExecutor(1, f"broker-{node_id}-to-controller-{lane}"),
                   ControllerClient(self.provider, f"broker-{node_id}-{lane}", timeout, security=security))
            for lane in self.LANES}

    @property
    def address(self) -> tuple[str, int]:
        """The controller requests go to now."""
        return self.provider.current().address

    def submit(self, lane: str, api_key: int, version: int, body: Any) -> concurrent.futures.Future:
        """The future response; RuntimeError once shut down."""
        executor, client = self._lanes[lane]

        def call() -> Any:
            try:
                return client.send_and_receive(api_key, version, body)
            except OSError:
                if self._stopping.is_set():
                    raise
                # A connection the controller closed (say, it restarted, or an election moved
                # it): once more, anew.
                return client.send_and_receive(api_key, version, body)

        return executor.submit(call)

    def shutdown(self) -> None:
        """Stop every lane's thread: what they are sending fails at once (and is answered as failed)."""
        self._stopping.set()
        for executor, client in self._lanes.values():
            executor.shutdown(wait=False, cancel_futures=True)
            client.close()  # wakes a thread blocked on the socket
        for executor, _ in self._lanes.values():
            executor.shutdown(wait=True)


Fetched = Callable[[dict[str, dict[str, str] | None]], None]


class TopicConfigCache:
    """Each topic's config overrides as this broker knows them, and the LogConfig its logs get:
    the overrides over the broker's defaults (``defaults``, its log.* settings).

    ``controller`` is the controller on its own node (then everything is known locally);
    elsewhere ``link`` reaches it. ``log_manager``, once set, has its logs of a topic given the
    topic's settings when they are learned (logs loaded at startup, before the broker could ask)."""

    def __init__(self, defaults: LogConfig, controller: Any = None,
                 link: ControllerLink | None = None) -> None:
        self.defaults = defaults
        self.controller = controller
        self.link = link
        self.log_manager: LogManager | None = None
        self._lock = threading.Lock()
        self._known: dict[str, dict[str, str]] = {}
        # Bumped when a topic is forgotten, so that an answer asked for before does not come back.
        self._generation: dict[str, int] = {}

    @property
    def local(self) -> bool:
        """Whether this node's controller is the active one (then it knows every topic's)."""
        return active(self.controller) is not None

    def overrides(self, topic: str) -> dict[str, str] | None:
        """On the active controller's node, the topic's overrides (None: no such topic); elsewhere
        the ones learned (None: not asked for yet)."""
        controller = active(self.controller)
        if controller is not None:
            result: dict[str, str] | None = controller.topic_configs(topic)
            return result
        return self._known.get(topic)

    def log_config(self, topic: str) -> LogConfig:
        """The settings of the topic's logs: the overrides known now over the defaults (never
        waits; the ReplicaManager calls it under its lock)."""
        overrides = self.overrides(topic)
        if not overrides:
            return self.defaults
        try:
            return LogConfig.from_properties(overrides, self.defaults)
        except ConfigError as e:  # checked by the controller; a newer controller may know more names
            log.error("Topic %s: config overrides %s not applied (%s)", topic, overrides, e)
            return self.defaults

    def missing(self, topics: Iterable[str]) -> list[str]:
        """Which of ``topics`` this broker has to ask the controller about."""
        if self.local:
            return []
        return sorted({t for t in topics if t not in self._known})

    def fetch(self, topics: list[str], then: Fetched) -> None:
        """Ask the controller for ``topics``' overrides (on the link's thread); ``then`` gets
        {topic: overrides, or None for a topic the controller does not have}, leaving out the
        topics it got no answer for (the controller not reached in time). What is learned is kept,
        and applied to this broker's logs of the topic, before ``then`` is called."""
        with self._lock:
            generations = {t: self._generation.get(t, 0) for t in topics}
        R = dc.REQUEST
        body = R(resources=[R["resources"](resource_type=dc.RESOURCE_TOPIC, resource_name=t,
                                           configuration_keys=None) for t in topics])
        if self.link is None:
            then({})
            return
        try:
            future = self.link.submit("configs", ApiKey.DESCRIBE_CONFIGS, DESCRIBE_CONFIGS_VERSION, body)
        except RuntimeError:  # shutting down
            then({})
            return
        future.add_done_callback(lambda f: then(self._fetched(f, generations)))

    def _fetched(self, future: concurrent.futures.Future, generations: dict[str, int]) -> dict[str, Any]:
        try:
            response = future.result()
        except BaseException as e:
            log.warning("Could not get the configs of %s from the controller at %s:%d: %s",
                        ", ".join(generations), *(self.link.address if self.link else ("?", 0)), e)
            return {}
        found: dict[str, dict[str, str] | None] = {}
        for r in response.results:
            if r.error_code == E.NONE:
                found[r.resource_name] = {c.name: c.value for c in r.configs
                                          if c.config_source == dc.SOURCE_DYNAMIC_TOPIC_CONFIG
                                          and c.value is not None}
            elif r.error_code == E.UNKNOWN_TOPIC_OR_PARTITION:
                found[r.resource_name] = None
            else:
                log.warning("The controller refused the configs of %s: %s (%s)", r.resource_name,
                            E.BY_CODE[r.error_code].name if r.error_code in E.BY_CODE else r.error_code,
                            r.error_message)
        learned = []
        with self._lock:
            for topic, overrides in found.items():
                if overrides is not None and self._generation.get(topic, 0) == generations.get(topic):
                    self._known[topic] = overrides
                    learned.append(topic)
        for topic in learned:
            if self.log_manager is not None and self._known.get(topic):
                self.log_manager.update_config(topic, self.log_config(topic))
        return found

    def update(self, topic: str, overrides: dict[str, str]) -> None:
        """The controller's new complete set of the topic's overrides (its AlterConfigs push): kept,
        and this broker's logs of the topic reconfigured at once (kept on a controller's node
        too: its controller may stop being the active one)."""
        with self._lock:
            self._known[topic] = dict(overrides)
        if self.log_manager is not None:
            self.log_manager.update_config(topic, self.log_config(topic))

    def forget(self, topic: str) -> None:
        with self._lock:
            self._known.pop(topic, None)
            self._generation[topic] = self._generation.get(topic, 0) + 1

    def on_metadata_change(self, before: Snapshot, after: Snapshot) -> None:
        """A topic that left the metadata (deleted), or came back with another id, is forgotten:
        a topic created again under its name may have other overrides."""
        for name, info in before.topics.items():
            now = after.topics.get(name)
            if now is None or now.topic_id != info.topic_id:
                self.forget(name)
