"""The GPU benchmark's timing method and report, without a GPU: systems are timed in interleaved
rounds with the order rotated, slow calls get smaller batches, and the report takes autofuse's
ratio to the best peer round by round."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
gpu = pytest.importorskip("gpu")
report = pytest.importorskip("report")


def test_rounds_time_every_entry_once_a_round_in_rotated_order():
    order = []
    entry = lambda name: (lambda: order.append(name), lambda _: order.append("|"))
    samples = gpu.time_rounds({"a": entry("a"), "b": entry("b"), "c": entry("c")},
                              rounds=3, calls=2, warmup=1)
    assert {k: len(v) for k, v in samples.items()} == {"a": 3, "b": 3, "c": 3}
    assert all(v > 0 for vs in samples.values() for v in vs)
    timed = "".join(order).split("|")[6:-1]     # after each entry's warm-up and single-call batch
    assert timed == ["aa", "bb", "cc", "bb", "cc", "aa", "cc", "aa", "bb"]


def test_a_slow_call_gets_a_smaller_batch_never_none():
    import time
    counts = {"slow": 0, "fast": 0}

    def call(name, seconds):
        def go():
            counts[name] += 1
            time.sleep(seconds)
        return go, lambda _: None

    gpu.time_rounds({"slow": call("slow", 0.02), "fast": call("fast", 0.0)},
                    rounds=2, calls=20, warmup=1, batch_ms=30.0)
    assert counts["slow"] == 1 + 1 + 2 * 1      # warm-up, estimate, a call a round
    assert counts["fast"] == 1 + 1 + 2 * 20


ROW = {"workload": "relu chain", "floor_ms": 0.30, "notes": {},
       "times": {"autofuse": 0.302, "torch.compile": 0.303, "jax.jit": 0.33},
       "rounds": {"autofuse": [0.30, 0.302, 0.31], "torch.compile": [0.31, 0.30, 0.303],
                  "jax.jit": [0.33, 0.33, 0.33]}}


def test_paired_ratio_is_taken_round_by_round_against_the_best_peer():
    p = report.paired(ROW)
    assert p["peer"] == "torch.compile"
    ratios = sorted([0.30 / 0.31, 0.302 / 0.30, 0.31 / 0.303])
    assert p["median"] == pytest.approx(ratios[1])
    assert (p["low"], p["high"]) == (pytest.approx(ratios[0]), pytest.approx(ratios[2]))
    assert (p["faster"], p["rounds"]) == (1, 3)
    assert p["spread"] == pytest.approx((0.31 - 0.30) / 0.302)


def test_report_shows_the_paired_table_and_reads_runs_without_rounds():
    run = {"device": "GPU", "date": "d", "commit": "c", "versions": {}, "copy_bandwidth_TBps": 4.2,
           "rows": [ROW]}
    text = report.markdown(run)
    assert "3 interleaved rounds" in text
    assert "| relu chain | torch.compile | 1.007 |" in text and "1 of 3" in text
    old = json.loads(json.dumps(run))
    del old["rows"][0]["rounds"]
    text = report.markdown(old)
    assert "5 synchronized batches of 20 calls" in text and "round by round" not in text


class _Clock:
    """A stand-in for the time module on a clock that moves only when told (the test's figures
    do not depend on the machine's load)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_difference_of_batches_leaves_out_what_a_batch_pays_once(monkeypatch):
    """A call of 2 ms whose batch pays 30 ms once (a slow synchronize): whole batches of 5 say
    8 ms a call; the difference of a batch of 1 + 5 calls and one of 1 says 2."""
    clock = _Clock()
    monkeypatch.setattr(gpu, "time", clock)
    calls = lambda: clock.advance(0.002)
    once = lambda _: clock.advance(0.03)
    plain = {}
    steady = gpu.time_rounds({"slow sync": (calls, once)}, rounds=2, calls=5, warmup=1, short=1,
                             plain=plain)["slow sync"]
    whole = gpu.time_rounds({"slow sync": (calls, once)}, rounds=2, calls=5, warmup=1)["slow sync"]
    assert all(1.8 < ms < 5.0 for ms in steady), steady
    assert all(ms > 6.5 for ms in whole) and all(ms > 5.5 for ms in plain["slow sync"])


def test_report_names_the_difference_method_and_shows_whole_batches():
    row = json.loads(json.dumps(ROW))
    row["short"] = 2
    row["batch_rounds"] = {"autofuse": [0.31, 0.312, 0.32], "torch.compile": [0.33, 0.32, 0.33],
                           "jax.jit": [0.34, 0.34, 0.34]}
    run = {"device": "GPU", "date": "d", "commit": "c", "versions": {}, "copy_bandwidth_TBps": 4.2,
           "rows": [row]}
    assert report.paired(row)["whole"] == pytest.approx(sorted(
        [0.31 / 0.33, 0.312 / 0.32, 0.32 / 0.33])[1])
    text = report.markdown(run)
    assert "batch of 2 + up to 20 calls and one of 2 calls" in text
    assert "whole batches |" in text and "| 1 of 3 | 3.3% | 0.970 |" in text


def test_an_untimed_batch_takes_what_the_first_batch_after_another_system_pays():
    """Each call takes 1 ms, and the first call after another system's takes 30 ms more (as a
    batch after a switch paid 0.15-0.47 ms more on an H200). A lead batch that paid it alone would
    take it off the difference (about 1 - 30/20 ms a call, under 0); the untimed batch before it
    keeps the figure near 1 ms (a sleep's own jitter moves a round by a few tenths)."""
    import time
    last = [None]

    def entry(name):
        def go():
            time.sleep(0.001 + (0.03 if last[0] != name else 0.0))
            last[0] = name
        return go, lambda _: None

    samples = gpu.time_rounds({"a": entry("a"), "b": entry("b")}, rounds=3, calls=5, warmup=1,
                              short=2, lead_ms=2.0, span_ms=20.0)
    assert all(0.4 < ms < 2.5 for ms in samples["a"] + samples["b"]), samples


def test_lead_and_span_set_the_batch_sizes_of_the_difference():
    counts = {"n": 0}

    def go():
        counts["n"] += 1
    gpu.time_rounds({"x": (go, lambda _: None)}, rounds=2, calls=3, warmup=1, short=2,
                    lead_ms=0.0, span_ms=0.0)
    assert counts["n"] == 1 + 1 + 2 * (2 + 2 + 2 + 3)   # warm-up, estimate; settle, lead, lead + n


def test_report_gives_the_gpu_clock_ratio_against_the_fastest_stream_peer():
    row = json.loads(json.dumps(ROW))
    row["short"], row["lead_ms"], row["span_ms"] = 2, 4.0, 20.0
    row["device_rounds"] = {"autofuse": [0.30, 0.30, 0.30], "torch.compile": [0.31, 0.30, 0.32]}
    p = report.paired(row)
    assert p["gpu"][0] == "torch.compile"
    assert p["gpu"][1] == pytest.approx(0.30 / 0.31)
    text = report.markdown({"device": "GPU", "date": "d", "commit": "c", "versions": {},
                            "copy_bandwidth_TBps": 4.2, "rows": [row]})
    assert "GPU clock |" in text and "0.968 (torch.compile) |" in text
    assert "lead L is at least 2 calls and 4 ms" in text


def test_per_call_loops_run_once_a_round_in_rotated_order():
    order = []
    figures = {"a": iter([3.0, 1.0, 2.0]), "b": iter([5.0, 4.0, 6.0])}

    def loop(name):
        def go():
            order.append(name)
            return next(figures[name])
        return go

    samples = gpu.interleaved_loops({"a": loop("a"), "b": loop("b")}, rounds=3)
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert samples == {"a": [3.0, 1.0, 2.0], "b": [5.0, 4.0, 6.0]}


def test_report_gives_the_per_call_median_with_its_rounds_range():
    run = {"device": "GPU", "date": "d", "commit": "c", "versions": {}, "copy_bandwidth_TBps": 4.2,
           "rows": [ROW], "per_call": {
               "one kernel": {"us": 7.9, "rounds": [7.5, 7.9, 12.0], "kernels": 1},
               "cupy.fuse one kernel": {"us": 9.0, "rounds": [8.8, 9.0, 9.9]},
               "torch.compile reduce-overhead, three kernels' work": {"us": float("nan"),
                                                                       "error": "no torch"}}}
    text = report.markdown(run)
    assert "median of 3 interleaved rounds" in text
    assert "- one kernel: 7.9 µs [7.5-12.0] (1 kernels)" in text
    assert "- cupy.fuse one kernel: 9.0 µs [8.8-9.9]" in text and "(no torch)" in text
    del run["per_call"]["one kernel"]["rounds"], run["per_call"]["cupy.fuse one kernel"]["rounds"]
    assert "(host loop of 2000 async calls, µs per call)" in report.markdown(run)


def test_report_gives_the_warm_process_compile_as_a_median_of_new_functions():
    first = {"cold new process": {"import_ms": 20, "first_call_ms": 900},
             "disk cache new process": {"import_ms": 14, "first_call_ms": 25},
             "disk cache new process, no bytecode": {"import_ms": 57, "first_call_ms": 70},
             "first compile in this process (ms)": 250.0,
             "cold in a warm process (ms)": 230.0,
             "cold in a warm process, each (ms)": [300.0, 230.0, 210.0, 240.0, 220.0]}
    run = {"device": "GPU", "date": "d", "commit": "c", "versions": {}, "copy_bandwidth_TBps": 4.2,
           "rows": [ROW], "first_call": first}
    assert "- cold, in a warm process: 230 ms (median of 5 new functions, 210-300)" in \
        report.markdown(run)
    del first["cold in a warm process, each (ms)"]
    assert "- cold, in a warm process: 230 ms\n" in report.markdown(run) + "\n"


def test_tuning_variants_parse():
    """The probes' and tune.py's variants: "NAME=V+NAME=V" changes the Tuning's fields (either
    case), integers as ints, text as text; "" is the defaults; an unknown name is refused."""
    from autofuse.backends.cuda.tuning import DEFAULT
    tuning = gpu.tuning("ILP_LOADS=8+two_stage_loads=2+REDUCE_SPREAD=chunk")
    assert tuning.changes() == {"ilp_loads": 8, "two_stage_loads": 2, "reduce_spread": "chunk"}
    assert gpu.tuning("") == DEFAULT and DEFAULT.key() == ""
    with pytest.raises(TypeError):
        gpu.tuning("NO_SUCH_FIELD=1")
