"""One measurement, run in its own process by run.py: build a corpus program's inputs, compile it
with autofuse, check it against NumPy and time both. Progress is written to a JSON file after each
stage, so that a hang or a crash still says how far it got.

    python -m benchmarks.corpus.measure NAME DTYPE SIZE BACKEND PROGRESS_FILE

With $CORPUS_STACK_AFTER=SECONDS it writes its stack to PROGRESS_FILE.stack after that long.
"""
from __future__ import annotations

import contextlib
import fcntl
import faulthandler
import json
import os
import resource
import statistics
import sys
import time
import traceback

import numpy as np

from . import find
from .compare import judged

MIN_REPEATS, MAX_REPEATS, TIMING_SECONDS = 3, 50, 0.5


class Device:
    """How arrays reach the backend and how to wait for it: NumPy on the CPU, CuPy on CUDA."""

    def __init__(self, backend: str):
        self.backend = backend
        self.cupy = None
        if backend == "cuda":
            import cupy
            self.cupy = cupy

    def put(self, value):
        if self.cupy is not None and isinstance(value, np.ndarray):
            return self.cupy.asarray(value)
        return value

    def get(self, value):
        if isinstance(value, (tuple, list)):
            return type(value)(self.get(item) for item in value)
        if self.cupy is not None and isinstance(value, self.cupy.ndarray):
            return self.cupy.asnumpy(value)
        return value

    def synchronize(self):
        if self.cupy is not None:
            self.cupy.cuda.Device().synchronize()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def copies(arguments, device):
    """Fresh copies of the arguments on the device (programs may write their arguments)."""
    return tuple(device.put(a.copy()) if isinstance(a, np.ndarray) else a for a in arguments)


def median_seconds(call, device) -> tuple[float, int]:
    """(median seconds of a call, repeats): at least MIN_REPEATS, until TIMING_SECONDS pass."""
    times = []
    started = time.perf_counter()
    while len(times) < MIN_REPEATS or (time.perf_counter() - started < TIMING_SECONDS
                                       and len(times) < MAX_REPEATS):
        device.synchronize()
        begin = time.perf_counter()
        call()
        device.synchronize()
        times.append(time.perf_counter() - begin)
    return statistics.median(times), len(times)


def failure(error: BaseException, stage: str) -> dict:
    """An exception as the record shows it: type, first line, and where in autofuse it rose."""
    message = str(error).strip().splitlines()
    frames = [f"{frame.filename}:{frame.lineno} in {frame.name}"
              for frame in traceback.extract_tb(error.__traceback__)]
    inside = [name for name in frames if os.sep + "autofuse" + os.sep in name]
    place = inside[-1].split(os.sep + "autofuse" + os.sep, 1)[1] if inside else ""
    record = {"stage": stage, "error_type": type(error).__name__,
              "error": message[0][:300] if message else "", "error_at": place}
    if stage == "lower":
        # lower() traces, fuses and compiles: an error raised in a backend came after the trace
        record["traced"] = place.startswith("backends")
    return record


class Recorder:
    """The record so far, rewritten to the progress file at each stage."""

    def __init__(self, path: str, record: dict):
        self.path = path
        self.record = record

    def stage(self, name: str, **values):
        self.record.update(values, stage=name)
        with open(self.path, "w") as file:
            json.dump(self.record, file)


def measure(name: str, dtype: str, size: str, backend: str, recorder: Recorder) -> None:
    program = find(name)
    device = Device(backend)
    arguments, static = program.arguments(size, dtype)
    recorder.stage("numpy", steps=program.steps(size),
                   floor_bytes=int(program.bytes_moved(arguments, static)) * program.steps(size))
    want, exact = references(program, arguments, static, dtype, device, recorder)

    import autofuse
    function = autofuse.jit(program.function, static_argnames=program.static, backend=backend)
    recorder.stage("lower", rss_before_mb=peak_rss_mb())
    begin = time.perf_counter()
    try:
        lowered = function.lower(*copies(arguments, device), **static)
    except Exception as error:   # any failure to build is the finding, recorded as such
        recorder.stage("lower", compiled=False, **failure(error, "lower"))
        return
    lower_seconds = time.perf_counter() - begin
    recorder.stage("first call", traced=True, lower_s=lower_seconds, kernels=len(lowered.kernels))
    device_arguments = copies(arguments, device)
    begin = time.perf_counter()
    try:
        got = function(*device_arguments, **static)
        device.synchronize()
    except Exception as error:
        recorder.stage("first call", compiled=False, **failure(error, "first call"))
        return
    first_call = lower_seconds + time.perf_counter() - begin
    recorder.stage("compare", compiled=True, first_call_s=first_call, peak_rss_mb=peak_rss_mb())
    recorder.stage("time", **judged(device.get((got, device_arguments)), want, exact, dtype))
    timings(program, arguments, static, want, exact, dtype, function, device, recorder)


