"""The server-side assignors of consumer groups (Kafka's UniformAssignor and RangeAssignor), as
pure functions: the members' subscriptions (topic ids), the topics' partition counts and the
current target assignment in, the new target assignment out. Both are sticky: a partition stays
with its member when the balance allows."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

TopicId = uuid.UUID
Assignment = dict[TopicId, frozenset[int]]
Assignor = Callable[
    [Mapping[str, frozenset[TopicId]], Mapping[TopicId, int], Mapping[str, Assignment]], dict[str, Assignment]
]


def _as_assignment(owned: Mapping[TopicId, set[int]]) -> Assignment:
    return {t: frozenset(ps) for t, ps in owned.items() if ps}


def uniform(
    subscriptions: Mapping[str, frozenset[TopicId]],
    partitions: Mapping[TopicId, int],
    current: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """Every subscribed partition to one of its subscribers, the counts as even as the
    subscriptions allow (no member holds two more than one that could take it), current owners
    kept where that holds (Kafka's UniformAssignor: its optimized and general builders)."""
    members = sorted(subscriptions)
    owned: dict[str, dict[TopicId, set[int]]] = {m: {} for m in members}
    load = dict.fromkeys(members, 0)
    wanted = [
        (t, p)
        for t in sorted(partitions)
        for p in range(partitions[t])
        if any(t in subscriptions[m] for m in members)
    ]
    subscribers = {t: [m for m in members if t in subscriptions[m]] for t, _ in wanted}
    # Each member keeps its current partitions up to the even share (floor), then the members
    # holding more take the remainder's extra slots one each, so that a change moves as little
    # as the balance needs.
    total = len(wanted)
    floor, extra = divmod(total, len(members)) if members else (0, 0)
    surplus: dict[str, list[tuple[TopicId, int]]] = {m: [] for m in members}
    free: list[tuple[TopicId, int]] = []
    for t, p in wanted:
        keeper = next(
            (m for m in members if p in current.get(m, {}).get(t, ()) and t in subscriptions[m]), None
        )
        if keeper is not None and load[keeper] < floor:
            owned[keeper].setdefault(t, set()).add(p)
            load[keeper] += 1
        elif keeper is not None:
            surplus[keeper].append((t, p))
        else:
            free.append((t, p))
    for m in sorted(members, key=lambda x: (-len(surplus[x]), x)):
        if surplus[m] and extra > 0 and load[m] == floor:
            t, p = surplus[m].pop(0)
            owned[m].setdefault(t, set()).add(p)
            load[m] += 1
            extra -= 1
        free.extend(surplus[m])
    for t, p in free:
        m = min(subscribers[t], key=lambda x: (load[x], x))
        owned[m].setdefault(t, set()).add(p)
        load[m] += 1
    # Rebalance: move a partition from a member holding two more than another subscriber of it.
    moved = True
    while moved:
        moved = False
        for src in sorted(members, key=lambda x: -load[x]):
            for t in sorted(owned[src]):
                for p in sorted(owned[src][t]):
                    dst = min(subscribers[t], key=lambda x: (load[x], x))
                    if load[dst] + 1 < load[src]:
                        owned[src][t].discard(p)
                        owned[dst].setdefault(t, set()).add(p)
                        load[src] -= 1
                        load[dst] += 1
                        moved = True
    return {m: _as_assignment(owned[m]) for m in members}


def range_(
    subscriptions: Mapping[str, frozenset[TopicId]],
    partitions: Mapping[TopicId, int],
    current: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """Per topic, contiguous ranges to its subscribers in member-id order, the first ones one
    more when it does not divide (Kafka's RangeAssignor): members subscribed to the same
    co-partitioned topics get the same partition numbers of each."""
    members = sorted(subscriptions)
    owned: dict[str, dict[TopicId, set[int]]] = {m: {} for m in members}
    for t in sorted(partitions):
        subs = [m for m in members if t in subscriptions[m]]
        if not subs:
            continue
        n = partitions[t]
        share, extra = divmod(n, len(subs))
        start = 0
        for i, m in enumerate(subs):
            size = share + (1 if i < extra else 0)
            if size:
                owned[m][t] = set(range(start, start + size))
            start += size
    return {m: _as_assignment(owned[m]) for m in members}


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
