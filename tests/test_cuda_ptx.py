"""CUDA kernels without a GPU: every canonical program's kernels compile to sm_90 PTX, with the
expected strategy, no float64 arithmetic in float32 kernels, and one 64-bit parameter per array."""
import re

import numpy as np
import pytest

import autofuse
from autofuse.backends.cuda.device import HOPPER
from autofuse.backends.cuda.tuning import DEFAULT as TUNING

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("PTX is not generated under the CUDA simulator", allow_module_level=True)

from test_fusion import CANONICAL  # noqa: E402

F64 = re.compile(r"^\s*[a-z.]+\.f64\b", re.MULTILINE)
# cache qualifiers a global access may carry (split reductions' reads, rows kernels' reads and
# stores: Tuning.reduce_loads, row_hold_load, row_reload_load, row_stores)
CACHE = r"(?:\.(?:nc|cs|L1::\w+|L2::\w+))*"
WORDS = {"u32", "b32"}             # 16 bytes of halves: four 32-bit words (b32 where cache-hinted)
STRATEGY = {"softmax": "rows", "layernorm": "rows", "sum_squares": "rows", "column_sums": "columns",
            "relu_matmul_bias": "tiled", "transpose_add": "grid-stride", "stencil": "grid-stride",
            "attention": "flash attention"}
# the CUDA backend's groups where they differ from the reference partition's (test_fusion.py):
# attention is one kernel (ir/attention.py)
CUDA_KINDS = {"attention": ["output"]}


def lowered(fn, args, **tuning):
    """`fn` lowered for the GPU at these arguments, with generator values changed by `tuning`."""
    return autofuse.jit(fn, backend="cuda", tuning=TUNING.replace(**tuning)).lower(*args)


