"""The transaction coordinator's state (Kafka's transaction-coordinator module, KIP-98/360/890):
being built; no api uses it yet.

Per transactional id the coordinator keeps a TransactionMetadata whose state moves only along one
table (``state.VALID_PREVIOUS_STATES``). A move is prepared first (``metadata``: the target as an
immutable TxnTransitMetadata, the state marked pending so any other move meanwhile is refused
with CONCURRENT_TRANSACTIONS), written to ``__transaction_state`` (``log_records``: Kafka's key
and value bytes, the partition an id lives in), and applied with ``complete_transition_to`` once
the write is committed, or dropped with ``fail_transition`` if it failed. Refusals are typed
(``errors``) and carry the Kafka code an api answers; the feature level is ``versions``.

Modules, lowest first: state, versions, errors -> metadata -> log_records.
"""
