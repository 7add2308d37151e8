"""Coverage-guided fuzzing (atheris, libFuzzer) of what a broker does with bytes before any
handler sees them: frame splitting, request header and body decoding for every api and version,
and SASL/PLAIN tokens. The network fuzzer (run.py) shows the broker survives hostile
connections; this one searches the codec's branches for an input that raises anything but the
typed errors. Seeded with one valid frame per api and version.

Run as ``python -m kafkalite_bench.fuzz.coverage [libFuzzer flags]`` (atheris exits the process when done);
``kafkalite bench fuzz-coverage`` runs it with a corpus directory and a number of runs, and the
test suite runs a short one.
"""

from __future__ import annotations

import os
import sys

from ..markdown import machine, write_section

USERS = {"alice": "secret"}
MAX_FRAME = 1 << 20  # big enough for every seed; bigger declared sizes are rejected typed


def one_input(data: bytes) -> None:
    """The property: bytes from a peer end in frames, requests or a typed error; nothing else."""
    # Imported here, not at the top: main() imports kafkalite first, under instrumentation.
    from kafkalite.network.sasl import check_plain
    from kafkalite.protocol import FrameDecoder, decode_request
    from kafkalite.protocol.errors import ProtocolError

    decoder = FrameDecoder(MAX_FRAME)
    try:
        decoder.feed(data)
        frames = list(decoder.frames())
    except ProtocolError:
        return
    for payload in frames:
        try:
            decode_request(payload)
        except ProtocolError:
            pass
    try:
        check_plain(data, USERS)
    except ValueError:
        pass


def write_seeds(directory: str) -> int:
    """One file per api and version (a valid request frame), as the starting corpus."""
    # Not at the top: frames imports kafkalite, which main() imports first, under instrumentation.
    from .frames import VALID

    os.makedirs(directory, exist_ok=True)
    for i, frame in enumerate(VALID):
        with open(os.path.join(directory, f"seed-{i:04d}"), "wb") as f:
            f.write(frame)
    return len(VALID)


def main(argv: list[str]) -> None:
    import atheris

    with atheris.instrument_imports(include=["kafkalite"]):
        # Under atheris' instrumentation: the fuzzer sees kafkalite's branches.
        import kafkalite.network.sasl  # noqa: F401
        from kafkalite.protocol import ALL_APIS, codec
    # The message decoders are generated at run time (compiler.py), so no import hook sees them:
    # generate every request decoder now and put probes in each, nested structs' included.
    for a in ALL_APIS:
        for version in range(a.versions.low, a.versions.high + 1):
            codec.body_codec(a.key, version, response=False)
    for pair in list(codec._cache.values()):
        for func in pair:
            atheris.instrument_func(func)
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)


def bench(runs: int, corpus: str | None, write_md: str | None) -> int:
    """``kafkalite bench fuzz-coverage``: a seeded corpus, ``runs`` inputs, a crash kept as a file."""
    import re
    import subprocess
    import tempfile
    import time

    directory = corpus or tempfile.mkdtemp(prefix="kafkalite-fuzz-corpus-")
    seeds = write_seeds(directory)
    artifacts = tempfile.mkdtemp(prefix="kafkalite-fuzz-crash-")
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "kafkalite_bench.fuzz.coverage", f"-runs={runs}",
                          f"-artifact_prefix={artifacts}/", directory],
                         capture_output=True, text=True)
    seconds = time.monotonic() - started
    cov = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", out.stderr)
    edges, features, corpus_size = cov[-1] if cov else ("?", "?", "?")
    crashes = os.listdir(artifacts)
    verdict = "met" if out.returncode == 0 and not crashes else "NOT met"
    print(out.stderr[-2000:] if out.returncode else f"{runs:,} runs in {seconds:.0f} s, no crash")
    body = "\n".join([
        "## Coverage-guided fuzz of the codec (atheris)", "",
        f"Command: `kafkalite bench fuzz-coverage --runs {runs}"
        + (f" --write {write_md}`" if write_md else "`"), "",
        f"Machine: {machine()}. libFuzzer through atheris, in one process: frame splitting, request "
        "header and body decoding for every api and version, and SASL/PLAIN tokens "
        f"(bench/fuzz/coverage.py), from {seeds} seeds (one valid frame per api and version).", "",
        "| | |", "| --- | --- |",
        f"| inputs | {runs:,} in {seconds:.0f} s |",
        f"| coverage at the end | {edges} edges, {features} features, corpus of {corpus_size} inputs |",
        f"| inputs raising anything but ProtocolError / ValueError | {len(crashes)} |", "",
        f"Goal (no input raises an untyped error): {verdict}", "",
    ])
    if write_md:
        write_section(write_md, "fuzz-coverage", body)
    return 0 if verdict == "met" else 1
