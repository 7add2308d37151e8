"""What the transaction coordinator's state refuses, each with the Kafka error code an api answers.

Two kinds: the refusals a client meets in normal operation (a fenced producer, a transition
already in flight) and the moves the state table forbids. Kafka's coordinator checks the state
before it asks for a move and raises IllegalStateException (a bug) when that check was wrong;
kafkalite raises a typed error carrying INVALID_TXN_STATE, so an api that lets one through still
answers a code a client understands. Whatever is raised, the metadata is left as it was.
"""

from __future__ import annotations

from kafkalite.common.errors import ApiError
from kafkalite.protocol import error_codes as E


class TransactionStateError(ApiError):
    """Base of the refusals of TransactionMetadata."""

    code_for_class: int = E.INVALID_TXN_STATE

    def __init__(self, message: str) -> None:
        super().__init__(self.code_for_class, message)


class ConcurrentTransactions(TransactionStateError):
    """A transition is already prepared (its log write in flight), or the transaction is ending:
    the client backs off and retries."""

    code_for_class = E.CONCURRENT_TRANSACTIONS


class ProducerFenced(TransactionStateError):
    """A newer producer holds the transactional id (answered as INVALID_PRODUCER_EPOCH to the
    request versions that predate PRODUCER_FENCED)."""

    code_for_class = E.PRODUCER_FENCED


class IllegalTransactionTransition(TransactionStateError):
    """A move the state table forbids, or a completion that does not match the prepared one."""

