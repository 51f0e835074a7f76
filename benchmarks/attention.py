"""Attention (issue 35 item 2): autofuse's flash kernel (emit/attention.py) beside torch.compile,
torch's scaled_dot_product_attention, jax.jit and CuPy op by op, on softmax(q @ k^T / sqrt(d))
@ v over 32 heads x 2048 x 64, float32 and float16, with and without a causal mask.

    python benchmarks/attention.py                    # table on stdout, JSON to
    python benchmarks/attention.py --only causal      # benchmarks/results/attention.json
    python benchmarks/attention.py --only f32 --variants "b0:ATTENTION_BLOCKS=0"

Method: inputs on the device (CuPy arrays; torch and jax take them through DLPack). Each system
is checked first against a float64 reference (CuPy in float64 from the same inputs): its largest
error relative to the reference's largest magnitude must be under the dtype's tolerance (a system
that fails the check is reported with its error, not timed). Then the systems of a workload are
timed by gpu.py's method (interleaved rounds, the difference of a long and a short synchronized
batch, the median of the rounds after a warm-up). First call: the seconds from making a system's
callable to its first synchronized result, in this process (autofuse with an empty kernel cache:
tracing, planning, numba's compile and the link included; torch.compile and jax.jit their own
compiles; libraries already loaded by the systems before).
float32 matrix products: torch with TF32 off, jax.jit at precision "highest" (each else rounds
operands to TF32); torch's SDPA takes (1, H, S, D) views (its fused kernels want 4-D inputs),
for float16 under its flash backend (sdpa_kernel), for float32 its own choice (flash kernels need
halves).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
# (an empty kernel cache, so that autofuse's first call includes its compile)
os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp(prefix="autofuse-attention-"))

from autofuse.backends.cuda.tuning import Tuning  # noqa: E402
from gpu import time_rounds  # noqa: E402
from tensor_cores import parse_variants  # noqa: E402
from workloads import softmax_torch  # noqa: E402

WORKLOADS = {              # name: (dtype, heads, sequence, head dimension, causal)
    "f32 32x2048x64": ("float32", 32, 2048, 64, False),
    "f32 causal 32x2048x64": ("float32", 32, 2048, 64, True),
    "f16 32x2048x64": ("float16", 32, 2048, 64, False),
    "f16 causal 32x2048x64": ("float16", 32, 2048, 64, True),
}
TOLERANCE = {"float32": 1e-4, "float16": 1e-2}


def program(xp, causal: bool, matmul=None):
    """softmax(q @ k^T / sqrt(d) [masked]) @ v written with the array module `xp`."""
    matmul = matmul or (lambda a, b: a @ b)

    def attention(q, k, v):
        s = matmul(q, xp.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
        if causal:
            mask = xp.tril(xp.ones((q.shape[-2], k.shape[-2]), dtype=bool))
            s = xp.where(mask, s, -xp.inf)
        e = xp.exp(s - s.max(axis=-1, keepdims=True))
        return matmul(e / e.sum(axis=-1, keepdims=True), v)
    return attention


def torch_program(torch, causal: bool):
    """The same in torch's words (the mask by masked_fill; workloads.py's softmax, which the
    GPU benchmark's attention times too)."""
    def attention(q, k, v):
        s = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
        if causal:
            mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
            s = s.masked_fill(~mask, float("-inf"))
        return softmax_torch(torch, s) @ v
    return attention


def torch_sdpa(torch, dtype: str, causal: bool):
    """torch's scaled_dot_product_attention on (1, H, S, D) views of the (H, S, D) inputs (its
    fused kernels take (B, H, S, D); on 3-D inputs torch may fall back to its math path), for
    float16 under its flash backend (sdpa_kernel(SDPBackend.FLASH_ATTENTION)) where this torch
    has it; where that raises, torch's own choice, with a note on stdout."""
    import torch.nn.functional as functional
    attend = functional.scaled_dot_product_attention
    backend = None
    if dtype == "float16":
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
            backend = (sdpa_kernel, SDPBackend.FLASH_ATTENTION)
        except ImportError as problem:
            print(f"note: torch sdpa without sdpa_kernel ({problem}): torch's own backend")

    def plain(q, k, v):
        return attend(q[None], k[None], v[None], is_causal=causal)[0]

    def flash(q, k, v):
        with backend[0](backend[1]):
            return attend(q[None], k[None], v[None], is_causal=causal)[0]

    def call(q, k, v):
        nonlocal backend
        if backend is None:
            return plain(q, k, v)
        try:
            return flash(q, k, v)
        except RuntimeError as problem:
            print(f"note: torch's flash SDPA backend refused ({str(problem)[:200]}): torch's "
                  f"own backend instead")
            backend = None
            return plain(q, k, v)
    return call


