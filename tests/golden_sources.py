"""The golden snapshot of generated kernels: for the canonical programs, the simulator cases, the
benchmark workloads, the examples and seeded random programs, a digest of every kernel's source,
strategy and launch on the CUDA and the CPU backend. A change that means to keep the generated
code (a move, a rename) must leave every digest as it was.

    python tests/golden_sources.py --write        # take the snapshot (tests/golden/kernels.json)
    python tests/golden_sources.py --dump DIR     # every kernel's text, to diff two commits
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import warnings

import numpy as np

# CPU matmul tiles follow the machine's cores (cpu/kernel.planned_cores): recorded as on 2 cores
os.environ["AUTOFUSE_CPU_CORES"] = "2"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SNAPSHOT = os.path.join(HERE, "golden", "kernels.json")
RANDOM_SEEDS = range(300)
EXAMPLES = ("attention", "bias_gelu", "black_scholes", "jacobi", "kmeans", "layernorm", "mlp",
            "softmax")


def programs() -> dict:
    """{name: a function building (function, arguments, settings)} for every program of the
    snapshot; settings are a simulator case's generator settings and jit options (sim_cases'
    own format). Built lazily: the workloads at full size take only their shapes."""
    for path in (HERE, ROOT, os.path.join(ROOT, "examples")):
        if path not in sys.path:
            sys.path.insert(0, path)
    from test_fusion import CANONICAL
    import sim_cases
    from programs import FUZZ_KINDS_BEFORE_GATHERS, seeded_program
    found = {}
    for name, fn, make, _ in CANONICAL:
        found[f"canonical/{name}"] = lambda fn=fn, make=make: (fn, make(), {})
    for name, fn, args, *settings in sim_cases.CASES:
        found[f"sim/{name}"] = lambda fn=fn, args=args, settings=settings: (
            fn, args, dict(settings[0]) if settings else {})
    for scale in (1, 8):
        for index in range(len(_workloads(scale))):
            name = _workloads(scale)[index].name
            found[f"workload/{name}/{scale}"] = lambda scale=scale, index=index: _workload(scale, index)
    for example in EXAMPLES:
        for size in ("small", "full"):
            found[f"example/{example}/{size}"] = lambda example=example, size=size: _example(example, size)
    for seed in RANDOM_SEEDS:
        found[f"random/{seed}"] = lambda seed=seed: (
            seeded_program(seed, kinds=FUZZ_KINDS_BEFORE_GATHERS).fn,
            seeded_program(seed, kinds=FUZZ_KINDS_BEFORE_GATHERS).inputs(seed), {})
    return found


def _workloads(scale: int):
    from benchmarks.workloads import workloads
    return workloads(scale)


def _workload(scale: int, index: int):
    """A benchmark workload's function on arrays of its shapes and dtypes (left unwritten: only
    their shapes, dtypes and layouts reach the generated code)."""
    work = _workloads(scale)[index]
    shapes = work.make(_Shapes())
    return work.fn(np), tuple(np.empty(shape, dtype) for shape, dtype in shapes), {}


class _Shapes:
    """A stand-in random generator that hands out (shape, dtype) pairs; astype and arithmetic on
    them are kept as the dtype they name."""

    def standard_normal(self, shape, dtype=np.float64):
        return _Shape(shape, dtype)


class _Shape(tuple):
    def __new__(cls, shape, dtype):
        return super().__new__(cls, (tuple(shape), np.dtype(dtype)))

    def astype(self, dtype):
        return _Shape(self[0], dtype)

    def __mul__(self, other):
        return self

    __add__ = __rmul__ = __radd__ = __mul__


def _example(example: str, size: str):
    import _common
    # NOTE: loaded from its file under a name of its own: benchmarks/ (on sys.path for other
    # tests in the same worker) has modules of the same names (attention.py)
    name = f"autofuse_example_{example}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(ROOT, "examples", f"{example}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    args = module._make_inputs(_common.Device("cpu", np), size == "small")
    settings = {"static_argnames": ("iters",)} if example == "jacobi" else {}
    return module.PEERS.function, args, settings


def kernels(fn, args, settings, backend):
    """[(source, strategy, launch)] of each kernel `fn` lowers to on `backend`."""
    import sim_cases
    import autofuse
    fn = getattr(fn, "__wrapped__", fn)
    with sim_cases.configured(settings) as options:
        if backend != "cuda":
            options = {key: value for key, value in options.items() if key != "cuda_graph"}
        low = autofuse.jit(fn, backend=backend, **options).lower(*args)
        return [(str(k.source), str(k.strategy), repr(getattr(k, "launch", None) or None))
                for k in low.kernels]


# NOTE: the intrinsics a kernel imports moved with the backend's layout (autofuse/backends/cuda/
# intrinsics/); their import lines are read as the snapshot's paths, every other byte as is.
MOVED = {"autofuse.backends.cuda.intrinsics.vector": "autofuse.backends.cuda_vector",
         "autofuse.backends.cuda.intrinsics.half": "autofuse.backends.cuda_half",
         "autofuse.backends.cuda.intrinsics.divide": "autofuse.backends.cuda_divide"}


def digest(text: str) -> str:
    for new, old in MOVED.items():
        text = text.replace(f"from {new} import ", f"from {old} import ")
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def record(name: str, build, dump: str | None = None) -> dict:
    """{name/backend: [digest of each kernel]}, or the error that stopped its lowering."""
    fn, args, settings = build()
    result = {}
    for backend in ("cuda", "cpu"):
        key = f"{name}/{backend}"
        try:
            found = kernels(fn, args, settings, backend)
        except Exception as error:               # recorded: the move must fail alike
            result[key] = f"error: {type(error).__name__}"
            continue
        result[key] = [digest("\n".join(parts)) for parts in found]
        for index, parts in enumerate(found if dump else ()):
            path = os.path.join(dump, key.replace("/", "__").replace(" ", "_") + f"_{index}.txt")
            with open(path, "w") as out:
                out.write("\n".join(parts))
    return result


def collect(dump: str | None = None) -> dict:
    """Every program's record."""
    warnings.simplefilter("ignore")
    result = {}
    for name, build in programs().items():
        result.update(record(name, build, dump))
    return result


def main(argv):
    if argv[:1] == ["--write"]:
        os.makedirs(os.path.dirname(SNAPSHOT), exist_ok=True)
        with open(SNAPSHOT, "w") as out:
            json.dump(collect(), out, indent=0, sort_keys=True)
        print(f"wrote {SNAPSHOT}")
    elif argv[:1] == ["--dump"]:
        os.makedirs(argv[1], exist_ok=True)
        collect(argv[1])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
