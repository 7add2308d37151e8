"""The metadata log's entries as Kafka writes them on the wire and in its log: v2 record batches.

Consecutive data entries of one epoch go in one batch (base offset = the first entry's offset,
partition leader epoch = the entries' epoch, one record each, value = the entry's data, no key);
a control entry is a control batch of its own, one record whose key is the control type
(LEADER_CHANGE, kafkalite's only control entry in the log) and whose value is the entry's data.

A LeaderChange control record's value is Kafka's LeaderChangeMessage, as the RaftNode puts it in
the entry's data (control.py); it is carried as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kafkalite.protocol.records import (
    ControlRecordType,
    Record,
    build_batch,
    decode_control_key,
    decode_records,
    encode_control_key,
    iter_batches,
    validate_batch,
)
from kafkalite.protocol.records.batch import Buffer

from .messages import Entry


def _runs(entries: Sequence[Entry]) -> Iterable[list[Entry]]:
    """Entries grouped as batches: a control entry alone, data entries by consecutive offsets of
    one epoch."""
    run: list[Entry] = []
    for e in entries:
        if run and (e.control or run[0].control or e.epoch != run[0].epoch or e.offset != run[-1].offset + 1):
            yield run
            run = []
        run.append(e)
    if run:
        yield run


def encode_entries(entries: Sequence[Entry], timestamp: int = 0) -> bytes:
    """The batches holding ``entries`` (in offset order), back to back."""
    out = bytearray()
    for run in _runs(entries):
        base = run[0].offset
        if run[0].control:
            records = [Record(0, 0, encode_control_key(ControlRecordType.LEADER_CHANGE), run[0].data)]
        else:
            records = [Record(e.offset - base, 0, None, e.data) for e in run]
        out += build_batch(records, base, base_timestamp=timestamp, max_timestamp=timestamp,
                           partition_leader_epoch=run[0].epoch, is_control=run[0].control)
    return bytes(out)


def decode_entries(buf: Buffer) -> list[Entry]:
    """The entries of whole batches in ``buf`` (a partial batch at the end is left out, as Kafka's
    fetchers do); CorruptRecordError for a batch that fails Kafka's checks."""
    entries: list[Entry] = []
    for pos, _ in iter_batches(buf):
        header = validate_batch(buf, pos, exact_count=False)
        for r in decode_records(buf, pos, header):
            offset = header.base_offset + r.offset_delta
            if header.is_control:
                decode_control_key(r.key)  # a corrupt key raises
            entries.append(Entry(offset, header.partition_leader_epoch, bytes(r.value or b""),
                                 header.is_control))
    return entries


def as_bytes(records: Any) -> bytes:
    """A decoded ``records`` field (a memoryview into the frame, or None) as bytes of its own."""
    return bytes(records) if records is not None else b""
