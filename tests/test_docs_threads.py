"""docs/architecture.md's thread table names every thread kafkalite starts: each thread name the
code gives (the ``name`` of a ``threading.Thread``, followed back through the parameters that carry
it to what callers pass) matches a name in the table's name column, where each ``{...}`` stands for
anything; so a new thread cannot be added without the table saying what it owns."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"\{[^}]*\}")


class _Scan:
    """Thread names, following a name back through the parameters that carry it to a thread
    (``name_prefix`` of RequestHandlerPool, ``name`` of JsonHttpServer, ...) to what callers pass
    or the parameter's default."""

    def __init__(self, trees: dict[str, ast.Module]) -> None:
        self.trees = trees
        self.classes = [n for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ClassDef)]
        self.owner = {id(f): c for c in self.classes for f in c.body if isinstance(f, ast.FunctionDef)}
        # (module, innermost function or None, call) for every call
        self.scoped: list[tuple[str, ast.FunctionDef | None, ast.Call]] = []
        for where, tree in trees.items():
            self._collect(where, tree, None)
        self.calls = [(fn, call) for _, fn, call in self.scoped if fn is not None]
        self.resolving: set[tuple[int, str]] = set()

    def _collect(self, where: str, node: ast.AST, fn: ast.FunctionDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call):
                self.scoped.append((where, fn, child))
            self._collect(where, child, child if isinstance(child, ast.FunctionDef) else fn)

    def templates(self, node: ast.expr | None, fn: ast.FunctionDef | None) -> list[str]:
        """The names an expression can give: strings, f-strings, either side of ``or``, and a
        parameter of the function it is in."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and fn is not None:
            return self.parameter(fn, node.id) or ["{}"]
        if isinstance(node, ast.JoinedStr):
            out = [""]
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts = [str(v.value)]
                elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name):
                    parts = self.templates(v.value, fn)
                else:
                    parts = ["{}"]
                out = [o + p for o in out for p in parts]
            return out
        if isinstance(node, ast.BoolOp):
            return [t for v in node.values for t in self.templates(v, fn)]
        return []

    def parameter(self, fn: ast.FunctionDef, name: str) -> list[str]:
        """What a parameter of a constructor can be: what callers pass, and its default."""
        args = [a.arg for a in fn.args.args]
        if name not in args and name not in [a.arg for a in fn.args.kwonlyargs]:
            return []
        key = (id(fn), name)
        if key in self.resolving:
            return []
        self.resolving.add(key)
        try:
            out: list[str] = []
            defaults = dict(zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults))
            defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d})
            if name in defaults:
                out += self.templates(defaults[name], None)
            owner = self.owner.get(id(fn))
            if owner is not None and fn.name == "__init__":
                index = args.index(name) - 1 if name in args else -1
                for caller, call in self.calls:
                    if self._constructs(caller, call, owner.name):
                        value = next((k.value for k in call.keywords if k.arg == name), None)
                        if value is None and 0 <= index < len(call.args):
                            value = call.args[index]
                        if value is not None:
                            out += self.templates(value, caller)
            return out
        finally:
            self.resolving.discard(key)

    def _constructs(self, caller: ast.FunctionDef, call: ast.Call, cls: str) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id == cls
        if (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            owner = self.owner.get(id(caller))
            return owner is not None and cls in [ast.unparse(b) for b in owner.bases]
        return False

    def _starts_thread(self, fn: ast.FunctionDef | None, call: ast.Call) -> bool:
        func = call.func
        if (isinstance(func, ast.Attribute) and func.attr == "Thread") or (
                isinstance(func, ast.Name) and func.id == "Thread"):
            return True
        owner = self.owner.get(id(fn)) if fn is not None else None
        return (owner is not None and isinstance(func, ast.Attribute) and func.attr == "__init__"
                and any("Thread" in ast.unparse(b) for b in owner.bases))

    def run(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for where, fn, call in self.scoped:
            if not self._starts_thread(fn, call):
                continue
            for keyword in call.keywords:
                if keyword.arg == "name":
                    for template in self.templates(keyword.value, fn):
                        found.setdefault(normalise(template), f"{where}:{call.lineno}")
        return found


def code_thread_names() -> dict[str, str]:
    """Normalised name -> where the thread is started."""
    paths = sorted((ROOT / "kafkalite").rglob("*.py"))
    trees = {str(p.relative_to(ROOT)): ast.parse(p.read_text()) for p in paths}
    return _Scan(trees).run()


def normalise(name: str) -> str:
    return PLACEHOLDER.sub("{}", name.strip("`"))


def _pattern(documented: str) -> re.Pattern[str]:
    """A documented name as a pattern: each ``{...}`` stands for anything."""
    return re.compile(".+".join(re.escape(part) for part in PLACEHOLDER.split(documented)))


def documented_thread_names() -> list[re.Pattern[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text.split("## Threads and queues")[1].split("\n## ")[0]
    names: list[re.Pattern[str]] = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and "`" in cells[1]:
            names += [_pattern(n) for n in re.findall(r"`([^`]+)`", cells[1])]
    return names


def test_the_scan_finds_the_threads_we_know():
    names = code_thread_names()
    assert "ExpirationReaper-{}-Rebalance" in names  # a purgatory's name, passed by its owner
    assert "controller-event-thread" in names
    assert "data-plane-kafka-request-handler-{}" in names  # a default, through name_prefix
    assert "control-plane-kafka-request-handler-{}" in names  # passed by the broker
    assert "metrics-http-{}" in names  # through JsonHttpServer's name


def test_every_thread_the_code_names_is_in_the_architecture_thread_table():
    documented = documented_thread_names()
    missing = {t: where for t, where in code_thread_names().items()
               if not any(p.fullmatch(t) for p in documented)}
    assert not missing, f"add these threads to docs/architecture.md's thread table: {missing}"
