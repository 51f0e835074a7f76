"""Diagnosis (one GPU run): wave_2d's CUDA calls hit cudaErrorIllegalAddress (corpus CUDA run, at
the large and the small size) but match NumPy in the CUDA simulator. Each variant runs in its own
process (an illegal address poisons the context) and prints whether it matches NumPy:

    python -m benchmarks.corpus.diagnose_wave            # every variant, a line each
    python -m benchmarks.corpus.diagnose_wave --only A,B # those variants, a line each
    python -m benchmarks.corpus.diagnose_wave VARIANT    # one, in this process

Variants change one thing: the step count, a Tuning field, or the program (speed2's interior
passed in, so no stored slice of it).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

VARIANTS = {
    "default": {},
    "steps3": {"steps": 3},
    "steps5": {"steps": 5},
    "no_setslice_fast": {"tuning": {"setslice_fast": False}},
    "no_vector": {"tuning": {"vector": False}},
    "no_strips": {"tuning": {"strip_rows": 0}},
    "no_overlap": {"tuning": {"overlap": False}},
    "no_graph": {"cuda_graph": False},
    "interior_speed": {"program": "interior"},
    "large20": {"size": "large", "steps": 20},
    "no_invariant": {"patch": "invariant"},
    "sync": {"env": {"AUTOFUSE_DEBUG": "2"}},   # a sync after each launch: which kernel faults
}


def _without_invariant_loads() -> None:
    """Vector loads lose their !invariant.load metadata (so no ld.global.nc)."""
    from llvmlite.ir import instructions
    original = instructions.Instruction.set_metadata

    def set_metadata(self, name, node):
        if name != "invariant.load":
            original(self, name, node)
    instructions.Instruction.set_metadata = set_metadata


def wave_interior(u_previous, u, speed2_interior, steps):
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u_next = np.zeros_like(u)
        u_next[1:-1, 1:-1] = 2.0 * u[1:-1, 1:-1] - u_previous[1:-1, 1:-1] + speed2_interior * laplacian
        u_previous, u = u, u_next
    return u


def one(name: str) -> int:
    import cupy
    import autofuse
    from autofuse.backends.cuda.tuning import Tuning
    from . import find
    from .compare import compare
    variant = VARIANTS[name]
    if variant.get("patch") == "invariant":
        _without_invariant_loads()
    program = find("wave_2d")
    arguments, static = program.arguments(variant.get("size", "small"), "float32")
    static = dict(static, steps=variant.get("steps", static["steps"]))
    function = program.function
    if variant.get("program") == "interior":
        arguments = (arguments[0], arguments[1], np.ascontiguousarray(arguments[2][1:-1, 1:-1]))
        function = wave_interior
    want = function(*[a.copy() for a in arguments], **static)
    options = {"cuda_graph": variant["cuda_graph"]} if "cuda_graph" in variant else {}
    if "tuning" in variant:
        options["tuning"] = Tuning(**variant["tuning"])
    jitted = autofuse.jit(function, static_argnames=("steps",), backend="cuda", **options)
    for call in ("first", "second"):
        got = jitted(*[cupy.asarray(a) for a in arguments], **static)
        cupy.cuda.Device().synchronize()
        print(name, call, compare(cupy.asnumpy(got), want, "float32"), flush=True)
    return 0


def main(names) -> int:
    import tempfile
    for name in names or VARIANTS:
        try:
            fresh = dict(os.environ, AUTOFUSE_CACHE_DIR=tempfile.mkdtemp(prefix="wave-"),
                         **VARIANTS[name].get("env", {}))
            done = subprocess.run([sys.executable, "-m", "benchmarks.corpus.diagnose_wave", name],
                                  capture_output=True, text=True, timeout=120, env=fresh)
            lines = (done.stdout + done.stderr).strip().splitlines()
            if "env" in VARIANTS[name] and "Traceback (most recent call last):" in lines:
                before = lines[:lines.index("Traceback (most recent call last):")]
                print(name, "launches before the failure:", " / ".join(before[-4:])[:900])
            print(name, "rc", done.returncode, "|", " / ".join(lines[-3:])[:600], flush=True)
        except subprocess.TimeoutExpired:
            print(name, "timeout", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] != "--only":
        sys.exit(one(sys.argv[1]))
    sys.exit(main(sys.argv[2].split(",") if len(sys.argv) > 2 else []))
