"""The tensor-core product kernel (emit/mma_gemm.py) without a GPU: which products take it and
why (emit/mma_plan.py), jit(matmul_precision=...), its logic in the CUDA simulator
(mma_sim_cases.py, mma.sync emulated a warp at a time), and its sm_90 PTX: the mma.sync
instructions of each arithmetic, no local memory, one kernel for every shape of a structure."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda import compile as cuda_compile
from autofuse.backends.cuda.device import HOPPER
from autofuse.errors import ArgumentError
from autofuse.backends.cuda.emit import mma_plan
from autofuse.backends.cuda.intrinsics.mma_shapes import SHAPES
from autofuse.backends.cuda.tuning import Tuning

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
needs_ptx = pytest.mark.skipif(config.ENABLE_CUDASIM, reason="no PTX under the simulator")


def relu_bias(x, w, b):
    return np.maximum(x @ w + b, 0)


def operands(m, n, k, dtype):
    return np.ones((m, k), dtype), np.ones((k, n), dtype), np.ones(n, dtype)


def strategies(dtype, precision="float32", tuning=None, size=(300, 200, 100)):
    jitted = autofuse.jit(relu_bias, backend="cuda", matmul_precision=precision,
                          tuning=Tuning(mma=True) if tuning is None else tuning)
    return [k.strategy for k in jitted.lower(*operands(*size, dtype)).kernels]


@pytest.mark.parametrize("dtype, precision, kind", [
    (np.float64, "float32", "f64"), (np.float16, "float32", "f16"),
    (np.float32, "tf32", "tf32"), (np.float32, "3xtf32", "3xtf32"), (np.float32, "float32", None)])
def test_which_products_take_tensor_cores(dtype, precision, kind):
    first = strategies(dtype, precision)[0]
    if kind is None:
        assert not first.startswith("tensor cores")
    else:
        assert first.startswith(f"tensor cores ({kind}, mma.sync m")


def test_tensor_cores_can_be_turned_off_and_mixed_dtypes_stay_off():
    assert strategies(np.float64, tuning=Tuning(mma=False))[0].startswith("compact tiled")
    # on by default (measured on an H200: BENCHMARKS.md); a precision that needs them, with
    # them turned off, is refused
    assert strategies(np.float64, tuning=Tuning())[0].startswith("tensor cores (f64")
    with pytest.raises(ArgumentError, match="Tuning.mma=False"):
        autofuse.jit(relu_bias, matmul_precision="tf32", tuning=Tuning(mma=False))
    x, w = np.ones((300, 100), np.float16), np.ones((100, 200), np.float32)
    kernels = autofuse.jit(lambda x, w: x @ w, backend="cuda").lower(x, w).kernels
    assert not any(k.strategy.startswith("tensor cores") for k in kernels)


def test_the_plan_names_its_instruction_tile_and_arithmetic():
    jitted = autofuse.jit(relu_bias, backend="cuda", matmul_precision="3xtf32",
                          tuning=Tuning(mma=True))
    (kernel,) = jitted.lower(*operands(8192, 4096, 4096, np.float32)).kernels
    assert "three products" in kernel.reason and "m16n8k8" in kernel.reason
    assert kernel.launch["block"] == 256 and kernel.launch["grid"] == (32, 64, 1)
    assert mma_plan.refusal(_group(np.float32), "float32").startswith("a float32 product")


def _group(dtype):
    jitted = autofuse.jit(lambda a, b: a @ b, backend="cuda")
    return jitted.lower(np.ones((64, 64), dtype), np.ones((64, 64), dtype)).kernels[0].group


def test_matmul_precision_is_checked():
    with pytest.raises(autofuse.ArgumentError, match="matmul_precision.*'fp8'"):
        autofuse.jit(relu_bias, matmul_precision="fp8")


def test_instruction_text_places_every_register():
    shape = SHAPES["mma_f16_m16n8k16"]
    assert shape.text == ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                          "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};")
    for shape in SHAPES.values():      # the fragments cover each tile exactly once
        a = {(g + dr, t + dk) for dr, dk in shape.a for g in range(8) for t in range(4)}
        c = {(g + dr, 2 * t + dc) for dr, dc in shape.c for g in range(8) for t in range(4)}
        assert len(a) == shape.m * shape.words and len(c) == shape.m * shape.n


@pytest.mark.sim
def test_tensor_core_kernel_under_the_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, "mma_sim_cases.py")], env=env,
                          capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) >= 10 and all(line.endswith(": ok") for line in lines), done.stdout


@needs_ptx
@pytest.mark.parametrize("dtype, precision, instruction, count", [
    (np.float64, "float32", "m16n8k8.row.col.f64.f64.f64.f64", 16),
    (np.float16, "float32", "m16n8k16.row.col.f32.f16.f16.f32", 16),
    (np.float32, "tf32", "m16n8k8.row.col.f32.tf32.tf32.f32", 32),
    (np.float32, "3xtf32", "m16n8k8.row.col.f32.tf32.tf32.f32", 96)])
def test_ptx_runs_the_tensor_cores(dtype, precision, instruction, count):
    jitted = autofuse.jit(relu_bias, backend="cuda", matmul_precision=precision,
                          tuning=Tuning(mma=True))
    (kernel,) = jitted.lower(*operands(1000, 1001, 999, dtype)).kernels
    ptx = kernel.ptx
    found = len(re.findall(rf"mma\.sync\.aligned\.{re.escape(instruction)}", ptx))
    if dtype == np.float16:     # (a loop a way of staging: cp.async, element reads, LLVM's copies)
        assert found % count == 0 and found >= 2 * count, found
    else:
        assert found == count
    assert ".local" not in ptx                       # accumulators and fragments in registers
    if precision != "float32":
        assert "cvt.rna.tf32.f32" in ptx


@needs_ptx
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas")
@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_ptxas_links_without_spilling(dtype, tmp_path):
    """What the device's linker says of the kernel, found without a GPU: it fits the shared
    memory a kernel may declare and keeps every register on chip."""
    (kernel,) = autofuse.jit(relu_bias, backend="cuda", tuning=Tuning(mma=True)).lower(
        *operands(500, 500, 500, dtype)).kernels
    (tmp_path / "kernel.ptx").write_text(kernel.ptx)
    done = subprocess.run(["ptxas", "-arch=sm_90", "-v", str(tmp_path / "kernel.ptx"), "-o",
                           str(tmp_path / "kernel.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "0 bytes spill stores" in done.stderr
    shared = int(re.search(r"(\d+) bytes smem", done.stderr).group(1))
    assert shared <= HOPPER.shared_per_block


@needs_ptx
def test_two_shapes_of_one_product_compile_one_kernel(monkeypatch):
    monkeypatch.setattr(cuda_compile, "_COMPILED", {})
    # (dynamic=False: each shape specialized, the kernel's text general over sizes; a shape
    # class build takes the compact kernel, emit/matmul.py)
    jitted = autofuse.jit(relu_bias, backend="cuda", tuning=Tuning(mma=True), dynamic=False)
    first = jitted.lower(*operands(700, 600, 500, np.float64)).kernels[0]
    second = jitted.lower(*operands(1300, 900, 260, np.float64)).kernels[0]
    assert first.source == second.source and first.ptx == second.ptx
    assert len(cuda_compile._COMPILED) == 1
    assert second.launch["grid"] == (-(-900 // 64), -(-1300 // 64), 1)


@pytest.mark.parametrize("dtype, precision, changes", [
    (np.float64, "float32", {}), (np.float16, "float32", {}), (np.float32, "3xtf32", {}),
    (np.float64, "float32", {"mma_f64_shape": "mma_f64_m16n8k8", "mma_f64_tile": (2, 2, 2, 4, 2)}),
    (np.float16, "float32", {"mma_f16_tile": (4, 2, 2, 8, 2)}),
    (np.float16, "float32", {"mma_stages": 0, "mma_tile": (4, 2, 2, 8, 2)})])
def test_shared_memory_fits_a_static_declaration(dtype, precision, changes):
    """Both operands' double-buffered slabs stay within the 48 KiB a kernel may declare."""
    for args in (operands(1000, 1001, 999, dtype), (np.ones((999, 1000), dtype).T,
                                                    np.ones((1001, 999), dtype).T, np.ones(1001, dtype))):
        jitted = autofuse.jit(relu_bias, backend="cuda", matmul_precision=precision,
                              tuning=Tuning(mma=True).replace(**changes))
        (kernel,) = jitted.lower(*args).kernels
        assert kernel.strategy.startswith("tensor cores")
        declared = [int(n) for n in re.findall(r"cuda\.shared\.array\((\d+),", kernel.source)]
        word = 8 if dtype == np.float64 else 4
        assert len(declared) == 2 and sum(declared) * word <= HOPPER.shared_per_block


