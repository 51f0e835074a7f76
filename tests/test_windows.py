"""np.lib.stride_tricks.sliding_window_view, np.insert and np.delete (trace/windows.py) against
NumPy: windows over one, several and repeated axes, fused into convolutions, a median filter and
max pooling (reference interpreter and the CPU backend); insert's scalar and sequence indices
with NumPy's broadcasting rules; delete by index, slice, sequence and mask; NumPy's errors."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view as windows

import autofuse
from autofuse.errors import AutofuseError
from conftest import assert_same

rng = np.random.default_rng(77)
IMAGE = rng.standard_normal((1, 3, 10, 9)).astype(np.float32)
KERNEL = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
SIGNAL = rng.standard_normal(20)
A = rng.standard_normal((3, 4))


def check(fn, *args, backend="numpy"):
    got = autofuse.jit(fn, backend=backend)(*[np.copy(a) for a in args])
    assert_same(got, fn(*args), loose=True)


CASES = [
    ("conv2d_einsum", lambda x, w: np.einsum("bchwkl,ockl->bohw", windows(x, (3, 3), axis=(2, 3)),
                                             w), (IMAGE, KERNEL)),
    ("median_filter", lambda v: np.median(windows(v, 5), axis=-1), (SIGNAL,)),
    ("every_axis", lambda a: windows(a, (2, 3)) * 1, (A,)),
    ("same_axis_twice", lambda v: windows(v, (2, 3), axis=(0, 0)) * 1, (SIGNAL,)),
    ("max_pool", lambda a: windows(a, (2, 2), axis=(0, 1))[::2, ::2].max(axis=(-2, -1)),
     (rng.standard_normal((8, 8)),)),
    ("reversed_input", lambda v: windows(v[::-2], 3).sum(-1), (SIGNAL,)),
    ("full_width_window", lambda a: windows(a, 4, axis=-1).mean(-1), (A,)),
    ("insert_scalar", lambda a: (np.insert(a, 1, 0.0, axis=1), np.insert(a, 2, [7., 8., 9., 1.], axis=0),
                                 np.insert(a, 1, 5), np.insert(a, a.shape[1], a[:, 0], axis=1),
                                 np.insert(a, 1, [[1.], [2.], [3.]], axis=1),
                                 np.insert(a, -1, [1., 2., 3.], axis=1)), (A,)),
    ("insert_sequence", lambda a: (np.insert(a, [1, 1, 3], [10., 20., 30.], axis=1),
                                   np.insert(a, [3, 0], 9.0), np.insert(a, [4, -1], a[:, :2], axis=1)),
     (A,)),
    ("insert_casts_to_the_array", lambda a: np.insert(a, 0, 2.7), (np.arange(5),)),
    ("delete", lambda a: (np.delete(a, 0, axis=0), np.delete(a, [1, -1], axis=1),
                          np.delete(a, slice(None, None, 2), axis=1), np.delete(a, [0, 5, 7]),
                          np.delete(a, np.array([True, False, True, False]), axis=1)), (A,)),
    ("rolling_mean_by_cumsum", lambda x: (lambda c: (c[10:] - c[:-10]) / 10)(
        np.cumsum(np.insert(x, 0, 0.0))), (SIGNAL,)),
]


@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, fn, args):
    check(fn, *args)


def test_window_programs_on_the_cpu_backend():
    check(CASES[0][1], IMAGE, KERNEL, backend="cpu")
    check(lambda v: (np.median(windows(v, 5), axis=-1), np.delete(np.insert(v, 3, -1.0), 0)),
          SIGNAL, backend="cpu")


def test_windows_fuse_into_their_reduction():
    low = autofuse.jit(lambda v: windows(v * 2, 7).max(-1), backend="cpu").lower(SIGNAL)
    assert len(low.kernels) == 1


@pytest.mark.parametrize("fn, args", [
    (lambda v: windows(v, 30), (SIGNAL,)),
    (lambda v: windows(v, -1), (SIGNAL,)),
    (lambda a: windows(a, 2), (A,)),
    (lambda a: windows(a, (2, 2), axis=0), (A,)),
    (lambda a: np.insert(a, 9, 1.0, axis=1), (A,)),
    (lambda a: np.insert(a, 2, [7., 8., 9.], axis=0), (A,)),
    (lambda a: np.delete(a, 4, axis=1), (A,)),
    (lambda a: np.delete(a, np.array([True, False]), axis=1), (A,)),
])
def test_errors_as_numpy(fn, args):
    with pytest.raises(Exception) as numpy_error:
        fn(*args)
    with pytest.raises((type(numpy_error.value), AutofuseError)) as ours:
        autofuse.jit(fn, backend="numpy")(*args)
    assert isinstance(ours.value, AutofuseError)
    assert "test_windows.py" in str(ours.value)
