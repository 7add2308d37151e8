"""Kafka's SimpleAssignor (``simple``, the share groups' server-side assignor): partitions are
shared, not owned, so every subscribed partition has at least one member and every member at
least one partition when there are partitions:

- fewer members than partitions: each partition goes to one member, round robin over the
  members in id order (members get about as many partitions each);
- at least as many members as partitions: each member gets one partition, round robin over the
  partitions (a partition is shared by about members / partitions members; one partition:
  every member has it).

Subscriptions that differ are assigned topic by topic among the members subscribed to each
(Kafka's heterogeneous builder does the same per topic). Kafka also keeps members' previous
partitions where it can; here the answer depends only on the members and partitions.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

TopicPartitions = dict[uuid.UUID, list[int]]


def assign(subscriptions: Mapping[str, frozenset[str]], topics: Mapping[str, tuple[uuid.UUID, int]]
           ) -> dict[str, TopicPartitions]:
    """{member id: {topic id: partitions}} for members subscribed to topic names, given the
    topics that exist ({name: (topic id, partition count)})."""
    out: dict[str, TopicPartitions] = {m: {} for m in subscriptions}
    for name in sorted({t for s in subscriptions.values() for t in s}):
        if name not in topics:
            continue
        topic_id, count = topics[name]
        members = sorted(m for m, s in subscriptions.items() if name in s)
        if not members or count <= 0:
            continue
        if len(members) < count:
            for p in range(count):
                out[members[p % len(members)]].setdefault(topic_id, []).append(p)
        else:
            for i, m in enumerate(members):
                out[m].setdefault(topic_id, []).append(i % count)
    return {m: {t: sorted(ps) for t, ps in a.items()} for m, a in out.items()}
