"""Shape classes on the CUDA backend: the class kernels' logic under the CUDA simulator
(dynamic_sim_cases.py) and their PTX for sm_90, with the sizes as int64 parameters."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")

HERE = os.path.dirname(os.path.abspath(__file__))


CASES = ["elementwise float32", "loop float64", "broadcast column", "rows softmax float32",
         "rows layernorm float32", "reduction float64", "product float32", "product float64",
         "product float16", "product attention", "transpose tiles", "row strips",
         "product runs staged", "product runs two-stage"]


def _simulated(script: str, case: str, tmp_path) -> None:
    """One case of a simulator script, in its own process; it prints one line, ending ": ok"."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", AUTOFUSE_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, os.path.join(HERE, script), case],
                          env=env, capture_output=True, text=True, timeout=600)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith(case) and lines[0].endswith(": ok"), done.stdout


@pytest.mark.sim
@pytest.mark.parametrize("case", CASES)
def test_class_kernels_under_the_simulator(case, tmp_path):
    _simulated("dynamic_sim_cases.py", case, tmp_path)


def _ptx_process() -> bool:
    from numba import config
    return not config.ENABLE_CUDASIM


@pytest.mark.skipif(not _ptx_process(), reason="PTX is not generated under the CUDA simulator")
def test_class_kernels_compile_to_ptx_with_size_parameters():
    def gelu_bias(x, b):
        y = x + b
        return 0.5 * y * (1.0 + np.tanh(np.float32(0.79788456) * (y + np.float32(0.044715) * y ** 3)))

    f = autofuse.jit(gelu_bias, backend="cuda")
    b = np.ones(256, np.float32)
    f.lower(np.ones((3, 256), np.float32), b)
    lowered = f.lower(np.ones((5, 256), np.float32), b)    # a second size: n0 = x.shape[0]
    kernel = lowered.kernels[0]
    assert kernel.strategy.startswith("grid-stride") and "vectors" in kernel.strategy
    assert "n0" in kernel.source and "sizes n0 are arguments" in kernel.reason
    entry = re.search(r"\.visible \.entry \S+\(([^)]*)\)", kernel.ptx).group(1)
    # three arrays (x, b, the result) as 64-bit pointers, then n0 as a 64-bit value
    assert entry.count(".param .u64") == 4
    assert not re.search(r"^\s*[a-z.]+\.f64\b", kernel.ptx, re.MULTILINE)


def attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * q.shape[-1] ** -0.5
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.skipif(not _ptx_process(), reason="PTX is not generated under the CUDA simulator")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_attention_over_a_batch_that_varies_is_one_flash_class_kernel(dtype):
    """A batch (and heads) that vary: the flash kernel, written with the batch as a size
    argument and its grid computed at each size, under the automatic policy from the second
    size; a sequence length that varies stays static for the first sizes (the reason shown)."""
    f = autofuse.jit(attention, backend="cuda")
    shape = lambda n: [np.ones((n, 4, 128, 64), dtype)] * 3
    f.lower(*shape(3))
    lowered = f.lower(*shape(5))
    text = lowered.as_text("fused")
    assert "# dynamic: n0 = q.shape[0] = k.shape[0] = v.shape[0]" in text, text
    [kernel] = lowered.kernels
    assert kernel.strategy.startswith("flash attention"), kernel.strategy
    assert "rest % n0" in kernel.source and "sizes n0 are arguments" in kernel.reason
    if dtype == np.float16:
        assert "mma.sync.aligned.m16n8k16" in kernel.ptx
    assert re.search(r"rem\.[su]64", kernel.ptx) or re.search(r"div\.[su]64", kernel.ptx)
    g = autofuse.jit(attention, backend="cuda")
    for n in (100, 101, 103):
        q = np.ones((2, n, 64), dtype)
        lowered = g.lower(q, *[np.ones((2, 128, 64), dtype)] * 2)
    assert "# static: q.shape[1]" in lowered.as_text("fused")
    assert "flash attention" in lowered.kernels[0].strategy


