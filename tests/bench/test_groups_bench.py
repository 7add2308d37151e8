"""``kafkalite bench groups`` briefly: the section it writes, with every figure measured."""

from __future__ import annotations

import glob
import os
import tempfile

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration


def _leftovers() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "kafkalite-bench-*")))


def test_the_groups_bench_forms_rebalances_and_commits_on_both_servers(tmp_path):
    before = _leftovers()
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "groups", "--members", "1,3", "--seconds", "0.3",
                                       "--rounds", "1", "--committers", "3", "--no-pin", "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:groups:begin -->" in doc
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines()
            if line.startswith(("| 1 |", "| 3 |"))}
    assert float(rows["1"].split("|")[2].replace(",", "")) >= 0  # formed
    assert rows["1"].split("|")[3].strip() == "-"  # nobody to rebalance with
    assert all(float(c.replace(",", "")) >= 0 for c in rows["3"].strip("|").split("|")[1:])
    commits = [line for line in doc.splitlines() if line.startswith(("| kafkalite (", "| mock ("))]
    assert len(commits) == 2 and all(float(line.split("|")[2].replace(",", "")) > 0 for line in commits)
    assert "| OffsetCommit, 3 connections of one group at once" in doc  # several committers
    parallel = [line for line in doc.splitlines() if line.startswith(("| kafkalite |", "| mock |"))]
    assert len(parallel) == 2 and all(float(line.split("|")[2].replace(",", "")) > 0 for line in parallel)
    assert _leftovers() <= before
