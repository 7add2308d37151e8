"""The mute state machine: the table matches Kafka's KafkaChannel, and random sequences of
operations either follow it or raise, never leaving the five states."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalite.network.connection import Connection
from kafkalite.network.mute import (
    MUTE,
    TRANSITIONS,
    UNMUTE,
    IllegalMuteTransition,
    MuteEvent,
    MuteState,
    next_state,
)

S, E = MuteState, MuteEvent

# Kafka's KafkaChannel.handleChannelMuteEvent, written out independently of the table.
KAFKA = {
    (S.MUTED, E.REQUEST_RECEIVED): S.MUTED_AND_RESPONSE_PENDING,
    (S.MUTED_AND_RESPONSE_PENDING, E.RESPONSE_SENT): S.MUTED,
    (S.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING, E.RESPONSE_SENT): S.MUTED_AND_THROTTLED,
    (S.MUTED_AND_RESPONSE_PENDING, E.THROTTLE_STARTED): S.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING,
    (S.MUTED_AND_THROTTLED, E.THROTTLE_ENDED): S.MUTED,
    (S.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING, E.THROTTLE_ENDED): S.MUTED_AND_RESPONSE_PENDING,
}


def test_five_states_four_events():
    assert len(MuteState) == 5 and len(MuteEvent) == 4


@pytest.mark.parametrize("state", list(MuteState))
@pytest.mark.parametrize("event", list(MuteEvent))
def test_every_pair(state, event):
    if (state, event) in KAFKA:
        assert next_state(state, event) is KAFKA[(state, event)]
    else:
        with pytest.raises(IllegalMuteTransition):
            next_state(state, event)


def test_mute_and_unmute_only_act_on_their_state():
    assert MUTE == {S.NOT_MUTED: S.MUTED}
    assert UNMUTE == {S.MUTED: S.NOT_MUTED}
    assert TRANSITIONS == KAFKA


class _Sock:
    pass


OPS = st.sampled_from(["mute", "unmute", *list(MuteEvent)])


@given(st.lists(OPS, max_size=30))
def test_random_operations_follow_the_table(ops):
    conn = Connection(_Sock(), "c", "L", 100, ("127.0.0.1", 1), ("127.0.0.1", 2))  # type: ignore[arg-type]
    for op in ops:
        before = conn.mute_state
        if op == "mute":
            conn.mute()
            assert conn.mute_state is (S.MUTED if before is S.NOT_MUTED else before)
        elif op == "unmute":
            unmuted = conn.maybe_unmute()
            assert unmuted == (before in (S.MUTED, S.NOT_MUTED))
            assert conn.mute_state is (S.NOT_MUTED if before is S.MUTED else before)
        elif (before, op) in KAFKA:
            conn.handle_event(op)
            assert conn.mute_state is KAFKA[(before, op)]
        else:
            with pytest.raises(IllegalMuteTransition):
                conn.handle_event(op)
            assert conn.mute_state is before
        assert conn.muted == (conn.mute_state is not S.NOT_MUTED)