def references(program, arguments, static, dtype: str, device, recorder):
    """(NumPy's answer, the float64 answer or None), each as (result, arguments after the call).

    With $CORPUS_REFERENCE=device on CUDA both are the program's NumPy text on CuPy arrays (NumPy
    dispatching to CuPy), run on the GPU under the device lock, where the CPU would take minutes
    (2^24-element grids over 1,000 steps); the record says "reference": "cupy". Where CuPy cannot
    run the program, or without that setting, NumPy on the CPU."""
    if os.environ.get("CORPUS_REFERENCE") == "device" and device.cupy is not None:
        try:
            with device_alone():
                want = _run_reference(program, arguments, static, device)
                exact = exact_result(program, arguments, static, dtype, device)
                device.synchronize()
            recorder.stage("numpy", reference="cupy")
            return want, exact
        except Exception as error:   # NumPy's functions on CuPy arrays: not every one dispatches
            recorder.stage("numpy", reference="numpy",
                           reference_note=failure(error, "numpy")["error"])
    host = Device("cpu")
    return (_run_reference(program, arguments, static, host),
            exact_result(program, arguments, static, dtype, host))


def _run_reference(program, arguments, static, device):
    """(the program's result, its arguments after the call), brought back to NumPy arrays."""
    inputs = copies(arguments, device)
    return device.get((program.function(*inputs, **static), inputs))


def exact_result(program, arguments, static, dtype: str, device):
    """The program run in float64 on the same inputs (a float32 or float16 program's reference
    for how close NumPy's own answer is), as (result, arguments after the call); None for others
    or where float64 inputs fail."""
    if np.dtype(dtype).kind != "f" or np.dtype(dtype).itemsize >= 8:
        return None
    wide = tuple(a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                 else a for a in arguments)
    try:
        return _run_reference(program, wide, static, device)
    except Exception:      # a program tied to its dtype: judged against NumPy alone
        return None


@contextlib.contextmanager
def device_alone():
    """Hold the lock file named by $CORPUS_DEVICE_LOCK while timing, so that measurements run in
    parallel (run.py --jobs) compile side by side but never time on a shared GPU."""
    path = os.environ.get("CORPUS_DEVICE_LOCK")
    if not path:
        yield
        return
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def alone_median(call, device) -> tuple[float, int]:
    """median_seconds() holding the device lock: warm times never share the GPU, while compiles
    and first calls (autofuse's and jax.jit's) run beside other measurements."""
    with device_alone():
        return median_seconds(call, device)


def timings(program, arguments, static, want, exact, dtype, function, device, recorder) -> None:
    """Warm medians of autofuse, NumPy's functions on the device's arrays and, on CUDA, jax.jit."""
    name, median_seconds = program.name, alone_median
    time_arguments = copies(arguments, device)
    autofuse_seconds, repeats = median_seconds(lambda: function(*time_arguments, **static), device)
    numpy_arguments = copies(arguments, device)
    try:
        numpy_seconds, _ = median_seconds(lambda: program.function(*numpy_arguments, **static),
                                          device)
    except Exception as error:     # NumPy's functions on CuPy arrays: not every one dispatches
        recorder.stage("done", warm_s=autofuse_seconds, repeats=repeats,
                       numpy_error=failure(error, "numpy")["error"])
        return
    peers = {}
    if device.backend == "cuda":
        from .peers import time_jax, time_jax_numpy
        recorder.stage("jax", warm_s=autofuse_seconds, numpy_s=numpy_seconds, repeats=repeats)
        judge = lambda got: judged(got, want[0], exact and exact[0], dtype)  # noqa: E731
        if program.kind == "loop":
            peers = time_jax(name, arguments, static, judge, dtype, median_seconds, device)
        elif want[0] is None:   # under jax its writes are lost: jax.jit computes nothing
            peers = {"jax_error": "returns None, writing its arguments: nothing to jax.jit"}
        else:
            peers = time_jax_numpy(program.function, arguments, static, judge, dtype,
                                   median_seconds, device)
    recorder.stage("done", warm_s=autofuse_seconds, numpy_s=numpy_seconds, repeats=repeats,
                   speedup=numpy_seconds / autofuse_seconds if autofuse_seconds else None, **peers)


def main(argv):
    name, dtype, size, backend, path = argv
    seconds = float(os.environ.get("CORPUS_STACK_AFTER", "0"))
    if seconds > 0:
        # NOTE: a hang is a finding: just before run.py's timeout, write every thread's stack
        # beside the progress file and exit, so the record can say where it hung.
        stack_file = open(path + ".stack", "w")
        faulthandler.dump_traceback_later(seconds, exit=True, file=stack_file)
    recorder = Recorder(path, {"name": name, "dtype": dtype, "size": size, "backend": backend})
    measure(name, dtype, size, backend, recorder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
