"""The client of a cluster's fault endpoint (kafkalite/local/fault_admin.py): ``POST /faults``
as ``kafkalite fault --admin`` and ``kafkalite cluster`` send it. Apart from the endpoint, whose
users (an in-process test cluster) need no HTTP client and its imports (urllib.request)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class FaultCallError(Exception):
    """The endpoint refused an operation or could not be reached (one line that says why)."""


def post_json(host: str, port: int, args: dict, timeout: float = 30.0) -> Any:
    """``POST /faults`` at host:port; the result, or FaultCallError."""
    request = urllib.request.Request(f"http://{host}:{port}/faults", data=json.dumps(args).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.loads(answer.read())["result"]
    except urllib.error.HTTPError as e:
        try:
            why = json.loads(e.read()).get("error", e.reason)
        except ValueError:
            why = e.reason
        raise FaultCallError(f"{args.get('op')}: {why}") from None
    except (urllib.error.URLError, OSError) as e:
        raise FaultCallError(f"no fault endpoint at {host}:{port} ({getattr(e, 'reason', e)})") from None
