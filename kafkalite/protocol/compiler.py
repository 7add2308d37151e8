"""Turns declarations (schema.py) into value classes and per-version encoders and decoders.

Each (struct, version, flexible) pair gets two plain Python functions generated as source and
compiled once: ``encode(obj, out: bytearray)`` and ``decode(buf, pos) -> (obj, pos)``. Runs of
fixed-size fields become one ``struct`` call, and fields absent from a version are not looked at.
Generating code rather than interpreting the schema per message is what makes the codec fast.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from . import primitives as P
from .errors import DecodeError
from .schema import Array, Field, Primitive, Struct

Encoder = Callable[[Any, bytearray], None]
Decoder = Callable[[Any, int], "tuple[Any, int]"]

# --- sizes -----------------------------------------------------------------------------------


def min_size(t: Any, version: int, flexible: bool) -> int:
    """The fewest bytes a value of type ``t`` can take (bounds array lengths before allocating)."""
    if isinstance(t, Primitive):
        if t.size is not None:
            return t.size
        return 1 if flexible else (2 if t.name == "string" else 4)
    if isinstance(t, Array):
        return 1 if flexible else 4
    total = 1 if flexible else 0
    for f in t.fields:
        if f.present_in(version):
            if isinstance(f.type, Struct) and version in f.nullable:
                total += 1  # a null struct: its marker byte
            else:
                total += min_size(f.type, version, _field_flexible(f, version, flexible))
    return total


def _code(f: Field) -> str:
    assert isinstance(f.type, Primitive) and f.type.struct_code
    return f.type.struct_code


def _field_flexible(f: Field, version: int, flexible: bool) -> bool:
    if f.flexible is not None:
        return version in f.flexible
    return flexible


# --- code generation -------------------------------------------------------------------------
#
# A struct's encoder and decoder are one function each; structs nested in it (array elements,
# struct fields) are generated inline, inside the parent's loop, so an element costs no function
# call. Every local name carries a number from the generator so that inlined bodies never clash.

_SMALL = 127  # arrays shorter than this use a prebuilt struct for their exact length


def _sized_structs(code: str) -> list[struct.Struct]:
    return [struct.Struct(f">{n}{code}") for n in range(_SMALL)]


class _Gen:
    """Accumulates generated source and the constants it refers to."""

    def __init__(self, cache: dict) -> None:
        self.env: dict[str, Any] = {
            "P": P,
            "DecodeError": DecodeError,
            "_struct": struct,
            "_write_uvarint": P.write_uvarint,
            "_ral": P.read_array_length,
            "_wal": P.write_array_length,
            "_read_tags": P.read_tags,
            "_write_tags": P.write_tags,
            "_UUID": P.uuid_from_bytes,
            "_I32": P.INT32.unpack_from,
            "_PI32": P.INT32.pack,
        }
        self.cache = cache
        self.n = 0

    def uid(self) -> int:
        self.n += 1
        return self.n

    def const(self, value: Any, prefix: str = "c") -> str:
        name = f"_{prefix}{self.uid()}"
        self.env[name] = value
        return name

    def sized(self, code: str, unpack: bool) -> str:
        """A constant naming the list of prebuilt pack/unpack functions for arrays of ``code``."""
        key = f"_{'U' if unpack else 'W'}{code}"
        if key not in self.env:
            self.env[key] = [st.unpack_from if unpack else st.pack for st in _sized_structs(code)]
        return key


def compile_struct(
    s: Struct, version: int, flexible: bool, cache: dict | None = None
) -> tuple[Encoder, Decoder]:
    """The encoder and decoder for ``s`` at ``version`` (memoised in ``cache``)."""
    cache = {} if cache is None else cache
    key = (id(s), version, flexible)
    if key in cache:
        return cache[key]
    g = _Gen(cache)
    enc_lines = _encode_struct(g, s, version, flexible, "o", "out")
    dec_lines, ctor = _decode_struct(g, s, version, flexible)
    what = g.const(f"{s.name} v{version}", "w")
    src = (
        "def encode(o, out):\n" + _indent(enc_lines or ["pass"], 1) + "\n"
        "def decode(buf, pos):\n"
        "    _n = len(buf)\n"
        "    try:\n" + _indent(dec_lines, 2) + "\n"
        f"        return {ctor}, pos\n"
        "    except DecodeError:\n"
        "        raise\n"
        "    except (_struct.error, IndexError, ValueError, OverflowError, TypeError) as e:\n"
        f"        raise DecodeError(f'malformed {{{what}}}: {{e}}', offset=pos) from None\n"
    )
    exec(compile(src, f"<kafkalite {s.name} v{version}>", "exec"), g.env)
    cache[key] = (g.env["encode"], g.env["decode"])
    return cache[key]


def _indent(lines: list[str], depth: int) -> str:
    pad = "    " * depth
    return "\n".join(pad + line for line in lines)


def generated_source(s: Struct, version: int, flexible: bool) -> str:
    """The Python source the compiler writes for ``s`` at ``version`` (for docs and debugging)."""
    g = _Gen({})
    dec_lines, ctor = _decode_struct(g, s, version, flexible)
    return ("def encode(o, out):\n" + _indent(_encode_struct(g, s, version, flexible, "o", "out"), 1)
            + "\n\ndef decode(buf, pos):  # inside try/except -> DecodeError\n"
            + _indent(dec_lines, 1) + f"\n    return {ctor}, pos\n")


# --- encoding --------------------------------------------------------------------------------


def _encode_struct(g: _Gen, s: Struct, version: int, flexible: bool, obj: str, out: str) -> list[str]:
    """Lines appending struct value ``obj`` to bytearray ``out``."""
    lines: list[str] = []
    run: list[tuple[Field, str]] = []  # pending fixed-size fields merged into one pack call

    def flush() -> None:
        if run:
            fmt = ">" + "".join(_code(f) for f, _ in run)
            packer = g.const(struct.Struct(fmt).pack, "pack")
            lines.append(f"{out} += {packer}({', '.join(e for _, e in run)})")
            run.clear()

    for f in s.fields:
        if not f.present_in(version):
            continue
        expr = f"{obj}.{f.name}"
        if isinstance(f.type, Primitive) and f.type.struct_code:
            run.append((f, expr))
            continue
        flush()
        lines += _encode_value(g, f.type, expr, version in f.nullable,
                               _field_flexible(f, version, flexible), version, out)
    flush()
    if flexible:
        lines += _encode_tags(g, s, version, obj, out)
    return lines


def _encode_length(out: str, n: str, flexible: bool) -> list[str]:
    if flexible:
        return [f"if {n} < 127:", f"    {out}.append({n} + 1)", "else:",
                f"    _write_uvarint({out}, {n} + 1)"]
    return [f"{out} += _PI32({n})"]


def _encode_value(g: _Gen, t: Any, expr: str, nullable: bool, flexible: bool, version: int,
                  out: str) -> list[str]:
    """Lines that append ``expr`` (of type ``t``) to the bytearray named ``out``."""
    if isinstance(t, Primitive):
        if t.struct_code:
            packer = g.const(struct.Struct(">" + t.struct_code).pack, "pack")
            return [f"{out} += {packer}({expr})"]
        if t.name == "uuid":
            return [f"{out} += {expr}.bytes"]
        if t.name == "string":
            fn = "write_compact_string" if flexible else "write_string"
            return [f"P.{fn}({out}, {expr}, {nullable})"]
        fn = "write_compact_bytes" if flexible else "write_bytes"
        return [f"P.{fn}({out}, {expr}, {nullable})"]
    if isinstance(t, Struct):
        obj = f"_s{g.uid()}"
        body = _encode_struct(g, t, version, flexible, obj, out)
        if not nullable:
            return [f"{obj} = {expr}", *body]
        # A nullable struct (Kafka's nullableVersions on a struct field): one byte, -1 for null,
        # 1 before the struct.
        return [f"{obj} = {expr}", f"if {obj} is None:", f"    {out}.append(0xFF)", "else:",
                f"    {out}.append(1)"] + ["    " + x for x in body]
    k = g.uid()
    v, n, item = f"_a{k}", f"_l{k}", f"_i{k}"
    lines = [f"{v} = {expr}"]
    if nullable:
        lines += [f"if {v} is None:", f"    _wal({out}, -1, {flexible})", "else:"]
        pad = "    "
    else:
        pad = ""
    inner = [f"{n} = len({v})"] + _encode_length(out, n, flexible)
    it = t.item
    if isinstance(it, Primitive) and it.struct_code:
        w = g.sized(it.struct_code, unpack=False)
        inner += [f"if {n} < {_SMALL}:", f"    {out} += {w}[{n}](*{v})", "else:",
                  f"    {out} += _struct.pack('>%d{it.struct_code}' % {n}, *{v})"]
    else:
        body = (_encode_struct(g, it, version, flexible, item, out) if isinstance(it, Struct)
                else _encode_value(g, it, item, False, flexible, version, out))
        inner += [f"for {item} in {v}:"] + ["    " + x for x in body]
    return lines + [pad + x for x in inner]


def _encode_tags(g: _Gen, s: Struct, version: int, obj: str, out: str) -> list[str]:
    tagged = sorted((f for f in s.fields if f.tagged_in(version)), key=lambda f: f.tag or 0)
    u = f"_u{g.uid()}"
    if not tagged:
        return [f"{u} = {obj}.unknown_tags", f"if {u}:", f"    _write_tags({out}, sorted({u}.items()))",
                "else:", f"    {out}.append(0)"]
    t = f"_t{g.uid()}"
    lines = [f"{t} = []"]
    for f in tagged:
        d = g.const(f.default_value(), "d")
        b = f"_b{g.uid()}"
        lines += [f"if {obj}.{f.name} != {d}:", f"    {b} = bytearray()"]
        lines += ["    " + x for x in _encode_value(g, f.type, f"{obj}.{f.name}", version in f.nullable,
                                                     True, version, b)]
        lines.append(f"    {t}.append(({f.tag}, {b}))")
    return lines + [f"{u} = {obj}.unknown_tags", f"if {u}:", f"    {t}.extend({u}.items())",
                    f"    {t}.sort(key=lambda x: x[0])", f"_write_tags({out}, {t})"]


# --- decoding --------------------------------------------------------------------------------


def _decode_struct(g: _Gen, s: Struct, version: int, flexible: bool) -> tuple[list[str], str]:
    """Lines reading struct ``s`` at ``pos`` into locals, and the expression that builds it."""
    k = g.uid()
    lines: list[str] = []
    run: list[Field] = []
    values: dict[str, str] = {}

    def var(f: Field) -> str:
        return f"v{k}_{f.name}"

    def flush() -> None:
        if run:
            st = struct.Struct(">" + "".join(_code(f) for f in run))
            unpacker = g.const(st.unpack_from, "unpack")
            lines.append(f"{', '.join(var(f) for f in run)}, = {unpacker}(buf, pos)")
            lines.append(f"pos += {st.size}")
            for f in run:
                values[f.name] = var(f)
            run.clear()

    for f in s.fields:
        if not f.present_in(version):
            continue
        if isinstance(f.type, Primitive) and f.type.struct_code:
            run.append(f)
            continue
        flush()
        lines += _decode_value(g, f.type, var(f), version in f.nullable,
                               _field_flexible(f, version, flexible), version)
        values[f.name] = var(f)
    flush()
    unknown = "None"
    if flexible:
        u = f"_u{k}"
        tagged = [f for f in s.fields if f.tagged_in(version)]
        readers = {f.tag: (f.name, _tag_reader(g, f, version)) for f in tagged}
        r = g.const(readers, "tags")
        lines += ["if buf[pos] == 0:", "    pos += 1", f"    {u} = None", "else:",
                  f"    {u}, pos = _read_tags(buf, pos, {r})"]
        if not tagged:
            lines.append(f"    {u} = {u} or None")
        for f in tagged:
            d = g.const(f, "f")
            lines.append(f"{var(f)} = {u}.pop({f.name!r}) if {u} and {f.name!r} in {u} "
                         f"else {d}.default_value()")
            values[f.name] = var(f)
        if tagged:
            lines.append(f"{u} = {u} or None")
        unknown = u
    args = [values[f.name] if f.name in values else f"{g.const(f, 'f')}.default_value()"
            for f in s.fields]
    cls = g.const(s.cls, "cls")
    return lines, f"{cls}({', '.join([*args, unknown])})"


def _tag_reader(g: _Gen, f: Field, version: int) -> Callable:
    lines = ["_n = len(buf)"] + _decode_value(g, f.type, "v", version in f.nullable, True, version)
    src = "def read(buf, pos):\n" + _indent(lines, 1) + "\n    return v, pos\n"
    env = dict(g.env)
    exec(compile(src, f"<kafkalite tag {f.name}>", "exec"), env)
    reader: Callable = env["read"]
    return reader


def _decode_length(g: _Gen, count: str, flexible: bool, nullable: bool, min_item: int) -> list[str]:
    """Read an array length into ``count`` (-1: null). The common case, a one-byte compact length,
    is inline: under 127 elements nothing large is allocated and a short buffer fails in the reads
    that follow. Anything else goes through read_array_length, which checks the length against
    the bytes left before anything is allocated."""
    m = max(min_item, 1)
    slow = f"    {count}, pos = _ral(buf, pos, {flexible}, {nullable}, {min_item})"
    if flexible:
        return [f"{count} = buf[pos] - 1", f"if 0 <= {count} < 127:", "    pos += 1", "else:", slow]
    return [f"{count}, = _I32(buf, pos)",
            f"if 0 <= {count} and {count} * {m} <= _n - pos - 4:",
            "    pos += 4", "else:", slow]


def _decode_value(g: _Gen, t: Any, var: str, nullable: bool, flexible: bool, version: int) -> list[str]:
    """Lines that read a value of type ``t`` at ``pos`` into ``var`` and advance ``pos``."""
    if isinstance(t, Primitive):
        if t.struct_code:
            st = struct.Struct(">" + t.struct_code)
            unpacker = g.const(st.unpack_from, "unpack")
            return [f"{var}, = {unpacker}(buf, pos)", f"pos += {st.size}"]
        if t.name == "uuid":
            return ["if pos + 16 > _n: raise DecodeError('truncated uuid', offset=pos)",
                    f"{var} = _UUID(buf[pos:pos + 16])", "pos += 16"]
        if t.name == "string":
            fn = "read_compact_string" if flexible else "read_string"
        elif t.name == "records":
            fn = "read_compact_records" if flexible else "read_records"
        else:
            fn = "read_compact_bytes" if flexible else "read_bytes"
        return [f"{var}, pos = P.{fn}(buf, pos, {nullable})"]
    if isinstance(t, Struct):
        lines, ctor = _decode_struct(g, t, version, flexible)
        if not nullable:
            return [*lines, f"{var} = {ctor}"]
        # A negative marker byte is a null struct (Kafka's readByte() < 0).
        m = f"_m{g.uid()}"
        return [f"{m} = buf[pos]", "pos += 1", f"if {m} >= 128:", f"    {var} = None", "else:"] \
            + ["    " + x for x in [*lines, f"{var} = {ctor}"]]
    it = t.item
    k = g.uid()
    count = f"_c{k}"
    if flexible and isinstance(it, Primitive) and it.struct_code:
        # The hot shape (replica and ISR lists): a one-byte length and the elements in one branch.
        u = g.sized(it.struct_code, unpack=True)
        slow = [f"{count}, pos = _ral(buf, pos, True, {nullable}, {it.size})"]
        if nullable:
            slow += [f"if {count} < 0:", f"    {var} = None", "else:"]
        fmt = f"'>%d{it.struct_code}' % {count}"
        slow += [("    " if nullable else "") + x for x in
                 [f"{var} = list(_struct.unpack_from({fmt}, buf, pos))", f"pos += {it.size} * {count}"]]
        return [f"{count} = buf[pos] - 1", f"if 0 <= {count} < {_SMALL}:",
                f"    {var} = list({u}[{count}](buf, pos + 1))",
                f"    pos += 1 + {it.size} * {count}", "else:"] + ["    " + x for x in slow]
    lines = _decode_length(g, count, flexible, nullable, min_size(it, version, flexible))
    if nullable:
        lines += [f"if {count} < 0:", f"    {var} = None", "else:"]
        pad = "    "
    else:
        pad = ""
    inner: list[str] = []
    if isinstance(it, Primitive) and it.struct_code:
        u = g.sized(it.struct_code, unpack=True)
        inner += [f"if {count} < {_SMALL}:",
                  f"    {var} = list({u}[{count}](buf, pos))",
                  "else:",
                  f"    {var} = list(_struct.unpack_from('>%d{it.struct_code}' % {count}, buf, pos))",
                  f"pos += {it.size} * {count}"]
    elif isinstance(it, Struct) and (layout := _fixed_layout(it, version, flexible)) is not None:
        inner += _decode_fixed_array(g, it, version, flexible, layout, var, count)
    elif isinstance(it, Struct):
        body, ctor = _decode_struct(g, it, version, flexible)
        app = f"_ap{k}"
        inner += [f"{var} = []", f"{app} = {var}.append", f"for _ in range({count}):"]
        inner += ["    " + x for x in body] + [f"    {app}({ctor})"]
    else:
        item = f"_x{k}"
        inner += [f"{var} = []", f"for _ in range({count}):"]
        inner += ["    " + x for x in _decode_value(g, it, item, False, flexible, version)]
        inner.append(f"    {var}.append({item})")
    return lines + [pad + x for x in inner]


def _fixed_layout(s: Struct, version: int, flexible: bool) -> struct.Struct | None:
    """The row layout of ``s`` when every field it has in ``version`` is fixed-size and untagged."""
    if any(f.tagged_in(version) for f in s.fields):
        return None
    present = [f for f in s.fields if f.present_in(version)]
    if not present or not all(isinstance(f.type, Primitive) and f.type.struct_code for f in present):
        return None
    # In flexible versions each element ends with its tagged-field count, one byte when it is 0.
    return struct.Struct(">" + "".join(_code(f) for f in present) + ("B" if flexible else ""))


def _decode_fixed_array(g: _Gen, s: Struct, version: int, flexible: bool, layout: struct.Struct,
                        var: str, count: str) -> list[str]:
    """An array of fixed-size structs read with one iter_unpack call: the hot shape of Kafka's
    messages (api keys, partition states). Elements that carry tagged fields fall back to the
    general loop for the whole array."""
    k = g.uid()
    rows = g.const(layout.iter_unpack, "rows")
    names = [f"_r{k}_{f.name}" for f in s.fields if f.present_in(version)]
    args = [f"_r{k}_{f.name}" if f.present_in(version) else f"{g.const(f, 'f')}.default_value()"
            for f in s.fields]
    cls = g.const(s.cls, "cls")
    end = f"_e{k}"
    lines = [f"{end} = pos + {count} * {layout.size}",
             f"if {end} > _n: raise DecodeError('truncated array', offset=pos)"]
    # The trailing comma unpacks a one-field row too (``for a, in rows``), not just bind its tuple.
    target = ", ".join(names) + (f", _t{k}" if flexible else ",")
    cond = f" if not _t{k}" if flexible else ""
    lines.append(f"{var} = [{cls}({', '.join(args)}) for {target} in "
                 f"{rows}(memoryview(buf)[pos:{end}]){cond}]")
    if not flexible:
        return lines + [f"pos = {end}"]
    body, ctor = _decode_struct(g, s, version, flexible)
    return lines + [f"if len({var}) != {count}:", f"    {var} = []", f"    for _ in range({count}):"] \
        + ["        " + x for x in body] + [f"        {var}.append({ctor})", "else:", f"    pos = {end}"]
