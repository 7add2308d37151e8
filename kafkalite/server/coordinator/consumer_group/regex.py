"""Subscriptions by regular expression (KIP-848's SubscribedTopicRegex). Kafka compiles them with
RE2J and matches whole topic names (Matcher.matches); Python's ``re`` reads RE2's syntax alike
except for what RE2 refuses (look-arounds, back-references, possessive quantifiers, which ``re``
would take) and a few spellings (``\\z``, ``\\C``, ``\\Q..\\E``, ``\\pN``), refused here too:
such a regex is INVALID_REGULAR_EXPRESSION, as RE2J answers."""

from __future__ import annotations

import functools
import re

# RE2 refuses these; Python would take them and match something else than Kafka does.
_NOT_RE2 = re.compile(r"\(\?[=!<]|\(\?P=|\\[1-9]|[*+?}]\+|\\[zCQEpP]")


INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class InvalidRegex(ValueError):
    pass


@functools.lru_cache(maxsize=256)
def compile_topic_regex(pattern: str) -> re.Pattern[str]:
    if _NOT_RE2.search(pattern):
        raise InvalidRegex(f"{pattern!r} is not a regular expression RE2 takes")
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InvalidRegex(f"{pattern!r}: {e}") from e


def matching_topics(pattern: str, topics: list[str] | set[str]) -> set[str]:
    """The topics whose whole name matches ``pattern``, internal topics left out (Kafka's
    refreshRegularExpressions)."""
    compiled = compile_topic_regex(pattern)
    return {t for t in topics if t not in INTERNAL_TOPICS and compiled.fullmatch(t)}