def test_too_large_a_tile_falls_back_to_the_cuda_cores():
    tuning = Tuning(mma=True, mma_stages=0, mma_tile=(4, 4, 4, 4, 2))   # 256 x 128: 80 KiB
    assert not strategies(np.float16, tuning=tuning)[0].startswith("tensor cores")
    tuning = Tuning(mma=True, mma_stages=3, mma_f16_tile=(4, 4, 4, 8, 2))  # 256 x 256: 64 KiB
    size = (4096, 4096, 64)                                   # (a grid of 256 blocks: no halving)
    assert not strategies(np.float16, tuning=tuning, size=size)[0].startswith("tensor cores")


def test_float16_tiles_halve_where_a_wave_would_be_short():
    plans = {}
    for size in ((8192, 4096, 64), (1000, 1001, 64), (500, 500, 64), (20, 20, 64)):
        jitted = autofuse.jit(relu_bias, backend="cuda", tuning=Tuning(mma=True, mma_stages=3))
        (kernel,) = jitted.lower(*operands(*size, np.float16)).kernels
        plans[size[:2]] = re.search(r"(\d+x\d+)x32 a block, 3 cp.async", kernel.strategy).group(1)
    assert plans == {(8192, 4096): "128x128", (1000, 1001): "32x128", (500, 500): "32x32",
                     (20, 20): "32x32"}


