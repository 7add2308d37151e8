"""The coverage-guided fuzzer (atheris) for a short run from the seed corpus, and its property
function on inputs that must end in typed errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafkalite_bench.fuzz.coverage import one_input, write_seeds
from kafkalite_bench.fuzz.frames import VALID

pytestmark = pytest.mark.integration


def test_a_short_atheris_run_finds_no_untyped_error(tmp_path):
    pytest.importorskip("atheris", reason="atheris has wheels for Linux x86_64 only")
    corpus, artifacts = tmp_path / "corpus", tmp_path / "crashes"
    artifacts.mkdir()
    assert write_seeds(str(corpus)) == len(VALID)
    out = subprocess.run([sys.executable, "-m", "kafkalite_bench.fuzz.coverage", "-runs=5000", "-seed=1",
                          f"-artifact_prefix={artifacts}/", str(corpus)],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Done 5000 runs" in out.stderr
    assert list(artifacts.iterdir()) == []


@pytest.mark.parametrize("data", [
    b"", b"\x00\x00\x00", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff" + b"x" * 10,
    b"\x00\x00\x00\x02\x00\x12", b"\x00alice\x00secret", *VALID[:5],
    *(frame[:-1] for frame in VALID[:5]), *(frame + b"\x00" for frame in VALID[:5]),
])
def test_the_property_holds_on_edge_inputs(data):
    one_input(data)  # raises only if the codec raised something untyped
