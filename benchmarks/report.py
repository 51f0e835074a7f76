"""Turns benchmarks/results/gpu.json into the GPU section of BENCHMARKS.md and a PNG plot.

    python benchmarks/report.py results/gpu.json --markdown gpu.md --plot gpu_floor.png
"""
from __future__ import annotations

import argparse
import json
from statistics import median

PEERS = ("cupy", "cupy.fuse", "torch", "torch.compile", "jax.jit")
TF32 = {"jax.jit": "TF32 matmul (jax's default precision)"}


def best_peer_name(row: dict) -> str | None:
    """The fastest peer of `row` by median time (TF32 matmuls left out), or None where none ran."""
    precise = {k: v for k, v in row["times"].items()
               if k != "autofuse" and not (row.get("flops") and k in TF32)}
    return min(precise, key=precise.get) if precise else None


def best_peer(row: dict) -> float | None:
    """The fastest peer's time for `row` (TF32 matmuls left out), or None where none ran."""
    name = best_peer_name(row)
    return row["times"][name] if name else None


def paired(row: dict) -> dict | None:
    """autofuse's time over the best peer's, round by round (the two were timed in the same round,
    moments apart): median, lowest and highest ratio, rounds autofuse was faster; and the spread of
    each system's own rounds ((highest - lowest) / median), the measurement's noise; where the
    rounds were differences of batches, `whole` is the median ratio of the long batches' own
    times, and `gpu` (peer, median ratio) the same taken from the CUDA-event times on the GPU's own
    clock against the fastest peer that has them (all but jax.jit). None where the row has no
    rounds (runs before f4b21db, 2026-11-23) or no peer."""
    rounds, peer = row.get("rounds", {}), best_peer_name(row)
    if peer is None or "autofuse" not in rounds or peer not in rounds:
        return None
    ratios = sorted(a / b for a, b in zip(rounds["autofuse"], rounds[peer]))
    spread = lambda v: (max(v) - min(v)) / median(v)
    whole = row.get("batch_rounds") or {}
    device = {k: v for k, v in (row.get("device_rounds") or {}).items() if v}
    gpu = None
    timed = {k: median(v) for k, v in device.items()
             if k != "autofuse" and k in row["times"] and not (row.get("flops") and k in TF32)}
    if "autofuse" in device and timed:
        rival = min(timed, key=timed.get)
        gpu = (rival, median([a / b for a, b in zip(device["autofuse"], device[rival])]))
    return {"peer": peer, "median": median(ratios), "low": ratios[0], "high": ratios[-1],
            "faster": sum(r < 1 for r in ratios), "rounds": len(ratios),
            "spread": max(spread(rounds["autofuse"]), spread(rounds[peer])),
            "whole": median([a / b for a, b in zip(whole["autofuse"], whole[peer])])
            if "autofuse" in whole and peer in whole else None, "gpu": gpu}


