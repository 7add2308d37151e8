"""The hot path compiled ahead of time with mypyc, against the pure-Python modules, in one run.

``build`` copies the kafkalite package to a folder, changes there what mypyc rejects or checks
differently (PATCHES, each explained), and compiles HOT_MODULES with mypyc; it also writes the
codec's run-time generated encoders/decoders for the codec bench's messages as one module of
plain functions and compiles that too (GENERATED), since the generated code, not codec.py, is
where the codec spends its time. ``run`` then times, in child processes taken in turn (pure,
compiled, pure, ...), the per-request steps (frame split, request decode, response encode) and the
codec bench's messages, in thread CPU time, best of the rounds; and with ``network_rounds`` the
network bench's server CPU per ApiVersions request, the server started with the compiled copy
first on PYTHONPATH or without it, in turn. Nothing here changes kafkalite: the copy is scratch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kafkalite
from kafkalite.protocol import FrameDecoder, decode_body, decode_request, encode_body, encode_response
from kafkalite.protocol import codec as _codec
from kafkalite.protocol import compiler as C
from kafkalite.protocol import headers as H
from kafkalite.protocol.codec import body_codec
from kafkalite.protocol.messages import api_versions

from .codec import Case, cases
from .markdown import machine, write_section
from .network import run as netrun

# The hot path: the frame decoder, the codec's entry points and primitives, the request
# header, the KafkaChannel and the Processor loop.
HOT_MODULES = (
    "kafkalite/protocol/frames.py",
    "kafkalite/protocol/headers.py",
    "kafkalite/protocol/primitives.py",
    "kafkalite/protocol/codec.py",
    "kafkalite/network/channel.py",
    "kafkalite/network/processor.py",
)

_BUF = "bytes | bytearray | memoryview"
# What mypyc rejects, or checks where CPython does not, in HOT_MODULES as written; each is
# behaviour-neutral in pure Python. (file, pattern, replacement, why)
PATCHES: tuple[tuple[str, str, str, str], ...] = (
    ("kafkalite/protocol/primitives.py", r"(?m)^class SpliceBuffer\(bytearray\):",
     "from mypy_extensions import mypyc_attr\n\n\n@mypyc_attr(native_class=False)\n"
     "class SpliceBuffer(bytearray):",
     "a native class cannot inherit from bytearray"),
    ("kafkalite/protocol/primitives.py", r"\b(buf|b): bytes\b(?=[,)])", rf"\1: {_BUF}",
     "decoders read bytearrays and memoryviews through parameters typed bytes (mypy's promotion, "
     "unchecked as the generated callers are untyped); compiled, bytes means exactly bytes"),
    ("kafkalite/protocol/primitives.py", r"list\[tuple\[int, bytes\]\]", f"list[tuple[int, {_BUF}]]",
     "the generated encoders pass tagged fields as bytearrays"),
    ("kafkalite/network/processor.py",
     r"except queue\.Full:\n(\s+)continue\n(\s+)finally:\n(\s+)self\._take_turn\(\)\n",
     r"except queue.Full:\n\1taken = -1\n\2finally:\n\3self._take_turn()\n\2if taken < 0:\n\1continue\n",
     "continue inside try/finally is unimplemented in mypyc"),
)

GENERATED = "kafkalite_generated_codec"  # the module of generated encoders/decoders, in the build


def _generated_cases() -> list[tuple[str, Any, int, bool]]:
    """(tag, struct, version, flexible) for the codec bench's messages and the request header."""
    out = []
    for i, c in enumerate(cases()):
        a = kafkalite.protocol.get_api(c.api_key)
        out.append((f"m{i}", a.response if c.response else a.request, c.version, a.is_flexible(c.version)))
    out.append(("hdr", H.REQUEST_HEADER, 2, True))
    return out


def generated_module() -> tuple[str, dict[str, Any]]:
    """The generated encoders/decoders as one module's source (``<tag>_encode``/``<tag>_decode``)
    and the constants they refer to, which the module gets as globals after import: the same
    source the codec exec()s, so the two are timed on equal code."""
    lines = ["# mypy: disable-error-code=\"var-annotated\"", "from typing import Any",
             "import struct as _struct", "from kafkalite.protocol import primitives as P",
             "from kafkalite.protocol.errors import DecodeError", ""]
    env: dict[str, Any] = {}
    for tag, s, version, flexible in _generated_cases():
        g = C._Gen({})
        enc = C._encode_struct(g, s, version, flexible, "o", "out")
        dec, ctor = C._decode_struct(g, s, version, flexible)
        what = g.const(f"{s.name} v{version}", "w")
        src = (f"def {tag}_encode(o: Any, out: bytearray) -> None:\n" + C._indent(enc or ["pass"], 1)
               + f"\n\ndef {tag}_decode(buf: Any, pos: int) -> Any:\n    _n = len(buf)\n    try:\n"
               + C._indent(dec, 2) + f"\n        return {ctor}, pos\n    except DecodeError:\n        raise\n"
               "    except (_struct.error, IndexError, ValueError, OverflowError, TypeError) as e:\n"
               f"        raise DecodeError(f'malformed {{{what}}}: {{e}}', offset=pos) from None\n")
        consts = {k: v for k, v in g.env.items()
                  if k not in ("P", "DecodeError", "_struct", "__builtins__", "encode", "decode")}
        for k in sorted(consts, key=len, reverse=True):  # one namespace per message
            src = re.sub(r"(?<![\w.])" + re.escape(k) + r"\b", f"{tag}{k}", src)
        for k, v in consts.items():
            env[f"{tag}{k}"] = v
            lines.append(f"{tag}{k}: Any = None")
        lines.append(src)
    return "\n".join(lines) + "\n", env


