"""What each change bought: kafkalite as of several git revisions, each run from its own worktree
by today's load generator, with the asyncio peer measured in every round as the yardstick.
``kafkalite bench network-history --revs A,B,C``."""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator

from ..markdown import machine, write_section
from .run import Scenario, measure


@contextlib.contextmanager
def worktrees(revs: list[str]) -> Iterator[dict[str, str]]:
    with tempfile.TemporaryDirectory(prefix="kafkalite-history-") as root:
        paths = {}
        try:
            for rev in revs:
                path = f"{root}/{rev}"
                subprocess.run(["git", "worktree", "add", "--detach", "-q", path, rev], check=True)
                paths[rev] = path
            yield paths
        finally:
            for path in paths.values():
                subprocess.run(["git", "worktree", "remove", "--force", path], check=False)


def _subject(rev: str) -> str:
    out = subprocess.run(["git", "log", "-1", "--format=%h %s", rev], capture_output=True, text=True)
    return out.stdout.strip()


def run(revs: list[str], threads: list[tuple[int, int]], scenario: Scenario, seconds: float,
        warmup: float, repeat: int, write_md: str | None, command: str) -> list[tuple]:
    rows = []
    with worktrees(revs) as paths:
        for rev in revs:
            for t in threads:
                cpu, tput, base_cpu = [], [], []
                for round_ in range(repeat):
                    k = measure("kafkalite", scenario, seconds, warmup, t, source=paths[rev])
                    a = measure("asyncio", scenario, seconds, warmup)
                    cpu.append(k.cpu_us_per_request)
                    tput.append(k.throughput / a.throughput)
                    base_cpu.append(k.cpu_us_per_request / a.cpu_us_per_request)
                    print(f"{rev} {t[0]}+{t[1]} round {round_ + 1}: {k.cpu_us_per_request:.1f} us CPU/req "
                          f"({base_cpu[-1]:.2f}x asyncio), throughput {tput[-1]:.2f}x asyncio", flush=True)
                rows.append((rev, t, statistics.median(cpu), statistics.median(base_cpu),
                             statistics.median(tput)))
    lines = ["| revision | threads | server CPU us/req | CPU/req vs asyncio | throughput vs asyncio |",
             "| --- | --- | ---: | ---: | ---: |"]
    lines += [f"| {_subject(rev)[:90]} | {t[0]}+{t[1]} | {c:.1f} | {r:.2f}x | {x:.2f}x |"
              for rev, t, c, r, x in rows]
    text = "\n".join(lines)
    print(text)
    if write_md:
        write_section(write_md, "network-history", (
            f"## Network: what each change bought ({scenario.label}, {scenario.mix})\n\n"
            f"Command: `{command}`  \nMachine: {machine()}; server pinned to core 0, load generator "
            f"to core 1.  \nMeasured: {time.strftime('%Y-%m-%d')}. Each revision's kafkalite run from "
            "its own git worktree by today's load generator; the asyncio peer is measured right "
            f"after it in each of {repeat} rounds and the ratios are medians of the per-round ratios, "
            "which keeps the machine's drift out of the comparison.\n\n" + text + "\n"))
        print(f"wrote {write_md}")
    return rows
