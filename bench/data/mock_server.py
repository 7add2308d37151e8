"""librdkafka's mock cluster in a process of its own, so that it is measured as kafkalite is: a
server process that clients reach over loopback. An AdminClient configured with
``test.mock.num.brokers`` starts the mock brokers in its threads; their addresses (from its
Metadata) are printed one per line as ``id host:port``, then the process waits for SIGTERM.
Run as ``python -m kafkalite_bench.data.mock_server BROKERS [SETTING=VALUE ...] [topic:NAME=PARTITIONS ...]``.

The mock's group settings are not client properties: they are set through librdkafka's C mock API
(rdkafka_mock.h), called with ctypes on the librdkafka that confluent-kafka bundles. With settings
the cluster is made that way (``rd_kafka_new`` with ``test.mock.num.brokers``, as the AdminClient
does) so that its handle can be passed to the setters in ``MOCK_SETTINGS``, and topics of more
than the 4 partitions its auto-creation makes are made with ``rd_kafka_mock_topic_create`` (the
mock serves no CreateTopics)."""

from __future__ import annotations

import ctypes
import glob
import os
import signal
import sys
from collections.abc import Callable

# setting -> (the C setter, how the value is given to it)
MOCK_SETTINGS: dict[str, tuple[str, Callable[[str], int]]] = {
    "group.initial.rebalance.delay.ms": ("rd_kafka_mock_group_initial_rebalance_delay_ms", int),
    "group.consumer.heartbeat.interval.ms": ("rd_kafka_mock_set_group_consumer_heartbeat_interval_ms", int),
    "group.consumer.session.timeout.ms": ("rd_kafka_mock_set_group_consumer_session_timeout_ms", int),
    "group.share.heartbeat.interval.ms": ("rd_kafka_mock_sharegroup_set_heartbeat_interval", int),
    "group.share.record.lock.duration.ms": ("rd_kafka_mock_sharegroup_set_record_lock_duration", int),
    # the group config share.auto.offset.reset, for every share group of the mock: 0 latest, 1 earliest
    "share.auto.offset.reset": ("rd_kafka_mock_sharegroup_set_auto_offset_reset",
                                lambda v: {"latest": 0, "earliest": 1}[v]),
}


def librdkafka() -> ctypes.CDLL:
    """The librdkafka confluent-kafka was built with (its wheel bundles it)."""
    import confluent_kafka

    site = os.path.dirname(os.path.dirname(confluent_kafka.__file__))
    found = glob.glob(os.path.join(site, "confluent_kafka.libs", "librdkafka*.so*"))
    lib = ctypes.CDLL(found[0] if found else "librdkafka.so.1")
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_handle_mock_cluster.restype = ctypes.c_void_p
    lib.rd_kafka_handle_mock_cluster.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    for name, _ in MOCK_SETTINGS.values():
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _with_settings(brokers: int, settings: dict[str, str]) -> list[str]:
    lib = librdkafka()
    err = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    if lib.rd_kafka_conf_set(conf, b"test.mock.num.brokers", str(brokers).encode(), err, 512) != 0:
        raise SystemExit(err.value.decode())
    rk = lib.rd_kafka_new(0, conf, err, 512)  # RD_KAFKA_PRODUCER; it keeps the mock cluster
    if not rk:
        raise SystemExit(err.value.decode())
    mcluster = lib.rd_kafka_handle_mock_cluster(rk)
    for key, value in settings.items():
        if key.startswith("topic:"):
            if lib.rd_kafka_mock_topic_create(mcluster, key[len("topic:"):].encode(), int(value), 1) != 0:
                raise SystemExit(f"could not make {key}")
            continue
        setter, convert = MOCK_SETTINGS[key]
        getattr(lib, setter)(mcluster, convert(value))
    bootstraps = lib.rd_kafka_mock_cluster_bootstraps(mcluster).decode().split(",")
    return [f"{i} {address}" for i, address in enumerate(bootstraps, 1)]


def main() -> None:
    brokers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    settings = dict(arg.split("=", 1) for arg in sys.argv[2:])
    unknown = {k for k in settings if not k.startswith("topic:")} - set(MOCK_SETTINGS)
    if unknown:
        raise SystemExit(f"unknown mock settings: {', '.join(sorted(unknown))}")
    if settings:
        lines = _with_settings(brokers, settings)
    else:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"test.mock.num.brokers": brokers, "bootstrap.servers": "unused:9092"})
        md = admin.list_topics(timeout=30)
        lines = [f"{b.id} {b.host}:{b.port}" for b in sorted(md.brokers.values(), key=lambda b: b.id)]
    for line in lines:
        print(line, flush=True)
    print("ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