def build(dest: Path, reuse: bool = False) -> Path:
    """A copy of kafkalite in ``dest`` with HOT_MODULES and GENERATED compiled by mypyc (with
    ``reuse``, an earlier build there as it is)."""
    if reuse and list((dest / "kafkalite" / "protocol").glob("codec.*.so")):
        print(f"reusing the build in {dest}", flush=True)
        return dest
    source = Path(kafkalite.__file__).parent
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(source, dest / "kafkalite", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for path, pattern, replacement, why in PATCHES:
        f = dest / path
        text, n = re.subn(pattern, replacement, f.read_text())
        if not n:
            raise RuntimeError(f"{path} changed: the patch for '{why}' no longer applies")
        f.write_text(text)
    src, _ = generated_module()
    (dest / f"{GENERATED}.py").write_text(src)
    started = time.monotonic()
    # Without the project's setup.cfg: mypy's defaults, not strict, as compiling needs no more.
    done = subprocess.run([sys.executable, "-m", "mypyc", *HOT_MODULES, f"{GENERATED}.py"], cwd=dest,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"mypyc failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    print(f"compiled {len(HOT_MODULES)} modules and the generated codec in "
          f"{time.monotonic() - started:.0f} s into {dest}", flush=True)
    shutil.rmtree(dest / "build", ignore_errors=True)
    return dest


# --- the child: per-operation CPU cost in this interpreter's kafkalite --------------------------


def _cpu_us(fn: Callable[[], object], calls: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - t) / calls)
    return best * 1e6


def _calls_for(fn: Callable[[], object], seconds: float) -> int:
    n, t = 0, time.thread_time()
    while time.thread_time() - t < seconds:
        fn()
        n += 1
    return max(n, 1)


def _operations() -> list[tuple[str, Callable[[], object]]]:
    request = api_versions.REQUEST(client_software_name="bench", client_software_version="1")
    frame = kafkalite.protocol.encode_request(18, 3, 7, "bench", request)
    fifty = frame * 50
    payload = bytearray(frame[4:])
    response = cases()[0].value

    def split_frames() -> object:
        d = FrameDecoder(1 << 20)
        d.feed(fifty)
        return list(d.frames())

    ops: list[tuple[str, Callable[[], object]]] = [
        ("frame decoder: 50 ApiVersions requests in one read", split_frames),
        ("decode_request: ApiVersions v3 request", lambda: decode_request(payload)),
        ("encode_response: ApiVersions v3, 68 keys", lambda: encode_response(18, 3, 7, response)),
    ]
    for c in cases():
        data = encode_body(c.api_key, c.version, c.value, c.response)
        ops.append((f"encode {c.name}", _encoder(c)))
        ops.append((f"decode {c.name}", _decoder(c, data)))
    return ops


def _encoder(c: Case) -> Callable[[], object]:
    return lambda: encode_body(c.api_key, c.version, c.value, c.response)


def _decoder(c: Case, data: bytes) -> Callable[[], object]:
    return lambda: decode_body(c.api_key, c.version, data, response=c.response)


def _generated_operations() -> list[tuple[str, Callable[[], object]]]:
    """The same messages through the mypyc-compiled copy of the generated code (None if absent)."""
    try:
        mod = __import__(GENERATED)
    except ImportError:
        return []
    _, env = generated_module()
    for k, v in env.items():
        setattr(mod, k, v)
    ops: list[tuple[str, Callable[[], object]]] = []
    for i, c in enumerate(cases()):
        enc, dec = getattr(mod, f"m{i}_encode"), getattr(mod, f"m{i}_decode")
        ref = encode_body(c.api_key, c.version, c.value, c.response)
        out = bytearray()
        enc(c.value, out)
        assert out == ref and dec(ref, 0)[0] == body_codec(c.api_key, c.version, c.response)[1](ref, 0)[0]
        ops.append((f"encode {c.name}", _call(enc, c.value)))
        ops.append((f"decode {c.name}", _decode_call(dec, ref)))
    return ops


def _call(enc: Callable[[Any, bytearray], None], value: object) -> Callable[[], object]:
    return lambda: enc(value, bytearray())


