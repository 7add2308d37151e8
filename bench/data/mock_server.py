"""librdkafka's mock cluster in a process of its own, so that it is measured as kafkalite is: a
server process that clients reach over loopback. An AdminClient configured with
``test.mock.num.brokers`` starts the mock brokers in its threads; their addresses (from its
Metadata) are printed one per line as ``id host:port``, then the process waits for SIGTERM.
Run as ``python -m kafkalite_bench.data.mock_server BROKERS``."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    from confluent_kafka.admin import AdminClient

    brokers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    admin = AdminClient({"test.mock.num.brokers": brokers, "bootstrap.servers": "unused:9092"})
    md = admin.list_topics(timeout=30)
    for b in sorted(md.brokers.values(), key=lambda b: b.id):
        print(f"{b.id} {b.host}:{b.port}", flush=True)
    print("ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
