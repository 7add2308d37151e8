"""KafkaApis: a request's handler, looked up in the served-apis table (``apis.py``) and bound to
the area object that holds it (``handlers/``). Anything that goes wrong in a handler closes that
connection only."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafkalite.network.request_channel import CloseConnectionResponse, Request, Response
from kafkalite.protocol import api_name

from .apis import SERVED, ApiTable
from .config import BrokerConfig
from .coordinator.group_coordinator import GroupCoordinator
from .coordinator.producer_id_manager import ProducerIdManager
from .faults.injector import FaultInjector
from .handlers.api_versions import ApiVersionsApis
from .handlers.configs import ConfigApis, ConfigDescriber
from .handlers.control import ControlApis
from .handlers.fetch import FetchApis
from .handlers.groups import GroupApis
from .handlers.isr import IsrApis
from .handlers.metadata import AutoTopicCreator, MetadataApis
from .handlers.offsets import OffsetApis
from .handlers.produce import ProduceApis
from .handlers.producers import ProducerIdApis
from .handlers.registration import RegistrationApis
from .handlers.topics import TopicApis
from .metadata_cache import MetadataCache
from .purgatory import DelayedOperationPurgatory
from .replication.replica_manager import ReplicaManager
from .topic_configs import TopicConfigCache
from .topic_metrics import BrokerTopicStats

log = logging.getLogger("kafkalite.server.kafka_apis")


class KafkaApis:
    def __init__(self, *areas: object) -> None:
        """``areas``: one object of each handler class the served table names."""
        self.areas = areas
        self.faults: FaultInjector | None = None  # a test's faults (faults.py), set by the broker
        self.handlers: dict[int, Callable[[Request], Response | None]] = {}
        for s in SERVED:
            owner = next((a for a in areas if getattr(type(a), s.handler.__name__, None) is s.handler), None)
            if owner is None:
                raise ValueError(f"no area object for {s.name}'s handler {s.handler.__qualname__}")
            self.handlers[s.key] = getattr(owner, s.handler.__name__)

    def area(self, cls: type[Any]) -> Any:
        return next(a for a in self.areas if isinstance(a, cls))

    def handle(self, request: Request) -> Response | None:
        """The response, or None when the request waits (it is answered later, by whichever
        thread completes it)."""
        handler = self.handlers.get(request.api_key)
        if handler is None:
            log.warning("No handler for %s from %s; closing it", api_name(request.api_key),
                        request.connection_id)
            return CloseConnectionResponse(request)
        faults = self.faults
        if faults is not None and faults.active:
            return self._handle_with_faults(faults, handler, request)
        try:
            return handler(request)
        except Exception:  # one bad request closes its connection, nothing more
            log.exception("Error handling %s from %s; closing it", request.header, request.connection_id)
            return CloseConnectionResponse(request)

    def _handle_with_faults(self, faults: FaultInjector, handler: Callable[[Request], Response | None],
                            request: Request) -> Response | None:
        try:
            response = faults.before(request)
            if response is None:
                response = handler(request)
        except Exception:
            log.exception("Error handling %s from %s; closing it", request.header, request.connection_id)
            response = CloseConnectionResponse(request)
        if response is not None and faults.delays(request):
            faults.later(response)
            return None
        return response


def build_kafka_apis(metadata_cache: MetadataCache, replica_manager: ReplicaManager, controller: Any,
                     apis_for: ApiTable, topic_purgatory: DelayedOperationPurgatory,
                     send_response: Callable[[Response], None],
                     producer_ids: ProducerIdManager | None = None, config: BrokerConfig | None = None,
                     topic_configs: TopicConfigCache | None = None,
                     auto_create: AutoTopicCreator | None = None,
                     topic_stats: BrokerTopicStats | None = None,
                     group_coordinator: GroupCoordinator | None = None,
                     internal_topics: AutoTopicCreator | None = None) -> KafkaApis:
    """KafkaApis with one object of every area; ``controller`` None on a broker without the role;
    ``send_response`` answers a request that waited (from whichever thread completes it);
    ``producer_ids`` None gives no producer ids (the network benchmark's KafkaApis); ``config``
    is what DescribeConfigs shows (Kafka's defaults without it); ``topic_configs`` the topics'
    settings (only the controller's, if any, without it); ``auto_create`` None creates no topic
    for Metadata; ``topic_stats`` the BrokerTopicMetrics Produce and Fetch count into (their own
    without it); ``group_coordinator`` None serves no group (COORDINATOR_NOT_AVAILABLE)."""
    topic_stats = topic_stats or BrokerTopicStats()
    describer = ConfigDescriber(config or BrokerConfig({"node.id": str(replica_manager.node_id)}))
    if topic_configs is None:
        topic_configs = TopicConfigCache(describer.log_defaults, controller)
    metadata_cache.add_listener(topic_configs.on_metadata_change)
    topics = TopicApis(controller, metadata_cache, topic_purgatory, send_response, describer)
    metadata_cache.add_listener(topics.on_metadata_change)
    control = ControlApis(replica_manager, topic_configs, send_response)
    configs = ConfigApis(replica_manager.node_id, describer, topic_configs, metadata_cache, send_response)
    return KafkaApis(ApiVersionsApis(apis_for), MetadataApis(metadata_cache, auto_create), control, configs,
                     topics, RegistrationApis(controller, send_response), IsrApis(controller, send_response),
                     ProduceApis(replica_manager, send_response, topic_stats),
                     FetchApis(replica_manager, send_response, topic_stats),
                     OffsetApis(replica_manager), ProducerIdApis(producer_ids, controller, send_response),
                     GroupApis(group_coordinator, send_response, metadata_cache, internal_topics))
