"""``kafkalite bench share`` briefly: 1 and 2 ShareConsumers reading 1,000 records, acknowledged
implicitly and explicitly; the section it writes, with every figure measured. kafkalite's figures
need ShareFetch (api key 78): without it the bench says so, and that test is skipped."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration

QUICK = ["--consumers", "1,2", "--acks", "implicit,explicit", "--records", "1000", "--rounds", "1",
         "--per-process", "2", "--no-pin"]


def _bench(tmp_path, server: str) -> str:
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "share", "--servers", server, *QUICK, "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:share:begin -->" in doc and "<!-- bench:share:end -->" in doc
    return doc


def _check(doc: str, server: str) -> None:
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in doc.splitlines()
            if line.startswith(f"| {server} |")]
    assert {(r[1], r[2]) for r in rows} == {(m, n) for m in ("implicit", "explicit") for n in ("1", "2")}
    for row in rows:
        records_s, acks_s, first_ms = (float(c.replace(",", "")) for c in row[3:6])
        assert records_s > 0 and acks_s > 0 and first_ms > 0
    plain = doc.split("records/s: ")[-1]
    assert float(plain.split(f"{server} ")[1].split(":")[0].replace(",", "")) > 0


def test_share_consumers_read_and_acknowledge_on_the_mock(tmp_path):
    _check(_bench(tmp_path, "mock"), "mock")


def test_share_consumers_read_and_acknowledge_on_kafkalite(tmp_path):
    doc = _bench(tmp_path, "kafkalite")
    if "did not offer ShareFetch" in doc:
        pytest.skip("kafkalite does not serve share groups (no ShareFetch, api key 78, in ApiVersions)")
    _check(doc, "kafkalite")
