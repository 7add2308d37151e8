"""The controller's dynamic configs (controller/configs.py) without brokers: the incremental
operations against a model (a Hypothesis state machine), the checks of a topic's or broker's new
set with Kafka's errors, validate_only, and the sets read back by a new store of the same
metadata log (a new active controller)."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafkalite.common.errors import ApiError
from kafkalite.controller.configs import ConfigurationControl, Op, ResourceChange, apply_ops, split_list
from kafkalite.protocol import error_codes as E
from kafkalite.protocol.messages import describe_configs as dc
from kafkalite.protocol.messages import incremental_alter_configs as iac
from tests.support.fake_raft import MetadataLog

SET, DELETE, APPEND, SUBTRACT = iac.OP_SET, iac.OP_DELETE, iac.OP_APPEND, iac.OP_SUBTRACT
TOPIC, BROKER = dc.RESOURCE_TOPIC, dc.RESOURCE_BROKER
LISTS = {"l1", "l2"}
BASES = {"l1": "a,b", "l2": None}
names = st.sampled_from(["s1", "s2", "l1", "l2"])
items = st.sampled_from(["a", "b", "c", "d"])


class IncrementalOps(RuleBasedStateMachine):
    """apply_ops against a model: a dict of strings and, for list settings, lists of items."""

    def __init__(self) -> None:
        super().__init__()
        self.current: dict[str, str | None] = {}
        self.model: dict[str, object] = {}

    def _apply(self, op: Op) -> None:
        self.current = apply_ops(self.current, [op], lambda n: n in LISTS, BASES.get)

    @rule(name=names, value=st.text("xyz", min_size=1, max_size=3))
    def set(self, name, value):
        self._apply(Op(name, SET, value))
        self.model[name] = split_list(value) if name in LISTS else value

    @rule(name=names)
    def delete(self, name):
        self._apply(Op(name, DELETE, None))
        self.model.pop(name, None)

    @rule(name=names, added=st.lists(items, min_size=1, max_size=3))
    def append(self, name, added):
        op = Op(name, APPEND, ",".join(added))
        if name not in LISTS:
            with pytest.raises(ApiError) as e:
                self._apply(op)
            assert e.value.code == E.INVALID_CONFIG
            return
        self._apply(op)
        items_now = list(self.model.get(name, split_list(BASES[name])))  # type: ignore[arg-type]
        for item in added:
            if item not in items_now:
                items_now.append(item)
        self.model[name] = items_now

    @rule(name=st.sampled_from(sorted(LISTS)), removed=st.lists(items, min_size=1, max_size=3))
    def subtract(self, name, removed):
        self._apply(Op(name, SUBTRACT, ",".join(removed)))
        items_now = list(self.model.get(name, split_list(BASES[name])))  # type: ignore[arg-type]
        for item in removed:
            if item in items_now:
                items_now.remove(item)
        self.model[name] = items_now

    @invariant()
    def same_as_model(self):
        as_model = {k: split_list(v) if k in LISTS else v for k, v in self.current.items()}
        assert as_model == self.model


TestIncrementalOps = IncrementalOps.TestCase
TestIncrementalOps.settings = settings(max_examples=60, stateful_step_count=20, deadline=None)


def control(log: MetadataLog, *topics: str) -> ConfigurationControl:
    store = log.store()
    for t in topics:  # topic configs go with a stored topic
        store.create_topic(t, uuid.uuid4(), [])
    c = ConfigurationControl(store.load_topic_configs(), store)
    c.load()
    return c


def exists(*topics: str):
    return lambda name: name in topics


def change(kind: int, name: str, *ops: Op, incremental: bool = True) -> ResourceChange:
    return ResourceChange(kind, name, tuple(ops), incremental)


def test_topic_sets_checked_stored_and_reloaded():
    log = MetadataLog()
    c = control(log, "t")
    ops = (Op("retention.ms", SET, "1000"), Op("cleanup.policy", APPEND, "compact"))
    new = c.alter(change(TOPIC, "t", *ops), False, exists("t"))
    assert new == {"retention.ms": "1000", "cleanup.policy": "delete,compact"}
    assert c.topic_configs["t"] == new
    # AlterConfigs: the whole set.
    assert c.alter(change(TOPIC, "t", Op("segment.bytes", SET, "2048"), incremental=False),
                   False, exists("t")) == {"segment.bytes": "2048"}
    c.alter(change(dc.RESOURCE_BROKER, "", Op("log.retention.ms", SET, "5")), False, exists())
    c.alter(change(dc.RESOURCE_BROKER, "2", Op("log.segment.bytes", SET, "5000")), False, exists())
    again = control(log)  # a new active controller
    assert again.topic_configs == {"t": {"segment.bytes": "2048"}}
    assert again.store.load_topic_configs() == {"t": {"segment.bytes": "2048"}}
    assert again.broker_configs == {"": {"log.retention.ms": "5"}, "2": {"log.segment.bytes": "5000"}}
    # Emptied sets are gone from the store too.
    again.alter(change(dc.RESOURCE_BROKER, "2", Op("log.segment.bytes", DELETE, None)), False, exists())
    assert "2" not in again.broker_configs and "2" not in again.store.load_broker_configs()


@pytest.mark.parametrize("ops,code,message", [
    ((Op("retention.ms", SET, "abc"),), E.INVALID_CONFIG,
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ((Op("no.such.config", SET, "1"),), E.INVALID_CONFIG, "Unknown topic config name: no.such.config"),
    ((Op("retention.ms", SET, None),), E.INVALID_CONFIG,
     "Null value not supported for topic configs: retention.ms"),
    ((Op("retention.ms", APPEND, "1"),), E.INVALID_CONFIG,
     "Can't APPEND to key retention.ms because its type is not LIST."),
    ((Op("retention.ms", 7, "1"),), E.INVALID_REQUEST, None),
    ((Op("retention.ms", SET, "1"), Op("retention.ms", DELETE, None)), E.INVALID_REQUEST,
     "Error due to duplicate config keys"),
])
def test_topic_refusals_change_nothing(ops, code, message):
    c = control(MetadataLog(), "t")
    c.alter(change(TOPIC, "t", Op("segment.bytes", SET, "2048")), False, exists("t"))
    with pytest.raises(ApiError) as e:
        c.alter(change(TOPIC, "t", *ops), False, exists("t"))
    assert e.value.code == code
    if message is not None:
        assert e.value.message == message
    assert c.topic_configs["t"] == {"segment.bytes": "2048"}
    assert c.store.load_topic_configs() == {"t": {"segment.bytes": "2048"}}


def test_unknown_topic_and_bad_broker_names():
    c = control(MetadataLog())
    with pytest.raises(ApiError) as e:
        c.alter(change(TOPIC, "nope", Op("retention.ms", SET, "1")), False, exists("t"))
    assert (e.value.code, e.value.message) == (E.UNKNOWN_TOPIC_OR_PARTITION,
                                               "The topic 'nope' does not exist.")
    for bad in ("x", "-1"):
        with pytest.raises(ApiError) as e:
            c.alter(change(BROKER, bad, Op("log.retention.ms", SET, "1")), False, exists())
        assert (e.value.code, e.value.message) == (E.INVALID_REQUEST, f"Invalid broker name {bad}")
    with pytest.raises(ApiError) as e:
        c.alter(change(16, "metrics", Op("x", SET, "1")), False, exists())
    assert e.value.code == E.INVALID_REQUEST
    with pytest.raises(ApiError) as e:
        c.alter(change(32, "group", Op("x", SET, "1")), False, exists())
    assert (e.value.code, e.value.message) == (E.INVALID_CONFIG, "Unknown group config name: x")


def test_validate_only_changes_nothing():
    c = control(MetadataLog())
    assert c.alter(change(TOPIC, "t", Op("retention.ms", SET, "1")), True, exists("t")) is None
    assert c.alter(change(BROKER, "", Op("log.retention.ms", SET, "1")), True, exists()) is None
    assert c.topic_configs == {} and c.broker_configs == {}
    assert c.store.load_topic_configs() == {} and c.store.load_broker_configs() == {}


def test_a_registering_broker_gets_every_set():
    c = control(MetadataLog(), "a", "b")
    c.alter(change(BROKER, "", Op("log.retention.ms", SET, "5")), False, exists())
    c.alter(change(BROKER, "3", Op("log.segment.bytes", SET, "5000")), False, exists())
    c.alter(change(TOPIC, "a", Op("retention.ms", SET, "9")), False, exists("a"))
    sets = c.full_sets(2, ["b", "a"])
    assert sets == [(BROKER, "", {"log.retention.ms": "5"}), (BROKER, "2", {}),
                    (TOPIC, "a", {"retention.ms": "9"}), (TOPIC, "b", {})]
    body = c.push_body(sets)
    assert [(r.resource_type, r.resource_name, {x.name: x.value for x in r.configs})
            for r in body.resources] == [(k, n, dict(v)) for k, n, v in sets]
    assert body.validate_only is False
