"""``kafkalite bench quorum --quick``: one failover of the active controller and a few metadata
changes of each kind with 1 voter and 3; the section it writes, with every figure measured."""

from __future__ import annotations

import glob
import os
import tempfile

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration


def _leftovers() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "kafkalite-bench-quorum-*")))


def test_the_quorum_bench_measures_a_failover_and_the_changes_per_second(tmp_path):
    before = _leftovers()
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "quorum", "--quick", "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:quorum:begin -->" in doc and "<!-- bench:quorum:end -->" in doc
    failover = [line for line in doc.splitlines() if line.startswith(("| a surviving", "| (a", "| (b)"))]
    assert len(failover) == 4
    for row in failover:
        figures = [float(c) for c in row.strip("|").split("|")[1:]]
        assert len(figures) == 3 and all(0 < f < 60 for f in figures)
    rates = {line.split("|")[1].strip(): line for line in doc.splitlines()
             if line.startswith(("| topic creations", "| config changes", "| leader moves"))}
    assert set(rates) == {"topic creations", "config changes", "leader moves"}
    for row in rates.values():
        single, quorum, ratio = (float(c.replace(",", "")) for c in row.strip("|").split("|")[1:4])
        assert single > 0 and quorum > 0 and ratio > 0
    assert "Failed requests (not counted): 0." in doc
    assert _leftovers() <= before
