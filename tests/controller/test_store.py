"""The controller's store: state survives reopening, epochs only grow."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.controller.store import ControllerStore, StoredPartition


def test_epochs_grow_across_restarts(tmp_path):
    first = ControllerStore(str(tmp_path))
    assert first.bump_controller_epoch() == 1
    assert [first.next_broker_epoch() for _ in range(3)] == [1, 2, 3]
    first.close()
    second = ControllerStore(str(tmp_path))
    assert second.bump_controller_epoch() == 2
    assert second.next_broker_epoch() == 4
    second.close()


def test_topics_survive_a_restart_and_deletion_cascades(tmp_path):
    store = ControllerStore(str(tmp_path))
    tid = uuid.uuid4()
    parts = [StoredPartition("t", p, (1, 2), 1, 0, (1, 2), 0) for p in range(3)]
    store.create_topic("t", tid, parts)
    store.update_partitions([StoredPartition("t", 1, (1, 2), 2, 1, (2,), 1)])
    store.close()
    store = ControllerStore(str(tmp_path))
    topics, loaded = store.load()
    assert topics == {"t": tid}
    assert loaded[1] == StoredPartition("t", 1, (1, 2), 2, 1, (2,), 1)
    assert loaded[0] == parts[0] and len(loaded) == 3
    store.delete_topic("t")
    assert store.load() == ({}, [])
    store.close()


@settings(max_examples=20)
@given(st.dictionaries(st.text(alphabet="abcxyz-._", min_size=1, max_size=8),
                       st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=3), min_size=1, max_size=4),
                       max_size=4))
def test_load_returns_what_was_stored(tmp_path_factory, layout):
    store = ControllerStore(str(tmp_path_factory.mktemp("store")))
    ids = {}
    expected = []
    for name, assignment in layout.items():
        ids[name] = uuid.uuid4()
        parts = [StoredPartition(name, i, tuple(r), r[0], 0, tuple(r), 0) for i, r in enumerate(assignment)]
        store.create_topic(name, ids[name], parts)
        expected += parts
    topics, loaded = store.load()
    assert topics == ids
    assert sorted(loaded) == sorted(expected)
    store.close()
