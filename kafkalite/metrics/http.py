"""The broker's Prometheus endpoint: ``GET /metrics`` on metrics.port (off when -1), served by
prometheus_client's own HTTP server thread from a registry holding this broker's collector and
the collectors every Python exporter serves: the process (memory, CPU, open files, start time),
the platform (Python's version) and Python's garbage collector."""

from __future__ import annotations

from typing import Any

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)

from .collector import BrokerCollector


class MetricsServer:
    def __init__(self, broker: Any, host: str, port: int) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(BrokerCollector(broker))
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=self.registry)
        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def shutdown(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