def markdown(report: dict) -> str:
    lines = [f"Device: {report['device']}; date {report['date']}; commit {report['commit']}; "
             f"copy bandwidth {report['copy_bandwidth_TBps']:.2f} TB/s (read + write).",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()) + ".", "",
             f"Milliseconds per call (median of {_rounds(report)}, after warm-up; "
             "every result checked against NumPy first). Floor = bytes that must move / copy "
             "bandwidth. `x floor` and `x best peer` are autofuse's time over those (lower is "
             "better; under 1.00 beats it).", "",
             "| workload | floor | autofuse | x floor | " + " | ".join(PEERS) +
             " | x best peer | autofuse kernels |",
             "|---|---|---|---|" + "---|" * len(PEERS) + "---|---|"]
    for row in report["rows"]:
        times = row["times"]
        ours = times.get("autofuse")
        best = best_peer(row)
        cells = []
        for peer in PEERS:
            if peer in times:
                mark = "*" if row.get("flops") and peer in TF32 else ""
                cells.append(f"{times[peer]:.3f}{mark}")
            else:
                cells.append("fails" if peer in row["notes"] else "—")
        floor = row["floor_ms"]
        memory_bound = not row.get("flops")
        lines.append(
            f"| {row['workload']} | {floor:.3f} | {ours:.3f} | "
            f"{(ours / floor if memory_bound else float('nan')):.2f} | " + " | ".join(cells) +
            f" | {ours / best:.2f} | {', '.join(row.get('autofuse_kernels', []))} |"
            if ours is not None else f"| {row['workload']} | {floor:.3f} | fails | | " +
            " | ".join(cells) + " | | |")
    pairs = [(row, paired(row)) for row in report["rows"]]
    if any(p for _, p in pairs):
        whole = any(p and p["whole"] is not None for _, p in pairs)
        clock = any(p and p["gpu"] for _, p in pairs)
        lines += ["", "autofuse's time over the best peer's, round by round (both timed in the same "
                  "round): median [lowest, highest], rounds autofuse was faster; noise = the larger "
                  "spread of the two systems' own rounds, (highest - lowest) / median" +
                  ("; `whole batches` = the median ratio of the long batches' own times, what a "
                   "batch pays once included" if whole else "") +
                  ("; `GPU clock` = the median ratio of the same calls timed by CUDA events on the "
                   "GPU (no host latency in them), against the fastest peer that orders its work "
                   "on the default stream (all but jax.jit)" if clock else "") + ":", "",
                  "| workload | best peer | ratio, median | lowest | highest | faster in | noise |" +
                  (" whole batches |" if whole else "") + (" GPU clock |" if clock else ""),
                  "|---|---|---|---|---|---|---|" + ("---|" if whole else "") +
                  ("---|" if clock else "")]
        lines += [f"| {row['workload']} | {p['peer']} | {p['median']:.3f} | {p['low']:.3f} | "
                  f"{p['high']:.3f} | {p['faster']} of {p['rounds']} | {p['spread'] * 100:.1f}% |" +
                  ((f" {p['whole']:.3f} |" if p["whole"] is not None else " |") if whole else "") +
                  ((f" {p['gpu'][1]:.3f} ({p['gpu'][0]}) |" if p["gpu"] else " |") if clock else "")
                  for row, p in pairs if p]
    lines.append("")
    lines.append("`*` jax.jit's float32 matmul runs in TF32 by default (lower precision); it is not "
                 "counted as the best peer for matmul workloads. `x floor` is shown for memory-bound "
                 "workloads only (nan for matmul ones).")
    for row in report["rows"]:
        if row.get("flops") and "autofuse" in row["times"]:
            rates = {k: row["flops"] / (v / 1000) / 1e12 for k, v in row["times"].items()}
            lines.append(f"- {row['workload']}: TFLOP/s " + ", ".join(
                f"{k} {v:.1f}" for k, v in rates.items()))
    variants = [(row, name, ms) for row in report["rows"] for name, ms in row.get("variants", {}).items()]
    if variants:
        lines += ["", "float16 workloads: the table's autofuse rounds every float16 op's result as NumPy "
                  "does; the peers compute float16 chains in float32 and round what they store, "
                  "which autofuse does with `jit(float16=\"float32\")`:"]
        for row, name, ms in variants:
            best = best_peer(row)
            lines.append(f"- {row['workload']}, autofuse {name}: {ms:.3f} ms, "
                         f"{ms / row['floor_ms']:.2f}x the floor, {ms / best:.2f}x the best peer")
    failures = [(row["workload"], k, v) for row in report["rows"] for k, v in row["notes"].items()]
    if failures:
        lines += ["", "Peers that failed (as reported by the peer):"]
        lines += [f"- {w}, {k}: {v}" for w, k, v in failures]
    if "per_call" in report:
        calls = report["per_call"]
        rounds = max((len(v.get("rounds", [])) for v in calls.values()), default=0)
        how = (f"median of {rounds} interleaved rounds, each a host loop of 2000 async calls, "
               f"µs per call; the rounds' lowest and highest in brackets" if rounds else
               "host loop of 2000 async calls, µs per call")
        lines += ["", f"Per-call cost on 1024 floats ({how}):"]
        lines += [f"- {k}: {v['us']:.1f} µs"
                  + (f" [{min(v['rounds']):.1f}-{max(v['rounds']):.1f}]" if v.get("rounds") else "")
                  + (f" ({v['kernels']} kernels)" if "kernels" in v else "")
                  + (f" ({v['error']})" if "error" in v else "")
                  for k, v in calls.items()]
    if "first_call" in report:
        first = report["first_call"]
        lines += ["", "First call of a one-kernel function, beyond `import autofuse` (new processes "
                  "find autofuse's bytecode compiled, as an installed package has it, unless said):",
                  f"- cold, new process: {first['cold new process']['first_call_ms']:.0f} ms",
                  f"- from the disk cache, new process: "
                  f"{first['disk cache new process']['first_call_ms']:.0f} ms "
                  f"(import {first['disk cache new process']['import_ms']:.0f} ms)"]
        bare = first.get("disk cache new process, no bytecode")
        if bare:
            lines.append(f"- from the disk cache, new process compiling autofuse's source: "
                         f"{bare['first_call_ms']:.0f} ms (import {bare['import_ms']:.0f} ms)")
        each = first.get("cold in a warm process, each (ms)")
        lines.append(f"- cold, in a warm process: {first['cold in a warm process (ms)']:.0f} ms"
                     + (f" (median of {len(each)} new functions, {min(each):.0f}-{max(each):.0f})"
                        if each else ""))
        if "first compile in this process (ms)" in first:
            lines.append(f"- the benchmark process's first compile (imports numba-cuda where every "
                         f"kernel so far came from the disk cache): "
                         f"{first['first compile in this process (ms)']:.0f} ms")
    return "\n".join(lines) + "\n"


