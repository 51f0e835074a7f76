"""The GPU benchmark: autofuse beside NumPy-on-CuPy op by op, cupy.fuse, torch eager, torch.compile
and jax.jit, on the same inputs, in one process, against the memory floor measured in the same run.

    python benchmarks/gpu.py                   # full sizes; writes benchmarks/results/gpu.json
    python benchmarks/gpu.py --scale 4 --only softmax --systems autofuse,torch.compile

Method: each system's result is checked against NumPy first; then every system of a workload is
warmed up and timed in interleaved rounds: a round times one synchronized batch of calls of each
system (host clock around the batch and a final synchronize; per-call time = batch time / calls),
in an order rotated from round to round, so that a drift of the clocks or of the machine's load
falls on every system alike. A round's figure for a system is the difference between a batch of
L + n calls and one of L, over n, both after an untimed batch of L (--short: L at least 2 calls
and 4 ms of them, n at least 20 calls and 20 ms): the steady rate of calls, leaving out what a
batch pays once (the host's first call, the final synchronize) and what the first batch after
another system's pays, which differ between systems as their calls cost the host more or less;
the floor's copy is timed the same way. Every system but jax.jit is also timed on the GPU's clock
(CUDA events in the long batch). A system's time is the median of its rounds; the rounds
themselves are kept (and the long batches' own times, as `batch_rounds`, and the events', as
`device_rounds`), so that autofuse's ratio to a peer can be taken round by round (report.py).
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import autofuse  # noqa: E402
from workloads import workloads  # noqa: E402

SYSTEMS = ("autofuse", "cupy", "cupy.fuse", "torch", "torch.compile", "jax.jit")
LEAD_MS = 4.0       # the lead batch of the difference method holds at least this much of calls
SPAN_MS = 20.0      # ... and the calls whose difference is timed at least this much


def _batch(call, sync, calls: int, device: list | None = None, mark: int = 0) -> float:
    """Milliseconds per call of one synchronized batch of `calls` calls. With `device`, CUDA events
    on the legacy default stream (CuPy's and torch's unless they were told otherwise) after `mark`
    calls and after the last also time the calls after the mark on the GPU's own clock, appended
    to `device` as milliseconds a call."""
    events = None
    if device is not None:
        import cupy
        events = cupy.cuda.Event(), cupy.cuda.Event()
    start = time.perf_counter()
    result = None
    for k in range(calls):
        if events and k == mark:
            events[0].record(cupy.cuda.Stream.null)
        result = call()
    if events:
        events[1].record(cupy.cuda.Stream.null)
    sync(result)
    elapsed = (time.perf_counter() - start) * 1000 / calls
    if events:
        events[1].synchronize()
        device.append(cupy.cuda.get_elapsed_time(*events) / (calls - mark))
    return elapsed


def tuning(text: str):
    """"NAME=V+NAME2=V" -> the CUDA generator's Tuning with those fields changed (names as
    Tuning's fields, either case), values that read as integers as ints, as numbers as floats,
    others as text; "" is
    the defaults. Pass it as `autofuse.jit(..., tuning=...)`."""
    from autofuse.backends.cuda.tuning import Tuning
    changes = {}
    for item in filter(None, text.split("+")):
        key, value = item.split("=", 1)
        try:
            changes[key] = int(value)
        except ValueError:
            try:
                changes[key] = float(value)
            except ValueError:
                changes[key] = value
    return Tuning().replace(**changes)


def time_rounds(entries: dict, rounds=7, calls=20, warmup=3, batch_ms=250.0, short=0,
                plain: dict | None = None, lead_ms=LEAD_MS, span_ms=SPAN_MS,
                device: dict | None = None) -> dict:
    """{name: [ms per call, one a round]} for `entries` {name: (call, sync)}, timed in rounds.

    `sync(result)` waits for a result (jax dispatches asynchronously on its own stream, so CUDA
    events on CuPy's stream would not see its work; a synchronized batch times every system alike).
    Each round times one batch of every entry, the order rotated by one each round. A batch is
    `calls` calls, fewer for an entry whose warm-up shows a call longer than batch_ms / calls
    (cupy.fuse's sum takes a quarter of a second a call), at least one.

    With `short` > 0, each round times a lead batch of L calls, then one of L + n, and the round's
    figure is their difference over n: the steady rate of calls, without what a batch pays once
    (the first call's host time, the final synchronize). L is at least `short` calls and lead_ms
    of them, n at least `calls` calls and span_ms of them (at most batch_ms). Before them an
    untimed batch of L calls takes what the first batch after another system's pays and the two
    timed batches do not: on an H200 (benchmarks/experiments/batch_shape.py) that first batch
    took 0.15-0.47 ms more, and a lead batch that paid it alone took it off the difference.
    `plain`, where given, receives the long batches' own per-call times; `device`, where given as
    {name: []} for entries whose work is ordered on the legacy default stream, their n calls'
    time on the GPU's clock (CUDA events; the host's latency is not in it).
    """
    sizes, leads = {}, {}
    for name, (call, sync) in entries.items():
        _batch(call, sync, warmup)
        each = max(_batch(call, sync, 1), 1e-6)
        most = max(1, int(batch_ms / each))
        sizes[name] = min(most, max(calls, math.ceil(span_ms / each) if short else 0))
        leads[name] = max(short, min(most, math.ceil(lead_ms / each)))
    for name in entries if plain is not None else ():
        plain[name] = []

    def one_round(name):
        call, sync = entries[name]
        if not short:
            return _batch(call, sync, sizes[name])
        lead, n = leads[name], sizes[name]
        _batch(call, sync, lead)
        first = _batch(call, sync, lead) * lead
        total = _batch(call, sync, lead + n, (device or {}).get(name), lead) * (lead + n)
        if plain is not None:
            plain[name].append(total / (lead + n))
        return (total - first) / n

    return interleaved_loops({name: functools.partial(one_round, name) for name in entries},
                             rounds)


def time_calls(call, sync, calls=20, repeats=5, warmup=3):
    """Median milliseconds per call of one callable over `repeats` synchronized batches."""
    return float(np.median(time_rounds({"": (call, sync)}, repeats, calls, warmup)[""]))


def copy_bandwidth(short=0):
    """Device-to-device copy bandwidth (bytes read + written per second) of a 2 GiB buffer, timed
    as the workloads are (`short`: time_rounds)."""
    import cupy
    a = cupy.empty(1 << 29, dtype=cupy.float32)
    b = cupy.empty_like(a)
    copy = (lambda: b.__setitem__(Ellipsis, a), lambda _: cupy.cuda.Device().synchronize())
    ms = float(np.median(time_rounds({"copy": copy}, 5, 10, short=short)["copy"]))
    return 2 * a.nbytes / (ms / 1000)


def to_host(value):
    """A result on the host; a tuple of results (a program with several outputs) a list."""
    import cupy
    if isinstance(value, (tuple, list)):
        return [to_host(item) for item in value]
    if isinstance(value, cupy.ndarray):
        return cupy.asnumpy(value)
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def system_call(system, workload, host_inputs, tuning=None):
    """(callable, sync) for `system` on device copies of the inputs, or raise if unavailable;
    autofuse compiles with `tuning` (a Tuning, see tuning()) where one is given."""
    import cupy
    if system in ("autofuse", "cupy", "cupy.fuse"):
        inputs = [cupy.asarray(a) for a in host_inputs]
        if system == "autofuse":
            fn = autofuse.jit(workload.fn(np), tuning=tuning)
        elif system == "cupy":
            fn = workload.fn(cupy)
        else:   # cupy.fuse names its kernel after the function: give it a C identifier
            fn = cupy.fuse(kernel_name="fused_" + "".join(c if c.isalnum() else "_" for c in
                                                          workload.name))(workload.fn(cupy))
        return (lambda: fn(*inputs)), lambda _: cupy.cuda.Device().synchronize()
    if system.startswith("torch"):
        import torch
        inputs = [torch.from_numpy(a).cuda() for a in host_inputs]
        fn = workload.torch_fn(torch)
        if system == "torch.compile":
            fn = torch.compile(fn)
        return (lambda: fn(*inputs)), lambda _: torch.cuda.synchronize()
    if system == "jax.jit":
        import jax
        import jax.numpy as jnp
        inputs = [jax.device_put(a) for a in host_inputs]
        def stencil(u):     # jax arrays are immutable: the slice assignment as .at[].set
            inner = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
            return u.at[1:-1, 1:-1].set(inner)
        fn = jax.jit(stencil if workload.name == "5-point stencil" else workload.fn(jnp))
        return (lambda: fn(*inputs)), jax.block_until_ready
    raise ValueError(system)


def checked_calls(workload, host_inputs, systems, tuning=None) -> dict:
    """{system: (callable, sync)} for each of `systems` on device copies of the inputs, each
    one's result checked against NumPy's first (raises where a system fails or differs);
    autofuse compiles with `tuning` where one is given."""
    reference = workload.fn(np)(*host_inputs)
    found = {}
    for system in systems:
        call, sync = system_call(system, workload, host_inputs, tuning)
        result = call()
        sync(result)
        check(to_host(result), reference, workload.tolerance)
        found[system] = (call, sync)
    return found


def check(result, reference, tolerance: float) -> None:
    """`result` is NumPy's `reference` within `tolerance`, relative and of the largest value."""
    if isinstance(reference, (tuple, list)):          # (several outputs: each on its own)
        assert isinstance(result, list) and len(result) == len(reference)
        for one, expected in zip(result, reference):
            check(one, expected, tolerance)
        return
    np.testing.assert_allclose(result, reference, rtol=tolerance,
                               atol=tolerance * max(1.0, float(np.abs(reference).max())))


def run_workload(workload, systems, bandwidth, rng, rounds=7, short=2, tunings=None):
    """One workload's row; `tunings` {label: "FIELD=V+..."} times autofuse with those generator
    values too, in the same rounds (row["variants"][label])."""
    host = workload.make(rng)
    reference = workload.fn(np)(*host)
    floor_ms = workload.floor_bytes(host) / bandwidth * 1000
    row = {"workload": workload.name, "floor_ms": floor_ms, "times": {}, "notes": {}}
    if workload.flops:
        row["flops"] = workload.flops(host)
    entries = {}
    for system in systems:
        try:
            call, sync = system_call(system, workload, host)
            result = call()
            sync(result)
            check(to_host(result), reference, workload.tolerance)
            entries[system] = (call, sync)
        except Exception as error:       # a peer that fails is reported, not hidden
            row["notes"][system] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    variant = 'autofuse float16="float32"'
    if workload.name.endswith("f16") and "autofuse" in systems:
        # NOTE: autofuse rounds float16 after each op as NumPy does; jit(float16="float32")
        # rounds only stores, as torch.compile and jax.jit do: timed too, shown beside the table
        import cupy
        fn = autofuse.jit(workload.fn(np), float16="float32")
        inputs = [cupy.asarray(a) for a in host]
        check(to_host(fn(*inputs)), reference, workload.tolerance)
        entries[variant] = (lambda: fn(*inputs), lambda _: cupy.cuda.Device().synchronize())
    for label, text in (tunings or {}).items():
        try:
            call, sync = system_call("autofuse", workload, host, tuning(text))
            check(to_host(call()), reference, workload.tolerance)
            entries[f"autofuse[{label}]"] = (call, sync)
        except Exception as error:       # a variant that fails is reported, as a system is
            row["notes"][f"autofuse[{label}]"] = f"{type(error).__name__}: {str(error)[:120]}"
    row["batch_rounds"] = {} if short else None
    # NOTE: every system but jax orders its work on the legacy default stream, where CUDA events
    # time its calls on the GPU's clock too, a check on the host-timed figures
    row["device_rounds"] = {name: [] for name in entries if name != "jax.jit"} if short else None
    row["rounds"] = time_rounds(entries, rounds=rounds, short=short, plain=row["batch_rounds"],
                                device=row["device_rounds"])
    row["short"] = short
    if short:
        row["lead_ms"], row["span_ms"] = LEAD_MS, SPAN_MS
    for name, samples in row["rounds"].items():
        if name == variant:
            row.setdefault("variants", {})['float16="float32"'] = float(np.median(samples))
        elif name.startswith("autofuse["):
            row.setdefault("variants", {})[name[len("autofuse["):-1]] = float(np.median(samples))
        else:
            row["times"][name] = float(np.median(samples))
    try:
        import cupy
        lowered = autofuse.jit(workload.fn(np)).lower(*[cupy.asarray(a) for a in host])
        row["autofuse_kernels"] = [f"{k.kind}:{k.strategy}" for k in lowered.kernels]
    except Exception as error:
        row["notes"]["kernels"] = repr(error)[:120]
    return row


def per_call_overhead(rounds: int = 5, calls: int = 2000):
    """Microseconds per call on 1024 floats (async host loops), one- and three-kernel functions,
    with and without CUDA graph replay, beside cupy.fuse and torch.compile's CUDA-graph mode:
    interleaved_loops' median of `rounds` rounds of `calls` calls each, every round's figure kept
    (a single loop's figure moved 8-14 µs from loop to loop on an H200 host, 2026-11-23)."""
    import cupy
    x = cupy.asarray(np.random.default_rng(0).standard_normal(1024, dtype=np.float32))
    y, z = x * 2, x + 1
    m = x.reshape(32, 32)
    one = lambda a, b, c: np.maximum(a * b + c, 0)
    three = lambda a: ((a @ a).sum(0), np.exp(a).sum(1), a.T * 2)
    entries, kernels, errors = {}, {}, {}
    for name, fn, args in (("one kernel", one, (x, y, z)), ("three kernels", three, (m,))):
        for graph in (None, False, True):      # None: the default (a graph, memory per call)
            jitted = autofuse.jit(fn, cuda_graph=graph)
            label = name + ("" if graph is None else f", cuda_graph={graph}")
            entries[label] = (jitted, args)
            kernels[label] = len(jitted.lower(*args).kernels)
    fused = cupy.fuse(kernel_name="relu_fma")(lambda a, b, c: cupy.maximum(a * b + c, 0))
    entries["cupy.fuse one kernel"] = (fused, (x, y, z))
    peer = "torch.compile reduce-overhead, three kernels' work"
    try:
        import torch
        t = torch.as_tensor(m, device="cuda")
        compiled = torch.compile(lambda a: ((a @ a).sum(0), torch.exp(a).sum(1), a.T * 2),
                                 mode="reduce-overhead")
        for _ in range(5):                       # reduce-overhead records its graph after warm-up
            compiled(t)
        entries[peer] = (compiled, (t,))
    except Exception as error:                   # no torch, or its compile failed: say so
        errors[peer] = repr(error)[:200]
    timed = interleaved_loops({label: (lambda fn=fn, args=args: _host_loop(fn, args, cupy, calls))
                               for label, (fn, args) in entries.items()}, rounds)
    results = {}
    for label, samples in timed.items():
        results[label] = {"us": float(np.median(samples)), "rounds": samples}
        if label in kernels:
            results[label]["kernels"] = kernels[label]
    for label, error in errors.items():
        results[label] = {"us": float("nan"), "error": error}
    return results


def interleaved_loops(loops: dict, rounds: int) -> dict:
    """{name: [one figure a round]}: `loops` {name: () -> figure} each run once a round, the order
    rotated by one each round (time_rounds' rounds, per_call_overhead's)."""
    names = list(loops)
    samples = {name: [] for name in names}
    for k in range(rounds):
        shift = k % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            samples[name].append(loops[name]())
    return samples


def _host_loop(fn, args, cupy, calls=2000) -> float:
    """Microseconds a call of `calls` async calls, after one call and a synchronize."""
    fn(*args)
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    cupy.cuda.Device().synchronize()
    return (time.perf_counter() - start) / calls * 1e6


FIRST_CALL = r"""
import time, numpy as np, cupy
x = cupy.ones(4096, dtype=cupy.float32)       # CUDA context and CuPy ready before the clock
cupy.cuda.Device().synchronize()
start = time.perf_counter()
import autofuse
imported = time.perf_counter()
f = autofuse.jit(lambda x: np.tanh(x) * 2 + 1)
f(x); cupy.cuda.Device().synchronize()
done = time.perf_counter()
print(f"{(imported - start) * 1000:.1f} {(done - imported) * 1000:.1f}")
"""


def first_call_costs():
    """First call of a one-kernel function: cold (empty disk cache) and from the disk cache, each
    in a new process; milliseconds beyond `import autofuse`.

    The children find autofuse's bytecode compiled, as an installed package has it (pip compiles
    it at install): a priming process writes it to a temporary PYTHONPYCACHEPREFIX. The GPU
    machine's environment sets PYTHONDONTWRITEBYTECODE, under which every new process compiles
    autofuse's source again (about 30 ms of a first call, 60 ms of the import); that case is
    reported too, as "disk cache new process, no bytecode"."""
    import tempfile
    runs = {}
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as bytecode, \
            tempfile.TemporaryDirectory() as priming:
        env = dict(os.environ, AUTOFUSE_CACHE_DIR=cache, PYTHONPYCACHEPREFIX=bytecode)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        bare = dict(os.environ, AUTOFUSE_CACHE_DIR=cache, PYTHONDONTWRITEBYTECODE="1")
        bare.pop("PYTHONPYCACHEPREFIX", None)
        for label, environment in (("priming", dict(env, AUTOFUSE_CACHE_DIR=priming)),
                                   ("cold new process", env), ("disk cache new process", env),
                                   ("disk cache new process, no bytecode", bare)):
            out = subprocess.run([sys.executable, "-c", FIRST_CALL], env=environment,
                                 capture_output=True, text=True, check=True).stdout.split()
            runs[label] = {"import_ms": float(out[0]), "first_call_ms": float(out[1])}
    del runs["priming"]
    # NOTE: cold means compiled now: an empty disk cache (read on every use), so a kernel cached by
    # an earlier run on this machine is not found. The process's first compile also imports
    # numba-cuda (about 0.5 s) where every kernel so far came from the disk cache; the next five,
    # each a new function, are what a warm process pays for a new signature: their median (one
    # such compile measured 176-355 ms from process to process on the H200 host).
    import cupy
    x = cupy.ones(4096, dtype=cupy.float32)
    times = []
    saved = os.environ.get("AUTOFUSE_CACHE_DIR")
    with tempfile.TemporaryDirectory() as empty:
        os.environ["AUTOFUSE_CACHE_DIR"] = empty
        try:
            for fn in (lambda x: np.exp(x) - 1, lambda x: np.sin(x) * 3 + x,
                       lambda x: np.cos(x) * 2 - x, lambda x: np.tanh(x) + x * x,
                       lambda x: np.sqrt(np.abs(x)) * 2 + 1, lambda x: np.log1p(x * x) - x):
                jitted = autofuse.jit(fn)
                start = time.perf_counter()
                jitted(x)
                cupy.cuda.Device().synchronize()
                times.append((time.perf_counter() - start) * 1000)
        finally:
            if saved is None:
                del os.environ["AUTOFUSE_CACHE_DIR"]
            else:
                os.environ["AUTOFUSE_CACHE_DIR"] = saved
    return dict(runs, **{"first compile in this process (ms)": times[0],
                         "cold in a warm process (ms)": float(np.median(times[1:])),
                         "cold in a warm process, each (ms)": times[1:]})


def versions():
    found = {"python": platform.python_version(), "numpy": np.__version__}
    for name in ("numba", "numba_cuda", "cupy", "torch", "jax", "cuda.core"):
        try:
            module = __import__(name, fromlist=["__version__"])
            found[name] = getattr(module, "__version__", "?")
        except Exception:
            pass
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="divide sizes by this")
    parser.add_argument("--only", default="", help="comma-separated substrings of workload names")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    parser.add_argument("--short", type=int, default=2,
                        help="time a call by the difference of batches of L + n and L calls, L at "
                             "least SHORT calls and 4 ms, n at least 20 calls and 20 ms (0: by "
                             "whole batches of 20)")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gpu.json"))
    args = parser.parse_args()
    import cupy
    systems = [s for s in args.systems.split(",") if s]
    rng = np.random.default_rng(2026)
    bandwidth = copy_bandwidth(args.short)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    report = {"device": props["name"].decode(), "date": time.strftime("%Y-%m-%d"),
              "commit": _commit(), "versions": versions(), "copy_bandwidth_TBps": bandwidth / 1e12,
              "rows": []}
    for workload in workloads(args.scale):
        if args.only and not any(s in workload.name for s in args.only.split(",")):
            continue
        row = run_workload(workload, systems, bandwidth, rng, args.rounds, args.short)
        report["rows"].append(row)
        print(json.dumps(row), flush=True)
        save(report, args.out)
    if not args.skip_overhead:
        report["per_call"] = per_call_overhead()
        save(report, args.out)
        report["first_call"] = first_call_costs()
        print(json.dumps({"per_call": report["per_call"], "first_call": report["first_call"]}))
    save(report, args.out)
    print(f"wrote {args.out}")


def save(report, path) -> None:
    """Write the report so far (a failure later keeps what was measured)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as file:
        json.dump(report, file, indent=1)


def _commit() -> str:
    if os.environ.get("AUTOFUSE_COMMIT"):
        return os.environ["AUTOFUSE_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=os.path.dirname(__file__)).stdout.strip() or "unknown"
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
