"""Which versions of an api share one codec: the compiler writes the same source for them."""

from __future__ import annotations

import functools

from kafkalite.protocol.compiler import generated_source
from kafkalite.protocol.messages import BY_KEY
from kafkalite.protocol.schema import Api


def codec_groups(api: Api, response: bool) -> tuple[tuple[int, ...], ...]:
    """The api's versions grouped by identical generated source (flexibility included: it decides
    the header version too), in version order."""
    return _groups(api.key, response)


@functools.cache
def _groups(key: int, response: bool) -> tuple[tuple[int, ...], ...]:
    api = BY_KEY[key]
    struct = api.response if response else api.request
    groups: dict[str, list[int]] = {}
    for v in range(api.versions.low, api.versions.high + 1):
        flexible = api.is_flexible(v)
        groups.setdefault(f"{flexible}\n{generated_source(struct, v, flexible)}", []).append(v)
    return tuple(tuple(g) for g in groups.values())


def same_codec_as_earlier(api: Api, version: int, response: bool) -> bool:
    """True when an earlier version of the api has exactly the same codec as ``version``."""
    return any(version in g and version != g[0] for g in codec_groups(api, response))
