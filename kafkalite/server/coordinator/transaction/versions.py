"""The ``transaction.version`` feature (Kafka's TransactionVersion, KIP-890): the level a client's
requests show and the level the coordinator writes its records at."""

from __future__ import annotations

import enum


class TransactionVersion(enum.IntEnum):
    TV_0 = 0  # the original coordinator
    TV_1 = 1  # the log value is written as the flexible v1
    TV_2 = 2  # every EndTxn bumps the epoch (KIP-890 part 2)

    @property
    def supports_epoch_bump(self) -> bool:
        return self >= TransactionVersion.TV_2

    @property
    def log_value_version(self) -> int:
        """The TransactionLogValue version the coordinator writes at this level."""
        return 1 if self >= TransactionVersion.TV_1 else 0

    @classmethod
    def of(cls, level: int) -> TransactionVersion:
        """The version for a feature level; a level above the highest known reads as the highest
        (Kafka's fromFeatureLevel with allowUnsupported)."""
        return cls(min(max(level, 0), max(cls)))
