"""Plot benchmarks/chains.py's result: each system's time over the memory floor, per chain.

    python benchmarks/chains_plot.py benchmarks/results/chains.json --out chains.png
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

SYSTEMS = ("autofuse", "torch.compile", "jax.jit")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    report = json.load(open(args.result))
    rows = report["rows"]
    names = [row["workload"] for row in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(11, 4.2))
    for k, system in enumerate(SYSTEMS):
        ratios = [row["times"].get(system, np.nan) / row["floor_ms"] for row in rows]
        ax.bar(x + (k - 1) * 0.27, ratios, 0.27, label=system)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel("time / memory floor (lower is better)")
    ax.set_title(f"Compute-bound chains, {report['device']}, {report['date']}, "
                 f"commit {report['commit']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
