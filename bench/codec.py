"""Codec benchmark: kafkalite's generated encoders/decoders against kio, in one run.

Each case builds one message with kafkalite, gets the same message as a kio entity by decoding
kafkalite's bytes with kio (so both sides hold the same values), then times encode and decode of
each side in turn. Times are best-of-``repeat`` per operation; the ratio is kio / kafkalite
(> 1 means kafkalite is faster).
"""

from __future__ import annotations

import importlib
import io
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.protocol import decode_body, encode_body
from kafkalite.protocol.messages import api_versions, metadata, update_metadata

from .markdown import machine, write_section

# Every api key Apache Kafka 3.9 defines, so the ApiVersions case is the size a real broker sends.
KAFKA_API_KEYS = [*range(0, 52), *range(55, 59), 60, 61, *range(64, 70), 71, 72, 74, 75]


@dataclass
class Case:
    name: str
    api_key: int
    version: int
    response: bool
    value: object
    kio_module: str | None  # kio's module path for the entity, None where kio lacks the api
    kio_class: str | None


def _api_versions_case() -> Case:
    item = api_versions.RESPONSE["api_keys"]
    value = api_versions.RESPONSE(
        error_code=0, throttle_time_ms=0,
        api_keys=[item(api_key=k, min_version=0, max_version=9) for k in KAFKA_API_KEYS],
    )
    return Case(f"ApiVersions v3 response, {len(KAFKA_API_KEYS)} keys", 18, 3, True, value,
                "kio.schema.api_versions.v3.response", "ApiVersionsResponse")


def _metadata_case(topics: int = 100, partitions: int = 10) -> Case:
    r = metadata.RESPONSE
    broker, topic = r["brokers"], r["topics"]
    part = topic["partitions"]
    value = r(
        throttle_time_ms=0,
        brokers=[broker(node_id=i, host="127.0.0.1", port=9092 + i, rack=None) for i in range(3)],
        cluster_id="kafkalite-bench-cluster", controller_id=0,
        topics=[
            topic(
                error_code=0, name=f"topic-{t:04d}", topic_id=uuid.UUID(int=t + 1), is_internal=False,
                partitions=[
                    part(error_code=0, partition_index=p, leader_id=p % 3, leader_epoch=0,
                         replica_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3],
                         isr_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3], offline_replicas=[])
                    for p in range(partitions)
                ],
                topic_authorized_operations=-2147483648,
            )
            for t in range(topics)
        ],
    )
    return Case(f"Metadata v12 response, {topics} topics x {partitions} partitions", 3, 12, True,
                value, "kio.schema.metadata.v12.response", "MetadataResponse")


