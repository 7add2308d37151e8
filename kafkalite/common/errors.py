"""Errors shared across layers: a bad setting (ConfigError) and a refused request carrying Kafka's
error code (ApiError, Kafka's ApiException)."""

from __future__ import annotations

from collections.abc import Iterable


class ConfigError(ValueError):
    """A bad broker configuration; the message names the setting (also kept in ``setting``).

    One error may stand for several (``errors``, each a ConfigError): its message lists them all, one
    a line, and ``setting`` is the first one's."""

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.errors: tuple[ConfigError, ...] = (self,)

    @classmethod
    def of(cls, errors: Iterable[ConfigError]) -> ConfigError:
        """One error for ``errors`` (at least one): the error itself if it is alone."""
        unique = list({str(e): e for e in errors}.values())
        if len(unique) == 1:
            return unique[0]
        combined = cls(f"{len(unique)} errors:" + "".join(f"\n  {e}" for e in unique), unique[0].setting)
        combined.errors = tuple(unique)
        return combined


class ApiError(Exception):
    """A request refused with Kafka's error ``code`` and a message for the client."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
