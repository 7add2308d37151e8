"""The broker's HTTP port (metrics.port, off when -1): ``GET /metrics`` in Prometheus' format, from
a registry holding this broker's collector and the collectors every Python exporter serves: the
process (memory, CPU, open files, start time), the platform (Python's version) and Python's
garbage collector. ``POST /faults`` takes a JSON object and answers one: the faults a test injects
(kafkalite/server/faults/operations.py), when the broker gives a handler for them."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import prometheus
from .collector import BrokerCollector
from .prometheus import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector, generate_latest
from .registry import MetricsRegistry

log = logging.getLogger("kafkalite.metrics.http")

MAX_POST_BYTES = 1 << 20

JsonHandler = Callable[[dict], Any]


class JsonError(Exception):
    """A request the handler refuses: answered 400 with ``{"error": str(e)}``."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    registry: CollectorRegistry | None
    post_handlers: dict[str, JsonHandler]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        registry = self.server.registry
        if registry is None or self.path.split("?")[0] not in ("/metrics", "/"):
            self._send(404, b"not found\n", "text/plain")
            return
        self._send(200, generate_latest(registry), prometheus.CONTENT_TYPE_LATEST)

    def do_POST(self) -> None:
        handler = self.server.post_handlers.get(self.path)
        if handler is None:
            self._json(404, {"error": f"no {self.path} here"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_POST_BYTES:
            self._json(413, {"error": "request too large"})
            return
        try:
            args = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(args, dict):
                raise JsonError("the body is a JSON object")
            self._json(200, {"result": handler(args)})
        except (JsonError, ValueError, KeyError, TypeError) as e:
            self._json(400, {"error": str(e) or type(e).__name__})
        except Exception as e:  # a handler's bug answers 500 and is logged; the server goes on
            log.exception("POST %s failed", self.path)
            self._json(500, {"error": f"{type(e).__name__}: {e}"})

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode() + b"\n", "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class JsonHttpServer:
    """A small HTTP server on its own thread: optional Prometheus metrics and JSON POST routes."""

    def __init__(self, host: str, port: int, registry: CollectorRegistry | None = None,
                 post_handlers: dict[str, JsonHandler] | None = None, *, name: str) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.registry = registry
        self._server.post_handlers = dict(post_handlers or {})
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=name, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def shutdown(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


class MetricsServer(JsonHttpServer):
    """``metrics``: the broker's registry, read at each scrape; ``node_id`` names the thread."""

    def __init__(self, metrics: MetricsRegistry, node_id: int, host: str, port: int,
                 post_handlers: dict[str, JsonHandler] | None = None) -> None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(BrokerCollector(metrics))
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=registry)
        self.registry = registry
        super().__init__(host, port, registry, post_handlers, name=f"metrics-http-{node_id}")
