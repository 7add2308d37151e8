"""The mute state machine: the table matches Kafka's KafkaChannel, and each of the Processor's
steps is Kafka's event with the Selector's mute() before it or maybeUnmute() after it. (A
channel walked through random steps: test_channel.py.)"""

from __future__ import annotations

import pytest

from kafkalite.network.mute import (
    MUTE,
    ON_AUTHENTICATION_FAILED,
    ON_REQUEST,
    ON_RESPONSE_SENT,
    ON_THROTTLE_ENDED,
    ON_THROTTLE_STARTED,
    TRANSITIONS,
    UNMUTE,
    IllegalMuteTransition,
    MuteEvent,
    MuteState,
    MuteStep,
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


# Each of the Processor's steps as it was spelled out before it was a row: (the Selector's mute()
# first, Kafka's event, maybeUnmute() after).
SPELLED = {
    ON_REQUEST: (True, E.REQUEST_RECEIVED, False),
    ON_RESPONSE_SENT: (False, E.RESPONSE_SENT, True),
    ON_THROTTLE_STARTED: (False, E.THROTTLE_STARTED, False),
    ON_THROTTLE_ENDED: (False, E.THROTTLE_ENDED, True),
    ON_AUTHENTICATION_FAILED: (True, None, False),
}


def spelled_out(state: MuteState, step: MuteStep) -> MuteState | None:
    mute, event, unmute = SPELLED[step]
    if mute and state is S.NOT_MUTED:
        state = S.MUTED
    if event is not None:
        if (state, event) not in KAFKA:
            return None
        state = KAFKA[(state, event)]
    if unmute and state is S.MUTED:
        state = S.NOT_MUTED
    return state


@pytest.mark.parametrize("state", list(MuteState))
@pytest.mark.parametrize("step", list(SPELLED), ids=repr)
def test_each_step_is_kafkas_event_with_the_selectors_mute_and_unmute(state, step):
    assert step.next_state.get(state) is spelled_out(state, step)
