"""The network benchmark's plot: per scenario, each server's throughput and CPU per request as
grouped bars (PNG, matplotlib's Agg backend: no display needed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .run import Result


def plot_results(results: list[Result], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = list(dict.fromkeys(r.scenario for r in results))
    names = list(dict.fromkeys(r.name for r in results))
    by = {(r.scenario, r.name): r for r in results}
    width = 0.8 / len(names)
    fig, axes = plt.subplots(3, 1, figsize=(max(6.0, 1.6 * len(scenarios) + 3), 10), sharex=True)
    panels = (("throughput", "requests/s (higher is better)"),
              ("cpu_us_per_request", "server CPU us per request (lower is better)"),
              ("p99_us", "p99 latency us, log scale (lower is better)"))
    for ax, (attr, title) in zip(axes, panels):
        for i, name in enumerate(names):
            xs = [j + i * width for j, s in enumerate(scenarios) if (s, name) in by]
            ys = [getattr(by[s, name], attr) for s in scenarios if (s, name) in by]
            ax.bar(xs, ys, width, label=name)
        ax.set_title(title, fontsize=10)
        if attr == "p99_us":
            ax.set_yscale("log")  # from hundreds of microseconds to seconds
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks([j + 0.4 - width / 2 for j in range(len(scenarios))])
    axes[-1].set_xticklabels([s.label for s in scenarios], fontsize=8)
    axes[0].legend(fontsize=8, ncol=min(len(names), 4))
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
