"""``kafkalite bench sasl`` briefly: one short round of each mechanism, and the section it writes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration


def test_the_sasl_bench_measures_every_mechanism(tmp_path):
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "sasl", "--seconds", "0.3", "--rounds", "1",
                                       "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:sasl:begin -->" in doc and "kafkalite bench sasl --seconds 0.3" in doc
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines()
            if line.startswith(("| PLAIN |", "| SCRAM-SHA-256 |", "| SCRAM-SHA-512 |"))}
    assert set(rows) == {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
    for row in rows.values():
        rate = float(row.split("|")[2].replace(",", ""))
        assert rate > 0