@pytest.mark.parametrize("name, fn, make, expected", CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_kernels_compile_to_sm90_ptx(name, fn, make, expected):
    args = make()
    low = lowered(fn, args)
    assert [k.kind for k in low.kernels] == CUDA_KINDS.get(name, expected)
    for kernel in low.kernels:
        ptx = kernel.ptx
        assert ".target sm_90" in ptx and ".visible .entry" in ptx
        float32_only = all(n.dtype != np.float64 for n in list(kernel.nodes) + list(kernel.inputs))
        if float32_only:
            assert not F64.findall(ptx), (name, F64.findall(ptx)[:5])
        params = len(kernel.inputs) + len(kernel.outputs)
        assert len(re.findall(r"\.param \.u64", ptx)) >= params
        assert kernel.launch["block"] in (32, 64, 128, 256, 512)
    if name in STRATEGY:
        assert low.kernels[0].strategy.startswith(STRATEGY[name])


def test_float32_constants_are_typed():
    low = lowered(lambda x: np.maximum(x * 2.5 + 1.0, 0.0) ** 0.5, (np.ones(64, np.float32),))
    (kernel,) = low.kernels
    assert "np.float32(float.fromhex(" in kernel.source
    assert not F64.findall(kernel.ptx)


def test_large_full_reduction_is_split_across_blocks():
    low = lowered(lambda x: (x * x).sum(), (np.ones(1 << 20, np.float32),))
    (kernel,) = low.kernels
    assert kernel.strategy.startswith("split") and kernel.launch["grid"][0] > 100
    assert "atom.global.add" in kernel.ptx


def test_transposed_input_goes_through_shared_memory_tiles():
    """Full TILE_T x TILE_T tiles: each thread reads 16-byte segments of tile rows of the
    transposed input and of the other input, and writes the output's (with an element-by-element
    path for misaligned base addresses); partial tiles: elements only."""
    side = TUNING.tile_t
    x = np.ones((side, 2 * side), np.float32)
    (kernel,) = lowered(lambda a, b: (a.T + b) * 2, (x, x.T.copy())).kernels
    assert kernel.strategy == "transpose tiles, 4-wide vectors" and "ld.shared" in kernel.ptx
    per_thread = side * side // (4 * TUNING.tile_threads)  # vectors a thread a tile
    assert len(VECTOR_LOAD.findall(kernel.ptx)) == 2 * per_thread
    assert len(VECTOR_STORE.findall(kernel.ptx)) == per_thread
    x = np.ones((side + 8, side + 38), np.float32)
    (edges,) = lowered(lambda a, b: (a.T + b) * 2, (x, x.T.copy())).kernels
    assert edges.strategy == "transpose tiles" and not VECTOR_LOAD.findall(edges.ptx)


class DeviceLike:
    """A host array seen as a device array (its __cuda_array_interface__): kernels of device
    arrays read them with their own strides, where NumPy arguments travel compact (stages.build)."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "version": 3,
            "strides": None if array.flags.c_contiguous else array.strides,
            "data": (array.__array_interface__["data"][0], False)}


def test_non_contiguous_input_strides_are_baked_in():
    x = DeviceLike(np.ones((64, 96), np.float32)[:, ::2])
    (kernel,) = lowered(lambda a: a + 1, (x,)).kernels
    assert "* 96" in kernel.source     # the row stride of the parent array, in elements


def test_matmul_keeps_its_accumulators_in_registers():
    a, b = np.ones((256, 128), np.float32), np.ones((128, 256), np.float32)
    (kernel,) = lowered(lambda x, w: np.maximum(x @ w, 0), (a, b)).kernels
    assert "ld.local" not in kernel.ptx and "st.local" not in kernel.ptx
    assert len(re.findall(r"fma\.rn\.f32", kernel.ptx)) >= 64


def test_lower_without_gpu_needs_no_device():
    low = lowered(lambda x: np.tanh(x), (np.ones(10, np.float32),))
    assert "cuda.grid(1)" in low.kernels[0].source


HALF = np.float16
HALF_ARITHMETIC = re.compile(r"^\s*(?:add|sub|mul|div|fma|neg|abs|min|max|ex2|setp\.\w+)(?:\.\w+)*\.f16x?2?\b",
                             re.MULTILINE)
HALF_KERNELS = [
    ("gelu", lambda x, b: 0.5 * (x + b) * (1 + np.tanh(0.79788456 * (x + b))),
     (np.empty((512, 256), HALF), np.empty(256, HALF)), "grid-stride, 8-wide"),
    ("softmax", lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True), (np.empty((64, 4096), HALF),),
     "rows, 8-wide"),
    ("split", lambda x: (x * x).sum(), (np.empty(1 << 20, HALF),), "split, 8-wide"),
    ("stencil", lambda u: u[2:] - 2 * u[1:-1] + u[:-2], (np.empty((512, 256), HALF),), "row strips"),
    ("columns", lambda x: x.sum(0), (np.empty((16, 4096), HALF),), "columns"),
    ("two-stage", lambda x: x.sum(0), (np.empty((4096, 64), HALF),), "two-stage columns"),
    ("matmul", lambda a, b: np.maximum(a @ b, 0), (np.empty((256, 128), HALF), np.empty((128, 64), HALF)),
     "tensor cores (f16"),
    ("transpose", lambda x, y: (x.T + y) * 2, (np.empty((512, 256), HALF), np.empty((256, 512), HALF)),
     "transpose tiles"),
]


ROUNDED_HALF_OPS = re.compile(r"^\s*(?:add|sub|mul)\.rn\.f16\b", re.MULTILINE)


@pytest.mark.parametrize("name, fn, args, strategy", HALF_KERNELS, ids=[c[0] for c in HALF_KERNELS])
def test_float16_kernels_round_each_result_as_numpy_does(name, fn, args, strategy):
    """float16 kernels read and write halves (8 a 16-byte vector where vectors apply); add,
    subtract and multiply of halves are one rounded f16 instruction each (add.rn.f16: the same
    answer as NumPy's float32 op rounded to float16, cuda_half), never fused into an fma.f16 or
    left unrounded; every other op computes in float32 and rounds (cvt.rn.f16.f32); no float64."""
    (kernel,) = lowered(fn, args).kernels
    assert kernel.strategy.startswith(strategy), kernel.strategy
    ptx = kernel.ptx
    # (comparisons of halves are exact: the compiler may compare them as halves)
    assert [op for op in HALF_ARITHMETIC.findall(ptx) if "setp" not in op] == \
        ROUNDED_HALF_OPS.findall(ptx)
    assert not F64.findall(ptx)
    if name in ("gelu", "softmax", "split", "columns", "two-stage", "matmul"):   # float32 op or sum
        assert "cvt.f32.f16" in ptx and "cvt.rn.f16.f32" in ptx
    if name in ("gelu", "stencil", "transpose", "split"):               # add, subtract, multiply
        assert ROUNDED_HALF_OPS.findall(ptx) and "half_" in kernel.source
    if "8-wide" in strategy or strategy == "row strips":
        assert {("4", w) for w in WORDS} & set(VECTOR_LOAD.findall(ptx))     # 16 bytes: 8 halves
    if "8-wide" in strategy and name != "split":
        assert {("4", w) for w in WORDS} & set(VECTOR_STORE.findall(ptx))
    assert "as_f16(" not in kernel.source     # numba's casts are inline PTX the compiler keeps


def test_float16_chains_stay_in_halves():
    """A chain of float16 adds and multiplies needs no conversion: the compiler folds the
    widening of one result into the next op's narrowing (LLVM fpext/fptrunc, cuda_half)."""
    (kernel,) = lowered(lambda x, y: (x + y) * 2 - x * y, (np.empty((256, 512), HALF),
                                                         np.empty(512, HALF))).kernels
    assert len(ROUNDED_HALF_OPS.findall(kernel.ptx)) >= 4
    assert "cvt.f32.f16" not in kernel.ptx and "cvt.rn.f16.f32" not in kernel.ptx


def test_float16_native_ops_can_be_turned_off():
    """Tuning(native_halves=False): every op in float32, each result rounded by numba's casts
    (the way kernels were generated before; kept for measuring)."""
    (kernel,) = lowered(HALF_KERNELS[0][1], HALF_KERNELS[0][2], native_halves=False).kernels
    assert not HALF_ARITHMETIC.findall(kernel.ptx) and "as_f32(as_f16(" in kernel.source


def test_float16_intermediates_round_like_numpy():
    """Each float16 op's result is rounded before the next op reads it (an intermediate that
    overflows float16 is inf, as in NumPy), and exact ops (maximum, where) are not rounded."""
    (kernel,) = lowered(lambda x: np.maximum(x * 300 * 300 / 1000, 0), (np.empty(64, HALF),)).kernels
    source = kernel.source
    assert source.count("half_multiply(") == 2 and source.count("widen(narrow(") == 1
    assert "narrow(widen(" not in source and "c_f16" not in source


INDEX64 = re.compile(r"\b(?:div|rem|mul\.hi)\.[su]64\b")


def test_index_math_is_32_bit_where_sizes_allow():
    """8192² elements: index variables truncated to 32 bits, so the flat index's split into row
    and column needs no 64-bit division (np.empty commits no memory: only shapes matter)."""
    x, b = np.empty((8192, 8192), np.float32), np.empty(8192, np.float32)
    (kernel,) = lowered(lambda x, b: np.tanh(x + b) * 0.5, (x, b)).kernels
    assert "ix(" in kernel.source and kernel.strategy.startswith("grid-stride")
    assert not INDEX64.findall(kernel.ptx)
    (flipped,) = lowered(lambda x, b: np.tanh(x + b), (DeviceLike(x[:, ::-1]), b)).kernels
    assert "sx(" in flipped.source      # a negative stride: a signed 32-bit offset
    assert not INDEX64.findall(flipped.ptx)


def test_index_math_stays_64_bit_past_2_to_the_31():
    x = np.broadcast_to(np.ones((1, 1), np.float32), (1 << 16, 1 << 15))   # 2^31 elements
    (kernel,) = lowered(lambda x, b: np.tanh(x + b), (x, np.empty(1 << 15, np.float32))).kernels
    assert "ix(" not in kernel.source and "536870912" in kernel.source     # 2^31 / 4 vectors
    assert ".visible .entry" in kernel.ptx
    (two,) = lowered(lambda x, b: np.tanh(x + b), (x, np.empty(1 << 15, np.float32)),
                     assume_aligned=False).kernels
    assert "ix(" not in two.source and "2147483648" in two.source     # the element body's loop


VECTOR_LOAD = re.compile(rf"ld\.global{CACHE}\.v(\d)\.([a-z]\d+)")
VECTOR_STORE = re.compile(rf"st\.global{CACHE}\.v(\d)\.([a-z]\d+)")


def test_kernels_of_many_inputs_keep_wide_vectors_where_their_arithmetic_is_heavy():
    """Three or more full-size inputs take 8-byte vectors (Tuning.vector_step_bytes, measured
    faster for memory-bound kernels) unless an element's op costs are at least
    vector_step_cost a byte of its arrays: then 16 bytes (black-scholes, H200: 0.85x the time)."""
    def arrays(count, dtype):
        return [np.empty((64, 256), dtype) for _ in range(count)]
    light = lambda x, y, z, w: np.maximum(x * y + z, 0) * w
    heavy = lambda p, s, t: (np.log(p / s) + np.exp(-t) * np.sqrt(t)) / (1.0 + np.abs(p / t))
    def strategy(fn, args, **tuning):
        (kernel,) = lowered(fn, args, **tuning).kernels
        return kernel.strategy
    assert strategy(light, arrays(4, np.float32)) == "grid-stride, 2-wide vectors"
    assert strategy(heavy, arrays(3, np.float64)) == "grid-stride, 2-wide vectors"
    assert strategy(heavy, arrays(3, np.float32)) == "grid-stride, 4-wide vectors"
    unvectored = strategy(heavy, arrays(3, np.float64), vector_step_cost=0)
    assert unvectored.startswith("grid-stride") and "vectors" not in unvectored
    assert strategy(heavy, arrays(3, np.float32), vector_step_cost=0) == "grid-stride, 2-wide vectors"


@pytest.mark.parametrize("fn, args, loads, store", [
    (lambda x, b: np.tanh(x + b) * 0.5, (np.empty((512, 256), np.float32), np.empty(256, np.float32)),
     {("4", "f32")}, ("4", "f32")),
    (lambda x, y: np.sqrt(np.abs(x)) + y, (np.empty((64, 256)), np.empty(256)), {("2", "f64")},
     ("2", "f64")),
    (lambda x: x.astype(np.float64) * 3, (np.empty((64, 256), np.float32),), {("2", "f32")},
     ("2", "f64")),
], ids=["float32_row_bias", "float64", "widening"])
def test_grid_stride_kernels_use_vector_loads_and_stores(fn, args, loads, store):
    (kernel,) = lowered(fn, args).kernels
    assert "-wide vectors" in kernel.strategy
    ptx = kernel.ptx
    assert set(VECTOR_LOAD.findall(ptx)) == loads
    assert set(VECTOR_STORE.findall(ptx)) == {store}
    assert not re.search(rf"st\.global{CACHE}\.[fb]\d+", ptx)   # aligned arguments: one body
    (checked,) = lowered(fn, args, assume_aligned=False).kernels
    assert set(VECTOR_STORE.findall(checked.ptx)) == {store}
    assert re.search(rf"st\.global{CACHE}\.[fb]\d+", checked.ptx)   # the misaligned path


def test_vector_kernels_assume_aligned_arguments():
    """Tuning.assume_aligned: pointwise and rows kernels whose vector arrays were 16-byte aligned
    at the first call are one vector body (no address check, no element-by-element copy) and list
    those parameters in KernelSource.assumed; an argument whose base is not aligned gets the
    checked two bodies, and kernels of other signatures are unchanged. NumPy arguments reach the
    device as new (aligned) copies."""
    from programs import layernorm
    x, b = np.empty((512, 256), np.float32), np.empty(256, np.float32)
    shifted = np.empty(x.size + 4, np.float32)[1:1 + x.size].reshape(x.shape)
    fn = lambda x, b: np.tanh(x + b) * 0.5
    (one,) = lowered(fn, (DeviceLike(x), DeviceLike(b))).kernels
    (copied,) = lowered(fn, (shifted, b)).kernels
    (two,) = lowered(fn, (DeviceLike(shifted), DeviceLike(b))).kernels
    (unassumed,) = lowered(fn, (DeviceLike(x), DeviceLike(b)), assume_aligned=False).kernels
    for kernel in (one, copied):
        assert "address(" not in kernel.source and "element by element" not in kernel.source
        assert kernel.ptx_provider.__self__.source.assumed == ["a0", "a1", "o0"]
        assert not re.search(rf"st\.global{CACHE}\.f32", kernel.ptx)
    for kernel in (two, unassumed):
        assert "address(" in kernel.source and "element by element" in kernel.source
        assert kernel.ptx_provider.__self__.source.assumed == []
        assert re.search(rf"st\.global{CACHE}\.f32", kernel.ptx)
    assert len(one.source.splitlines()) < 0.7 * len(two.source.splitlines())
    g = np.empty(256, np.float32)
    (rows,) = lowered(layernorm, (DeviceLike(x), DeviceLike(g), DeviceLike(g))).kernels
    (rows_two,) = lowered(layernorm, (DeviceLike(shifted), DeviceLike(g), DeviceLike(g))).kernels
    assert rows.strategy == rows_two.strategy == "rows, 4-wide vectors"
    assert "element by element" not in rows.source and "element by element" in rows_two.source
    assert rows.ptx_provider.__self__.source.assumed


def test_vectors_only_where_the_reads_are_consecutive():
    x = np.empty((64, 260), np.float32)
    (shifted,) = lowered(lambda x: x[:, 1:257] - x[:, :256], (x,)).kernels
    assert not VECTOR_LOAD.findall(shifted.ptx) and VECTOR_STORE.findall(shifted.ptx)
    (odd,) = lowered(lambda x: x * 2, (np.empty((256, 255), np.float32),)).kernels
    assert "vectors" not in odd.strategy and not VECTOR_STORE.findall(odd.ptx)


def test_rectangular_matmul_tiles():
    """With Tuning.tiles_narrow 64 (the default), a result at most 64 wide (attention's P @ V)
    takes WIDE x 64 tiles and one at most 64 tall 64 x WIDE: no half-empty 128 x 128 tiles;
    (WIDE / 8) x 8 threads, no local memory, one barrier a slab. NARROW 0: square tiles."""
    wide = TUNING.tiles_wide
    assert TUNING.tiles_narrow == 64 and wide == 256
    w = np.empty((256, 384), np.float32)
    p, v = np.empty((4, 512, 256), np.float32), np.empty((4, 256, 64), np.float32)
    (square,) = lowered(lambda p, v: p @ v, (p, v), tiles_narrow=0).kernels
    assert square.strategy.startswith("tiled 128x128x8")
    (narrow,) = lowered(lambda p, v: p @ v, (p, v)).kernels
    assert narrow.strategy.startswith(f"tiled {wide}x64x8")
    assert narrow.launch["grid"] == (1, 512 // wide, 4) and narrow.launch["block"] == wide
    assert "ld.local" not in narrow.ptx and len(re.findall(r"bar\.sync", narrow.ptx)) == 2
    (short,) = lowered(lambda x, w: x @ w, (np.empty((48, 256), np.float32), w)).kernels
    assert short.strategy.startswith(f"tiled 64x{wide}x8")
    assert short.launch["grid"] == (-(-384 // wide), 1, 1)


def test_float32_matmul_takes_the_vector_kernel():
    """emit/matmul_tiles.py: 16-byte global reads of both operands, 16-byte shared reads, one barrier
    per slab (two in the code), no local memory; other shapes and dtypes keep the general one."""
    x, w, b = np.empty((512, 256), np.float32), np.empty((256, 384), np.float32), np.empty(384, np.float32)
    (kernel,) = lowered(lambda x, w, b: np.maximum(x @ w + b, 0), (x, w, b)).kernels
    assert "16-byte loads, double-buffered" in kernel.strategy
    ptx = kernel.ptx
    assert len(re.findall(rf"ld\.global{CACHE}\.v4\.f32", ptx)) >= 2
    assert len(re.findall(r"ld\.shared\.v4\.f32", ptx)) == 32
    assert len(re.findall(rf"st\.global{CACHE}\.v4\.f32", ptx)) == 16
    assert len(re.findall(r"bar\.sync", ptx)) == 2 and "ld.local" not in ptx
    for fn, args in ((lambda x, w: x @ w.T, (x, np.empty((384, 256), np.float32))),
                     (lambda x, w: x.T @ w, (np.empty((256, 512), np.float32), w))):
        (transposed,) = lowered(fn, args).kernels       # read transposed: still 16-byte loads
        assert "16-byte loads" in transposed.strategy and "ld.local" not in transposed.ptx
        assert len(re.findall(rf"ld\.global{CACHE}\.v4\.f32", transposed.ptx)) >= 2
    (general,) = lowered(lambda x, w: x @ w, (DeviceLike(np.empty((512, 512), np.float32)[:, ::2]),
                                                w)).kernels
    assert "16-byte" not in general.strategy            # a strided operand: the general kernel
    (odd,) = lowered(lambda x, w: x @ w, (np.empty((64, 30), np.float32),
                                          np.empty((30, 64), np.float32))).kernels
    assert "16-byte" not in odd.strategy                # K not a multiple of 4
    (double,) = lowered(lambda x, w: x @ w, (np.empty((64, 32)), np.empty((32, 64)))).kernels
    assert "16-byte" not in double.strategy


def _stencil(u):
    v = u.copy()
    v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return v


def test_stencil_interior_vectors_take_a_branch_free_path():
    rows = 2 * TUNING.strip_rows - 1                        # too few rows for row strips
    (kernel,) = lowered(_stencil, (np.empty((rows, 1024), np.float32),)).kernels
    assert kernel.strategy.startswith("grid-stride")
    interior = [line for line in kernel.source.splitlines() if "every lane inside" in line]
    assert len(interior) == 1 and f"((1 <= i0) & (i0 < {rows - 1}))" in interior[0] and \
        "i1v3" in interior[0]
    assert VECTOR_STORE.findall(kernel.ptx)


def test_stencil_takes_row_strips_reading_each_row_once():
    """emit/strip.py: a strip of Tuning.strip_rows rows of one 16-byte vector a thread loads rows -1..ROWS as
    vectors and the columns either side as scalars, all before its arithmetic, and stores ROWS
    vectors; edge strips loop over their rows (a row's lanes unrolled, 64-bit indices) and a
    misaligned base reads element by element (written where the argument was misaligned at the
    first call, or with Tuning.assume_aligned off)."""
    rows = TUNING.strip_rows
    (assumed,) = lowered(_stencil, (np.empty((256, 256), np.float32),)).kernels
    assert "a base address not" not in assumed.source and "address(" not in assumed.source
    (kernel,) = lowered(_stencil, (np.empty((256, 256), np.float32),),
                        assume_aligned=False).kernels
    assert kernel.strategy == f"row strips of {rows}, 4-wide vectors"
    assert kernel.launch["grid"] == (1, 256 // rows, 1) and kernel.launch["block"] == 64
    source = kernel.source
    fast = source[source.index("the whole strip inside"):source.index("a strip at an edge")]
    assert fast.count("vload4(") == rows + 2
    assert len(re.findall(r"vstore4(?:_once)?\(", fast)) == rows     # (cache-hinted: _once)
    assert len(re.findall(r"= a0\[", fast)) == 2 * rows
    body = fast.splitlines()[1:]
    last_load = max(k for k, line in enumerate(body) if "a0[" in line or "vload4" in line)
    assert all("+" not in line.split("=")[1] or "ix(" in line or "a0[" in line
               for line in body[:last_load])                    # no arithmetic before the loads
    ptx = kernel.ptx
    assert len(re.findall(rf"ld\.global{CACHE}\.v4\.f32", ptx)) == rows + 2
    assert len(re.findall(rf"st\.global{CACHE}\.v4\.f32", ptx)) == rows + 1   # fast, edge row
    edge = source[source.index("a strip at an edge"):source.index("a base address not")]
    assert f"for b in range({rows}):" in edge and edge.count("vstore4") == 1
    assert edge.count("= a0[ul(") == 4 * 5 and "ix(" not in edge     # a row's lanes, 64-bit
    assert not F64.findall(ptx) and "ld.local" not in ptx


@pytest.mark.parametrize("fn, shape, reason", [
    (lambda u: u * 2 + 1, (256, 256), "no row shift"),
    (lambda u: u[1:] + u[:-1], (2 * TUNING.strip_rows, 256), "too few rows"),
    (lambda u: (u[1:] + u[:-1]).reshape(-1, 8), (256, 256), "not a 2-D loop"),
    (lambda u: np.concatenate([u[1:], u[:-1]], axis=1), (256, 256), "a concatenation"),
    (lambda u: u[1:, 1:] - u[:-1, :-1], (256, 258), "rows not a multiple of the lanes"),
], ids=["no_shift", "few_rows", "reshaped", "concatenate", "odd_columns"])
def test_row_strips_only_where_they_apply(fn, shape, reason):
    (kernel,) = lowered(fn, (np.empty(shape, np.float32),)).kernels
    assert "row strips" not in kernel.strategy, reason


def test_split_reduction_reads_16_byte_vectors():
    """A full reduction over a contiguous float32 input: REDUCE_VECTORS vector loads a step, then
    single vectors (which the compiler may unroll), each lane combined in element order, every
    vector read with REDUCE_LOADS' cache qualifier; a misaligned base reads element by element,
    and an input whose last axis is not a multiple of 4 keeps the scalar loop."""
    (kernel,) = lowered(lambda x: (x * x).sum(), (np.empty(1 << 20, np.float32),)).kernels
    assert kernel.strategy == f"split, 4-wide vectors x{TUNING.reduce_vectors}"
    loads = re.findall(rf"ld\.global({CACHE})\.v4\.f32", kernel.ptx)
    assert len(loads) >= TUNING.reduce_vectors + 1 and not F64.findall(kernel.ptx)
    assert set(loads) == {TUNING.reduce_loads.split("|")[0]}
    (argmax,) = lowered(lambda x: x.argmax(), (np.empty(1 << 17, np.float32),)).kernels
    assert "vectors" in argmax.strategy
    (odd,) = lowered(lambda x: x.sum(), (np.empty((512, 257), np.float32),)).kernels
    assert odd.strategy == "split" and not VECTOR_LOAD.findall(odd.ptx)


def test_layernorm_rows_read_and_write_16_byte_vectors():
    """A rows kernel over 4096-long float32 rows: each thread's 16 items are 4 vectors of the
    row (held in registers, no local memory), read once more from the caches for the outputs
    (ROW_RELOAD: kept with evict_last, read again with evict_first), gamma and beta read as
    plain vectors, the output written as vectors in program order (ROW_STORES, inline PTX);
    a misaligned base takes the element-by-element body (with Tuning.assume_aligned, only an
    argument that was misaligned at the first call), and so does a row whose length is no
    multiple of 4 (a row of 4100 takes vectors, the last ones skipped). With ROW_RELOAD 0 and no row-store
    qualifier the row is read once, and every access is plain; so are float16 rows'."""
    from programs import layernorm
    x, g = np.empty((64, 4096), np.float32), np.empty(4096, np.float32)
    (kernel,) = lowered(layernorm, (x, g, g)).kernels
    assert kernel.strategy == "rows, 4-wide vectors"
    ptx = kernel.ptx
    kept = re.findall(r"ld\.global\.L1::evict_last\.L2::cache_hint\.v4\.f32", ptx)
    again = re.findall(r"ld\.global\.L1::evict_first\.L2::cache_hint\.v4\.f32", ptx)
    plain = re.findall(r"ld\.global(?:\.nc)?\.v4\.f32", ptx)
    assert len(kept) == 4 and len(again) == 4 and len(plain) == 8        # x, x again, gamma/beta
    assert ptx.count("createpolicy.fractional.L2::evict_last") == 4
    assert len(re.findall(r"st\.global\.L1::evict_normal\.v4\.f32", ptx)) == 4
    assert not re.search(rf"st\.global{CACHE}\.f32", ptx) and "ld.local" not in ptx and not F64.findall(ptx)
    (checked,) = lowered(layernorm, (x, g, g), assume_aligned=False).kernels
    assert re.search(rf"st\.global{CACHE}\.f32", checked.ptx) and "ld.local" not in checked.ptx
    assert len(re.findall(r"st\.global\.L1::evict_normal\.v4\.f32", checked.ptx)) == 4
    (held,) = lowered(layernorm, (x, g, g), row_reload=False, row_stores="").kernels
    assert len(re.findall(r"ld\.global(?:\.nc)?\.v4\.f32", held.ptx)) == 4 + 8
    assert len(re.findall(r"st\.global\.v4\.f32", held.ptx)) == 4 and "L1::" not in held.ptx
    (odd,) = lowered(layernorm, (np.empty((64, 4099), np.float32), np.empty(4099, np.float32),
                                 np.empty(4099, np.float32))).kernels
    assert "vectors" not in odd.strategy and "L1::" not in odd.ptx
    # a row a multiple of the lanes, not of block x lanes: vectors, those past the row's end
    # skipped (ROW_VECTOR_TAIL)
    (tail,) = lowered(layernorm, (np.empty((64, 4100), np.float32), np.empty(4100, np.float32),
                                  np.empty(4100, np.float32))).kernels
    assert tail.strategy == "rows, 4-wide vectors" and "ld.local" not in tail.ptx
    g16 = np.empty(4096, np.float16)
    (half,) = lowered(layernorm, (np.empty((64, 4096), np.float16), g16, g16)).kernels
    assert half.strategy == "rows, 8-wide vectors" and "L1::" not in half.ptx   # ROW_HINT_BYTES


def test_rows_kernel_barriers():
    """A rows kernel waits at one barrier per block reduction (in each of its vector and
    element-by-element bodies: checked ones, Tuning.assume_aligned off). Blocks that loop over
    rows (more rows than ROW_GRID) wait once more at the end of a row before writing shared
    memory again, unless a second reduction's barrier already orders it (layernorm); one row a
    block never does. Assumed aligned, the one vector body has half the barriers."""
    from programs import layernorm
    x, g = np.empty((64, 4096), np.float32), np.empty(4096, np.float32)
    centre = lambda a: a - a.max(1, keepdims=True)
    bars = lambda kernel: len(re.findall(r"\bbar\.sync\b", kernel.ptx))
    checked = lambda fn, args, **tuning: lowered(fn, args, assume_aligned=False, **tuning)
    (assumed,) = lowered(layernorm, (x, g, g)).kernels
    assert bars(assumed) == 2
    (kernel,) = checked(layernorm, (x, g, g)).kernels
    assert kernel.strategy == "rows, 4-wide vectors" and bars(kernel) == 2 * 2
    (one,) = checked(centre, (x,)).kernels
    assert one.strategy == "rows, 4-wide vectors" and bars(one) == 2 * 1
    (looped,) = checked(centre, (x,), row_grid=16).kernels
    assert looped.launch["grid"][0] == 16 and bars(looped) == 2 * 2
    (looped,) = checked(layernorm, (x, g, g), row_grid=16).kernels
    assert looped.launch["grid"][0] == 16 and bars(looped) == 2 * 2


def test_rows_kernels_carry_launch_bounds():
    """A rows kernel holding its row in registers asks ptxas for registers that let
    ROW_THREADS_PER_SM threads run an SM (.maxntid and .minnctapersm), says so in its source and
    launch configuration; a two-stage reduction for a full SM of threads (its grid is one wave of
    blocks); kernels of other kinds carry no bound."""
    from programs import layernorm
    x, g = np.empty((64, 4096), np.float32), np.empty(4096, np.float32)
    (kernel,) = lowered(layernorm, (x, g, g)).kernels
    blocks = TUNING.row_threads_per_sm // 256
    assert kernel.launch["block"] == 256 and kernel.launch["min_blocks_per_sm"] == blocks
    assert re.search(r"^\.maxntid 256, 1, 1$", kernel.ptx, re.MULTILINE)
    assert re.search(rf"^\.minnctapersm {blocks}$", kernel.ptx, re.MULTILINE)
    assert f"registers for {blocks} blocks an SM" in kernel.source
    for fn, shape in ((lambda a: a * 2 + 1, (64, 4096)), (lambda a: a.sum(), (1 << 20,)),
                      (lambda a: a.sum(0), (16, 4096))):
        (other,) = lowered(fn, (np.empty(shape, np.float32),)).kernels
        assert ".minnctapersm" not in other.ptx and "min_blocks_per_sm" not in other.launch
    (two_stage,) = lowered(lambda a: a.sum(0), (np.empty((4096, 300), np.float32),)).kernels
    assert two_stage.strategy.startswith("two-stage") and two_stage.launch["min_blocks_per_sm"] == 8
    assert re.search(r"^\.minnctapersm 8$", two_stage.ptx, re.MULTILINE)


def test_float16_rows_hold_as_many_bytes_a_thread_as_float32_rows():
    """A thread of a rows kernel holds ROW_BYTES of the row: 16 float32 elements (256 threads
    for a 4096-long row) but 32 float16 ones (128 threads, four 16-byte vectors each), under the
    same ROW_THREADS_PER_SM bound; float64 rows keep ROW_ITEMS elements."""
    from programs import layernorm, softmax
    for dtype, block in ((np.float16, 128), (np.float32, 256), (np.float64, 256)):
        x, g = np.empty((64, 4096), dtype), np.empty(4096, dtype)
        for fn, args in ((softmax, (x,)), (layernorm, (x, g, g))):
            (kernel,) = lowered(fn, args).kernels
            assert kernel.launch["block"] == block, (dtype, fn.__name__)
            assert kernel.launch["min_blocks_per_sm"] == TUNING.row_threads_per_sm // block
            assert re.search(rf"^\.maxntid {block}, 1, 1$", kernel.ptx, re.MULTILINE)


def _fake_linker(monkeypatch, backend) -> list:
    """compile.link replaced: a cubin named after the PTX's .minnctapersm (b5, ...; "free"
    without one); returns the list of the PTX texts it was given."""
    linked = []

    def link(text, arch):
        linked.append(text)
        found = re.search(r"\.minnctapersm (\d+)", text)
        return f"b{found.group(1)}".encode() if found else b"free"

    monkeypatch.setattr(backend, "link", link)
    return linked


def test_a_bound_that_spills_is_lowered_then_dropped(monkeypatch):
    """compile._unless_spilling keeps the bounded cubin unless it spills (more than the bytes it
    tolerates: a class kernel's few); then it links the PTX again with one block an SM fewer,
    down to half the blocks asked (never to one: bound to one block a tiled product took more
    registers than unbounded), and at last without launch bounds (.minnctapersm and .maxntid),
    keeping the first that does not spill (else the one that spills least)."""
    from autofuse.backends.cuda.runtime import driver as cuda_driver
    from autofuse.backends.cuda import compile as backend
    ptx = ".visible .entry k(\n.maxntid 256, 1, 1\n.minnctapersm 5\n{\nret;\n}\n"
    linked = _fake_linker(monkeypatch, backend)
    for local, expected, tried, tolerated in (({b"b5": 8}, (b"b5", 5), [], 16),
                                              ({b"b5": 24, b"b4": 0}, (b"b4", 4), [4], 16)):
        linked.clear()
        monkeypatch.setattr(cuda_driver, "local_bytes", lambda cubin, entry: local[cubin])
        assert backend._unless_spilling(b"b5", ptx, "sm_90", "k", 5, tolerated) == expected
        assert len(linked) == len(tried)
    for local, expected, tried in (({b"b5": 0}, (b"b5", 5), []),
                                   ({b"b5": 96, b"b4": 0}, (b"b4", 4), [4]),
                                   ({b"b5": 96, b"b4": 40, b"b3": 8, b"free": 0}, (b"free", 0),
                                    [4, 3, 0]),
                                   ({b"b5": 96, b"b4": 40, b"b3": 8, b"free": 16}, (b"b3", 3),
                                    [4, 3, 0])):
        linked.clear()
        monkeypatch.setattr(cuda_driver, "local_bytes", lambda cubin, entry: local[cubin])
        assert backend._unless_spilling(b"b5", ptx, "sm_90", "k", 5) == expected
        assert [int(m.group(1)) if (m := re.search(r"\.minnctapersm (\d+)", text)) else 0
                for text in linked] == tried
        assert all(".maxntid 256, 1, 1\n" in text and text.count("\n") == ptx.count("\n")
                   for text in linked if ".minnctapersm" in text)
        assert all(".maxntid" not in text and text.count("\n") == ptx.count("\n")
                   for text in linked if ".minnctapersm" not in text)
    two = ptx.replace(".minnctapersm 5", ".minnctapersm 2")
    linked.clear()
    monkeypatch.setattr(cuda_driver, "local_bytes", lambda cubin, entry: {b"b2": 8, b"free": 0}[cubin])
    assert backend._unless_spilling(b"b2", two, "sm_90", "k", 2) == (b"free", 0)
    assert len(linked) == 1 and ".maxntid" not in linked[0]
    assert backend._unless_spilling(b"b2", two, "sm_90", "k", 2, 16) == (b"b2", 2)


def test_float16_float32_mode_rounds_only_stores_and_casts():
    """jit(float16="float32"): the chain's float16 intermediates stay in float32 (torch.compile's
    and jax.jit's way): one rounding a stored value, none between ops; NumPy's mode rounds each."""
    fn, args = HALF_KERNELS[0][1], HALF_KERNELS[0][2]
    numpy_mode = autofuse.jit(fn, backend="cuda").lower(*args).kernels[0]
    fast = autofuse.jit(fn, backend="cuda", float16="float32").lower(*args).kernels[0]
    assert "half_" not in fast.source and "widen(narrow(" not in fast.source
    assert "half_multiply(" in numpy_mode.source
    rounding = re.compile(r"cvt\.rn\.f16\.f32|^\s*(?:add|sub|mul)\.rn\.f16\b", re.MULTILINE)
    assert 0 < len(rounding.findall(fast.ptx)) < len(rounding.findall(numpy_mode.ptx)) / 3
    assert not HALF_ARITHMETIC.findall(fast.ptx) and not F64.findall(fast.ptx)


def test_float16_option_is_checked():
    with pytest.raises(autofuse.ArgumentError,
                       match=r"float16=.*'numpy' or 'float32'.*\n  at .*test_cuda_ptx\.py:\d+"):
        autofuse.jit(lambda x: x, float16="fast")


@pytest.mark.parametrize("fn, args, strategy", [
    (lambda x, y: np.maximum(x * y + 1, 0), ((1 << 16,), (1 << 16,)), "grid-stride"),
    (lambda x: x.T + 1, ((256, 512),), "transpose tiles"),
    (lambda x: np.exp(x - x.max(-1, keepdims=True)), ((64, 1024),), "rows"),
    (lambda x: x.sum(0), ((16, 4096),), "columns"),
    (lambda x: x.sum(0), ((4096, 256),), "two-stage columns"),
    (lambda x: x.sum(-1), ((2, 1 << 16),), "two-stage rows"),
    (lambda x, w: x @ w, ((128, 64), (64, 128)), "tiled"),
], ids=["pointwise", "transpose", "rows", "columns", "two-stage-columns", "two-stage-rows", "matmul"])
def test_kernels_wait_for_their_prerequisite_before_any_memory_access(fn, args, strategy):
    """Every kernel but a split reduction begins by letting the next kernel launch and waiting
    for the one before it (Tuning.overlap): launched to overlap (cuda_host), it must touch no
    memory before the wait, so the two griddepcontrol instructions come before any load/store."""
    low = lowered(fn, tuple(np.ones(shape, np.float32) for shape in args))
    (kernel,) = low.kernels
    assert kernel.strategy.startswith(strategy)
    lines = kernel.source.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("def "))
    assert lines[start + 1:start + 3] == ["    launch_dependents()", "    wait_for_prerequisite()"]
    ptx = kernel.ptx
    assert ptx.count("griddepcontrol.launch_dependents;") == 1
    assert ptx.count("griddepcontrol.wait;") == 1
    wait = ptx.index("griddepcontrol.wait;")
    assert ptx.index("griddepcontrol.launch_dependents;") < wait
    assert re.search(r"\b(ld|st)\.global", ptx[wait:])
    assert not re.search(r"\b(ld|st)\.(global|shared)|\batom\.|\bred\.", ptx[:wait])
    assert low._entry.program.kernels[0].source.overlaps


@pytest.mark.parametrize("fn, shape, dtype, strategy", [
    (lambda x: ((x > 0).any(), (x > 1).all()), (1 << 20,), np.float32, "split"),
    (lambda x: x.argmax(), (1 << 20,), np.bool_, "split"),
    (lambda x: ((x > 0).any(0), x.argmax(0)), (1 << 20, 4), np.float32, "two-stage columns"),
    (lambda x: (x.all(1), x.argmin(1)), (2, 1 << 20), np.bool_, "two-stage rows"),
], ids=["split_any_all", "split_argmax_bool", "two_stage_columns", "two_stage_rows"])
def test_bool_partials_travel_as_bytes(fn, shape, dtype, strategy):
    """Partial results of bool reductions (any, all, argmax of bools) are stored and read as
    bytes: numba-cuda cannot store through a bool pointer (these kernels failed to compile before
    31ba589)."""
    low = lowered(fn, (np.ones(shape, dtype),))
    (kernel,) = low.kernels
    assert kernel.strategy.startswith(strategy), kernel.strategy
    kinds = [d.kind for _, _, d in low._entry.program.kernels[0].source.scratch]
    assert "b" not in kinds and "u" in kinds
    assert ".entry" in kernel.ptx


def test_shuffle_temporaries_do_not_shadow_outputs():
    """Seven outputs (o0..o6) beside a rows reduction: the block reduction's shuffle temporaries
    were named o<N> too, and o5 took the place of an output (a typing error at 3d27613)."""
    low = lowered(lambda x: (x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x.sum(1)),
                  (np.ones((64, 1024), np.float32),))
    (kernel,) = low.kernels
    assert kernel.strategy.startswith("rows") and ".entry" in kernel.ptx
    assert not re.search(r"^\s*o\d+ = ", kernel.source, re.MULTILINE)


def test_split_reductions_do_not_overlap():
    """One wave of blocks: overlapping made sum(x*x) slower on an H200 (Tuning.overlap)."""
    low = lowered(lambda x: (x * x).sum(), (np.ones(1 << 20, np.float32),))
    (kernel,) = low.kernels
    assert kernel.strategy.startswith("split") and "griddepcontrol" not in kernel.ptx
    assert not low._entry.program.kernels[0].source.overlaps


def test_the_last_block_reads_every_partial_at_once():
    """A split reduction's last block combines the blocks' partials: a fixed count a thread,
    each read guarded, so the loop unrolls into reads issued together (not one round trip
    after another while the rest of the GPU waits)."""
    low = lowered(lambda x: ((x * x).sum(), x.argmax()), (np.ones(1 << 20, np.float32),))
    (kernel,) = low.kernels
    per_thread = -(-TUNING.split_blocks(HOPPER) // TUNING.threads)
    assert kernel.source.count(f"for u in range({per_thread}):") == 2
    assert f"if b < {TUNING.split_blocks(HOPPER)}:" in kernel.source
    assert "range(t," not in kernel.source


def test_kernels_do_not_wait_when_overlap_is_off():
    low = lowered(lambda x: x * 2, (np.ones(1 << 16, np.float32),), overlap=False)
    assert "griddepcontrol" not in low.kernels[0].ptx
    assert not low._entry.program.kernels[0].source.overlaps


def test_before_sm90_grid_control_is_taken_out_of_the_ptx():
    """griddepcontrol is PTX for sm_90 and later: for an older GPU the kernel's PTX loses exactly
    those two lines (and the kernel never launches to overlap: CompiledKernel.load)."""
    from autofuse.backends.cuda import compile as backend
    program = lowered(lambda x: np.maximum(x, 0) * 3, (np.ones(1 << 16, np.float32),))._entry.program
    (kernel,) = program.kernels
    kernel.prepare_ptx((8, 0))
    ptx = kernel.ptx
    older = backend.ptx_for(ptx, (8, 0))
    assert ".target sm_80" in ptx and "griddepcontrol" in ptx and "griddepcontrol" not in older
    assert [line for line in ptx.splitlines() if "griddepcontrol" not in line] == older.splitlines()
    assert backend.ptx_for(ptx, (9, 0)) == ptx and backend.ptx_for(ptx, (10, 0)) == ptx


def test_general_product_register_block_keeps_the_arithmetic_in_registers():
    """The general product kernel's accumulators in a local array (intrinsics/register_block.py)
    compile to the PTX arithmetic of the scalar registers they replace: a 16-deep slab of 8 x 8
    outputs a thread is 1,024 FMAs and 256 shared reads (the counts the scalar kernel compiled
    to; it is not compiled here, its front end alone takes 20 s), and no local memory (every
    index into the array is a constant)."""
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((37, 21), dtype=np.float32),
            rng.standard_normal((21, 19), dtype=np.float32), np.ones(19, np.float32))

    def fn(x, w, b):
        return np.maximum(x @ w + b, 0)
    (kernel,) = lowered(fn, args, gemm=False, register_block=True).kernels
    assert kernel.strategy.startswith("tiled 128x128x16")
    assert "outer8x8(acc" in kernel.source
    ptx = kernel.ptx
    assert ".local" not in ptx and "ld.local" not in ptx
    assert len(re.findall(r"\bfma\.rn\.f32\b", ptx)) >= 16 * 64
    assert len(re.findall(r"\bld\.shared\.f32\b", ptx)) == 16 * 16


def test_general_product_long_epilogue_is_written_once():
    """An epilogue of more than Tuning.epilogue_loop ops (here a sum of eight other arrays, as
    NPBench's conv2d written with shifted slices adds its products) is written once, in a loop
    over the accumulators staged through A's slab, not once for each of a thread's 64 outputs:
    a few hundred lines, the FMAs as before, and no local memory (the staging reads the
    accumulators by constant indices)."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((70, 33), dtype=np.float32),
            rng.standard_normal((33, 45), dtype=np.float32)]
    args += [rng.standard_normal((70, 45), dtype=np.float32) for _ in range(8)]

    def fn(x, w, *rest):
        out = x @ w
        for r in rest:
            out = out + r
        return out
    (kernel,) = lowered(fn, args, gemm=False).kernels
    assert kernel.strategy.endswith("epilogue looped over staged rows"), kernel.strategy
    assert kernel.source.count("\n") < 400
    assert kernel.source.count("a9[") == 1
    ptx = kernel.ptx
    assert ".local" not in ptx and "ld.local" not in ptx
    assert len(re.findall(r"\bfma\.rn\.f32\b", ptx)) >= 16 * 64
    (written,) = lowered(fn, args, gemm=False, epilogue_loop=0).kernels
    assert not written.strategy.endswith("looped over staged rows")
    assert written.source.count("a9[") == 64


def test_a_run_of_outputs_loads_the_shared_input_once():
    """x.T @ g with g of 10 columns (emit/runs.py): a thread's 10 outputs take one load of x and
    10 of g an element and 10 FMAs, into registers, under launch bounds that leave room for them."""
    x, g = np.empty((4096, 64), np.float32), np.empty((4096, 10), np.float32)
    kernel = lowered(lambda x, g: x.T @ g, (x, g)).kernels[0]
    assert kernel.strategy.endswith("10 outputs a thread"), kernel.strategy
    ptx = kernel.ptx
    assert "ld.local" not in ptx and "st.local" not in ptx
    fmas = len(re.findall(r"\bfma\.rn\.f32\b", ptx))
    assert fmas >= 10 and fmas % 10 == 0, fmas          # (the loop may be unrolled)
    assert len(re.findall(r"\bld\.global(?:\.[a-z0-9:_]+)*\.f32\b", ptx)) >= 11
    assert ".minnctapersm 4" in ptx          # launch bounds for 64 registers (the accumulators)


def test_a_staged_run_reads_its_rows_from_shared_memory():
    """x @ w with w of 10 columns, x read a row a thread (emit/run_tiles.py): x's chunks copied
    to shared memory and read back there, each of a thread's 3 rows multiplied by w's element
    loaded once for all of them, the results gathered in shared memory, under launch bounds for
    64 registers and without local memory."""
    x, w = np.empty((1 << 19, 64), np.float32), np.empty((64, 10), np.float32)
    kernel = lowered(lambda x, w: x @ w, (x, w)).kernels[0]
    assert kernel.strategy.startswith("columns, 10 outputs a thread for each of 3 rows"), \
        kernel.strategy
    ptx = kernel.ptx
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert len(re.findall(r"\bld\.shared\.f32\b", ptx)) >= 3       # a thread's three rows
    assert len(re.findall(r"\bst\.shared\.f32\b", ptx)) >= 16 + 10  # copies, results
    fmas = len(re.findall(r"\bfma\.rn\.f32\b", ptx))
    assert fmas >= 30 and fmas % 30 == 0, fmas
    assert ".minnctapersm 8" in ptx          # 64 registers a thread of 128
    assert "bar.sync" in ptx


def test_short_rows_are_staged_in_shared_memory():
    """Softmax over rows of 10 (emit/short_tiles.py): the block's rows copied to shared memory
    and the results gathered there, ten of each a thread, between barriers, no local memory."""
    x = np.empty((1 << 19, 10), np.float32)
    kernel = lowered(lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True), (x,)).kernels[0]
    assert kernel.strategy == "columns, rows of 10 written out, 256 a block staged in shared " \
        "memory", kernel.strategy
    ptx = kernel.ptx
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert len(re.findall(r"\bst\.shared\.f32\b", ptx)) >= 20      # copies in, results
    assert len(re.findall(r"\bld\.shared\.f32\b", ptx)) >= 20      # the row, copies out
    assert len(re.findall(r"\bbar\.sync\b", ptx)) >= 3


@pytest.mark.parametrize("changes", [dict(tiles_narrow=32), dict(tiles_narrow=16),
                                     dict(tiles_side=96), dict(tiles_wide=200),
                                     dict(tiles_side=512)])
def test_product_tiles_the_kernels_cannot_lay_out_are_refused(changes):
    """A warp of the tiles and compact product kernels computes 32 x 64 results: other tile
    sizes had written `w // 0` (tiles_narrow=32 read out of bounds on an H200)."""
    from autofuse.backends.cuda.tuning import Tuning
    from autofuse.errors import TuningError
    with pytest.raises(TuningError, match="Tuning.tiles_"):
        Tuning(**changes)
    assert Tuning(tiles_narrow=0).tiles_narrow == 0 and TUNING.replace(tiles_wide=512)


def test_a_full_reduction_heavy_in_arithmetic_splits_an_element_a_thread():
    """16,384 values of a logistic loss (an exp, two logs, divisions each) split over 64 blocks,
    an element a thread; a plain sum of as many stays one block; a split kernel launches no
    block without an element of its own."""
    z = np.linspace(-3, 3, 1 << 14).astype(np.float32)
    y = (z > 0).astype(np.float32)

    def loss(z, y):
        p = 1 / (1 + np.exp(-z))
        return -(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7)).sum()
    (kernel,) = lowered(loss, (z, y)).kernels
    assert kernel.strategy == "split" and kernel.launch["grid"][0] == (1 << 14) // 256
    assert "an element a thread" in kernel.reason
    (plain,) = lowered(lambda z: z.sum(), (z,)).kernels
    assert plain.strategy.startswith("rows")
    (sum_,) = lowered(lambda x: (x * x).sum(), (np.ones(100_000, np.float32),)).kernels
    assert sum_.strategy.startswith("split") and sum_.launch["grid"][0] == -(-100_000 // 256)


def test_a_bound_if_needed_is_written_into_the_ptx_only_where_the_kernel_does_not_fit(monkeypatch):
    """compile._least_bound (float32 tiled products): PTX compiled without launch bounds is linked
    as it is where ptxas's registers (granted in eights) let the blocks asked share an SM and
    nothing spills; otherwise the bounds are written after the kernel's parameters and the PTX
    linked again under _unless_spilling's rule."""
    from autofuse.backends.cuda.runtime import driver as cuda_driver
    from autofuse.backends.cuda import compile as backend
    ptx = ".visible .entry k(\n.param .u64 a\n)\n{\nret;\n}\n"
    linked = _fake_linker(monkeypatch, backend)
    used = {b"free": {"registers": 125, "local_bytes": 0}, b"b2": {"registers": 128,
                                                                    "local_bytes": 8}}
    monkeypatch.setattr(cuda_driver, "cubin_resources", lambda cubin, entry: used[cubin])
    monkeypatch.setattr(cuda_driver, "local_bytes", lambda cubin, entry: used[cubin]["local_bytes"])
    assert backend._least_bound(ptx, "sm_90", "k", 2, 256, 16, 65536) == (b"free", 0)
    assert linked == [ptx]
    for registers in (129, 157):
        used[b"free"]["registers"] = registers
        linked.clear()
        assert backend._least_bound(ptx, "sm_90", "k", 2, 256, 16, 65536) == (b"b2", 2)
        assert linked[1] == ptx.replace(")\n{", ")\n.maxntid 256, 1, 1\n.minnctapersm 2\n{")
    used[b"free"].update(registers=96, local_bytes=4)     # fits, but spills: the bound is tried
    assert backend._least_bound(ptx, "sm_90", "k", 2, 256, 16, 65536) == (b"b2", 2)


def test_tiled_products_reach_nvvm_without_launch_bounds():
    """A float32 tiled product's PTX carries no launch bounds (NVVM wrote slower code knowing of
    a bound the kernel fit anyway); its source says the bound applies only where needed."""
    x, w = np.empty((512, 256), np.float32), np.empty((256, 512), np.float32)
    (kernel,) = lowered(lambda x, w: x @ w, (x, w)).kernels
    assert kernel.strategy.startswith("tiled")
    assert ".maxntid" not in kernel.ptx and ".minnctapersm" not in kernel.ptx
    assert "unless they fit without" in kernel.source


def test_the_general_product_kernel_stages_in_loops_without_local_memory():
    """Tuning.staging_loop (the default): the general tiled kernel's staging reads and stores as
    loops over a thread's slots (covariance's split-K product at 2^20 x 64: 451 lines written out, 247 as
    loops); the local arrays are unrolled into registers (no .local in the PTX)."""
    def covariance(x):
        centred = x - x.mean(axis=0, keepdims=True)
        return centred.T @ centred / (x.shape[0] - 1)

    f = autofuse.jit(covariance, backend="cuda", tuning=TUNING)
    [kernel] = [k for k in f.lower(np.ones((1 << 20, 64), np.float32)).kernels
                if k.strategy.startswith("tiled 128x128x16")]
    assert kernel.source.count("\n") < 300 and "sar = cuda.local.array(8" in kernel.source
    assert ".local" not in kernel.ptx
