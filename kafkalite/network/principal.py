"""``ssl.principal.mapping.rules``: Kafka's SslPrincipalMapper, which turns a TLS client
certificate's distinguished name into the principal's name (DefaultKafkaPrincipalBuilder:
``User:`` + the mapped name).

Rules, comma separated, are tried in order and the first that matches wins: ``DEFAULT`` (the
distinguished name as it is) or ``RULE:pattern/replacement/`` with an optional ``L`` or ``U``
after the last slash (lower or upper case the result). ``pattern`` must match the whole name;
``replacement`` is Java's (``$1`` a group, ``\\`` escapes). A name no rule matches fails the
connection (Kafka's NoMatchingRule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RULE_PATTERN = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE_PATTERN + r")\s*(?:,\s*|$)")
_RULE_PARSER = re.compile(_RULE_PATTERN)


class NoMatchingRule(ValueError):
    """No rule maps the distinguished name."""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str] | None = None  # None: DEFAULT
    replacement: str = ""
    lower: bool = False
    upper: bool = False

    def apply(self, name: str) -> str | None:
        if self.pattern is None:
            return name
        m = self.pattern.fullmatch(name)
        if m is None:
            return None
        result = self.pattern.sub(lambda mm: _expand(self.replacement, mm), name)
        if self.lower:
            return result.lower()
        if self.upper:
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        case = "L" if self.lower else "U" if self.upper else ""
        return f"RULE:{self.pattern.pattern}/{self.replacement}/{case}"


def _expand(replacement: str, m: re.Match[str]) -> str:
    """Java's Matcher.appendReplacement: ``$n`` the group (a reference to a group the pattern does
    not have is literal, as Kafka's escapeLiteralBackReferences makes it), ``\\x`` the character x."""
    out = []
    i = 0
    groups = m.re.groups
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1])
            i += 2
        elif c == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            j = i + 1
            digits = replacement[i + 1:]
            while j < len(replacement) and replacement[j].isdigit() and int(digits[:j - i]) <= groups:
                j += 1
            if j == i + 1:  # no such group: literal
                out.append(c)
                i += 1
                continue
            out.append(m.group(int(replacement[i + 1:j])) or "")
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_rules(text: str | None) -> list[str]:
    if text is None:
        return ["DEFAULT"]
    return [m.group(1) for m in _RULE_SPLITTER.finditer(text.strip()) if m.group(0)]


def parse_rules(text: str | None) -> list[Rule]:
    """ValueError with Kafka's message for a rule that does not parse."""
    rules = []
    for rule in split_rules(text):
        m = _RULE_PARSER.match(rule)
        if m is None:
            raise ValueError(f"Invalid rule: {rule}")
        if m.end() != len(rule):
            raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[m.end():]}`")
        if m.group(1) is not None:
            rules.append(Rule())
        elif m.group(2) is not None:
            try:
                pattern = re.compile(m.group(2))
            except re.error as e:
                raise ValueError(f"Invalid rule: {rule}: {e}") from None
            rules.append(Rule(pattern, m.group(3), m.group(4) == "L", m.group(4) == "U"))
    return rules


class SslPrincipalMapper:
    def __init__(self, rules: str | None = "DEFAULT") -> None:
        self.rules = parse_rules(rules)

    def name(self, distinguished_name: str) -> str:
        for rule in self.rules:
            mapped = rule.apply(distinguished_name)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {distinguished_name}, rules "
                             f"[{', '.join(map(str, self.rules))}]")
