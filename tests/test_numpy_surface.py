"""NumPy functions autofuse decomposes at trace time into existing ops (np.diff, np.pad, np.tril,
np.roll, np.tile, np.repeat, ufunc.outer, np.linalg.norm, np.cov, np.corrcoef, np.einsum): each
agrees with NumPy on the CPU backend and the reference interpreter, across dtypes, axes, negative
axes, broadcasting, size-0 and non-contiguous inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autofuse

from conftest import assert_same, copy_keeping_layout, random_array

BACKENDS = ["cpu", "numpy"]
FLOATS = [np.float32, np.float64]
NUMBERS = [np.int32, np.int64, np.float32, np.float64]


def check(fn, *args, atol=None):
    """fn(*args) through autofuse on each backend is what NumPy gives."""
    expected = fn(*[copy_keeping_layout(a) for a in args])
    for backend in BACKENDS:
        result = autofuse.jit(fn, backend=backend)(*args)
        assert_same(result, expected, loose=True, atol=atol)


# -- np.diff ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("n,axis", [(1, -1), (2, 0)])
def test_diff(dtype, n, axis, rng):
    x = random_array((5, 4), dtype, rng)
    check(lambda a: np.diff(a, n=n, axis=axis), x)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_diff_prepend_append(dtype, rng):
    x = random_array((3, 4), dtype, rng)
    check(lambda a: np.diff(a, prepend=0), x)
    check(lambda a: np.diff(a, axis=0, append=a[-1:] * 2, prepend=1.5), x)
    check(lambda a, b: np.diff(a, axis=1, append=b), x, random_array((3, 2), np.int64, rng))


def test_diff_size0_and_errors(rng):
    check(lambda a: np.diff(a, axis=0), np.zeros((0, 3), np.float32))
    check(lambda a: np.diff(a, n=4), np.arange(3.0))
    check(lambda a: np.diff(a, n=0, axis=1), np.arange(3.0).reshape(1, 3))
    check(lambda a: np.diff(a, n=3, axis=-2), np.arange(12.0).reshape(4, 3))
    with pytest.raises(ValueError, match="order must be non-negative"):
        autofuse.jit(lambda a: np.diff(a, n=-1), backend="cpu")(np.ones(3))


# -- np.pad ----------------------------------------------------------------------------------------
WIDTHS = [2, ((1, 0), (2, 3)), ((0, 4),), [[3, 1], [0, 2]]]


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("width", WIDTHS, ids=[str(w) for w in WIDTHS])
def test_pad_modes(mode, width, rng):
    x = random_array((3, 4), np.float32, rng)
    check(lambda a: np.pad(a, width, mode=mode), x)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float64])
def test_pad_constant_values(dtype, rng):
    x = random_array((2, 3), dtype, rng)
    check(lambda a: np.pad(a, 2, constant_values=1), x)
    check(lambda a: np.pad(a, ((1, 2), (3, 0)), constant_values=((4, 5), (6, 7))), x)
    check(lambda a, v: np.pad(a, 1, constant_values=v), x, 3)


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap", "edge"])
def test_pad_wider_than_the_array(mode, rng):
    check(lambda a: np.pad(a, (7, 5), mode=mode), random_array((3,), np.int64, rng))
    check(lambda a: np.pad(a, ((4, 1), (6, 6)), mode=mode), random_array((2, 3), np.float64, rng))
    check(lambda a: np.pad(a, 3, mode=mode), random_array((1, 2), np.float64, rng))


def test_pad_size0_and_errors():
    check(lambda a: np.pad(a, 1), np.zeros((0, 2), np.float32))
    check(lambda a: np.pad(a, 0, mode="wrap"), np.ones((2, 2), np.float32))
    # (mode="empty" leaves the border undefined: NaN or inf there made `* 0` flaky; the interior)
    check(lambda a: np.pad(a, (1, 3), mode="empty")[1:-3, 1:-3], np.ones((2, 2), np.float32))
    assert autofuse.jit(lambda a: np.pad(a, (1, 3), mode="empty"), backend="cpu")(
        np.ones((2, 2), np.float32)).shape == (6, 6)
    with pytest.raises(ValueError, match="can't extend empty axis"):
        autofuse.jit(lambda a: np.pad(a, 1, mode="edge"), backend="cpu")(np.zeros((0, 2)))
    with pytest.raises(autofuse.UnsupportedError, match="mode='median'"):
        autofuse.jit(lambda a: np.pad(a, 1, mode="median"), backend="cpu")(np.ones(3))
    with pytest.raises(ValueError, match="negative"):
        autofuse.jit(lambda a: np.pad(a, -1), backend="cpu")(np.ones(3))


def test_pad_width_as_an_argument_is_specialized(rng):
    x = random_array((4,), np.float64, rng)
    f = autofuse.jit(lambda a, n: np.pad(a, n, mode="reflect"), backend="cpu")
    for n in (1, 2, 1):
        np.testing.assert_array_equal(f(x, n), np.pad(x, n, mode="reflect"))


# -- np.tril / np.triu ---------------------------------------------------------------------------
TRIANGLES = [((4, 4), np.float32, 0), ((3, 5), np.int32, -1), ((2, 3, 4), np.bool_, 2),
             ((5,), np.float64, 1), ((0, 3), np.float32, 0), ((3, 2), np.int64, -5)]


@pytest.mark.parametrize("fn", [np.tril, np.triu], ids=["tril", "triu"])
@pytest.mark.parametrize("shape,dtype,k", TRIANGLES, ids=[str(t[0]) for t in TRIANGLES])
def test_triangles(fn, shape, dtype, k, rng):
    check(lambda a: fn(a, k=k), random_array(shape, dtype, rng))


# -- np.roll ---------------------------------------------------------------------------------------
ROLLS = [(2, None), (-3, None), (1, 0), (-1, -1), (7, 1), ((1, 2), (0, 1)), ((1, -2), 1),
         (2, (0, 1)), ((1, 1), (0, 0)), (0, 0)]


@pytest.mark.parametrize("shift,axis", ROLLS, ids=[str(r) for r in ROLLS])
def test_roll(shift, axis, rng):
    check(lambda a: np.roll(a, shift, axis=axis), random_array((3, 4), np.int32, rng))


def test_roll_size0_and_1d(rng):
    check(lambda a: np.roll(a, 2, axis=0), np.zeros((0, 3), np.float32))
    check(lambda a: np.roll(a, 2), np.zeros((0,), np.float32))
    check(lambda a: np.roll(a, -13), random_array((5,), np.float64, rng))


# -- np.tile / np.repeat ---------------------------------------------------------------------------
TILES = [2, (2, 1), (1, 3), (2, 2, 2), (0, 2), (3,), ()]


@pytest.mark.parametrize("reps", TILES, ids=[str(r) for r in TILES])
@pytest.mark.parametrize("shape", [(3,), (2, 3), ()])
def test_tile(reps, shape, rng):
    check(lambda a: np.tile(a, reps), random_array(shape, np.float32, rng))


REPEATS = [(2, None), (3, 0), (2, -1), (0, 1), ([1, 0, 2], 0), (np.array([2, 1, 1, 0]), 1), ([2], 1)]


@pytest.mark.parametrize("repeats,axis", REPEATS, ids=[str(r) for r in REPEATS])
@pytest.mark.parametrize("dtype", [np.bool_, np.float64])
def test_repeat(repeats, axis, dtype, rng):
    x = random_array((3, 4), dtype, rng)
    check(lambda a: np.repeat(a, repeats, axis=axis), x)


def test_repeat_method_and_errors(rng):
    check(lambda a: a.repeat(2, 1), random_array((3, 4), np.int32, rng))
    with pytest.raises(ValueError, match="negative"):
        autofuse.jit(lambda a: np.repeat(a, -1), backend="cpu")(np.ones(3))
    with pytest.raises(autofuse.UnsupportedError, match="data-dependent shape"):
        autofuse.jit(lambda a, r: np.repeat(a, r), backend="cpu")(np.ones(3), np.ones(3, int))


# -- ufunc.outer -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.subtract, np.maximum, np.minimum,
                                   np.greater, np.divide, np.power], ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.int32, np.float32),
                                    (np.int64, np.int32)], ids=str)
def test_ufunc_outer(ufunc, dtypes, rng):
    a = random_array((3,), dtypes[0], rng, positive=True)
    b = random_array((2, 4), dtypes[1], rng, positive=True)
    check(lambda x, y: ufunc.outer(x, y), a, b)


def test_ufunc_outer_scalars_and_views(rng):
    x = random_array((3, 4), np.float32, rng)
    check(lambda a: np.add.outer(a, 2.0), x)        # 2.0 is a float64 array to outer
    check(lambda a: np.multiply.outer(a[0], a[:, 1]), x)
    check(lambda a: np.subtract.outer(a, np.zeros(0)), x)


# -- np.linalg.norm --------------------------------------------------------------------------------
VECTOR_ORDS = [None, 1, 2, math.inf, -math.inf, 0, 3, 0.5, -1]


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_vector_norms(ord, dtype, rng):
    x = random_array((4, 5), dtype, rng, nonzero=True)
    check(lambda a: np.linalg.norm(a[0], ord), x)
    check(lambda a: np.linalg.norm(a, ord=ord, axis=-2, keepdims=True), x)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, math.inf, -math.inf], ids=str)
@pytest.mark.parametrize("axis", [None, (0, 1), (1, 0), (-1, -2)], ids=str)
def test_matrix_norms(ord, axis, rng):
    x = random_array((4, 6), np.float64, rng)
    check(lambda a: np.linalg.norm(a, ord, axis, keepdims=axis == (1, 0)), x)


def test_norms_of_stacks_and_whole_arrays(rng):
    x = random_array((2, 3, 4), np.float32, rng)
    check(lambda a: np.linalg.norm(a), x)
    check(lambda a: np.linalg.norm(a, keepdims=True), x)
    check(lambda a: np.linalg.norm(a, "fro", axis=(1, 2)), x)
    check(lambda a: np.linalg.norm(a, 1, axis=(2, 0)), x)
    check(lambda a: np.linalg.norm(a), np.zeros((0, 3)))
    check(lambda a: np.linalg.norm(a, 1, axis=(0, 1)), np.zeros((0, 3)))


@pytest.mark.parametrize("ord", [2, -2, "nuc"], ids=str)
def test_matrix_norms_that_need_an_svd_are_unsupported(ord):
    with pytest.raises(autofuse.UnsupportedError, match="SVD"):
        autofuse.jit(lambda a: np.linalg.norm(a, ord), backend="cpu")(np.ones((3, 3)))


# -- np.cov / np.corrcoef --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov(dtype, rowvar, rng):
    x = random_array((3, 6), dtype, rng)
    y = random_array((3, 6), dtype, rng)
    check(lambda a: np.cov(a, rowvar=rowvar), x)
    check(lambda a: np.cov(a, rowvar=rowvar, bias=True), x)
    check(lambda a: np.cov(a, rowvar=rowvar, ddof=2), x)
    check(lambda a, b: np.cov(a, b, rowvar), x, y)
    check(lambda a: np.corrcoef(a, rowvar=rowvar), x)
    check(lambda a, b: np.corrcoef(a, b, rowvar=rowvar), x, y)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cov_vectors_and_dtypes(rng):
    x = random_array((4, 5), np.float32, rng)
    check(lambda a: np.cov(a[0]), x)
    check(lambda a: np.cov(a[0], a[1]), x)
    check(lambda a: np.cov(a, dtype=np.float32), x)
    check(lambda a: np.corrcoef(a[0]), x)
    check(lambda a: np.corrcoef(a), x)
    check(lambda a: np.cov(a[:, :1].T, rowvar=False), x)


# -- np.einsum -------------------------------------------------------------------------------------
EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]), ("ji", [(3, 4)]), ("ii", [(4, 4)]), ("ii->i", [(4, 4)]), ("i,i", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,ij,j", [(3,), (3, 4), (4,)]), ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (5, 3, 4)]), ("...i->...", [(2, 3, 4)]), ("i...->...", [(2, 3)]),
    ("iij->j", [(3, 3, 2)]), ("iji->j", [(3, 2, 3)]), ("ab,ab->a", [(3, 4), (3, 4)]),
    ("ij,ij->ij", [(2, 1), (2, 3)]), ("Ba,a", [(2, 3), (3,)]), ("ij,kl->ijkl", [(2, 0), (3, 2)]),
    ("ij,jk", [(3, 0), (0, 2)]), ("i,i,i->", [(4,), (4,), (4,)]), ("ij,i->j", [(3, 4), (3,)]),
]


@pytest.mark.parametrize("number", range(len(EINSUMS)), ids=[e[0] for e in EINSUMS])
def test_einsum(number, rng):
    subscripts, shapes = EINSUMS[number]
    dtype = (np.float32, np.int32, np.float64)[number % 3]
    arrays = [random_array(shape, dtype, rng) for shape in shapes]
    check(lambda *a: np.einsum(subscripts, *a), *arrays, atol=1e-5)


def test_einsum_mixed_dtypes_and_bool(rng):
    a = random_array((3, 4), np.float32, rng)
    b = random_array((4, 2), np.int64, rng)
    check(lambda x, y: np.einsum("ij,jk->ik", x, y), a, b, atol=1e-5)
    check(lambda x: np.einsum("ij->j", x, dtype=np.float64), a)
    p, q = random_array((3, 4), np.bool_, rng), random_array((4, 2), np.bool_, rng)
    check(lambda x, y: np.einsum("ij,jk->ik", x, y), p, q)
    check(lambda x: np.einsum("ij,jk->ik", x, [[1.0], [2.0], [3.0], [4.0]]), a, atol=1e-5)


def test_einsum_errors():
    f = autofuse.jit(lambda a: np.einsum("ii", a), backend="cpu")
    with pytest.raises(ValueError, match="don't match"):
        f(np.ones((2, 3)))
    with pytest.raises(ValueError, match="no '...'"):
        autofuse.jit(lambda a: np.einsum("...i->i", a), backend="cpu")(np.ones((2, 3)))
    with pytest.raises(ValueError, match="2 operands"):
        autofuse.jit(lambda a: np.einsum("i,i", a), backend="cpu")(np.ones(3))


NON_CONTIGUOUS = {
    "diff": lambda a: np.diff(a, axis=0, prepend=0), "pad": lambda a: np.pad(a, (1, 2), "reflect"),
    "tril": lambda a: np.tril(a, 1), "roll": lambda a: np.roll(a, (1, -1), (0, 1)),
    "tile": lambda a: np.tile(a, (2, 1)), "repeat": lambda a: np.repeat(a, 2, axis=-1),
    "outer": lambda a: np.maximum.outer(a[0], a[1]), "norm": lambda a: np.linalg.norm(a, 1),
    "cov": lambda a: np.corrcoef(a), "einsum": lambda a: np.einsum("ij,kj->ik", a, a),
}


@pytest.mark.parametrize("layout", ["stride2", "reversed", "F"])
def test_non_contiguous_inputs(layout, rng):
    x = random_array((3, 4), np.float64, rng, layout)
    for name, fn in NON_CONTIGUOUS.items():
        check(fn, x)


@pytest.mark.parametrize("kwargs", [dict(correction=0.0), dict(correction=1), dict(ddof=1.5),
                                    dict(correction=2.5, axis=0, keepdims=True),
                                    dict(ddof=1, axis=1)])
def test_var_and_std_take_a_float_ddof_and_numpy_2s_correction(kwargs):
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    for name in ("var", "std"):
        fn = getattr(np, name)
        got = autofuse.jit(lambda a: fn(a, **kwargs))(x)
        want = fn(x, **kwargs)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-5)
    with pytest.raises(autofuse.NumPyValueError, match="ddof and correction"):
        autofuse.jit(lambda a: np.var(a, ddof=1, correction=1))(x)


@pytest.mark.parametrize("shapes,axes", [(((2, 3, 4), (3, 4, 5)), 2), (((2, 3, 4), (4, 5)), 1),
                                         (((2, 3), (4,)), 0), (((4, 3, 2), (2, 4, 3)), ([0, 1], [1, 2])),
                                         (((3, 4), (4, 3)), (1, 0)), (((0, 3), (3, 2)), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
def test_tensordot_as_numpy(shapes, axes, dtype):
    rng = np.random.default_rng(2)
    a, b = (random_array(s, dtype, rng) for s in shapes)
    got = autofuse.jit(lambda x, y: np.tensordot(x, y, axes=axes))(a, b)
    assert_same(got, np.tensordot(a, b, axes=axes))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.float64])
def test_vecdot_and_matrix_transpose_as_numpy(dtype):
    rng = np.random.default_rng(3)
    a, b = random_array((4, 3, 5), dtype, rng), random_array((3, 5), dtype, rng)
    assert_same(autofuse.jit(lambda x, y: np.vecdot(x, y))(a, b), np.vecdot(a, b))
    assert_same(autofuse.jit(lambda x, y: np.vecdot(x, y, axis=-2))(a, b), np.vecdot(a, b, axis=-2))
    assert_same(autofuse.jit(np.matrix_transpose)(a), np.matrix_transpose(a))


def test_dtypes_and_classes_as_arguments_are_static():
    x = np.arange(6.0).reshape(2, 3)
    f = autofuse.jit(lambda a, d: a.astype(d))
    for d in (np.float32, np.dtype("i2"), np.int64, np.dtype("f2")):
        assert_same(f(x, d), x.astype(d))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_floor_divide_as_numpy(dtype):
    """The signed spelling guards INT_MIN // -1 with a -1 unsigned types do not have (found by
    the external Array API suite: KeyError 'MINUS_ONE')."""
    a = np.array([7, 200, 3, 0], dtype)
    b = np.array([2, 7, 0, 5], dtype)
    with np.errstate(divide="ignore"):
        assert_same(autofuse.jit(lambda x, y: np.floor_divide(x, y))(a, b), np.floor_divide(a, b))
