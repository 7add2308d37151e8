"""The transaction coordinator's settings (Kafka's TransactionLogConfig and
TransactionStateManagerConfig: transaction.*, transactional.id.*) as rows of the broker's settings
table (``TRANSACTION_SETTINGS``), and their typed view (``TransactionConfig``,
``BrokerConfig.transaction_config``).

``TRANSACTION_VERSION`` is the ``transaction.version`` feature level the brokers support and run
at (Kafka finalizes it with kafka-features; kafkalite has no feature machinery, so it is fixed):
2, KIP-890 part 2's epoch bump at every EndTxn v5, and the flexible v1 of ``__transaction_state``
values.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.common.config_def import Setting, at_least, fields_from

from .versions import TransactionVersion

TRANSACTION_VERSION = TransactionVersion.TV_2

TRANSACTION_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "transaction.state.log.num.partitions", "int", 50,
        "The number of partitions for the transaction topic (should not change after deployment).",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.state.log.replication.factor", "int", 3,
        "The replication factor for the transaction topic (set higher to ensure availability); "
        "kafkalite takes fewer when fewer brokers are registered (Kafka refuses to create it until "
        "enough are).",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.state.log.min.isr", "int", 2,
        "The minimum number of replicas that must acknowledge a write to transaction topic in order "
        "to be considered successful (the topic's min.insync.replicas).",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.state.log.segment.bytes", "int", 104857600,
        "The transaction topic segment bytes should be kept relatively small in order to facilitate "
        "faster log compaction and cache loads.",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.state.log.load.buffer.size", "int", 5242880,
        "Batch size for reading from the transaction log segments when loading producer ids and "
        "transactions into the cache (soft-limit, overridden if records are too large).",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.max.timeout.ms", "int", 900000,
        "The maximum allowed timeout for transactions. If a client's requested transaction time "
        "exceed this, then the broker will return an error in InitProducerIdRequest. This prevents a "
        "client from too large of a timeout, which can stall consumers reading from topics included "
        "in the transaction.",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transactional.id.expiration.ms", "int", 604800000,
        "The time in ms that the transaction coordinator will wait without receiving any transaction "
        "status updates for the current transaction before expiring its transactional id. "
        "Transactional IDs will not expire while a the transaction is still ongoing.",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms", "int", 10000,
        "The interval at which to rollback transactions that have timed out.",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.remove.expired.transaction.cleanup.interval.ms", "int", 3600000,
        "The interval at which to remove transactions that have expired due to "
        "transactional.id.expiration.ms passing.",
        validator=at_least(1), group="transaction",
    ),
    Setting(
        "transaction.partition.verification.enable", "bool", True,
        "Enable verification that checks that the partition has been added to the transaction "
        "before writing transactional records to the partition.",
        group="transaction",
        update_mode="cluster-wide",
    ),
    Setting(
        "request.timeout.ms", "int", 30000,
        "The configuration controls the maximum amount of time the client will wait for the response "
        "of a request. In kafkalite the transaction coordinator's: how long a write to "
        "__transaction_state and a WriteTxnMarkers' markers wait for the followers.",
        validator=at_least(0), group="transaction",
    ),
)

_field = fields_from(TRANSACTION_SETTINGS)


@dataclass(frozen=True)
class TransactionConfig:
    """transaction.* and transactional.id.* settings."""

    num_partitions: int = _field("transaction.state.log.num.partitions")
    replication_factor: int = _field("transaction.state.log.replication.factor")
    min_isr: int = _field("transaction.state.log.min.isr")
    segment_bytes: int = _field("transaction.state.log.segment.bytes")
    load_buffer_size: int = _field("transaction.state.log.load.buffer.size")
    max_timeout_ms: int = _field("transaction.max.timeout.ms")
    transactional_id_expiration_ms: int = _field("transactional.id.expiration.ms")
    abort_timed_out_interval_ms: int = _field("transaction.abort.timed.out.transaction.cleanup.interval.ms")
    remove_expired_interval_ms: int = _field("transaction.remove.expired.transaction.cleanup.interval.ms")
    partition_verification_enable: bool = _field("transaction.partition.verification.enable")
    request_timeout_ms: int = _field("request.timeout.ms")

    def replication_factor_for(self, brokers: int) -> int:
        """transaction.state.log.replication.factor capped by the brokers there are (at least 1)."""
        return max(1, min(self.replication_factor, brokers))

    def topic_configs(self, brokers: int | None = None) -> dict[str, str]:
        """The topic's settings at its creation (Kafka's TransactionStateManager
        .transactionTopicConfigs). With ``brokers`` given, min.insync.replicas is capped by the
        replication factor the topic gets, so that a small cluster can write it at all. Kafka's
        compression.type=uncompressed is left out: kafkalite has no such topic setting (a
        CreateTopics naming it is refused), and the coordinator's appends are never compressed."""
        min_isr = self.min_isr if brokers is None else min(self.min_isr, self.replication_factor_for(brokers))
        return {
            "cleanup.policy": "compact",
            "unclean.leader.election.enable": "false",
            "min.insync.replicas": str(min_isr),
            "segment.bytes": str(self.segment_bytes),
        }

    def valid_timeout(self, txn_timeout_ms: int) -> bool:
        """Kafka's validateTransactionTimeoutMs."""
        return 0 < txn_timeout_ms <= self.max_timeout_ms
