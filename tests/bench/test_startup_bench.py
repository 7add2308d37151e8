"""``kafkalite bench startup`` briefly: one round of each kind (after the warm-up), and the section
it writes: the import and the cluster's modules apart, and issue 32's goal lines."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration


def test_the_startup_bench_measures_both_kinds(tmp_path):
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "startup", "--rounds", "1", "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:startup:begin -->" in doc
    assert "`import kafkalite.testing` under 100 ms: " in doc and "cluster ready under 50 ms: " in doc
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines()
            if line.startswith(("| kafkalite |", "| mock |"))}
    assert set(rows) == {"kafkalite", "mock"}
    for row in rows.values():
        figures = [float(c.replace(",", "")) for c in row.strip("|").split("|")[1:]]
        assert len(figures) == 6 and all(f >= 0 for f in figures)
    assert rows["mock"].split("|")[3].strip() == "0"  # the mock's cluster has no modules of its own
