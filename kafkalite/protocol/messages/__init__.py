"""Every api kafkalite declares, by key. Add a module here to add an api (docs/protocol.md)."""

from __future__ import annotations

from ..schema import Api
from .api_versions import API_VERSIONS

ALL: tuple[Api, ...] = (API_VERSIONS,)

BY_KEY: dict[int, Api] = {a.key: a for a in ALL}
BY_NAME: dict[str, Api] = {a.name: a for a in ALL}