def systems_for(dtype: str, causal: bool, torch, jax, variants: dict) -> dict:
    """{system: a function making its callable of (q, k, v)}; `variants` {name: Tuning}: autofuse
    with other generator values too."""
    import cupy
    import autofuse
    made = {"autofuse": lambda: autofuse.jit(program(np, causal))}
    for name, tuning in variants.items():
        made[f"autofuse {name}"] = lambda t=tuning: autofuse.jit(program(np, causal), tuning=t)
    made["cupy"] = lambda: program(cupy, causal)
    if torch is not None:
        import torch.nn.functional as functional
        eager = torch_program(torch, causal)
        made["torch.compile"] = lambda: torch.compile(eager, dynamic=False)
        made["torch sdpa"] = lambda: torch_sdpa(torch, dtype, causal)
    if jax is not None:
        import jax.numpy as jnp
        precise = (lambda a, b: jnp.matmul(a, b, precision="highest")) \
            if dtype == "float32" else None
        made["jax.jit"] = lambda: jax.jit(program(jnp, causal, precise))
    return made


def reference(q, k, v, causal: bool):
    import cupy
    return program(cupy, causal)(*(a.astype(cupy.float64) for a in (q, k, v)))


def run(name, dtype, heads, sequence, head, causal, torch, jax, rounds, variants) -> list:
    import cupy
    rng = np.random.default_rng(0)
    q, k, v = (cupy.asarray(rng.standard_normal((heads, sequence, head)).astype(dtype))
               for _ in range(3))
    want = reference(q, k, v, causal)
    scale = float(cupy.abs(want).max())
    flops = 4.0 * heads * sequence * sequence * head * (0.5 if causal else 1.0)
    rows, entries = [], {}
    for system, make in systems_for(dtype, causal, torch, jax, variants).items():
        inputs, sync = (q, k, v), (lambda _: cupy.cuda.Device().synchronize())
        if system.startswith("torch"):
            inputs = tuple(torch.from_dlpack(a) for a in inputs)
        if system.startswith("jax"):
            import jax.numpy as jnp
            inputs, sync = tuple(jnp.from_dlpack(a) for a in inputs), jax.block_until_ready
        row = {"workload": name, "system": system}
        try:
            began = time.perf_counter()
            call = make()
            got = call(*inputs)
            sync(got)
            row["first_call_s"] = time.perf_counter() - began
            got = _as_cupy(got).astype(cupy.float64)
            row["error"] = float(cupy.nanmax(cupy.abs(got - want))) / scale
            if not row["error"] < TOLERANCE[dtype]:
                row["failed"] = f"error {row['error']:.2e} over {TOLERANCE[dtype]:.0e}"
            else:
                entries[system] = ((lambda c=call, a=inputs: c(*a)), sync)
        except Exception as problem:       # a peer missing a dtype or a mask reports it
            row["failed"] = f"{type(problem).__name__}: {str(problem)[:300]}"
        rows.append(row)
    times = time_rounds(entries, rounds=rounds, short=2)
    for row in rows:
        if row["system"] in times:
            row["ms"] = float(np.median(times[row["system"]]))
            row["tflops"] = flops / row["ms"] / 1e9
            row["rounds"] = times[row["system"]]
    _strategy(rows, q, k, v, causal)
    for row in rows:
        _print_row(row, rows)
    return rows


def _as_cupy(result):
    """A system's result as a CuPy array (torch's and jax's through DLPack)."""
    import cupy
    return result if isinstance(result, cupy.ndarray) else cupy.from_dlpack(result)


def _strategy(rows, q, k, v, causal) -> None:
    import autofuse
    kernels = autofuse.jit(program(np, causal)).lower(q, k, v).kernels
    for row in rows:
        if row["system"] == "autofuse":
            row["kernels"] = [f"{kernel.kind}: {kernel.strategy}" for kernel in kernels]


def _print_row(row, rows) -> None:
    if "failed" in row:
        print(f"{row['workload']:24} {row['system']:14} FAILED {row['failed']}", flush=True)
        return
    ratio = ""
    for peer in ("torch.compile", "torch sdpa"):
        times = [r["ms"] for r in rows if r["system"] == peer and "ms" in r]
        ratio += f"  {row['ms'] / times[0]:.2f}x {peer}" if times else ""
    print(f"{row['workload']:24} {row['system']:14} {row['ms']:8.3f} ms {row['tflops']:6.1f} "
          f"TFLOP/s  error {row['error']:.1e}  first {row['first_call_s']:5.1f} s{ratio}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="workload names containing this")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--peers", default="torch,jax")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "attention.json"))
    parser.add_argument("--commit", default="", help="the commit measured (where git cannot say)")
    parser.add_argument("--variants", default="", help="autofuse with other Tuning values too: "
                        "'name:FIELD=value+FIELD=value;name2:...' (e.g. b0:ATTENTION_BLOCKS=0)")
    args = parser.parse_args()
    variants = {name: Tuning().replace(**changes)
                for name, changes in parse_variants(args.variants).items()}
    import cupy
    torch = jax = None
    if "torch" in args.peers:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
    if "jax" in args.peers:
        import jax
    commit = args.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                                           capture_output=True, text=True).stdout.strip()
    result = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "date": time.strftime("%Y-%m-%d"), "commit": commit, "rows": []}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    for name, (dtype, heads, sequence, head, causal) in WORKLOADS.items():
        if args.only in name:
            result["rows"] += run(name, dtype, heads, sequence, head, causal, torch, jax,
                                  args.rounds, variants)
            with open(args.out, "w") as handle:
                json.dump(result, handle, indent=1)     # (after each workload)


if __name__ == "__main__":
    main()
