"""``kafkalite bench replication`` briefly: the section it writes, with every figure measured."""

from __future__ import annotations

import glob
import os
import tempfile

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration


def _leftovers() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "kafkalite-bench-replication-*")))


def test_the_replication_bench_measures_both_topics_and_both_failovers(tmp_path):
    before = _leftovers()
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "replication", "--seconds", "0.5", "--rounds", "1",
                                       "--session-timeout-ms", "1500", "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:replication:begin -->" in doc
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines() if line.startswith("| rf")}
    assert set(rows) == {"rf1", "rf3"}
    for row in rows.values():
        assert all(float(c.replace(",", "")) > 0 for c in row.strip("|").split("|")[1:])
    assert "| SIGKILL (detected by the session timeout) |" in doc
    assert "| graceful stop (controlled shutdown) |" in doc
    assert "- time from a graceful stop to the first successful produce under 1 s" in doc
    assert _leftovers() <= before
