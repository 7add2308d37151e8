"""A transactional id's state at the coordinator (Kafka's TransactionState), as one table.

Each state lists the states it may be entered from (Kafka's validPreviousStates);
``TransactionMetadata.prepare_transition_to`` refuses any other move. In short:

- Empty: a producer id and epoch are handed out, no transaction open (InitProducerId).
- Ongoing: partitions were added (AddPartitionsToTxn / AddOffsetsToTxn).
- PrepareCommit / PrepareAbort: EndTxn was written; the markers are being sent.
- CompleteCommit / CompleteAbort: every partition has its marker.
- Dead: the transactional id expired; its tombstone is being written.
- PrepareEpochFence: an InitProducerId (or the timeout) fences the producer of an Ongoing
  transaction before aborting it; never written, never completed.

Kafka 4.0's transaction version 2 lets a client abort when unsure, so PrepareAbort may also be
entered from Empty and the Complete states.
"""

from __future__ import annotations

import enum


class TransactionState(enum.Enum):
    """The value is Kafka's name, what DescribeTransactions and ListTransactions answer."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    # Members are singletons: hash by identity (Enum hashes the name in Python, per lookup).
    __hash__ = object.__hash__


S = TransactionState
VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT,
                                S.COMPLETE_ABORT}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}

# A transaction ended: its markers are all written.
COMPLETED_STATES: frozenset[TransactionState] = frozenset({S.COMPLETE_COMMIT, S.COMPLETE_ABORT})
# No transaction open: the id may expire (Kafka's isExpirationAllowed) after
# transactional.id.expiration.ms without use.
EXPIRABLE_STATES: frozenset[TransactionState] = frozenset({S.EMPTY, *COMPLETED_STATES})
# A transaction open or ending: the producer id may not be rotated (Kafka's hasPendingTransaction).
IN_TRANSACTION_STATES: frozenset[TransactionState] = frozenset(
    {S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT})


def can_transition(current: TransactionState, target: TransactionState) -> bool:
    return current in VALID_PREVIOUS_STATES[target]