def _update_metadata_case(partitions: int = 1000) -> Case:
    r = update_metadata.REQUEST
    topic_state = r["topic_states"]
    pstate = topic_state["partition_states"]
    broker = r["live_brokers"]
    endpoint = broker["endpoints"]
    per_topic = 10
    value = r(
        controller_id=0, controller_epoch=1, broker_epoch=5,
        topic_states=[
            topic_state(
                topic_name=f"topic-{t:04d}", topic_id=uuid.UUID(int=t + 1),
                partition_states=[
                    pstate(partition_index=p, controller_epoch=1, leader=p % 3,
                           leader_epoch=0, isr=[0, 1, 2], zk_version=0, replicas=[0, 1, 2],
                           offline_replicas=[])
                    for p in range(per_topic)
                ],
            )
            for t in range(partitions // per_topic)
        ],
        live_brokers=[
            broker(id=i, endpoints=[endpoint(port=9092 + i, host="127.0.0.1", listener="PLAINTEXT",
                                             security_protocol=0)], rack=None)
            for i in range(3)
        ],
    )
    return Case(f"UpdateMetadata v8 request, {partitions} partitions", 6, 8, False, value, None, None)


def cases() -> list[Case]:
    return [_api_versions_case(), _metadata_case(), _update_metadata_case()]


def _best_us(fn: Callable[[], object], seconds: float, repeat: int) -> float:
    """Best per-call time in microseconds over ``repeat`` timed batches of about ``seconds``."""
    fn()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds / 10:  # calibrate the batch size
        fn()
        n += 1
    batch = max(1, n * 10 // repeat)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        best = min(best, (time.perf_counter() - t0) / batch)
    return best * 1e6


@dataclass
class Result:
    case: str
    size: int
    ours_encode: float
    ours_decode: float
    kio_encode: float | None
    kio_decode: float | None


def measure(case: Case, seconds: float, repeat: int) -> Result:
    data = encode_body(case.api_key, case.version, case.value, response=case.response)
    assert decode_body(case.api_key, case.version, data, response=case.response) == case.value
    ours_enc = _best_us(lambda: encode_body(case.api_key, case.version, case.value,
                                            response=case.response), seconds, repeat)
    ours_dec = _best_us(lambda: decode_body(case.api_key, case.version, data,
                                            response=case.response), seconds, repeat)
    kio_enc = kio_dec = None
    if case.kio_module:
        from kio.serial import entity_reader, entity_writer

        cls = getattr(importlib.import_module(case.kio_module), case.kio_class or "")
        read, write = entity_reader(cls), entity_writer(cls)
        entity, size = read(data, 0)
        assert size == len(data), "kio did not read the whole body"

        def kio_encode() -> bytes:
            buf = io.BytesIO()
            write(buf, entity)
            return buf.getvalue()

        assert kio_encode() == data, "kio writes different bytes for the same values"
        kio_enc = _best_us(kio_encode, seconds, repeat)
        kio_dec = _best_us(lambda: read(data, 0), seconds, repeat)
    return Result(case.name, len(data), ours_enc, ours_dec, kio_enc, kio_dec)


def _ratio(kio: float | None, ours: float) -> str:
    return "n/a" if kio is None else f"{kio / ours:.2f}x"


def _fmt(us: float | None) -> str:
    return "n/a" if us is None else f"{us:,.1f}"


def table(results: list[Result]) -> str:
    lines = [
        "| case | bytes | kafkalite encode us | kio encode us | encode speed-up | kafkalite decode us "
        "| kio decode us | kio/kafkalite decode |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r.case} | {r.size:,} | {_fmt(r.ours_encode)} | {_fmt(r.kio_encode)} | "
            f"{_ratio(r.kio_encode, r.ours_encode)} | {_fmt(r.ours_decode)} | {_fmt(r.kio_decode)} | "
            f"{_ratio(r.kio_decode, r.ours_decode)} |"
        )
    return "\n".join(lines)


def run(seconds: float = 1.0, repeat: int = 5, write_md: str | None = None) -> list[Result]:
    results = []
    for case in cases():
        print(f"measuring {case.name} ...", flush=True)
        results.append(measure(case, seconds, repeat))
    text = table(results)
    print(text)
    if write_md:
        write_section(write_md, "codec", _section(text, seconds, repeat))
        print(f"wrote {write_md}")
    return results


def _section(text: str, seconds: float, repeat: int) -> str:
    kio_version = importlib.import_module("kio").__version__ if _has_kio() else "absent"
    return (
        "## Codec: kafkalite against kio\n\n"
        f"Command: `kafkalite bench codec --seconds {seconds:g} --repeat {repeat} --write "
        "docs/benchmarks.md`  \n"
        f"Machine: {machine()}; kio {kio_version} (native reader).  \n"
        f"Measured: {time.strftime('%Y-%m-%d')}. Best of {repeat} batches per operation, "
        "microseconds per whole-body encode or decode; ratios are kio time / kafkalite time.\n\n"
        f"{text}\n\n"
        "kio 0.6.5 no longer has UpdateMetadata, so that case has no peer figure.\n"
    )


def _has_kio() -> bool:
    try:
        importlib.import_module("kio")
    except ImportError:
        return False
    return True