def _rounds(report: dict) -> str:
    """How the table's times were taken, from the rows' recorded rounds."""
    counts = {len(v) for row in report["rows"] for v in row.get("rounds", {}).values()}
    if not counts:      # runs before f4b21db: each system timed on its own
        return "5 synchronized batches of 20 calls"
    shorts = {row.get("short", 0) for row in report["rows"]}
    how = (f"{max(counts)} interleaved rounds, one synchronized batch of up to 20 calls of every "
           "system a round")
    if shorts == {0}:
        return how
    short = max(shorts)
    leads = {(row.get("lead_ms"), row.get("span_ms")) for row in report["rows"]} - {(None, None)}
    if not leads:       # runs before 2a81cc2: a lead batch of `short` calls, 20 more, no settling
        return (f"{max(counts)} interleaved rounds; a system's figure for a round is the "
                f"difference between a synchronized batch of {short} + up to 20 calls and one of "
                f"{short} calls, over the difference in calls, which leaves out what a batch pays "
                "once; the floor's copy is timed the same way")
    lead_ms, span_ms = max(leads)
    return (f"{max(counts)} interleaved rounds; a system's figure for a round is the difference "
            f"between a synchronized batch of L + n calls and one of L calls, over n, both after an "
            f"untimed batch of L, where the lead L is at least {short} calls and {lead_ms:g} ms of "
            f"them and n at least 20 calls and {span_ms:g} ms: the steady rate of calls, without "
            "what a batch pays once (the first call's host time, the final synchronize) or what "
            "the first batch after another system's pays; the floor's copy is timed the same way")


def plot(report: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in report["rows"] if not r.get("flops")]
    systems = ("autofuse",) + PEERS
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(systems)
    for k, system in enumerate(systems):
        values = [r["floor_ms"] / r["times"][system] if system in r["times"] else 0 for r in rows]
        ax.bar([i + k * width for i in range(len(rows))], values, width, label=system)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
    ax.set_xticklabels([r["workload"] for r in rows], rotation=15)
    ax.set_ylabel("fraction of the memory floor reached")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_title(f"Memory-bound workloads, {report['device']}, commit {report['commit']}")
    ax.legend(ncol=6, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--markdown")
    parser.add_argument("--plot")
    args = parser.parse_args()
    with open(args.results) as file:
        report = json.load(file)
    text = markdown(report)
    if args.markdown:
        with open(args.markdown, "w") as file:
            file.write(text)
    else:
        print(text)
    if args.plot:
        plot(report, args.plot)


if __name__ == "__main__":
    main()
