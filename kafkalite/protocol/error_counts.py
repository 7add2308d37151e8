"""Every error code a response carries, counted: Kafka's ``AbstractResponse.errorCounts()``.

Kafka's RequestMetrics count each response's error codes, NONE included, at the top level, per
topic and per partition alike (ErrorsPerSec). Here one function does it for every message, from
the declarations: the fields named ``error_code`` that exist in the response's version, at any
depth (``topics[].error_code``, ``topics[].partitions[].error_code``). As the codec does
(compiler.py), each (api, version) gets a plain function generated once: one pass of nested loops
over the arrays that hold error codes, nothing else looked at. A response whose only error code is
its own (ApiVersions, BrokerHeartbeat, ...) costs one attribute read and a one-entry dict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .messages import BY_KEY
from .schema import Array, Field, Struct

ERROR_CODE = "error_code"

# A path: the attributes to follow from the body to one error_code field, each with whether it is
# an array (then: each of its items). The last is always (ERROR_CODE, False).
Path = tuple[tuple[str, bool], ...]
Counter = Callable[[Any], dict[int, int]]

_counters: dict[tuple[int, int], Counter] = {}
_top_level: dict[tuple[int, int], bool] = {}


def _in_version(f: Field, version: int) -> bool:
    return f.present_in(version) or f.tagged_in(version)


def error_code_paths(s: Struct, version: int) -> list[Path]:
    """The paths to every ``error_code`` field that ``s`` and the structs in it have in ``version``."""
    paths: list[Path] = []
    for f in s.fields:
        if not _in_version(f, version):
            continue
        array = isinstance(f.type, Array)
        inner = f.type.item if isinstance(f.type, Array) else f.type
        if isinstance(inner, Struct):
            paths += [((f.name, array), *rest) for rest in error_code_paths(inner, version)]
        elif f.name == ERROR_CODE and not array:
            paths.append(((f.name, False),))
    return paths


def _top_level_only(body: Any) -> dict[int, int]:
    return {body.error_code: 1}


def compile_counter(paths: list[Path], name: str = "count") -> Counter:
    """One function counting the error codes at ``paths``: paths that share a prefix share its loop."""
    if paths == [((ERROR_CODE, False),)]:
        return _top_level_only
    tree: dict = {}  # (attribute, is array) -> subtree; {} under (ERROR_CODE, False)
    for path in paths:
        node = tree
        for step in path:
            node = node.setdefault(step, {})
    lines = [f"def {name}(v0):", "    counts = {}", "    get = counts.get"]

    def emit(node: dict, var: str, depth: int, indent: str) -> None:
        for (attr, array), sub in node.items():
            if attr == ERROR_CODE and not array and not sub:
                lines.append(f"{indent}code = {var}.{attr}")
                lines.append(f"{indent}counts[code] = get(code, 0) + 1")
            elif array:  # a null array counts as empty
                item = f"v{depth + 1}"
                lines.append(f"{indent}for {item} in {var}.{attr} or ():")
                emit(sub, item, depth + 1, indent + "    ")
            else:
                item = f"v{depth + 1}"
                lines.append(f"{indent}{item} = {var}.{attr}")
                emit(sub, item, depth + 1, indent)

    emit(tree, "v0", 0, "    ")
    lines.append("    return counts")
    env: dict[str, Any] = {}
    exec(compile("\n".join(lines) + "\n", f"<kafkalite error counts {name}>", "exec"), env)
    return env[name]


def _counter(api_key: int, version: int) -> Counter:
    # Handler threads may compile the same one at once: harmless, each sets both tables, and
    # _top_level first, so that a counter found never lacks its entry there.
    a = BY_KEY[api_key]
    paths = error_code_paths(a.response, version)
    counter = compile_counter(paths, f"{a.name}_v{version}")
    _top_level[(api_key, version)] = ((ERROR_CODE, False),) in paths
    _counters[(api_key, version)] = counter
    return counter


def error_counts(api_key: int, version: int, body: Any) -> dict[int, int]:
    """Error code -> how many times the response ``body`` of ``api_key`` v``version`` carries it,
    NONE (0) included, as Kafka's ``errorCounts()``. Null arrays count as empty."""
    counter = _counters.get((api_key, version)) or _counter(api_key, version)
    return counter(body)


def top_level_error_code(api_key: int, version: int, body: Any) -> int:
    """The response's own error code; 0 for a response that has none in ``version`` (CreateTopics,
    whose codes are per topic)."""
    top = _top_level.get((api_key, version))
    if top is None:
        _counter(api_key, version)
        top = _top_level[(api_key, version)]
    return int(body.error_code) if top else 0
