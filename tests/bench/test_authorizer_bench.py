"""``kafkalite bench authorizer`` briefly: the section it writes, with every figure measured, and
the 1,000 bindings it gives the authorizer all distinct and allowing the bench client."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafkalite.cli import main
from kafkalite_bench.authorizer import ME, TOPIC, bindings, checks_per_second


def test_the_bindings_are_distinct_and_let_the_client_produce_and_fetch():
    acls = bindings(1000)
    assert len(set(acls)) == 1000
    assert {(b.principal, b.resource_name, b.operation.name) for b in acls if b.principal == ME} >= {
        (ME, TOPIC, "WRITE"), (ME, TOPIC, "READ")}
    standard, allow_all = checks_per_second(acls, 0.05)
    assert standard > 0 and allow_all > 0


@pytest.mark.integration
def test_the_authorizer_bench_writes_its_section(tmp_path):
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "authorizer", "--seconds", "0.3", "--rounds", "1",
                                       "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:authorizer:begin -->" in doc
    rows = [line for line in doc.splitlines() if line.startswith("| none") or line.startswith("| Standard")]
    assert len(rows) == 2
    for row in rows:
        assert all(float(c.replace(",", "")) > 0 for c in row.strip("|").split("|")[1:])
    assert "produce+fetch with the authorizer at least 0.95x without" in doc
    assert "Authorization checks the broker with the authorizer made during the rounds" in doc
