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
from .errors import DecodeError, EncodeError
from .schema import Array, Field, Primitive, Struct

Encoder = Callable[[Any, bytearray], None]
Decoder = Callable[[Any, int], "tuple[Any, int]"]

_MISSING = object()


# --- value classes ---------------------------------------------------------------------------


def make_class(s: Struct) -> type:
    """A __slots__ class with every field of every version, keyword or positional construction."""
    names = [f.name for f in s.fields]
    env: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = [], []
    for i, f in enumerate(s.fields):
        d = f.default_value()
        if isinstance(d, (list, Struct)) or hasattr(d, "__slots__"):
            # Mutable default: a fresh one per instance.
            env[f"_d{i}"] = f.default_value
            params.append(f"{f.name}=_MISSING")
            body.append(f"    self.{f.name} = _d{i}() if {f.name} is _MISSING else {f.name}")
        else:
            env[f"_d{i}"] = d
            params.append(f"{f.name}=_d{i}")
            body.append(f"    self.{f.name} = {f.name}")
    params.append("unknown_tags=None")
    body.append("    self.unknown_tags = unknown_tags")
    src = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(compile(src, f"<kafkalite {s.name}.__init__>", "exec"), env)

    def __eq__(self: Any, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        if self.unknown_tags:
            inner += f", unknown_tags={self.unknown_tags!r}"
        return f"{s.name}({inner})"

    def to_dict(self: Any) -> dict:
        """Plain dicts and lists, recursively (for logging and comparison)."""
        return {n: _plain(getattr(self, n)) for n in names}

    return type(
        s.name,
        (),
        {
            "__slots__": tuple(names) + ("unknown_tags",),
            "__init__": env["__init__"],
            "__eq__": __eq__,
            "__hash__": None,
            "__repr__": __repr__,
            "to_dict": to_dict,
            "struct": s,
        },
    )


def _plain(v: Any) -> Any:
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if hasattr(v, "to_dict"):
        return v.to_dict()
    return v


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


class _Gen:
    """Accumulates generated source and the constants it refers to."""

    def __init__(self, cache: dict) -> None:
        self.env: dict[str, Any] = {
            "P": P,
            "DecodeError": DecodeError,
            "_struct": struct,
            "_write_uvarint": P.write_uvarint,
            "_read_uvarint": P.read_uvarint,
            "_ral": P.read_array_length,
            "_wal": P.write_array_length,
            "_read_tags": P.read_tags,
            "_write_tags": P.write_tags,
            "_UUID": P.uuid.UUID,
        }
        self.cache = cache
        self.n = 0

    def const(self, value: Any, prefix: str = "c") -> str:
        self.n += 1
        name = f"_{prefix}{self.n}"
        self.env[name] = value
        return name

    def struct_codec(self, s: Struct, version: int, flexible: bool) -> tuple[str, str]:
        enc, dec = compile_struct(s, version, flexible, self.cache)
        return self.const(enc, "enc"), self.const(dec, "dec")


def compile_struct(
    s: Struct, version: int, flexible: bool, cache: dict | None = None
) -> tuple[Encoder, Decoder]:
    """The encoder and decoder for ``s`` at ``version`` (memoised in ``cache``)."""
    cache = {} if cache is None else cache
    key = (id(s), version, flexible)
    if key in cache:
        return cache[key]
    g = _Gen(cache)
    enc_src = _encoder_source(g, s, version, flexible)
    dec_src = _decoder_source(g, s, version, flexible)
    g.env["_C"] = s.cls
    g.env["EncodeError"] = EncodeError
    exec(compile(enc_src + dec_src, f"<kafkalite {s.name} v{version}>", "exec"), g.env)
    cache[key] = (g.env["encode"], g.env["decode"])
    return cache[key]


def _encoder_source(g: _Gen, s: Struct, version: int, flexible: bool) -> str:
    lines: list[str] = []
    run: list[tuple[Field, str]] = []  # pending fixed-size fields merged into one pack call

    def flush() -> None:
        if run:
            fmt = ">" + "".join(_code(f) for f, _ in run)
            packer = g.const(struct.Struct(fmt).pack, "pack")
            lines.append(f"out += {packer}({', '.join(e for _, e in run)})")
            run.clear()

    for f in s.fields:
        if not f.present_in(version):
            continue
        expr = f"o.{f.name}"
        if isinstance(f.type, Primitive) and f.type.struct_code:
            run.append((f, expr))
            continue
        flush()
        lines += _encode_value(g, f.type, expr, version in f.nullable,
                               _field_flexible(f, version, flexible), version, "out", 0)
    flush()
    if flexible:
        lines += _encode_tags(g, s, version)
    body = "\n".join("    " + line for line in lines) or "    pass"
    return f"def encode(o, out):\n{body}\n"


def _encode_value(
    g: _Gen, t: Any, expr: str, nullable: bool, flexible: bool, version: int, out: str, depth: int
) -> list[str]:
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
        enc, _ = g.struct_codec(t, version, flexible)
        return [f"{enc}({expr}, {out})"]
    # Array
    v = f"_a{depth}"
    item = f"_i{depth}"
    lines = [f"{v} = {expr}"]
    null_line = f"_wal({out}, -1, {flexible})"
    if nullable:
        lines += [f"if {v} is None:", f"    {null_line}", "else:"]
        pad = "    "
    else:
        pad = ""
    inner = [f"_wal({out}, len({v}), {flexible})"]
    it = t.item
    if isinstance(it, Primitive) and it.struct_code:
        code = it.struct_code
        inner.append(f"{out} += _struct.pack('>%d{code}' % len({v}), *{v})")
    elif isinstance(it, Struct):
        enc, _ = g.struct_codec(it, version, flexible)
        inner += [f"for {item} in {v}:", f"    {enc}({item}, {out})"]
    else:
        inner.append(f"for {item} in {v}:")
        inner += ["    " + x for x in _encode_value(g, it, item, False, flexible, version, out, depth + 1)]
    lines += [pad + x for x in inner]
    return lines


def _encode_tags(g: _Gen, s: Struct, version: int) -> list[str]:
    tagged = sorted((f for f in s.fields if f.tagged_in(version)), key=lambda f: f.tag or 0)
    if not tagged:
        return [
            "_u = o.unknown_tags",
            "if _u:",
            "    _write_tags(out, sorted(_u.items()))",
            "else:",
            "    out.append(0)",
        ]
    lines = ["_t = []"]
    for f in tagged:
        d = g.const(f.default_value(), "d")
        lines.append(f"if o.{f.name} != {d}:")
        lines.append("    _b = bytearray()")
        lines += ["    " + x for x in _encode_value(g, f.type, f"o.{f.name}", version in f.nullable,
                                                     True, version, "_b", 0)]
        lines.append(f"    _t.append(({f.tag}, _b))")
    lines += [
        "_u = o.unknown_tags",
        "if _u:",
        "    _t.extend(_u.items())",
        "    _t.sort(key=lambda x: x[0])",
        "_write_tags(out, _t)",
    ]
    return lines


def _decoder_source(g: _Gen, s: Struct, version: int, flexible: bool) -> str:
    lines: list[str] = ["_n = len(buf)"]
    run: list[Field] = []
    values: dict[str, str] = {}

    def flush() -> None:
        if run:
            fmt = ">" + "".join(_code(f) for f in run)
            st = struct.Struct(fmt)
            unpacker = g.const(st.unpack_from, "unpack")
            targets = ", ".join(f"v_{f.name}" for f in run)
            lines.append(f"{targets}, = {unpacker}(buf, pos)")
            lines.append(f"pos += {st.size}")
            for f in run:
                values[f.name] = f"v_{f.name}"
            run.clear()

    for f in s.fields:
        if not f.present_in(version):
            continue
        if isinstance(f.type, Primitive) and f.type.struct_code:
            run.append(f)
            continue
        flush()
        var = f"v_{f.name}"
        lines += _decode_value(g, f.type, var, version in f.nullable,
                               _field_flexible(f, version, flexible), version, 0)
        values[f.name] = var
    flush()
    unknown = "None"
    if flexible:
        tagged = [f for f in s.fields if f.tagged_in(version)]
        readers = {}
        for f in tagged:
            readers[f.tag] = (f.name, _tag_reader(g, f, version))
        r = g.const(readers, "tags")
        lines += [
            "if buf[pos] == 0:",
            "    pos += 1",
            "    _u = None",
            "else:",
            f"    _u, pos = _read_tags(buf, pos, {r})",
        ]
        for f in tagged:
            d = g.const(f, "f")
            lines.append(
                f"v_{f.name} = _u.pop({f.name!r}) if _u and {f.name!r} in _u else {d}.default_value()"
            )
            values[f.name] = f"v_{f.name}"
        lines.append("_u = _u or None")
        unknown = "_u"
    args = []
    for f in s.fields:
        if f.name in values:
            args.append(values[f.name])
        else:
            args.append(f"{g.const(f, 'f')}.default_value()")
    args.append(unknown)
    what = g.const(f"{s.name} v{version}", "w")
    body = "\n".join("        " + line for line in lines)
    return (
        "def decode(buf, pos):\n"
        "    try:\n"
        f"{body}\n"
        "    except DecodeError:\n"
        "        raise\n"
        "    except (_struct.error, IndexError, ValueError, OverflowError, TypeError) as e:\n"
        f"        raise DecodeError(f'malformed {{{what}}}: {{e}}', offset=pos) from None\n"
        f"    return _C({', '.join(args)}), pos\n"
    )


def _tag_reader(g: _Gen, f: Field, version: int) -> Callable:
    lines = ["_n = len(buf)"] + _decode_value(g, f.type, "v", version in f.nullable, True, version, 0)
    body = "\n".join("    " + x for x in lines)
    src = f"def read(buf, pos):\n{body}\n    return v, pos\n"
    env = dict(g.env)
    exec(compile(src, f"<kafkalite tag {f.name}>", "exec"), env)
    reader: Callable = env["read"]
    return reader


def _decode_value(
    g: _Gen, t: Any, var: str, nullable: bool, flexible: bool, version: int, depth: int
) -> list[str]:
    """Lines that read a value of type ``t`` at ``pos`` into ``var`` and advance ``pos``."""
    if isinstance(t, Primitive):
        if t.struct_code:
            st = struct.Struct(">" + t.struct_code)
            unpacker = g.const(st.unpack_from, "unpack")
            return [f"{var}, = {unpacker}(buf, pos)", f"pos += {st.size}"]
        if t.name == "uuid":
            return [
                "if pos + 16 > _n: raise DecodeError('truncated uuid', offset=pos)",
                f"{var} = _UUID(bytes=bytes(buf[pos:pos + 16]))",
                "pos += 16",
            ]
        if t.name == "string":
            fn = "read_compact_string" if flexible else "read_string"
        else:
            fn = "read_compact_bytes" if flexible else "read_bytes"
        return [f"{var}, pos = P.{fn}(buf, pos, {nullable})"]
    if isinstance(t, Struct):
        _, dec = g.struct_codec(t, version, flexible)
        return [f"{var}, pos = {dec}(buf, pos)"]
    it = t.item
    count = f"_c{depth}"
    lines = [f"{count}, pos = _ral(buf, pos, {flexible}, {nullable}, {min_size(it, version, flexible)})"]
    if nullable:
        lines += [f"if {count} < 0:", f"    {var} = None", "else:"]
        pad = "    "
    else:
        pad = ""
    inner: list[str] = []
    if isinstance(it, Primitive) and it.struct_code:
        code = it.struct_code
        inner += [
            f"{var} = list(_struct.unpack_from('>%d{code}' % {count}, buf, pos))",
            f"pos += {it.size} * {count}",
        ]
    elif isinstance(it, Struct) and (layout := _fixed_layout(it, version, flexible)) is not None:
        inner += _decode_fixed_array(g, it, version, flexible, layout, var, count, depth)
    elif isinstance(it, Struct):
        _, dec = g.struct_codec(it, version, flexible)
        item = f"_x{depth}"
        inner += [
            f"{var} = []",
            f"for _ in range({count}):",
            f"    {item}, pos = {dec}(buf, pos)",
            f"    {var}.append({item})",
        ]
    else:
        item = f"_x{depth}"
        inner += [f"{var} = []", f"for _ in range({count}):"]
        inner += ["    " + x for x in _decode_value(g, it, item, False, flexible, version, depth + 1)]
        inner.append(f"    {var}.append({item})")
    lines += [pad + x for x in inner]
    return lines


def _fixed_layout(s: Struct, version: int, flexible: bool) -> struct.Struct | None:
    """The row layout of ``s`` when every field it has in ``version`` is fixed-size and untagged."""
    if any(f.tagged_in(version) for f in s.fields):
        return None
    present = [f for f in s.fields if f.present_in(version)]
    if not present or not all(isinstance(f.type, Primitive) and f.type.struct_code for f in present):
        return None
    # In flexible versions each element ends with its tagged-field count, one byte when it is 0.
    return struct.Struct(">" + "".join(_code(f) for f in present) + ("B" if flexible else ""))


def _decode_fixed_array(
    g: _Gen, s: Struct, version: int, flexible: bool, layout: struct.Struct, var: str, count: str,
    depth: int,
) -> list[str]:
    """An array of fixed-size structs read with one iter_unpack call: the hot shape of Kafka's
    messages (api keys, partition states). Elements that carry tagged fields fall back to the
    general decoder for the whole array."""
    rows = g.const(layout.iter_unpack, "rows")
    names = [f"_r{depth}_{f.name}" for f in s.fields if f.present_in(version)]
    args = []
    for f in s.fields:
        args.append(f"_r{depth}_{f.name}" if f.present_in(version)
                    else f"{g.const(f, 'f')}.default_value()")
    cls = g.const(s.cls, "cls")
    end = f"_e{depth}"
    lines = [
        f"{end} = pos + {count} * {layout.size}",
        f"if {end} > _n: raise DecodeError('truncated array', offset=pos)",
    ]
    target = ", ".join(names) + (f", _t{depth}" if flexible else "")
    cond = f" if not _t{depth}" if flexible else ""
    lines.append(f"{var} = [{cls}({', '.join(args)}) for {target} in {rows}(memoryview(buf)[pos:{end}]){cond}]")
    if flexible:
        _, dec = g.struct_codec(s, version, flexible)
        item = f"_x{depth}"
        lines += [
            f"if len({var}) != {count}:",
            f"    {var} = []",
            f"    for _ in range({count}):",
            f"        {item}, pos = {dec}(buf, pos)",
            f"        {var}.append({item})",
            "else:",
            f"    pos = {end}",
        ]
    else:
        lines.append(f"pos = {end}")
    return lines
