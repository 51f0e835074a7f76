"""The reduction sweep's table and plot from its result files (reductions_sweep.py --out ...).

    python benchmarks/reductions_report.py benchmarks/results/reductions_run1.json \
        benchmarks/results/reductions_run2.json benchmarks/results/reductions_run3.json \
        --plot benchmarks/results/reductions_sweep.png

Later files' rows replace earlier ones' of the same point (each row's peers timed in its own
run). `--use "point=label"` takes the autofuse variant `label` of a row as its figure (a tuning
made the default after that run); `--before` names the variants that ran main's kernels (the "main" column).
"""
from __future__ import annotations

import argparse
import json

SYSTEMS = ("cupy", "torch.compile", "jax.jit")


def merged(paths) -> dict:
    """{point: (row, file index)}, the last file's row of each point, and the earlier rows'
    autofuse figures as `row["earlier"]` (the kernels of main, before a change)."""
    found = {}
    for index, path in enumerate(paths):
        with open(path) as f:
            for row in json.load(f)["rows"]:
                earlier = found.get(row["workload"])
                row["earlier"] = (earlier[0]["earlier"] + [earlier[0]["times"]]) if earlier else []
                found[row["workload"]] = (row, index + 1)
    return found


def main_time(row, before, variant) -> float | None:
    """autofuse's time with main's kernels: a `before` variant of the point (the latest run's
    first), else its own default where a `variant` stands for it, else the first run's autofuse
    figure where a later run measured the point again."""
    for times in [row["times"]] + row["earlier"][::-1]:
        for label in before:
            if f"autofuse[{label}]" in times:
                return times[f"autofuse[{label}]"]
    if variant:
        return row["times"].get("autofuse")
    return row["earlier"][0].get("autofuse") if row["earlier"] else None


def table(found, before, use) -> tuple[str, list]:
    lines = ["| point | floor µs | autofuse µs | main µs | CuPy µs | torch.compile µs | "
             "jax.jit µs | autofuse / best peer | autofuse / floor | kernel | run |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    points = []
    for name, (row, run) in found.items():
        t = row["times"]
        af = t.get(f"autofuse[{use[name]}]") if name in use else t.get("autofuse")
        peers = [t[s] for s in ("torch.compile", "jax.jit") if s in t]
        if af is None or not peers:
            continue
        best, old = min(peers), main_time(row, before, name in use)
        cells = [f"{row['floor_ms'] * 1e3:.1f}", f"{af * 1e3:.1f}",
                 f"{old * 1e3:.1f}" if old else "", *(f"{t[s] * 1e3:.1f}" if s in t else "-"
                                                       for s in SYSTEMS),
                 f"{af / best:.2f}", f"{af / row['floor_ms']:.2f}"]
        kernel = "; ".join(row.get("autofuse_kernels", []))
        if name in use:
            kernel = f"{kernel} at run time; the figure: variant {use[name]}, now the default"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {kernel} | {run} |")
        points.append((name, af / best, old / best if old else None))
    return "\n".join(lines), points


def plot(points, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    points = sorted(points, key=lambda p: p[1])
    fig, ax = plt.subplots(figsize=(9, 0.22 * len(points) + 1.5))
    y = range(len(points))
    ax.scatter([p[1] for p in points], y, label="this branch", zorder=3)
    ax.scatter([p[2] for p in points if p[2]], [i for i, p in enumerate(points) if p[2]],
               marker="x", color="gray", label="main", zorder=2)
    for i, p in enumerate(points):
        if p[2]:
            ax.plot([p[2], p[1]], [i, i], color="lightgray", zorder=1)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(1.1, color="red", linewidth=0.8, linestyle="--", label="1.1x (target)")
    ax.set_xscale("log")
    ax.set_yticks(list(y))
    ax.set_yticklabels([p[0] for p in points], fontsize=7)
    ax.set_xlabel("autofuse time / best of torch.compile and jax.jit (H200; lower is better)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--before", default="main,old")
    parser.add_argument("--use", action="append", default=[])
    parser.add_argument("--plot", default="")
    args = parser.parse_args()
    use = dict(item.split("=", 1) for item in args.use)
    text, points = table(merged(args.results), args.before.split(","), use)
    print(text)
    if args.plot:
        plot(points, args.plot)


if __name__ == "__main__":
    main()
