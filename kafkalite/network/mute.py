"""A connection's mute state, as Kafka's KafkaChannel keeps it, written as a table.

A connection is muted (not read from) while one of its requests is with the handlers, so its
requests are answered in order; throttling keeps it muted past the response. ``mute()`` and
``maybe_unmute()`` are the Selector's operations; the four events move between the muted states
and any pair not in the table is a bug (IllegalStateException in Kafka).

The Processor moves a channel by the steps at the end (``MuteStep``): Kafka's event with the
Selector's operation that comes with it, composed once into one row each, so that the hot path
makes one lookup per step (``KafkaChannel.handle``).
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
    def __init__(self, state: MuteState, event: MuteEvent | MuteStep) -> None:
        super().__init__(f"cannot handle {event.name} in mute state {state.name}")
        self.state = state
        self.event = event


def next_state(state: MuteState, event: MuteEvent) -> MuteState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalMuteTransition(state, event) from None


class MuteStep:
    """One of the Processor's steps: the Selector's ``mute()`` (if ``mute``), then ``event`` (if
    any), then ``maybe_unmute()`` (if ``unmute``), as one row: state before -> state after. A
    state missing from the row is one where the event is illegal."""

    __slots__ = ("name", "next_state")

    def __init__(self, name: str, *, mute: bool = False, event: MuteEvent | None = None,
                 unmute: bool = False) -> None:
        self.name = name
        self.next_state: dict[MuteState, MuteState] = {}
        for s in MuteState:
            state = MUTE.get(s, s) if mute else s
            if event is not None:
                if (state, event) not in TRANSITIONS:
                    continue
                state = TRANSITIONS[(state, event)]
            self.next_state[s] = UNMUTE.get(state, state) if unmute else state

    def __repr__(self) -> str:
        return f"MuteStep({self.name})"


# A request handed over: muted, and its response pending until it is sent.
ON_REQUEST = MuteStep("mute, REQUEST_RECEIVED", mute=True, event=E.REQUEST_RECEIVED)
# Its response written whole (or a NoOpResponse): unmuted unless throttled.
ON_RESPONSE_SENT = MuteStep("RESPONSE_SENT, maybe unmute", event=E.RESPONSE_SENT, unmute=True)
ON_THROTTLE_STARTED = MuteStep("THROTTLE_STARTED", event=E.THROTTLE_STARTED)
ON_THROTTLE_ENDED = MuteStep("THROTTLE_ENDED, maybe unmute", event=E.THROTTLE_ENDED, unmute=True)
# A failed SASL authentication: nothing more of the connection goes to the handlers.
ON_AUTHENTICATION_FAILED = MuteStep("mute", mute=True)