def column_softmax(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def batchnorm(x, g, b):
    m = x.mean(axis=0)
    v = ((x - m) ** 2).mean(axis=0)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _lowered_class(fn, rows: int, columns: int):
    f = autofuse.jit(fn, backend="cuda", dynamic=True)
    args = [np.ones((rows, columns), np.float32)] + \
        [np.ones(columns, np.float32)] * (fn.__code__.co_argcount - 1)
    return f.lower(*args)


@pytest.mark.parametrize("fn", [column_softmax, batchnorm])
def test_whole_column_programs_are_column_tile_class_kernels(fn):
    lowered = _lowered_class(fn, 4, 4096)
    text = lowered.as_text("fused")
    assert "# dynamic: n0 = x.shape[0]" in text and "# static" not in text, text
    (kernel,) = lowered.kernels
    # (softmax's max and its denominator in one pass: ir/online.py)
    passes = 1 if fn is column_softmax else 2
    assert kernel.strategy == f"column tiles, 16x32 threads, {passes} passes"
    assert "end = ix(n0)" in kernel.source and "sizes n0" in kernel.reason


@pytest.mark.parametrize("rows, columns", [(65536, 256), (8192, 4096), (16384, 1024)])
def test_the_class_plans_as_the_static_planner_at_large_sizes(rows, columns):
    """The class built one row short of a large size plans its kernels as the kernels written for
    that size (the partition by the stand-in: two-stage sums past max_row rows)."""
    g = np.ones(columns, np.float32)
    static = autofuse.jit(batchnorm, backend="cuda", dynamic=False).lower(
        np.ones((rows, columns), np.float32), g, g)
    f = autofuse.jit(batchnorm, backend="cuda", dynamic=True)
    f.lower(np.ones((rows - 1, columns), np.float32), g, g)
    classed = f.lower(np.ones((rows, columns), np.float32), g, g)
    assert "# dynamic: n0" in classed.as_text("fused")
    assert [k.launch["grid"] for k in classed.kernels] == [k.launch["grid"] for k in static.kernels]
    assert [k.launch["block"] for k in classed.kernels] == \
        [k.launch["block"] for k in static.kernels]
    assert [k.strategy.split(" x ")[0] for k in classed.kernels] == \
        [k.strategy.split(" x ")[0] for k in static.kernels]


@pytest.mark.skipif(not _ptx_process(), reason="PTX is not generated under the CUDA simulator")
@pytest.mark.parametrize("fn", [column_softmax, batchnorm])
def test_column_tile_class_kernels_compile_to_ptx(fn):
    (kernel,) = _lowered_class(fn, 5, 4096).kernels
    entry = re.search(r"\.visible \.entry \S+\(([^)]*)\)", kernel.ptx).group(1)
    # the arrays as 64-bit pointers, then n0 and n1 as 64-bit values
    assert entry.count(".param .u64") >= fn.__code__.co_argcount + 3
    assert "nctaid.x" in kernel.ptx and "bar.sync" in kernel.ptx
    assert not re.search(r"\bld\.local|\bst\.local", kernel.ptx)


COLUMNS = [f"{name} {dtype}" for name in ("batchnorm", "z-score", "column softmax", "variance")
           for dtype in ("float32", "float64")]


@pytest.mark.sim
@pytest.mark.parametrize("case", COLUMNS)
def test_whole_column_class_kernels_under_the_simulator(case, tmp_path):
    _simulated("dynamic_sim_columns.py", case, tmp_path)


REDUCTIONS = ["column sum float32", "bias gradient float64", "column max argmax float32",
              "column mean keepdims float64", "kept axes after float32", "epilogue float32",
              "long columns float64", "mse float32 1-D", "mse float64 2-D",
              "total argmax float32", "rows layout float32",
              "columns of a varying count float32", "short rows float32",
              "row tiles softmax float32"]


@pytest.mark.sim
@pytest.mark.parametrize("case", REDUCTIONS)
def test_reductions_across_the_batch_under_the_simulator(case, tmp_path):
    _simulated("dynamic_sim_reductions.py", case, tmp_path)


def column_sum(x):
    return x.sum(axis=0)


def bias_gradient(g):
    return (g * np.float32(2)).sum(axis=0)


def mse(p, y):
    return ((p - y) ** 2).mean()


@pytest.mark.parametrize("fn, shapes, strategy", [
    (column_sum, [(3, 256), (5, 256)], "two-stage columns, 32x8 threads, 8 tiles x at most 132 "
                                       "chunks (chosen at launch)"),
    (bias_gradient, [(3, 4096), (5, 4096)], "two-stage columns, 32x8 threads, 128 tiles x at "
                                            "most 8 chunks (chosen at launch)"),
    (mse, [(3, 256), (5, 256)], "split, 4-wide vectors x4, at most 1056 blocks (chosen at launch)"),
    (mse, [(3,), (5,)], "split, 4-wide vectors x4, at most 1056 blocks (chosen at launch)"),
])
def test_reduction_class_kernels_are_written_for_any_extent(fn, shapes, strategy):
    f = autofuse.jit(fn, backend="cuda")
    args = [[np.ones(shape, np.float32)] * fn.__code__.co_argcount for shape in shapes]
    f.lower(*args[0])
    lowered = f.lower(*args[1])          # a second size: n0 = the batch
    (kernel,) = lowered.kernels
    assert kernel.strategy == strategy
    assert "n0" in kernel.source and "sizes n0 are arguments" in kernel.reason
    assert "# dynamic: n0" in lowered.as_text("fused")


@pytest.mark.skipif(not _ptx_process(), reason="PTX is not generated under the CUDA simulator")
@pytest.mark.parametrize("fn, shape", [(column_sum, (256,)), (mse, (256,)), (mse, ())])
def test_reduction_class_kernels_compile_to_ptx(fn, shape):
    f = autofuse.jit(fn, backend="cuda")
    for n in (3, 5):
        lowered = f.lower(*[np.ones((n,) + shape, np.float32)] * fn.__code__.co_argcount)
    (kernel,) = lowered.kernels
    entry = re.search(r"\.visible \.entry \S+\(([^)]*)\)", kernel.ptx).group(1)
    # arrays and the partials as 64-bit pointers, n0 and the counter's fields as 64-bit values
    assert entry.count(".param .u64") >= fn.__code__.co_argcount + 3
    assert "nctaid.x" in kernel.ptx          # (the chunks or blocks launched: cuda.gridDim.x)
    assert not re.search(r"\bld\.local|\bst\.local", kernel.ptx)


@pytest.mark.parametrize("fn, width, strategy", [
    (lambda x: x.sum(axis=-1), 4, "columns"),
    (lambda x: x.max(axis=-1), 16, "row tiles, 128x2 threads, 1 passes"),
    (lambda x: x.sum(axis=-1), 255, "row tiles, 8x32 threads, 1 passes"),
])
def test_rows_that_vary_in_number_are_planned_as_many_rows(fn, width, strategy):
    """A class's rows kernel is chosen as for many rows (a block a row of 4 elements ran 20x a
    thread a row on an H200; rows of 64-255 1.5-2.2x row tiles), its grid chosen at launch."""
    f = autofuse.jit(fn, backend="cuda", dynamic=True)
    lowered = f.lower(np.ones((5000, width), np.float32))
    assert "# dynamic: n0 = x.shape[0]" in lowered.as_text("fused")
    assert [kernel.strategy for kernel in lowered.kernels] == [strategy]


def _class_after(fn, first, second):
    """The fused text of `fn` lowered at `first`, then at `second` (the automatic policy)."""
    f = autofuse.jit(fn, backend="cuda")
    f.lower(np.empty(first, np.float32))
    return f.lower(np.empty(second, np.float32))


@pytest.mark.parametrize("fn, first, second, own", [
    # few long rows: split over many blocks for their sizes, a block a row in a class
    (lambda x: x.sum(axis=-1), (3, 1 << 21), (4, 1 << 21), "two-stage"),
    # pairwise distances: a strip of outputs a thread where the kept axis divides by it
    (lambda x: ((x[:, None, :] - x[None, :8192, :]) ** 2).sum(-1), (4095, 8), (4096, 8),
     "columns with runs"),
])
def test_no_class_of_other_kernel_kinds_for_a_large_call(fn, first, second, own):
    """The automatic policy builds no class whose kernels are of other kinds than the call's own
    sizes get, where the call moves at least Tuning.class_kinds_bytes (sum(-1) over 4 rows of
    2^23 ran 26.6x as a class of a block a row on an H200): the size stays static, and the
    fused text says why."""
    lowered = _class_after(fn, first, second)
    text = lowered.as_text("fused")
    assert "# dynamic" not in text and "are of other kinds than a class's" in text, text
    assert f"call's sizes ({own})" in text, text
    assert lowered.kernels[0].strategy.startswith(own.split()[0])


def test_a_small_call_takes_its_class_whatever_its_kernel_kinds():
    """Below Tuning.class_kinds_bytes a call's time is its launches': the class stands."""
    lowered = _class_after(lambda x: x.sum(axis=-1), (3, 4096), (4, 4096))
    assert "# dynamic: n0 = x.shape[0]" in lowered.as_text("fused")


def test_a_rows_class_leaves_few_long_rows_to_their_own_kernel():
    """A class's rows kernel (a block a row) at a call's few long rows would leave the GPU idle
    where the kernel for the sizes splits each row over many blocks: that call compiles on its
    own (a two-stage kernel) and its fused text says why; other sizes take the class, and few
    short rows (under Tuning.class_kinds_bytes) do too."""
    f = autofuse.jit(lambda x: x.sum(axis=-1), backend="cuda", dynamic=True)
    assert "# dynamic: n0 = x.shape[0]" in f.lower(np.empty((1000, 1 << 20), np.float32)) \
        .as_text("fused")
    few = f.lower(np.empty((3, 1 << 20), np.float32))
    text = few.as_text("fused")
    assert "# dynamic" not in text and few.kernels[0].strategy.startswith("two-stage rows"), text
    assert "# static: x.shape[0]: this size compiles on its own: the class's rows kernel" in text
    assert "# dynamic: n0" in f.lower(np.empty((900, 1 << 20), np.float32)).as_text("fused")
    info = f.cache_info()
    assert (info.compiles, info.instances) == (2, 2), info
    short = autofuse.jit(lambda x: x.sum(axis=-1), backend="cuda", dynamic=True)
    short.lower(np.empty((1000, 4096), np.float32))
    assert "# dynamic: n0" in short.lower(np.empty((3, 4096), np.float32)).as_text("fused")
