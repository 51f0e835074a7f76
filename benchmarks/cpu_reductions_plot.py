"""Plot a benchmarks/cpu_reductions.py result: NumPy's time over autofuse's per point, lowest
first, against the reductions issue's CPU target (1.0x: at or above NumPy everywhere).

    python benchmarks/cpu_reductions_plot.py RESULT.json OUT.png
"""
from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(source: str, destination: str) -> int:
    result = json.loads(open(source).read())
    rows = sorted(result["rows"], key=lambda row: row["speed"])
    names = [f"{row['layout']} {'x'.join(map(str, row['shape']))} axis {row['axis']} "
             f"{row['program']}" for row in rows]
    speeds = [row["speed"] for row in rows]
    figure, axes = plt.subplots(figsize=(9, 0.22 * len(rows) + 1.5))
    axes.barh(range(len(rows)), speeds, color=["tab:red" if s < 1 else "tab:blue" for s in speeds])
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_yticks(range(len(rows)), names, fontsize=6)
    axes.set_xscale("log")
    axes.set_xlabel("NumPy time / autofuse time (above 1: autofuse faster)")
    axes.set_title(f"CPU reductions, {result.get('mb', '?')} MB inputs, {result.get('cpus')} cores, "
                   f"commit {result.get('commit')}, {result.get('date')}", fontsize=9)
    figure.tight_layout()
    figure.savefig(destination, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