@needs_ptx
@pytest.mark.parametrize("program, trans", [
    (relu_bias, 1), (lambda x, w: x @ w.T, 0), (lambda x, w: x.T @ w, 2)])
def test_float16_kernel_copies_asynchronously_and_reads_fragments_by_ldmatrix(program, trans):
    """The pipelined float16 kernel's PTX: cp.async 16-byte copies, its groups committed and
    waited for (3 stages: at most 1 in flight), ldmatrix x4 (.trans for an operand contiguous
    along its tile: w of x @ w, x of x.T @ w), mma.sync in each of its two loops (both operands
    by cp.async; either one read element by element), nothing in local memory."""
    args = operands(8192, 4096, 64, np.float16)
    if program is not relu_bias:
        args = (args[0], args[1].T.copy()) if trans == 0 else (args[0].T.copy(), args[1])
    (kernel,) = autofuse.jit(program, backend="cuda", tuning=Tuning(mma=True, mma_stages=3)
                             ).lower(*args).kernels
    ptx = kernel.ptx
    assert "cp.async.cg.shared.global" in ptx and "cp.async.commit_group" in ptx
    assert "cp.async.wait_group 1" in ptx
    plain = len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", ptx))
    transposed = len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16", ptx))
    per_loop = 2 * (4 + 4)          # 2 steps of 4 A and 4 B fragment loads (a warp's 64 x 64)
    loops = (plain + transposed) // per_loop    # (LLVM may copy the loop reading by elements)
    assert loops >= 2 and plain + transposed == loops * per_loop
    assert transposed == {0: 0, 1: 2 * 4, 2: per_loop}[trans] * loops
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k16", ptx)) == loops * 2 * 32
    assert ".local" not in ptx
