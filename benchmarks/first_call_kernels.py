"""Where a CUDA program's first call goes, kernel by kernel, on a host without a GPU: autofuse's
stages (trace, simplify, partition, prepare: plan and write the sources), then for each distinct
kernel numba-cuda's steps to PTX, timed one by one (numba's front end: bytecode to SSA IR; typing;
lowering to LLVM IR; the IR printed to text; NVVM: LLVM IR to PTX) and ptxas's PTX to cubin for
sm_90 where a ptxas is installed (the driver's or nvJitLink's link does that work on a GPU).

    python -m benchmarks.first_call_kernels NAME [NAME...] [--dtype float32] [--size large]
        [--ptxas] [--json out.json] [--tuning NAME=VALUE ...]

NAME is a corpus program (benchmarks/corpus) or `matmul_bias_relu` (float32 relu(x @ w + b),
4096 x 1024 @ 1024 x 1024). A one-time cost (numba-cuda's import and its first kernel) is timed
apart, on a trivial kernel, before the first program.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

# numba's passes by what they do (metadata["pipeline_times"]); any other pass counts as "frontend"
TYPING = {"nopython_type_inference", "nopython_rewrites", "inline_overloads",
          "pre_parfor_pass", "parfor_pass", "nopython_supported_feature_validation",
          "ir_legalization", "annotate_types", "dumpparforfiagnostics", "nopython_type_check"}
LOWERING = {"cuda_native_lowering", "native_lowering", "cuda_backend", "create_library"}


def matmul_bias_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def program_call(name: str, size: str, dtype: str):
    """(function, positional arguments, static keyword arguments, static names)."""
    if name == "matmul_bias_relu":
        rng = np.random.default_rng(0)
        return (matmul_bias_relu, (rng.standard_normal((4096, 1024), dtype=np.float32),
                                   rng.standard_normal((1024, 1024), dtype=np.float32),
                                   rng.standard_normal(1024, dtype=np.float32)), {}, ())
    from benchmarks.corpus import find
    program = find(name)
    arguments, static = program.arguments(size, dtype or np.dtype(program.dtypes[0]).name)
    return program.function, arguments, static, program.static


def autofuse_stages(function, arguments, static, static_names, tuning=None) -> tuple[dict, list]:
    """{stage: seconds} of lower() on the CUDA backend and the program's CompiledKernels."""
    import autofuse
    from autofuse import stages as pipeline
    from autofuse.backends import get_backend
    times: dict = {}
    backend = get_backend("cuda")
    saved = {label: getattr(pipeline, label) for label in ("trace", "simplify", "partition")}
    prepare = backend.prepare

    def timed(label, wrapped):
        def wrapper(*args, **kwargs):
            begin = time.perf_counter()
            try:
                return wrapped(*args, **kwargs)
            finally:
                times[label] = times.get(label, 0.0) + time.perf_counter() - begin
        return wrapper
    try:
        for label, wrapped in saved.items():
            setattr(pipeline, label, timed(label, wrapped))
        backend.prepare = timed("prepare (plan + write)", prepare)
        jitted = autofuse.jit(function, static_argnames=static_names, backend="cuda",
                              tuning=tuning)
        begin = time.perf_counter()
        lowered = jitted.lower(*arguments, **static)
        times["lower total"] = time.perf_counter() - begin
    finally:
        for label, wrapped in saved.items():
            setattr(pipeline, label, wrapped)
        backend.prepare = prepare
    return times, lowered._entry.program.kernels


def numba_steps(kernel, cc=(9, 0)) -> tuple[dict, str]:
    """{step: seconds} of one kernel's compile to PTX, and the PTX: numba-cuda's
    compile_ptx taken apart (compiler._compile_pyfunc_with_fixup's steps, one by one)."""
    from numba.core import sigutils
    from numba.cuda import compiler
    from numba.cuda.cudadrv import nvrtc, nvvm
    from autofuse.backends.cuda.compile import signature
    times: dict = {}
    begin = time.perf_counter()
    namespace: dict = {}
    exec(compile(kernel.text, f"<autofuse {kernel.source.name}>", "exec"), namespace)
    times["exec"] = time.perf_counter() - begin
    args, return_type = sigutils.normalize_signature(signature(kernel.source))
    options = {"fastmath": False, "opt": 3}
    begin = time.perf_counter()
    result = compiler.compile_cuda(namespace[kernel.source.name], return_type, args,
                                   nvvm_options=options, cc=cc, abi="numba")
    whole = time.perf_counter() - begin
    passes = result.metadata["pipeline_times"]
    for pipeline in passes.values():
        for label, timing in pipeline.items():
            pass_name = label.split("_", 1)[1] if label[0].isdigit() else label
            step = "typing" if pass_name in TYPING else \
                "lowering" if pass_name in LOWERING else "frontend"
            spent = timing.init + timing.run + timing.finalize
            times[step] = times.get(step, 0.0) + spent
            whole -= spent
    times["numba other"] = whole
    library = result.library
    function = library.get_function(result.fndesc.llvm_func_name)
    library._entry_name = result.fndesc.llvm_func_name
    compiler.kernel_fixup(function, False)
    if kernel.source.min_blocks:
        nvvm.set_launch_bounds(function, (kernel.source.block, kernel.source.min_blocks))
    begin = time.perf_counter()
    irs = library.llvm_strs
    times["IR text"] = time.perf_counter() - begin
    nvvm_options = dict(library._nvvm_options, arch=nvrtc.get_arch_option(*cc))
    begin = time.perf_counter()
    ptx = nvvm.compile_ir(irs, **nvvm_options).decode().strip("\x00").strip()
    times["NVVM"] = time.perf_counter() - begin
    times["IR lines"] = sum(text.count("\n") for text in irs)
    return times, ptx


