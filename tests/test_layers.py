"""The layer rule (docs/architecture.md, "Packages and layers"): each package imports only from its
own layer or those below it, no two packages import each other through any chain, and no
kafkalite import hides inside a function or an ``if`` (the entry points excepted: the command
imports what a subcommand needs when it runs; and kafkalite.testing's PEP 562 hook, which imports
the cluster on first use, see PEP_562_HOOKS). The benchmarks, bench/ installed as kafkalite_bench,
are a layer above ``testing`` and below ``cli``: they may import kafkalite, and kafkalite imports
them only from the command, when it runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "kafkalite"
BENCH = "kafkalite_bench"
BENCH_ROOT = ROOT.parent / "bench"  # installed as kafkalite_bench

# Lowest first. A unit is a package of kafkalite or one of its top-level modules, or the benchmarks.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("common",),
    ("protocol",),
    ("metrics",),
    ("network",),
    ("clients",),
    ("storage",),
    ("raft",),
    ("controller",),
    ("server",),
    ("local", "jobs"),
    ("testing",),
    (BENCH,),
    ("cli",),
    ("__main__",),
)
LAYER = {unit: i for i, units in enumerate(LAYERS) for unit in units}
# The order inside ``server``, lowest first: a unit is a sub-package or a top-level module of it.
SERVER_LAYERS: tuple[tuple[str, ...], ...] = (
    ("controller_node",),
    ("responses", "scheduler", "purgatory", "metadata_cache", "topic_metrics", "lifecycle",
     "kafka_config_names", "authorizer", "forwarding", "client_quotas"),
    ("replication",),
    ("coordinator", "share", "share_coordinator"),
    ("config", "config_docs", "topic_configs", "meta_properties", "group_configs"),
    ("dynamic_config",),
    ("faults", "handlers", "checks"),
    ("apis", "kafka_apis", "request_handler"),
    ("broker",),
)
SERVER_LAYER = {unit: i for i, units in enumerate(SERVER_LAYERS) for unit in units}
# Packages whose modules may import inside a function (the commands, when they run). Anywhere else
# in the benchmarks an import inside a function says why in a comment on its line or just above.
LAZY_IMPORTS_ALLOWED = {"kafkalite.cli", f"{BENCH}.cli"}
# Packages whose PEP 562 hook, the module-level ``def __getattr__``, may import the names it serves
# on first use (and nothing else may import inside a function there): kafkalite.testing, because
# every pytest run imports its plugin, and so the package, and most never start a cluster. The
# imports in the hook still go down the layers like any other.
PEP_562_HOOKS = {"kafkalite.testing"}


def lazy_imports_allowed(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in LAZY_IMPORTS_ALLOWED)


def _modules(root: Path = ROOT, package: str = "kafkalite") -> list[tuple[str, Path]]:
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = (package, *path.relative_to(root).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out.append((name, path))
    return out


def _imports(name: str, path: Path) -> list[tuple[str, bool]]:
    """(imported kafkalite or kafkalite_bench module, at the top level of the file or explained) for
    each import in ``path``: an import inside a function or an ``if`` counts as explained when a
    comment in its block of imports or on one of the two lines above it says why (none is needed
    under ``if TYPE_CHECKING``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    top = {id(n) for n in tree.body}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            top |= {id(n) for n in node.body}
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and name in PEP_562_HOOKS:
            top |= {id(n) for n in ast.walk(node)}

    def explained(node: ast.stmt) -> bool:
        first = node.lineno - 1  # the first line of the block of imports it stands in
        while first > 0 and lines[first - 1].strip().startswith(("from ", "import ")):
            first -= 1
        return any("#" in line for line in lines[max(0, first - 2):node.lineno])

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        found += [(t, id(node) in top or (name.startswith(BENCH) and explained(node))) for t in targets
                  if t.split(".")[0] in ("kafkalite", BENCH)]
    return found


def unit(module: str) -> str:
    parts = module.split(".")
    if parts[0] == BENCH:
        return BENCH
    return parts[1] if len(parts) > 1 else "kafkalite"


def server_unit(module: str) -> str | None:
    """The unit inside ``server`` (None: not in server, or the package itself)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "server" else None


MODULES = _modules()
BENCH_MODULES = _modules(BENCH_ROOT, BENCH)
ALL_MODULES = MODULES + BENCH_MODULES


def test_every_unit_has_a_layer():
    units = {unit(name) for name, _ in ALL_MODULES} - {"kafkalite"}
    assert units <= LAYER.keys(), f"add {sorted(units - LAYER.keys())} to LAYERS"


@pytest.mark.parametrize(("name", "path"), ALL_MODULES, ids=[n for n, _ in ALL_MODULES])
def test_imports_go_down_the_layers_and_stay_at_the_top(name, path):
    """The commands may import when they run; elsewhere in the benchmarks an import inside a
    function says why (an import they time, one under a fuzzer's instrumentation, an extra)."""
    here = unit(name)
    for target, at_top in _imports(name, path):
        there = unit(target)
        if there != "kafkalite" and here != "kafkalite":
            assert LAYER[there] <= LAYER[here], f"{name} ({here}) imports {target} ({there}), a layer above"
        assert at_top or lazy_imports_allowed(name), (
            f"{name} imports {target} inside a function or an if"
            + (" without a comment saying why" if here == BENCH else ""))
        assert not (at_top and there == BENCH and here != BENCH), (
            f"{name} imports {target} at its top: kafkalite loads the benchmarks only when a command runs")


def _absolute_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [*(a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names),
            *(n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level)]


@pytest.mark.parametrize("folder", ["bench", "tests"])
def test_the_benchmarks_are_imported_by_their_installed_name(folder):
    """bench/ is installed as kafkalite_bench: ``bench`` would be found only from the repository's root."""
    wrong = [f"{path.relative_to(ROOT.parent)}: {target}"
             for path in sorted((ROOT.parent / folder).rglob("*.py"))
             for target in _absolute_imports(path) if target.split(".")[0] == "bench"]
    assert not wrong, wrong


def test_every_server_unit_has_a_layer():
    units = {server_unit(name) for name, _ in MODULES} - {None}
    assert units <= SERVER_LAYER.keys(), f"add {sorted(units - SERVER_LAYER.keys())} to SERVER_LAYERS"


@pytest.mark.parametrize(("name", "path"), [(n, p) for n, p in MODULES if server_unit(n)],
                         ids=[n for n, _ in MODULES if server_unit(n)])
def test_inside_server_imports_go_down_its_layers(name, path):
    here = server_unit(name)
    for target, _ in _imports(name, path):
        there = server_unit(target)
        if there is not None and there != here:
            assert SERVER_LAYER[there] <= SERVER_LAYER[here], (
                f"{name} ({here}) imports {target} ({there}), a layer above inside server")


@pytest.mark.parametrize("unit_of", [unit, server_unit], ids=["packages", "inside server"])
def test_no_cycle(unit_of):
    edges: dict[str, set[str]] = {}
    for name, path in ALL_MODULES:
        for target, _ in _imports(name, path):
            a, b = unit_of(name), unit_of(target)
            if a is not None and b is not None and a != b:
                edges.setdefault(a, set()).add(b)
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        assert node not in trail, "import cycle: " + " -> ".join((*trail, node))
        if node in done:
            return
        for nxt in edges.get(node, ()):
            visit(nxt, (*trail, node))
        done.add(node)

    for start in edges:
        visit(start, ())


def test_only_the_pep_562_hook_may_import_late_in_kafkalite_testing(tmp_path):
    """The allowance is for the hook alone: an import in any other function there still fails."""
    path = ROOT / "testing" / "__init__.py"
    assert all(at_top for _, at_top in _imports("kafkalite.testing", path))
    probe = tmp_path / "__init__.py"
    probe.write_text(path.read_text() + "\n\ndef elsewhere():\n    from kafkalite.server import broker\n")
    found = dict(_imports("kafkalite.testing", probe))
    assert found["kafkalite.testing.cluster"] is True and found["kafkalite.server"] is False
