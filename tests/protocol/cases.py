"""Every (api, version, request-or-response) the codec declares, as pytest parameters."""

from __future__ import annotations

import pytest

from kafkalite.protocol import ALL_APIS


def body_cases() -> list:
    cases = []
    for a in ALL_APIS:
        for v in range(a.versions.low, a.versions.high + 1):
            for response in (False, True):
                kind = "response" if response else "request"
                cases.append(pytest.param(a, v, response, id=f"{a.name}-v{v}-{kind}"))
    return cases
