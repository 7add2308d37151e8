"""Raw share-group requests for the wire-level tests, at v1 (what librdkafka 2.16 sends):
ShareGroupHeartbeat, ShareFetch and ShareAcknowledge on partition 0 of one topic, built from the
protocol's own messages, and what a ShareFetch answer acquired."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from kafkalite.protocol import ApiKey
from kafkalite.protocol.messages import share_acknowledge, share_fetch
from kafkalite.protocol.messages import share_group_heartbeat as share_hb

FETCH = share_fetch.REQUEST
ACK = share_acknowledge.REQUEST

# (first offset, last offset, acknowledge type or one type per offset): 1 ACCEPT, 2 RELEASE, 3 REJECT.
Acks = Sequence[tuple[int, int, int | Sequence[int]]]


def share_heartbeat(c: Any, group: str, member: str, epoch: int, topic: str | None = None) -> Any:
    return c.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, share_hb.REQUEST(
        group_id=group, member_id=member, member_epoch=epoch,
        subscribed_topic_names=[topic] if topic else None))


def _batches(batch: Any, acks: Acks) -> list[Any]:
    return [batch(first_offset=f, last_offset=last, acknowledge_types=[t] if isinstance(t, int) else list(t))
            for f, last, t in acks]


def fetch_request(group: str, member: str, epoch: int, tid: uuid.UUID | None, acks: Acks = (),
                  max_wait_ms: int = 0, max_records: int = 100) -> Any:
    """A ShareFetch of partition 0 of topic ``tid`` (of no partition if None: a session's close)."""
    P = FETCH["topics"]["partitions"]
    topics = [] if tid is None else [FETCH["topics"](topic_id=tid, partitions=[P(
        partition_index=0, acknowledgement_batches=_batches(P["acknowledgement_batches"], acks))])]
    return FETCH(group_id=group, member_id=member, share_session_epoch=epoch, max_wait_ms=max_wait_ms,
                 min_bytes=1, max_bytes=1 << 20, max_records=max_records, batch_size=max_records,
                 topics=topics)


def call_share_fetch(c: Any, group: str, member: str, epoch: int, tid: uuid.UUID | None, acks: Acks = (),
                     max_wait_ms: int = 0, max_records: int = 100) -> Any:
    request = fetch_request(group, member, epoch, tid, acks, max_wait_ms, max_records)
    return c.call(ApiKey.SHARE_FETCH, 1, request)


def call_share_acknowledge(c: Any, group: str, member: str, epoch: int, tid: uuid.UUID, acks: Acks) -> Any:
    P = ACK["topics"]["partitions"]
    return c.call(ApiKey.SHARE_ACKNOWLEDGE, 1, ACK(
        group_id=group, member_id=member, share_session_epoch=epoch,
        topics=[ACK["topics"](topic_id=tid, partitions=[P(
            partition_index=0, acknowledgement_batches=_batches(P["acknowledgement_batches"], acks))])]))


def acquired_batches(response: Any) -> list[tuple[int, int, int]]:
    """(first offset, last offset, delivery count) of each range the answer acquired."""
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in response.responses for p in t.partitions for a in p.acquired_records]


def acquired_ranges(response: Any) -> list[tuple[int, int]]:
    return [(first, last) for first, last, _ in acquired_batches(response)]


def acquired_offsets(response: Any) -> list[int]:
    return [o for first, last in acquired_ranges(response) for o in range(first, last + 1)]


def only_partition(response: Any) -> Any:
    (t,) = response.responses
    (p,) = t.partitions
    return p
