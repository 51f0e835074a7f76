"""Where a corpus program's first call spends its time before any kernel runs: trace, simplify,
partition and the backend's prepare (plan, write and, on the CPU, compile), each timed, at the
program's large size (or a given step count), without a GPU for the CUDA backend (its sources are
written, not compiled). One program a line:

    python -m benchmarks.corpus.first_call_stages BACKEND NAME [NAME...] [--steps N]
"""
from __future__ import annotations

import sys
import time

from . import find

# CPU seconds of this process ($FIRST_CALL_CLOCK=process), steadier than wall seconds on a shared
# host for comparing two versions; wall seconds by default (what a user waits).
CLOCK = time.process_time if __import__("os").environ.get("FIRST_CALL_CLOCK") == "process" \
    else time.perf_counter


def stages(name: str, backend: str, steps: int | None) -> dict:
    import autofuse
    from autofuse import stages as pipeline
    from autofuse.backends import get_backend
    times: dict = {}

    def timed(label, function):
        def wrapper(*args, **kwargs):
            begin = CLOCK()
            try:
                return function(*args, **kwargs)
            finally:
                times[label] = times.get(label, 0.0) + CLOCK() - begin
        return wrapper

    saved = {name: getattr(pipeline, name) for name in ("trace", "simplify", "partition")}
    backend_module = get_backend(backend)
    prepare = backend_module.prepare
    try:
        for label, function in saved.items():
            setattr(pipeline, label, timed(label, function))
        backend_module.prepare = timed("prepare", prepare)
        program = find(name)
        arguments, static = program.arguments("large", "float32")
        if steps is not None:
            static = dict(static, steps=steps)
        function = autofuse.jit(program.function, static_argnames=program.static, backend=backend)
        begin = CLOCK()
        lowered = function.lower(*arguments, **static)
        times["total"] = CLOCK() - begin
        times["kernels"] = len(lowered.kernels)
        times["distinct"] = len({k.source for k in lowered.kernels})
    finally:
        for label, function in saved.items():
            setattr(pipeline, label, function)
        backend_module.prepare = prepare
    return times


def main(argv: list[str]) -> int:
    steps = None
    if "--steps" in argv:
        at = argv.index("--steps")
        steps = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    backend, names = argv[0], argv[1:]
    for name in names:
        times = stages(name, backend, steps)
        print(f"{name:22s} " + " ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in times.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
