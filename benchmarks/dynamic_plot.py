"""The class / specialized ratio of every point of the shape-class runs (issue 33), one panel a
sweep: `python benchmarks/dynamic_plot.py OUT.png RESULT.json [RESULT.json ...]` (the JSON files
`benchmarks/dynamic_shapes.py --gpu --json` writes)."""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def points(path: str) -> list:
    rows = json.loads(Path(path).read_text())["gpu"]["workloads"]
    return [(name, row["class/specialized"], row["class"]) for name, row in rows.items()
            if "class/specialized" in row]


def main() -> None:
    out, paths = sys.argv[1], sys.argv[2:]
    figure, axes = plt.subplots(len(paths), 1, figsize=(12, 4 * len(paths)), squeeze=False)
    for axis, path in zip(axes[:, 0], paths):
        found = points(path)
        colors = ["tab:blue" if is_class else "tab:gray" for _, _, is_class in found]
        axis.bar(range(len(found)), [ratio for _, ratio, _ in found], color=colors)
        axis.axhline(1.05, color="tab:red", linewidth=0.8, linestyle="--")
        axis.axhline(1.0, color="black", linewidth=0.5)
        axis.set_xticks(range(len(found)), [name for name, _, _ in found], rotation=75,
                        fontsize=6, ha="right")
        axis.set_ylabel("class / specialized")
        axis.set_title(f"{Path(path).stem} (blue: a class; gray: kept static)", fontsize=9)
    figure.tight_layout()
    figure.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
