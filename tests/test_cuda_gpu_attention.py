"""The flash attention kernel (emit/attention.py) on a real GPU, against NumPy in float64, at the
GPU's tiles: odd sizes (no multiple of a tile), Sq != Sk, head dimensions 24, 64 and 128,
causal masks (tiles skipped), mask and bias arguments, heads with a batch broadcast and a
residual, views that are not 16-byte aligned, float16 and float64 scores, a fully masked row;
and float16 attention on tensor cores (emit/attention_mma.py) on the same kinds of cases.

Run on the device machine: `python -m pytest -m gpu tests/test_cuda_gpu_attention.py`.
"""
import numpy as np
import pytest

import autofuse
from attention_cases import half, bias_argument, causal_offset, causal_tril, close, epilogue_cast, \
    heads, heads_causal_residual, mask_argument, numpy_sqrt_scale, plain, qkv, reference, \
    swapaxes_sqrt_float

from gpu_marks import cupy, pytestmark  # noqa: F401  (CuPy, the GPU marker and skip)


def masked(q, k, v):
    mask = np.random.default_rng(4).random((q.shape[-2], k.shape[-2])) < 0.6
    mask[7] = False                       # a row with no key: NaN, as NumPy
    return q, k, v, mask


def biased(q, k, v):
    return q, k, v, np.random.default_rng(5).standard_normal((q.shape[-2], k.shape[-2]),
                                                             dtype=np.float32)


def unaligned(q, k, v):
    return plain(q[:, :, 1:], k[:, :, 1:], v[:, :, 1:])


CASES = [
    ("plain", plain, qkv((3,), 1000, 777, 64)),
    ("head_24", swapaxes_sqrt_float, qkv((2,), 333, 517, 24)),
    ("head_128", plain, qkv((2,), 300, 260, 128)),
    ("float64_scores", numpy_sqrt_scale, qkv((2,), 255, 257, 64)),
    ("causal", causal_tril, qkv((4,), 513, 513, 64)),
    ("causal_offset", causal_offset, qkv((2,), 100, 611, 64)),
    ("mask_argument", mask_argument, masked(*qkv((2,), 130, 97, 64))),
    ("bias_argument", bias_argument, biased(*qkv((2,), 130, 97, 32))),
    ("heads_broadcast", heads, qkv((2, 3), 200, 150, 64)),
    ("heads_causal_residual", heads_causal_residual, qkv((2, 2), 257, 257, 64)),
    ("epilogue_cast", epilogue_cast, qkv((2,), 129, 65, 64)),
    ("unaligned_views", unaligned, qkv((2,), 99, 101, 65)),
    ("float16", plain, qkv((4,), 511, 300, 64, dtype=np.float16)),
    ("float64", plain, qkv((2,), 70, 90, 32, dtype=np.float64)),
]


# float16 on tensor cores: every case's strategy says so (the "float16" case above too)
HALF_CASES = [
    ("half_plain", plain, qkv((3,), 1000, 777, 64, dtype=np.float16)),
    ("half_head_24", swapaxes_sqrt_float, qkv((2,), 333, 517, 24, dtype=np.float16)),
    ("half_head_128", plain, qkv((2,), 300, 260, 128, dtype=np.float16)),
    ("half_head_16", plain, qkv((2,), 130, 70, 16, dtype=np.float16)),
    ("half_causal", causal_tril, qkv((4,), 513, 513, 64, dtype=np.float16)),
    ("half_causal_offset", causal_offset, qkv((2,), 100, 611, 64, dtype=np.float16)),
    ("half_mask_argument", mask_argument, half(masked(*qkv((2,), 130, 97, 64)))),
    ("half_bias_argument", bias_argument, half(biased(*qkv((2,), 130, 97, 32)))),
    ("half_heads_broadcast", heads, qkv((2, 3), 200, 150, 64, dtype=np.float16)),
    ("half_heads_causal_residual", heads_causal_residual,
     qkv((2, 2), 257, 257, 64, dtype=np.float16)),
    ("half_epilogue_cast", epilogue_cast, qkv((2,), 129, 65, 64, dtype=np.float16)),
    ("half_unaligned_views", unaligned, qkv((2,), 99, 101, 65, dtype=np.float16)),
    ("half_value_width_40", plain, qkv((2,), 90, 200, 64, 40, dtype=np.float16)),
]


@pytest.mark.parametrize("name, fn, args", CASES + HALF_CASES,
                         ids=[c[0] for c in CASES + HALF_CASES])
def test_flash_attention_matches_numpy(name, fn, args):
    jitted = autofuse.jit(fn)
    with np.errstate(all="ignore"):
        got = jitted(*[cupy.asarray(a) for a in args])
        native = fn(*args)
    got = cupy.asnumpy(got)
    assert got.dtype == native.dtype
    assert close(got, reference(fn, args), args)
    kernels = jitted.lower(*args, backend="cuda").kernels
    assert len(kernels) == 1 and kernels[0].strategy.startswith("flash attention"), \
        [k.strategy for k in kernels]
    if "causal" in name:
        assert "causal tiles skipped" in kernels[0].strategy
    if name.startswith("half") or name == "float16":
        assert "on tensor cores" in kernels[0].strategy


def test_a_broadcast_key_batch_reads_each_head_right():
    q = np.random.default_rng(1).standard_normal((2, 4, 129, 64), dtype=np.float32)
    k, v = (np.random.default_rng(s).standard_normal((2, 1, 200, 64), dtype=np.float32)
            for s in (2, 3))
    got = cupy.asnumpy(autofuse.jit(heads)(*(cupy.asarray(a) for a in (q, k, v))))
    assert close(got, reference(heads, (q, k, v)), (q, k, v))


def test_the_numbers_the_benchmark_times():
    """The benchmark's shape (32 heads x 2048 x 64, float32), at a quarter of its heads."""
    args = qkv((8,), 2048, 2048, 64, seed=11)
    got = cupy.asnumpy(autofuse.jit(swapaxes_sqrt_float)(*(cupy.asarray(a) for a in args)))
    assert close(got, reference(swapaxes_sqrt_float, args), args)


def test_the_float16_numbers_the_benchmark_times():
    """The benchmark's float16 shape (32 heads x 2048 x 64), at a quarter of its heads, plain and
    causal, on tensor cores."""
    args = qkv((8,), 2048, 2048, 64, dtype=np.float16, seed=11)
    for fn in (swapaxes_sqrt_float, causal_tril):
        got = cupy.asnumpy(autofuse.jit(fn)(*(cupy.asarray(a) for a in args)))
        assert close(got, reference(fn, args), args)


def test_contiguous_views_off_16_byte_alignment_take_the_element_path():
    """q, k and v one element into their buffers: C-contiguous parameters whose 16-byte loads
    the kernel's `aligned` check turns down at run time."""
    args = qkv((2,), 77, 90, 64, seed=12)

    def shifted(a):
        flat = cupy.zeros(a.size + 1, a.dtype)
        flat[1:] = cupy.asarray(a).ravel()
        return flat[1:].reshape(a.shape)
    views = [shifted(a) for a in args]
    assert all(v.data.ptr % 16 for v in views)
    got = cupy.asnumpy(autofuse.jit(plain)(*views))
    assert close(got, reference(plain, args), args)