def _decode_call(dec: Callable[[Any, int], Any], data: bytes) -> Callable[[], object]:
    return lambda: dec(data, 0)


def child(seconds: float, rounds: int) -> dict[str, Any]:
    ops = _operations()
    result: dict[str, Any] = {"compiled": Path(_codec.__file__ or "").suffix == ".so",
                              "ops": {}, "generated": {}}
    for name, fn in ops:
        result["ops"][name] = _cpu_us(fn, _calls_for(fn, seconds / rounds), rounds)
    for name, fn in _generated_operations():
        result["generated"][name] = _cpu_us(fn, _calls_for(fn, seconds / rounds), rounds)
    return result


# --- the parent --------------------------------------------------------------------------------


def _env(build_dir: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    path = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if build_dir is not None:
        path.insert(0, str(build_dir))
    env["PYTHONPATH"] = os.pathsep.join(path)
    return env


def _run_child(build_dir: Path | None, seconds: float) -> dict[str, Any]:
    # -P: not the working directory first on sys.path, where a checkout's own kafkalite would win.
    out = subprocess.run([sys.executable, "-P", "-m", "kafkalite_bench.compiled", str(seconds)],
                         env=_env(build_dir), capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if result["compiled"] != (build_dir is not None):
        raise RuntimeError(f"the child ran the wrong build: {result}")
    return result


def micro(build_dir: Path, rounds: int, seconds: float) -> str:
    best: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        for label, where in (("pure", None), ("mypyc", build_dir)):
            r = _run_child(where, seconds)
            for name, us in r["ops"].items():
                best[label, name] = min(best.get((label, name), float("inf")), us)
            for name, us in r["generated"].items():
                best["generated", name] = min(best.get(("generated", name), float("inf")), us)
    names = [n for (label, n) in best if label == "pure"]
    rows = ["| operation | pure us | hot modules compiled us | pure / compiled | generated code compiled us "
            "| pure / generated compiled |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for n in names:
        p, m = best["pure", n], best["mypyc", n]
        g = best.get(("generated", n))
        gcells = f"{g:,.2f} | {p / g:.2f}x" if g else "n/a | n/a"
        rows.append(f"| {n} | {p:,.2f} | {m:,.2f} | {p / m:.2f}x | {gcells} |")
    return "\n".join(rows)


def network(build_dir: Path, rounds: int, seconds: float, warmup: float) -> str:
    scenario = netrun.Scenario(50, 1)
    cpu: dict[tuple[str, tuple[int, int]], list[float]] = {}
    saved, cwd = os.environ.get("PYTHONPATH"), os.getcwd()
    # The servers start with `python -m` in this process's directory, first on their sys.path: one
    # without a kafkalite package in it, so that PYTHONPATH decides which kafkalite runs.
    os.chdir(build_dir.parent)
    try:
        for _ in range(rounds):
            for threads in ((1, 1), (3, 8)):
                for label, where in (("pure", None), ("mypyc", build_dir)):
                    os.environ["PYTHONPATH"] = _env(where)["PYTHONPATH"]  # the server's, inherited
                    r = netrun.measure("kafkalite", scenario, seconds, warmup, threads)
                    cpu.setdefault((label, threads), []).append(r.cpu_us_per_request)
                    print(f"{label} {threads[0]}+{threads[1]}: {r.cpu_us_per_request:.1f} us CPU/request, "
                          f"{r.throughput:,.0f} req/s", flush=True)
    finally:
        os.chdir(cwd)
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    rows = ["| threads | pure server CPU us/req | compiled server CPU us/req | pure / compiled |",
            "| --- | ---: | ---: | ---: |"]
    for threads in ((1, 1), (3, 8)):
        p = statistics.median(cpu["pure", threads])
        m = statistics.median(cpu["mypyc", threads])
        rows.append(f"| {threads[0]}+{threads[1]} | {p:.1f} | {m:.1f} | {p / m:.2f}x |")
    return "\n".join(rows)


def run(build_dir: str | None, reuse: bool, rounds: int, seconds: float, network_rounds: int,
        write_md: str | None, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        where = build(Path(build_dir).absolute() if build_dir else Path(tmp) / "kafkalite-mypyc", reuse)
        text = (f"Operations, thread CPU time, best of {rounds} rounds (pure and compiled children in "
                f"turn):\n\n{micro(where, rounds, seconds)}\n")
        print(text, flush=True)
        if network_rounds:
            net = network(where, network_rounds, 2.0, 1.0)
            text += (f"\nServer CPU per ApiVersions request, 50 connections x 1 in flight, median of "
                     f"{network_rounds} rounds (pure and compiled servers in turn):\n\n{net}\n")
            print(net, flush=True)
    if write_md:
        write_section(write_md, "compiled", f"Command: `{command}`  \nMachine: {machine()}.  \n"
                      f"Measured: {time.strftime('%Y-%m-%d')}.\n\n{text}")


if __name__ == "__main__":
    print(json.dumps(child(float(sys.argv[1]), 7)))
