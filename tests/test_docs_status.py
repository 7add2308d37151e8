"""The README and docs/protocol.md say what the broker serves, and keep saying the truth: these
tests fail when an api is served without the docs saying so, or promised without being served."""

from __future__ import annotations

import re
from pathlib import Path

from kafkalite.protocol.messages import BY_KEY
from kafkalite.server import api_versions as served

ROOT = Path(__file__).resolve().parent.parent
# What Kafka applications need beyond metadata and admin: the data path and consumer groups.
CLIENT_APIS = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 8: "OffsetCommit", 9: "OffsetFetch",
               10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup",
               14: "SyncGroup"}


def served_anywhere() -> dict[int, str]:
    table = served.apis_for("X", privileged=True, is_controller=True)
    return {k: f"{v.low}-{v.high}" for k, v in table.items()}


def test_protocol_md_served_table_is_the_served_table():
    text = (ROOT / "docs" / "protocol.md").read_text()
    section = text.split("## What the broker serves")[1].split("\n## ")[0]
    rows = re.findall(r"^\| (\d+) \| (\w+) \| ([\d-]+) \|", section, re.M)
    assert {int(k): v for k, _, v in rows} == served_anywhere()
    assert all(BY_KEY[int(k)].name == name for k, name, _ in rows)


def test_readme_names_every_client_api_not_served_yet():
    readme = (ROOT / "README.md").read_text()
    status = readme.split("Status:")[1].split("## Quick start")[0]
    missing = [name for key, name in CLIENT_APIS.items() if key not in served_anywhere()]
    assert all(name in status for name in missing), missing
    if missing:
        assert "Not yet served" in status
    else:
        assert "Not yet served" not in status, "everything is served: say so in the README"
