"""Plot a benchmarks/cpu.py result: NumPy's time over autofuse's per case, beside issue 34's target.

    python benchmarks/cpu_plot.py benchmarks/results/cpu_64mb_loaded_2026-11-25.json out.png
"""
from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# issue 34's targets (NumPy / autofuse) by the start of a case's name; 1.0x for the rest
TARGETS = {"relu(x*y+z)*w, 1,000": 1.0, "relu(x*y+z)*w": 2.0, "bias+GELU": 2.0, "softmax": 1.5,
           "layernorm": 1.5, "RMSNorm": 1.5}


def target(case: str) -> float:
    for start, value in TARGETS.items():
        if case.startswith(start):
            return value
    return 1.0


def main(source: str, destination: str) -> int:
    result = json.loads(open(source).read())
    rows = result["rows"]
    names = [row["case"] for row in rows]
    ratios = [row["speedup_vs_numpy"] for row in rows]
    goals = [target(name) for name in names]
    figure, axes = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    places = range(len(rows))
    colors = ["tab:green" if r >= g else "tab:red" for r, g in zip(ratios, goals)]
    axes.barh(places, ratios, color=colors)
    axes.scatter(goals, places, marker="|", s=300, color="black", label="issue 34's target")
    axes.axvline(1.0, color="gray", linewidth=0.8)
    axes.set_yticks(list(places), names)
    axes.invert_yaxis()
    axes.set_xlabel("NumPy time / autofuse time (right of 1: faster than NumPy)")
    machine = result["machine"]
    load = ", ".join(f"{v:.0f}" for v in machine["load_average"])
    axes.set_title(f"CPU backend, {machine['cores']} cores, load average {load} "
                   f"(commit {machine['commit']})", fontsize=9)
    axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(destination, dpi=110)
    print(f"wrote {destination}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
