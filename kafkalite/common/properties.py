"""Java ``.properties`` text, as Java's ``Properties.load`` reads it (Kafka's configuration files,
meta.properties): ``#``/``!`` comments, ``key=value``, ``key: value`` or ``key value``, backslash
escapes and line continuation."""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping

from kafkalite.common.errors import ConfigError

__all__ = ["format_properties", "load_properties_file", "parse_properties"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _trailing_backslashes(line: str) -> int:
    return len(line) - len(line.rstrip("\\"))


def _unescape(text: str, *, trim: bool) -> str:
    """Resolve backslash escapes; with ``trim``, drop trailing unescaped whitespace."""
    out: list[str] = []
    keep = 0
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c != "\\":
            out.append(c)
            if c not in _WS:
                keep = len(out)
            continue
        if i >= len(text):
            break  # a lone backslash at the very end (continuation at end of input) is dropped
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i:i + 4]
            if len(digits) < 4 or any(d not in string.hexdigits for d in digits):
                raise ConfigError(f"malformed \\uxxxx escape in properties: {text!r}")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
        keep = len(out)
    result = "".join(out[:keep] if trim else out)
    try:  # \ud83d\ude00 (Java's UTF-16 pair) -> one code point
        return result.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return result


def _split_key_value(line: str) -> tuple[str, str]:
    """Java's rule: the key ends at the first unescaped '=', ':' or whitespace; then whitespace, at
    most one '=' or ':' and more whitespace are skipped; the rest is the value."""
    key_end = len(line)
    value_start = len(line)
    has_sep = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:":
            key_end, value_start, has_sep = i, i + 1, True
            break
        if c in _WS:
            key_end, value_start = i, i + 1
            break
        i += 1
    while value_start < len(line):
        c = line[value_start]
        if c not in _WS:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _unescape(line[:key_end], trim=False), _unescape(line[value_start:], trim=True)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: ``#``/``!`` comments, ``key=value``, ``key: value`` or
    ``key value``, backslash escapes and line continuation; later keys win. Values lose trailing
    unescaped whitespace (Kafka trims them anyway)."""
    lines = _LINE_BREAK.split(text)
    result: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _trailing_backslashes(line) % 2 == 1:
            line = line[:-1]
            if i >= len(lines):
                break
            line += lines[i].lstrip(_WS)
            i += 1
        key, value = _split_key_value(line)
        result[key] = value
    return result


def _escape(text: str, specials: str) -> str:
    out = []
    for c in text:
        if c == "\\":
            out.append("\\\\")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in specials:
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def format_properties(props: Mapping[str, str]) -> str:
    """Properties text that ``parse_properties`` reads back as ``props`` (one ``key=value`` a line)."""
    lines = []
    for key, value in props.items():
        escaped = _escape(value, "")
        if escaped.startswith(" "):
            escaped = "\\" + escaped
        if escaped.endswith(" ") and _trailing_backslashes(escaped[:-1]) % 2 == 0:
            escaped = escaped[:-1] + "\\ "  # an unescaped trailing space would be trimmed
        lines.append(f"{_escape(key, ' =:#!')}={escaped}\n")
    return "".join(lines)


def load_properties_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read and parse a properties file (UTF-8); ConfigError if it cannot be read."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return parse_properties(f.read())
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config file {os.fspath(path)!r}: {e}") from None
