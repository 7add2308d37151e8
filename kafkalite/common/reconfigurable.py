"""What a component that takes new settings while running implements (Kafka's Reconfigurable /
BrokerReconfigurable): the dynamic broker configuration (server/dynamic_config.py) validates a
change with every component that names one of the changed settings before anything changes, then
hands the new values to each.

Values are the parsed values of the settings table (common/config_def.py), keyed by Kafka's names:
``old`` and ``new`` are the whole effective configuration before and after the change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Reconfigurable(Protocol):
    # The settings this component applies live (each a row whose update_mode is not read-only).
    reconfigurable_configs: frozenset[str]

    def validate_reconfiguration(self, new: Mapping[str, Any]) -> None:
        """Raise ConfigError (common/errors.py) naming the setting if ``new`` cannot be applied."""

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Apply ``new``; called only after every component validated it."""
