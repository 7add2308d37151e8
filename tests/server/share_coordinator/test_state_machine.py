"""The share coordinator against a model of Kafka's rules (a dict, combined with persister's
merge_batches): random initializations, writes (some fenced), deletions and reloads from the
records written; after each step what the coordinator reads equals the model."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkalite.protocol import error_codes as E
from kafkalite.server.share.persister import ReadStateResult, ShareStateKey, StateBatch, merge_batches
from kafkalite.server.share_coordinator.coordinator import ShareCoordinator
from kafkalite.server.share_coordinator.settings import ShareCoordinatorConfig

from .test_coordinator import ListStore, call

KEYS = [ShareStateKey(g, bytes([t]) * 16, p) for g in ("a", "b") for t in (1, 2) for p in (0, 1)]
batches = st.lists(st.builds(lambda first, n, s, c: StateBatch(first, first + n, s, c),
                             st.integers(0, 40), st.integers(0, 5), st.sampled_from([0, 2, 4]),
                             st.integers(0, 5)), max_size=3)


class CoordinatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = ListStore()
        self.config = ShareCoordinatorConfig(num_partitions=3, updates_per_snapshot=3)
        self.c = self._loaded()
        # key -> (state epoch, leader epoch, start offset, batches)
        self.model: dict[ShareStateKey, tuple[int, int, int, list[StateBatch]]] = {}
        self.deleted: set[ShareStateKey] = set()  # a write is refused until initialized again

    def _loaded(self) -> ShareCoordinator:
        c = ShareCoordinator(self.config, self.store)
        for i in range(self.config.num_partitions):
            c.begin_loading(i)
            c.load(i, list(self.store.records.get(i, [])))
        return c

    @rule(key=st.sampled_from(KEYS), state_epoch=st.integers(0, 3), start=st.integers(0, 20))
    def initialize(self, key, state_epoch, start):
        current = self.model.get(key)
        expected = E.FENCED_STATE_EPOCH if current is not None and current[0] >= state_epoch else E.NONE
        assert call(self.c.initialize_state, key, state_epoch, start) == expected
        if expected == E.NONE:
            self.model[key] = (state_epoch, -1, start, [])
            self.deleted.discard(key)

    @rule(key=st.sampled_from(KEYS), state_epoch=st.integers(0, 3), leader_epoch=st.integers(0, 3),
          start=st.integers(-1, 20), update=batches)
    def write(self, key, state_epoch, leader_epoch, start, update):
        current = self.model.get(key)
        if current is None and key in self.deleted:
            expected, new = E.INVALID_REQUEST, None
        elif current is None:
            expected = E.NONE
            new = (state_epoch, leader_epoch, start, merge_batches([], start, update))
        elif leader_epoch < current[1]:
            expected, new = E.FENCED_LEADER_EPOCH, current
        elif state_epoch < current[0]:
            expected, new = E.FENCED_STATE_EPOCH, current
        else:
            expected = E.NONE
            s = max(current[2], start)
            new = (current[0], max(current[1], leader_epoch), s,
                   merge_batches(current[3], s, update))
        assert call(self.c.write_state, key, state_epoch, leader_epoch, start, update) == expected
        if new is not None:
            self.model[key] = new

    @rule(key=st.sampled_from(KEYS))
    def delete(self, key):
        assert call(self.c.delete_state, key) == E.NONE
        self.model.pop(key, None)
        self.deleted.add(key)

    @rule()
    def reload(self):
        self.c = self._loaded()

    @invariant()
    def reads_equal_the_model(self):
        for key in KEYS:
            want = self.model.get(key)
            # The summary does not move the leader epoch: reading it keeps the model's.
            summary = call(self.c.read_summary, key, 0)
            if want is None:
                assert summary.start_offset == -1
                continue
            assert (summary.state_epoch, summary.leader_epoch, summary.start_offset) == want[:3]
            got = call(self.c.read_state, key, want[1])
            assert got == ReadStateResult(E.NONE, want[0], want[2], tuple(want[3]))


CoordinatorMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestCoordinatorMachine = CoordinatorMachine.TestCase
