"""Where benchmark results go: sections of docs/benchmarks.md between markers, and the machine
they were measured on."""

from __future__ import annotations

import os
import platform
import re
import sys


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            cpu = m.group(1) if m else cpu
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, {platform.system()}"


def write_section(path: str, name: str, body: str) -> None:
    """Replace the text between this section's markers in ``path`` (append if absent)."""
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = "# Benchmarks\n\nEvery figure here comes from a command in this file, on the machine named.\n"
    block = f"{begin}\n{body}{end}"
    if begin in doc and end in doc:
        doc = doc[: doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)
