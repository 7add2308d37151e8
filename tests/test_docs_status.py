"""The README and docs/protocol.md say what the broker serves, and keep saying the truth: these
tests fail when an api is served without the docs saying so, or promised without being served."""

from __future__ import annotations

import re
from pathlib import Path

from kafkalite.protocol import ApiKey
from kafkalite.server.apis import SERVED_BY_KEY, render_markdown

ROOT = Path(__file__).resolve().parent.parent
# What Kafka applications need beyond metadata and admin: the data path and consumer groups.
CLIENT_APIS = (ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH,
               ApiKey.FIND_COORDINATOR, ApiKey.JOIN_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP,
               ApiKey.SYNC_GROUP)


def test_protocol_md_served_table_is_the_served_table():
    text = (ROOT / "docs" / "protocol.md").read_text()
    section = re.search(r"<!-- served apis: generated[^\n]*-->\n(.*?)<!-- end of served apis -->", text, re.S)
    assert section is not None
    assert section.group(1) == render_markdown(), "regenerate with kafkalite.server.apis.render_markdown"


def test_readme_names_every_client_api_not_served_yet():
    readme = (ROOT / "README.md").read_text()
    status = readme.split("Status:")[1].split("## Quick start")[0]
    missing = [key.api_name for key in CLIENT_APIS if key not in SERVED_BY_KEY]
    assert all(name in status for name in missing), missing
    if missing:
        assert "Not yet served" in status
    else:
        assert "Not yet served" not in status, "everything is served: say so in the README"
