"""The share-partition machine (test_share_partition_machine.py) with its state written to a share
coordinator as its leader writes it (every acknowledgement, release and expiry: the offsets
changed and the start offset, over a list of __share_group_state records), and one more step:
the leader fails over. The new leader's SharePartition loads the state from a new share
coordinator that replayed those records (snapshots and updates), at the next leader epoch.

What must hold across a failover (Kafka's guarantees; an acquisition is not written, so its lock
and its delivery count may be lost): the start offset is where it was; an ACKNOWLEDGED or
ARCHIVED record stays so; a record not done with stays not done with (AVAILABLE, its delivery
count at most what it was); and the machine's invariants go on holding after it."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.share.persister import ReadStateResult, ShareStateKey
from kafkalite.server.share.share_partition import AckBatch, AckType, RecordState, SharePartition
from kafkalite.server.share_coordinator.coordinator import ShareCoordinator
from kafkalite.server.share_coordinator.settings import ShareCoordinatorConfig

from .test_share_partition_machine import LIMIT, LOCK_MS, LOCKS, Model, SharePartitionMachine

S = RecordState
KEY = ShareStateKey("g", bytes(16), 0)
TERMINAL = (S.ACKNOWLEDGED, S.ARCHIVED)


class ListStore:
    """__share_group_state's one partition: its records, appended at once."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []

    def append(self, index: int, records: list[tuple[bytes, bytes | None]], done) -> None:  # type: ignore[no-untyped-def]
        self.records.extend(records)
        done(E.NONE)


def coordinator(store: ListStore) -> ShareCoordinator:
    """A share coordinator that loaded the partition's records (as a new one does)."""
    c = ShareCoordinator(ShareCoordinatorConfig(num_partitions=1, updates_per_snapshot=4), store)
    c.begin_loading(0)
    c.load(0, list(store.records))
    return c


def answer(fn, *args):  # type: ignore[no-untyped-def]
    got: list = []
    fn(*args, got.append)
    assert len(got) == 1
    return got[0]


class WrittenSharePartition(SharePartition):
    """A SharePartition whose leader writes each change as SharePartitionManager does."""

    def __init__(self, machine: SharePartitionFailoverMachine) -> None:
        super().__init__(lambda: LOCK_MS, LIMIT, LOCKS, lambda: machine.now)
        self.machine = machine

    def _written(self, changed: list[int]) -> list[int]:
        if changed:
            m = self.machine
            error = answer(m.coordinator.write_state, KEY, self.state_epoch, m.leader_epoch,
                           self.start_offset, self.state_batches(changed))
            assert error == E.NONE
        return changed

    def acknowledge(self, member_id: str, batches: list[AckBatch]) -> tuple[int, list[int]]:
        error, changed = super().acknowledge(member_id, batches)
        return error, self._written(changed)

    def release_member(self, member_id: str) -> list[int]:
        return self._written(super().release_member(member_id))

    def expire_locks(self) -> list[int]:
        return self._written(super().expire_locks())


class SharePartitionFailoverMachine(SharePartitionMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = ListStore()
        self.coordinator = coordinator(self.store)
        self.leader_epoch = 0
        assert answer(self.coordinator.initialize_state, KEY, 0, 0) == E.NONE
        self.sp = WrittenSharePartition(self)
        self.sp.load(0, 0, [])

    @precondition(lambda self: any(r.state is S.ACQUIRED for r in self.sp.records.values()))
    @rule(data=st.data(), ack=st.sampled_from([AckType.ACCEPT, AckType.RELEASE, AckType.REJECT]),
          length=st.integers(1, 3))
    def acknowledge_held(self, data: st.DataObject, ack: AckType, length: int) -> None:
        """An acknowledgement of records a member holds (the base rule's random ranges seldom
        are), so that records done with lie above ones in flight when the leader fails over."""
        held = sorted(o for o, r in self.sp.records.items() if r.state is S.ACQUIRED)
        first = data.draw(st.sampled_from(held))
        member = self.sp.records[first].member_id
        assert member is not None
        self.acknowledge(member, first, length, [ack], True)

    @rule()
    def fail_over(self) -> None:
        self.leader_epoch += 1
        self.coordinator = coordinator(self.store)  # the coordinator moved too
        read: ReadStateResult = answer(self.coordinator.read_state, KEY, self.leader_epoch)
        assert read.error == E.NONE
        new = WrittenSharePartition(self)
        new.load(read.state_epoch, read.start_offset, read.batches)
        old = self.sp
        assert new.start_offset == old.start_offset
        for offset in range(old.start_offset, old.end_offset):
            m = self.model[offset]
            loaded = new.records.get(offset)
            if m.state in TERMINAL:
                assert loaded is not None and loaded.state is m.state, (offset, m, loaded)
                continue
            # not done with: still so, never ACQUIRED (locks end with their leader)
            assert loaded is None or (loaded.state is S.AVAILABLE and loaded.delivery_count <= m.count), \
                (offset, m, loaded)
            if loaded is None:
                del self.model[offset]  # beyond what was written: read from the log as new
        for offset, loaded in new.records.items():
            self.model[offset] = Model(loaded.state, loaded.delivery_count)
        self.sp = new


TestSharePartitionFailoverMachine = SharePartitionFailoverMachine.TestCase
TestSharePartitionFailoverMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
