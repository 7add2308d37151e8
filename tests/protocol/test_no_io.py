"""The codec does no I/O: no module of kafkalite/protocol imports sockets, threads or selectors."""

from __future__ import annotations

import ast
import pathlib

import kafkalite.protocol

FORBIDDEN = {"socket", "threading", "selectors", "asyncio", "ssl", "select", "multiprocessing"}


def test_protocol_package_imports_no_io_modules():
    root = pathlib.Path(kafkalite.protocol.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found += [(path.name, n) for n in names if n.split(".")[0] in FORBIDDEN]
    assert len(list(root.rglob("*.py"))) >= 10
    assert found == []
