"""Warm times of some corpus programs on a quiet GPU host: every program is compiled first (autofuse's
first call and jax.jit's, in a few processes side by side), and only when all have compiled are
they timed, one at a time under the device lock, with nothing else running on the CPUs.

    python -m benchmarks.corpus.retime [--groups 8] [--size large] [--json out.json] NAME...

run.py times a program as soon as it has compiled, while up to a dozen other measurements compile
beside it (each with its own compile workers): the GPU is not shared, but the CPUs are, and a call
that waits for the GPU can come back a scheduler tick late (multiples of 4 ms were seen). This
script measures the same calls (measure.median_seconds: median of at least 3 calls, until 0.5 s)
without that load; it does not check answers (run.py does).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parents[2]


def worker(names: list, size: str, barrier: str, groups: int, output: str,
           backend: str = "cuda") -> None:
    """Compile each program (autofuse, jax.jit), wait until every group has, then time them."""
    import autofuse
    from . import find
    from .measure import Device, copies, device_alone, median_seconds
    from .peers import jax_numpy_twin
    device = Device(backend)
    ready = []
    for name in names:
        record = {"name": name}
        try:
            program = find(name)
            dtype = np.dtype(program.dtypes[0]).name
            arguments, static = program.arguments(size, dtype)
            record["dtype"] = dtype
            function = autofuse.jit(program.function, static_argnames=program.static,
                                    backend=backend)
            begin = time.perf_counter()
            function(*copies(arguments, device), **static)
            device.synchronize()
            record["first_call_loaded_s"] = time.perf_counter() - begin
            jitted = None
            try:
                import jax
                import jax.numpy as jnp
                if program.kind == "loop":
                    from .loops_jax import twin
                    made = twin(name)
                else:
                    made = jax_numpy_twin(program.function, jnp)
                jitted = jax.jit(made, static_argnames=tuple(static))
                on_device = [jax.device_put(a) if isinstance(a, np.ndarray) else a
                             for a in arguments]
                jax.block_until_ready(jitted(*on_device, **static))
            except Exception as error:
                record["jax_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
                jitted = None
            ready.append((program, arguments, static, function, jitted,
                          on_device if jitted else None, record))
        except Exception as error:
            record["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            ready.append((None, None, None, None, None, None, record))
    Path(barrier, f"ready-{os.getpid()}").write_text("")
    waited = time.perf_counter()      # a group that crashed never arrives: wait at most BARRIER_S
    while (len(list(Path(barrier).glob("ready-*"))) < groups
           and time.perf_counter() - waited < float(os.environ.get("BARRIER_S", "150"))):
        time.sleep(0.2)
    record_wait = time.perf_counter() - waited
    records = []
    for program, arguments, static, function, jitted, on_device, record in ready:
        if program is not None:
            with device_alone():
                record["load_before"] = os.getloadavg()[0]
                record["barrier_wait_s"] = record_wait
                a = copies(arguments, device)
                record["warm_s"], record["repeats"] = median_seconds(
                    lambda: function(*a, **static), device)
                b = copies(arguments, device)
                try:
                    record["numpy_s"], _ = median_seconds(
                        lambda: program.function(*b, **static), device)
                except Exception as error:
                    record["numpy_error"] = str(error).splitlines()[0][:120]
                if jitted is not None:
                    import jax
                    record["jax_s"], _ = median_seconds(
                        lambda: jax.block_until_ready(jitted(*on_device, **static)), device)
        records.append(record)
        Path(output).write_text(json.dumps(records))      # as each is timed
    Path(output).write_text(json.dumps(records))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--size", default="large")
    parser.add_argument("--json", default="")
    parser.add_argument("--backend", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--worker", nargs=3, metavar=("BARRIER", "GROUPS", "OUTPUT"))
    options = parser.parse_args(argv)
    if options.worker:
        barrier, groups, output = options.worker
        worker(options.names, options.size, barrier, int(groups), output, options.backend)
        return 0
    groups = min(options.groups, len(options.names))
    with tempfile.TemporaryDirectory(prefix="retime-") as scratch:
        environment = dict(os.environ, AUTOFUSE_CACHE_DIR=os.path.join(scratch, "cache"),
                           CORPUS_DEVICE_LOCK=os.environ.get("CORPUS_DEVICE_LOCK",
                                                             os.path.join(scratch, "lock")),
                           PYTHONPATH=str(REPOSITORY) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        processes = []
        for index in range(groups):
            names = options.names[index::groups]
            output = os.path.join(scratch, f"out-{index}.json")
            command = [sys.executable, "-m", "benchmarks.corpus.retime", *names, "--size",
                       options.size, "--backend", options.backend, "--worker", scratch, str(groups), output]
            processes.append((subprocess.Popen(command, cwd=REPOSITORY, env=environment), output))
        records = []
        for process, output in processes:
            process.wait()
            if os.path.exists(output):
                records.extend(json.loads(Path(output).read_text()))
    order = {name: index for index, name in enumerate(options.names)}
    records.sort(key=lambda record: order[record["name"]])
    for record in records:
        print(record, flush=True)
    if options.json:
        Path(options.json).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
