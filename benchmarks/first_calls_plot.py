"""The plot of BENCHMARKS.md's "First calls of loop programs on the GPU": each program's first
call (empty disk cache) at each commit, the median of its runs, with every run as a dot.

    python benchmarks/first_calls_plot.py benchmarks/results/first_calls_h100_2026-11-28.json OUT.png
"""
from __future__ import annotations

import json
import statistics
import sys


def main(source: str, target: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = json.load(open(source))
    programs = list(data["seconds"])
    commits = sorted({c for runs in data["seconds"].values() for c in runs},
                     key=lambda c: ["a264a95", "6d96e7d", "4268d25"].index(c)
                     if c in ("a264a95", "6d96e7d", "4268d25") else 9)
    width = 0.8 / len(commits)
    figure, axes = plt.subplots(figsize=(10, 4.5))
    for k, commit in enumerate(commits):
        for p, program in enumerate(programs):
            runs = data["seconds"][program].get(commit)
            if not runs:
                continue
            x = p + (k - (len(commits) - 1) / 2) * width
            axes.bar(x, statistics.median(runs), width, color=f"C{k}",
                     label=commit if p == 0 or program == "heat_2d" and k == 1 else None)
            axes.plot([x] * len(runs), runs, "k.", markersize=3)
    handles, labels = axes.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    axes.legend(unique.values(), unique.keys(), title="commit")
    axes.set_xticks(range(len(programs)), programs, rotation=20)
    axes.axhline(2.0, color="grey", linestyle="--", linewidth=0.8)
    axes.set_ylabel("first call, s (empty disk cache)")
    axes.set_title(f"Loop programs' first calls, {data['device']}, {data['date']}")
    figure.tight_layout()
    figure.savefig(target, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
