"""A broker's Prometheus endpoint read over HTTP, and the samples of one metric picked out."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def scrape_text(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return str(r.read().decode())


def scrape(port: int) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(scrape_text(port))}


def found(samples: list, name: str, **labels: str) -> list[float]:
    return [s.value for s in samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]


def value(samples: list, name: str, **labels: str) -> float:
    hits = found(samples, name, **labels)
    assert len(hits) == 1, (name, labels, samples)
    return hits[0]