def ptxas_seconds(ptx: str) -> float | None:
    """Wall seconds of `ptxas -arch=sm_90 -O3` on the PTX, or None where none is installed."""
    tool = shutil.which("ptxas")
    if tool is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        source, target = f"{folder}/k.ptx", f"{folder}/k.cubin"
        with open(source, "w") as handle:
            handle.write(ptx)
        begin = time.perf_counter()
        subprocess.run([tool, "-arch=sm_90", "-O3", source, "-o", target], check=True,
                       capture_output=True)
        return time.perf_counter() - begin


def warm_up() -> float:
    """Seconds of numba-cuda's one-time start: its import and a trivial kernel's PTX."""
    begin = time.perf_counter()
    from numba import cuda, float32, types

    def trivial(x):
        x[0] = 1.0
    cuda.compile_ptx(trivial, (types.CPointer(float32),), cc=(9, 0))
    return time.perf_counter() - begin


def profile(name: str, size: str, dtype: str, ptxas: bool, tuning=None) -> dict:
    function, arguments, static, static_names = program_call(name, size, dtype)
    stages, kernels = autofuse_stages(function, arguments, static, static_names, tuning)
    rows = []
    for kernel in kernels:
        if getattr(kernel, "library", False) or not hasattr(kernel, "source"):
            continue
        row = {"kernel": kernel.source.name, "strategy": kernel.source.strategy,
               "lines": kernel.text.count("\n"), "shares": kernel.origin is not None}
        if kernel.origin is None:
            try:
                steps, ptx = numba_steps(kernel)
            except Exception as error:          # a helper device function without a driver
                row["error"] = f"{type(error).__name__}: {str(error)[:120]}"
            else:
                row.update(steps)
                row["PTX lines"] = ptx.count("\n")
                row["fma"] = len(re.findall(r"\bfma\.rn\.f(?:32|64)\b", ptx))
                if ptxas:
                    row["ptxas"] = ptxas_seconds(ptx)
        rows.append(row)
    return {"program": name, "stages": stages, "kernels": rows}


STEPS = ("exec", "frontend", "typing", "lowering", "numba other", "IR text", "NVVM", "ptxas")


def show(record: dict) -> None:
    stages = " ".join(f"{k} {v:.2f}" for k, v in record["stages"].items())
    distinct = [r for r in record["kernels"] if not r["shares"]]
    print(f"== {record['program']}: {len(record['kernels'])} kernels, {len(distinct)} distinct; "
          f"{stages}")
    for row in record["kernels"]:
        if row["shares"]:
            print(f"   {row['kernel']:14s} shares an earlier kernel's code")
            continue
        if "error" in row:
            print(f"   {row['kernel']:14s} {row['lines']:5d} lines  {row['error']}")
            continue
        steps = " ".join(f"{s} {row[s]:.2f}" for s in STEPS if row.get(s) is not None)
        total = sum(row[s] for s in STEPS if row.get(s) is not None)
        print(f"   {row['kernel']:14s} {row['lines']:5d} lines, IR {row['IR lines']:6d}, PTX "
              f"{row['PTX lines']:6d}: {steps} | total {total:.2f}  [{row['strategy'][:60]}]")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--size", default="large")
    parser.add_argument("--dtype", default="")
    parser.add_argument("--ptxas", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--tuning", nargs="*", default=[],
                        help="Tuning fields to change, NAME=VALUE (a Python literal)")
    options = parser.parse_args(argv)
    tuning = None
    if options.tuning:
        import ast
        from autofuse.backends.cuda.tuning import DEFAULT
        tuning = DEFAULT.replace(**{name: ast.literal_eval(value) for name, value
                                    in (item.split("=", 1) for item in options.tuning)})
    print(f"numba-cuda start (import + a trivial kernel): {warm_up():.2f} s", flush=True)
    records = []
    for name in options.names:
        records.append(profile(name, options.size, options.dtype, options.ptxas, tuning))
        show(records[-1])
        sys.stdout.flush()
    if options.json:
        with open(options.json, "w") as handle:
            json.dump(records, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
