"""A connection's mute state, as Kafka's KafkaChannel keeps it, written as a table.

A connection is muted (not read from) while one of its requests is with the handlers, so its
requests are answered in order; throttling keeps it muted past the response. ``mute()`` and
``maybe_unmute()`` are the Selector's operations; the four events move between the muted states
and any pair not in the table is a bug (IllegalStateException in Kafka).
"""

from __future__ import annotations

import enum


class MuteState(enum.Enum):
    NOT_MUTED = "NOT_MUTED"
    MUTED = "MUTED"
    MUTED_AND_RESPONSE_PENDING = "MUTED_AND_RESPONSE_PENDING"
    MUTED_AND_THROTTLED = "MUTED_AND_THROTTLED"
    MUTED_AND_THROTTLED_AND_RESPONSE_PENDING = "MUTED_AND_THROTTLED_AND_RESPONSE_PENDING"

    # Members are singletons: hash by identity (Enum hashes the name in Python, per lookup).
    __hash__ = object.__hash__


class MuteEvent(enum.Enum):
    REQUEST_RECEIVED = "REQUEST_RECEIVED"
    RESPONSE_SENT = "RESPONSE_SENT"
    THROTTLE_STARTED = "THROTTLE_STARTED"
    THROTTLE_ENDED = "THROTTLE_ENDED"

    # Members are singletons: hash by identity (Enum hashes the name in Python, per lookup).
    __hash__ = object.__hash__


S, E = MuteState, MuteEvent

TRANSITIONS: dict[tuple[MuteState, MuteEvent], MuteState] = {
    (S.MUTED, E.REQUEST_RECEIVED): S.MUTED_AND_RESPONSE_PENDING,
    (S.MUTED_AND_RESPONSE_PENDING, E.RESPONSE_SENT): S.MUTED,
    (S.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING, E.RESPONSE_SENT): S.MUTED_AND_THROTTLED,
    (S.MUTED_AND_RESPONSE_PENDING, E.THROTTLE_STARTED): S.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING,
    (S.MUTED_AND_THROTTLED, E.THROTTLE_ENDED): S.MUTED,
    (S.MUTED_AND_THROTTLED_AND_RESPONSE_PENDING, E.THROTTLE_ENDED): S.MUTED_AND_RESPONSE_PENDING,
}

# mute() only acts on an unmuted connection; maybe_unmute() only on a plainly MUTED one (a
# connection with a response pending or throttled stays muted). Neither raises.
MUTE: dict[MuteState, MuteState] = {S.NOT_MUTED: S.MUTED}
UNMUTE: dict[MuteState, MuteState] = {S.MUTED: S.NOT_MUTED}


class IllegalMuteTransition(RuntimeError):
    def __init__(self, state: MuteState, event: MuteEvent) -> None:
        super().__init__(f"cannot handle {event.name} in mute state {state.name}")
        self.state = state
        self.event = event


def next_state(state: MuteState, event: MuteEvent) -> MuteState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalMuteTransition(state, event) from None


def _compose(before: dict[MuteState, MuteState], event: MuteEvent,
             after: dict[MuteState, MuteState]) -> dict[MuteState, MuteState]:
    """The table of ``before`` (default: unchanged), then ``event``, then ``after`` (default:
    unchanged), for the states where the event is legal."""
    out = {}
    for s in MuteState:
        mid = before.get(s, s)
        if (mid, event) in TRANSITIONS:
            end = TRANSITIONS[(mid, event)]
            out[s] = after.get(end, end)
    return out


# The Processor's two steps per request, composed once from the tables above so that its hot path
# makes one lookup each: a request handed over (mute, then REQUEST_RECEIVED), and its response
# written (RESPONSE_SENT, then maybe_unmute).
ON_REQUEST = _compose(MUTE, E.REQUEST_RECEIVED, {})
ON_RESPONSE_SENT = _compose({}, E.RESPONSE_SENT, UNMUTE)
