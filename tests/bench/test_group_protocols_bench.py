"""``kafkalite bench group-protocols`` briefly: groups of 1 and 2 members on 4 partitions, with the
timeouts lowered so that each step takes a heartbeat or two; the section it writes, with every
figure measured. kafkalite's consumer-protocol figures need ConsumerGroupHeartbeat (api key 68):
without it the bench says so, and that test is skipped."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafkalite.cli import main

pytestmark = pytest.mark.integration

QUICK = ["--members", "1,2", "--delays", "0", "--partitions", "4", "--rounds", "1", "--per-process", "2",
         "--heartbeat-interval-ms", "500", "--consumer-heartbeat-ms", "500", "--no-pin"]


def _rows(doc: str, server: str) -> dict[int, list[str]]:
    """members -> the row's cells after the members column."""
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == server and len(cells) > 3:
            rows[int(cells[2])] = cells[3:]
    return rows


def _ms(cell: str) -> float:
    return float(cell.replace(",", ""))


def _bench(tmp_path, *args: str) -> str:
    md = tmp_path / "benchmarks.md"
    result = CliRunner().invoke(main, ["bench", "group-protocols", *QUICK, *args, "--write", str(md)])
    assert result.exit_code == 0, result.output
    doc = md.read_text()
    assert "<!-- bench:group-protocols:begin -->" in doc and "<!-- bench:group-protocols:end -->" in doc
    return doc


def test_both_protocols_form_and_reconcile_on_the_mock(tmp_path):
    # The mock's classic rebalance waits for the session timeout less 1 s: lowered to 2 s here.
    doc = _bench(tmp_path, "--servers", "mock", "--session-timeout-ms", "2000")
    rows = _rows(doc, "mock")
    assert set(rows) == {1, 2}
    (classic_form, classic_leave, classic_unowned, consumer_form, consumer_leave, consumer_unowned,
     *ratios) = rows[2]
    assert all(_ms(c) > 0 for c in (classic_form, classic_leave, consumer_form, consumer_leave))
    # the leaver's partitions at least, and never more than the topic's
    assert all(2 <= int(c) <= 4 for c in (classic_unowned, consumer_unowned))
    assert all(r.endswith("x") and float(r[:-1]) > 0 for r in ratios)
    assert _ms(rows[1][0]) > 0 and rows[1][1:3] == ["-", "-"]  # nobody is left to reconcile
    assert "lowered for this run: session.timeout.ms 2000" in doc


def test_classic_groups_form_and_reconcile_on_kafkalite(tmp_path):
    doc = _bench(tmp_path, "--servers", "kafkalite", "--protocols", "classic", "--session-timeout-ms", "6000")
    rows = _rows(doc, "kafkalite")
    assert _ms(rows[2][0]) > 0 and _ms(rows[2][1]) > 0 and 2 <= int(rows[2][2]) <= 4
    assert _ms(rows[1][0]) > 0 and rows[1][1:3] == ["-", "-"]


def test_consumer_protocol_groups_form_and_reconcile_on_kafkalite(tmp_path):
    doc = _bench(tmp_path, "--servers", "kafkalite", "--protocols", "consumer")
    if "did not offer ConsumerGroupHeartbeat" in doc:
        pytest.skip("kafkalite does not serve the consumer group protocol (no ConsumerGroupHeartbeat, "
                    "api key 68, in ApiVersions)")
    rows = _rows(doc, "kafkalite")
    assert _ms(rows[2][0]) > 0 and _ms(rows[2][1]) > 0 and 2 <= int(rows[2][2]) <= 4
    assert _ms(rows[1][0]) > 0 and rows[1][1:3] == ["-", "-"]
