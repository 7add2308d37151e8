"""``kafkalite bench storage`` at a small size: the section it writes, and nothing left behind."""

from __future__ import annotations

import glob
import os
import tempfile

from click.testing import CliRunner

from kafkalite.cli import main


def _leftovers() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "kafkalite-bench-storage-*")))


def test_the_storage_bench_measures_both_sizes_and_writes_its_section(tmp_path):
    before = _leftovers()
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "storage", "--size", "30MB", "--samples", "50",
                                       "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:storage:begin -->" in doc and "<!-- bench:storage:end -->" in doc
    assert "Command: `kafkalite bench storage --size 30MB --samples 50" in doc
    rows = [line for line in doc.splitlines() if line.startswith("| 0.")]
    assert len(rows) == 2  # the 10 MB log and the 30 MB one
    assert all(float(cell.replace(",", "")) > 0 for row in rows for cell in row.strip("|").split("|")[2:6])
    assert "- appends and reads cost the same at 0.01 GB and 0.03 GB" in doc
    assert "- memory does not grow with the log" in doc
    assert _leftovers() <= before


def test_a_bad_size_is_a_usage_error():
    result = CliRunner().invoke(main, ["bench", "storage", "--size", "lots"])
    assert result.exit_code == 2 and "--size" in result.output
