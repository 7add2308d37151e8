"""Kafka's ``sasl.jaas.config`` text: one JAAS login module with its options (Kafka's JaasConfig).

    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret" user_admin="admin-secret";

A login module class, a control flag (``required``, ``requisite``, ``sufficient``, ``optional``),
then ``name=value`` options, the value a word or a double-quoted string (backslash escapes as
Java's StreamTokenizer reads them), ended by ``;``. ``//`` and ``/* */`` comments are skipped, as
Kafka's parser (a StreamTokenizer with both comment styles on) skips them. Kafka accepts exactly
one login module in ``sasl.jaas.config``.

A broker's own credentials, for the connections it opens to other brokers and to the controller
over SASL, are the ``username`` and ``password`` options of the listener's login module (Kafka's
PlainLoginModule and ScramLoginModule); ``user_<name>`` options are the users a PLAIN server
accepts. This module does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["LOGIN_MODULES", "JaasConfigError", "LoginModule", "parse_jaas_config"]

FLAGS = ("required", "requisite", "sufficient", "optional")

# The login module Kafka uses for each mechanism kafkalite supports.
LOGIN_MODULES: dict[str, str] = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<quoted>"(?:[^"\\]|\\.)*")
  | (?P<punct>[=;])
  | (?P<word>[^\s=;"]+)
""", re.S | re.X)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", '"': '"', "'": "'"}


class JaasConfigError(ValueError):
    """Text that is not one well-formed JAAS login module; the message says what is wrong."""


@dataclass(frozen=True)
class LoginModule:
    """One login module: its class, control flag and options."""

    class_name: str
    flag: str
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def username(self) -> str | None:
        return self.options.get("username")

    @property
    def password(self) -> str | None:
        return self.options.get("password")

    @property
    def users(self) -> dict[str, str]:
        """The ``user_<name>="<password>"`` options: the users a PLAIN server accepts."""
        return {k[len("user_"):]: v for k, v in self.options.items() if k.startswith("user_")}

    def __repr__(self) -> str:  # never a password in a log line
        return f"LoginModule({self.class_name} {self.flag}, options={sorted(self.options)})"


def _unquote(text: str) -> str:
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) pairs: kind is "word", "quoted" (value unquoted) or the punctuation itself."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            snippet = text[pos:pos + 20]
            raise JaasConfigError(f"JAAS config: cannot read {snippet!r} (an unterminated quoted value?)")
        pos = m.end()
        kind = m.lastgroup
        if kind in ("space", "line_comment", "block_comment"):
            continue
        if kind == "quoted":
            out.append(("quoted", _unquote(m.group())))
        elif kind == "punct":
            out.append((m.group(), m.group()))
        else:
            out.append(("word", m.group()))
    return out


def parse_jaas_config(text: str) -> LoginModule:
    """The one login module of a ``sasl.jaas.config`` value; JaasConfigError otherwise."""
    modules: list[LoginModule] = []
    tokens = _tokens(text)
    i = 0
    while i < len(tokens):
        kind, class_name = tokens[i]
        if kind != "word":
            raise JaasConfigError(f"JAAS config: expected a login module class name, found {class_name!r}")
        if i + 1 >= len(tokens) or tokens[i + 1][0] != "word":
            raise JaasConfigError(f"JAAS config: login module {class_name} has no control flag "
                                  f"({', '.join(FLAGS)})")
        flag = tokens[i + 1][1]
        if flag.lower() not in FLAGS:
            raise JaasConfigError(f"JAAS config: invalid control flag {flag!r} for {class_name} "
                                  f"(one of {', '.join(FLAGS)})")
        i += 2
        options: dict[str, str] = {}
        while True:
            if i >= len(tokens):
                raise JaasConfigError(f"JAAS config: login module {class_name} does not end with ';'")
            kind, value = tokens[i]
            if kind == ";":
                i += 1
                break
            if kind != "word" or i + 2 >= len(tokens) or tokens[i + 1][0] != "=" \
                    or tokens[i + 2][0] not in ("word", "quoted"):
                raise JaasConfigError(f"JAAS config: expected name=value in the options of {class_name}, "
                                      f"found {value!r}")
            options[value] = tokens[i + 2][1]
            i += 3
        modules.append(LoginModule(class_name, flag.lower(), options))
    if len(modules) != 1:
        # Kafka's own message (JaasContext.loadClientContext / JaasConfig).
        raise JaasConfigError(f"JAAS config property contains {len(modules)} login modules, "
                              "should be 1 module")
    return modules[0]
