"""Layout: transposes, reshapes, indexing, joins, matmul, creation and captured constants."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

from conftest import copy_keeping_layout, DTYPE_IDS, DTYPES, UNARY_SHAPES, assert_same, random_array

LAYOUTS = ["C", "F", "stride2", "reversed"]


def check(fn, *args, loose=True, **options):
    expected = fn(*[copy_keeping_layout(a) for a in args])
    result = autofuse.jit(fn, **options)(*args)
    assert_same(result, expected, loose=loose)
    return result


VIEWS = {
    ".T": lambda x: x.T,
    "transpose()": lambda x: x.transpose(),
    "transpose(axes)": lambda x: x.transpose(1, 2, 0),
    "transpose(tuple)": lambda x: x.transpose((2, 0, 1)),
    "np.transpose": lambda x: np.transpose(x, (0, 2, 1)),
    "np.transpose-neg": lambda x: np.transpose(x, (-1, 0, 1)),
    "swapaxes": lambda x: x.swapaxes(0, 2),
    "np.swapaxes-neg": lambda x: np.swapaxes(x, -1, 1),
    "moveaxis": lambda x: np.moveaxis(x, 0, -1),
    "moveaxis-multi": lambda x: np.moveaxis(x, [0, 1], [-1, 0]),
    "reshape": lambda x: x.reshape(6, 4),
    "reshape-tuple": lambda x: x.reshape((4, -1)),
    "reshape-minus1": lambda x: x.reshape(-1),
    "np.reshape": lambda x: np.reshape(x, (2, 2, -1)),
    "reshape-T": lambda x: x.T.reshape(-1),
    "ravel": lambda x: x.ravel(),
    "np.ravel": lambda x: np.ravel(x),
    "flatten": lambda x: x.flatten(),
    "expand_dims": lambda x: np.expand_dims(x, 1),
    "expand_dims-neg": lambda x: np.expand_dims(x, -1),
    "expand_dims-tuple": lambda x: np.expand_dims(x, (0, 4)),
    "squeeze": lambda x: x[:, :1].squeeze(),
    "np.squeeze-axis": lambda x: np.squeeze(x[:1, :, :1], axis=(0, 2)),
    "broadcast_to": lambda x: np.broadcast_to(x[:, :1], (5, 2, 3, 4)),
    "newaxis": lambda x: x[None, :, np.newaxis],
    "ellipsis": lambda x: x[..., 1],
    "ellipsis-newaxis": lambda x: x[..., None],
    "mT": lambda x: x.mT,
    "flip": lambda x: np.flip(x, axis=1),
    "flip-all": lambda x: np.flip(x),
    "copy": lambda x: x.copy(),
    "np.copy": lambda x: np.copy(x),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views(name, layout, rng):
    x = random_array((2, 3, 4), np.float32, rng, layout)
    check(VIEWS[name], x)
    check(lambda a: VIEWS[name](a) * 2, x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_views_keep_dtype(dtype, rng):
    x = random_array((2, 3, 4), dtype, rng)
    check(lambda a: (a.T, a.reshape(-1), a[:, ::-1], np.moveaxis(a, 2, 0)), x)


def _keys():
    keys = [0, -1, 2, slice(None), slice(1, None), slice(None, -1), slice(None, None, 2),
            slice(None, None, -1), slice(-1, 0, -2), slice(3, 1, -1), slice(-100, 100),
            slice(2, 2), slice(5, 1), (slice(None), 1), (1, slice(None, None, -2)),
            (Ellipsis, 0), (None, 1, Ellipsis), (slice(1, 3), None, slice(None, None, 3)),
            (-2, -3), (slice(None, None, -3), slice(4, None, -1)), ()]
    return keys


@pytest.mark.parametrize("key", _keys(), ids=[repr(k) for k in _keys()])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_basic_indexing(key, layout, rng):
    x = random_array((4, 6), np.int64, rng, layout)
    check(lambda a: a[key], x)
    check(lambda a: a[key] + 1, x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_integer_indexing_gives_scalars(dtype, rng):
    x = random_array((3, 4), dtype, rng)
    check(lambda a: a[1, 2], x)
    check(lambda a: a[-1][0], x)
    check(lambda a: a[0, 0] + a[1, 1], x)
    check(lambda a: a[()], random_array((), dtype, rng))
    check(lambda a: a[...], random_array((), dtype, rng))


def test_slice_any_start_stop_step(rng):
    x = random_array((7,), np.float64, rng)
    for start in (None, -9, -3, 0, 2, 6, 9):
        for stop in (None, -9, -2, 0, 3, 7, 9):
            for step in (None, 1, 2, -1, -3):
                check(lambda a: a[start:stop:step], x)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.int32, np.float32),
                                    (np.bool_, np.int64), (np.int32, np.int64)])
def test_concatenate(axis, dtypes, rng):
    a = random_array((2, 3), dtypes[0], rng)
    b = random_array((2, 3), dtypes[1], rng)
    check(lambda x, y: np.concatenate([x, y, x], axis=axis), a, b)
    empty = (lambda x: x[:0]) if axis in (0, None) else (lambda x: x[:, :0])
    check(lambda x, y: np.concatenate((empty(x), y), axis=axis), a, b)


def test_concatenate_mixed_with_constants(rng):
    a = random_array((2, 3), np.float32, rng)
    const = np.arange(3.0)
    check(lambda x: np.concatenate([x, const[None]]), a)
    check(lambda x: np.concatenate([x, [[1, 2, 3]]]), a)
    check(lambda x: np.concatenate([x, x], dtype=np.float64), a)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack(axis, rng):
    a = random_array((2, 3), np.float64, rng)
    b = random_array((2, 3), np.int32, rng)
    check(lambda x, y: np.stack([x, y], axis=axis), a, b)
    check(lambda x, y: np.stack((x, y, x * 2), axis), a, b)


def test_hstack_vstack(rng):
    a = random_array((2, 3), np.float32, rng)
    v = random_array((3,), np.float32, rng)
    check(lambda x, y: (np.hstack([x, x]), np.vstack([x, y]), np.hstack([y, y])), a, v)


def test_np_array_of_traced_values(rng):
    a = random_array((3,), np.float32, rng)
    check(lambda x: np.array([x, x * 2]), a)
    check(lambda x: np.asarray(x), a)
    check(lambda x: np.array([x[0], x[1]]), a)
    check(lambda x: np.array(x, dtype=np.float64), a)


MATMUL_SHAPES = [
    ("vec-vec", (4,), (4,)),
    ("mat-mat", (3, 4), (4, 5)),
    ("mat-vec", (3, 4), (4,)),
    ("vec-mat", (4,), (4, 5)),
    ("batch", (2, 3, 4), (2, 4, 5)),
    ("batch-bcast", (2, 1, 3, 4), (5, 4, 2)),
    ("batch-mat", (2, 3, 4), (4, 5)),
    ("mat-batch", (3, 4), (2, 4, 5)),
    ("batch-vec", (2, 3, 4), (4,)),
    ("vec-batch", (4,), (2, 4, 5)),
    ("empty-k", (3, 0), (0, 2)),
    ("empty-m", (0, 4), (4, 2)),
]


@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.float64, np.float64),
                                    (np.int32, np.int32), (np.int32, np.float32),
                                    (np.bool_, np.bool_), (np.int64, np.float64)])
@pytest.mark.parametrize("name,sa,sb", MATMUL_SHAPES, ids=[m[0] for m in MATMUL_SHAPES])
def test_matmul(name, sa, sb, dtypes, rng):
    a = random_array(sa, dtypes[0], rng)
    b = random_array(sb, dtypes[1], rng)
    check(lambda x, y: x @ y, a, b, loose=True)
    check(lambda x, y: np.matmul(x, y), a, b, loose=True)
    if len(sb) <= 2:
        check(lambda x, y: np.dot(x, y), a, b, loose=True)
        check(lambda x, y: x.dot(y), a, b, loose=True)


def test_matmul_of_views_and_constants(rng):
    a = random_array((4, 3), np.float64, rng, "F")
    w = random_array((4, 2), np.float64, rng)
    check(lambda x: x.T @ w, a)
    check(lambda x: w.T @ x, a)
    check(lambda x: x[::-1].T @ x[:, ::2], a)
    check(lambda x: np.dot(x, 2.0), a)
    check(lambda x: x @ x.T @ x, a)


def test_matmul_inplace(rng):
    a = random_array((3, 3), np.float64, rng)

    def f(x):
        y = x.copy()
        y @= x
        return y
    check(f, a)


def test_outer(rng):
    check(lambda x, y: np.outer(x, y), random_array((3,), np.float32, rng),
          random_array((2, 2), np.float32, rng))


CREATION = {
    "zeros": lambda x: np.zeros(3) + x[0],
    "zeros-dtype": lambda x: np.zeros((2, 3), dtype=np.int32) + x[0],
    "zeros-shape0": lambda x: np.zeros((0, 2)),
    "ones": lambda x: np.ones((3, 1), np.float32) * x,
    "full": lambda x: np.full((2, 3), 2.5) - x[0],
    "full-int": lambda x: np.full(3, 7),
    "full-traced": lambda x: np.full((2, 3), x[0, 0]),
    "full-bool": lambda x: np.full((2,), True),
    "arange": lambda x: np.arange(3) * x[0],
    "arange-start-stop": lambda x: np.arange(2, 9, 3),
    "arange-neg-step": lambda x: np.arange(5, -4, -2),
    "arange-float": lambda x: np.arange(0.5, 3.0, 0.5),
    "arange-dtype": lambda x: np.arange(4, dtype=np.float32),
    "arange-empty": lambda x: np.arange(3, 1),
    "linspace": lambda x: np.linspace(0, 1, 5),
    "linspace-noend": lambda x: np.linspace(-1.0, 2.0, 4, endpoint=False, dtype=np.float32),
    "eye": lambda x: np.eye(3),
    "eye-rect-k": lambda x: np.eye(3, 4, k=1, dtype=np.int32),
    "eye-neg-k": lambda x: np.eye(4, 3, k=-2, dtype=bool),
    "identity": lambda x: np.identity(3) @ x,
    "zeros_like": lambda x: np.zeros_like(x),
    "ones_like": lambda x: np.ones_like(x, dtype=np.int32),
    "full_like": lambda x: np.full_like(x, 3.7),
    "full_like-int": lambda x: np.full_like(x.astype(np.int32), 3.7),
    "zeros_like-shape": lambda x: np.zeros_like(x, shape=(2,)),
    "array-literal": lambda x: np.array([[1, 2, 3]]) * x,
    "asarray-literal": lambda x: x + np.asarray([1.5, 2.5, 3.5], dtype=np.float32),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation(name, rng):
    x = random_array((3, 3), np.float32, rng)
    check(CREATION[name], x)


@pytest.mark.parametrize("like", [True, False])
def test_empty_has_shape_and_dtype(like, rng):
    x = random_array((2, 3), np.float32, rng)
    fn = (lambda a: np.empty_like(a)) if like else (lambda a: np.empty((4, 2), dtype=np.int32))
    result = autofuse.jit(fn)(x)
    expected = fn(x)
    assert type(result) is np.ndarray
    assert result.shape == expected.shape and result.dtype == expected.dtype


def test_filled_empty_array(rng):
    def f(x):
        out = np.empty((3, 3))
        out[...] = x
        out[0] = 1
        return out
    check(f, random_array((3,), np.float32, rng))


CAPTURED = random_array((3, 4), np.float64, np.random.default_rng(7))
CAPTURED_INT = np.arange(12, dtype=np.int32).reshape(3, 4)


def test_captured_arrays_are_constants(rng):
    x = random_array((3, 4), np.float32, rng)
    check(lambda a: a * CAPTURED + CAPTURED_INT, x)
    check(lambda a: a + CAPTURED[:, ::-1].T.T, x)
    check(lambda a: CAPTURED @ a.T, x)
    check(lambda a: np.where(CAPTURED > 0, a, CAPTURED_INT), x)


def test_captured_array_is_not_modified(rng):
    captured = random_array((3,), np.float64, rng)
    before = captured.copy()

    def f(a):
        return a + captured
    x = random_array((3,), np.float64, rng)
    check(f, x)
    np.testing.assert_array_equal(captured, before)


def test_large_captured_constant_is_not_inlined_into_text(rng):
    big = random_array((64, 64), np.float64, rng)
    f = autofuse.jit(lambda a: a + big)
    x = random_array((64, 64), np.float64, rng)
    assert "array<float64[64, 64]>" in f.lower(x).as_text()
    assert_same(f(x), x + big)


@pytest.mark.parametrize("shape_id,shape,layout", UNARY_SHAPES, ids=[s[0] for s in UNARY_SHAPES])
def test_shape_attributes(shape_id, shape, layout, rng):
    x = random_array(shape, np.float64, rng, layout)
    check(lambda a: (a.shape, a.ndim, a.size, a.dtype.name, len(a.shape), np.shape(a), np.ndim(a),
                     np.size(a), a.nbytes, a.itemsize), x)


# -- reductions walk their input in its memory order (CPU backend: source.memory_order) ---------

def _permuted(rng, shape, order, dtype=np.float32, step=1):
    """An array of `shape` whose memory runs along `order` (slowest axis first), every `step`-th
    element of its last memory axis."""
    stored = tuple(shape[d] for d in order)
    wide = stored[:-1] + (stored[-1] * step,)
    base = rng.standard_normal(wide).astype(dtype)[..., ::step]
    return np.transpose(base, np.argsort(order))


MEMORY_ORDER_CASES = [
    # (name, function, shape, memory order, the CPU strategy taken)
    ("fortran rows sum", lambda x: x.sum(1), (300, 200), (1, 0), "columns"),
    ("fortran columns sum", lambda x: x.sum(0), (300, 200), (1, 0), "rows"),
    ("fortran row max and argmin", lambda x: (x.max(1), x.argmin(1)), (130, 70), (1, 0), "columns"),
    ("fortran mean and var", lambda x: (x.mean(1), x.var(1)), (257, 33), (1, 0), "columns"),
    ("fortran total", lambda x: x.sum(), (64, 48), (1, 0), None),
    ("fortran reversed rows", lambda x: x[::-1].sum(1), (300, 200), (1, 0), "columns"),
    ("3-d leading axis last in memory", lambda x: x.sum(2), (40, 30, 20), (2, 0, 1), "columns"),
    ("3-d middle axis kept", lambda x: np.exp(x).sum(axis=(0, 2)), (12, 30, 20), (1, 0, 2), None),
    ("3-d kept axes swapped in memory", lambda x: x.sum(1), (20, 30, 40), (2, 1, 0), None),
    ("two inputs, one fortran", lambda x, y: (x * y).sum(1), (300, 200), (1, 0), "columns"),
    # a transpose in the program: its reduction walks the C-ordered matrix along its rows
    ("transposed sum over columns", lambda x: x.T.sum(0), (300, 200), (0, 1), "rows"),
    ("transposed sum over rows", lambda x: x.T.sum(1), (300, 200), (0, 1), "columns"),
    ("transposed scaled max", lambda x: (x.T * 2).max(0), (130, 70), (0, 1), "rows"),
    ("transposed argmin", lambda x: x.T.argmin(0), (130, 70), (0, 1), "rows"),
]


@pytest.mark.parametrize("name, fn, shape, order, strategy", MEMORY_ORDER_CASES,
                         ids=[c[0] for c in MEMORY_ORDER_CASES])
def test_reductions_follow_the_memory_order(name, fn, shape, order, strategy, rng):
    x = _permuted(rng, shape, order, step=2 if "reversed" in name else 1)
    args = (x, rng.standard_normal(shape).astype(np.float32)) if fn.__code__.co_argcount == 2 \
        else (x,)
    for backend in ("cpu", "numpy"):
        check(fn, *args, backend=backend)
    if strategy:
        kernels = autofuse.jit(fn, backend="cpu").lower(*args).kernels
        assert kernels[-1].strategy == strategy, [k.strategy for k in kernels]


def test_a_transposed_square_input_keeps_the_rows_loop(rng):
    """x.T.sum(1) of a Fortran-ordered square x reads x.T's rows along memory already: the loops
    follow only inputs read along the reduced space's own axes."""
    x = np.asfortranarray(rng.standard_normal((96, 96)).astype(np.float32))
    fn = lambda x: x.T.sum(1)        # noqa: E731
    check(fn, x, backend="cpu")
    assert autofuse.jit(fn, backend="cpu").lower(x).kernels[-1].strategy == "rows"


CROSS_CASES = [
    # (name, function, arguments: shapes and memory orders): elementwise groups that read an
    # array across its memory order, walked in tiles of the last two axes (cpu/loops.tiled_loops)
    ("transposed", lambda x: x.T * 2 + 1, [((130, 97), (0, 1))]),
    ("fortran plus C", lambda x, y: x + y, [((65, 200), (1, 0)), ((65, 200), (0, 1))]),
    ("3-d, last two axes swapped", lambda x: np.swapaxes(x, 1, 2) * 3, [((3, 70, 90), (0, 1, 2))]),
    ("transposed with a broadcast row", lambda x, b: x.T + b, [((80, 70), (0, 1)), ((80,), (0,))]),
]


@pytest.mark.parametrize("name, fn, specs", CROSS_CASES, ids=[c[0] for c in CROSS_CASES])
def test_elementwise_reads_across_memory_in_tiles(name, fn, specs, rng):
    args = [_permuted(rng, shape, order) for shape, order in specs]
    check(fn, *args, backend="cpu", loose=False)
    kernels = autofuse.jit(fn, backend="cpu").lower(*args).kernels
    assert any(k.strategy.startswith("nest, the last two axes in") for k in kernels), \
        [k.strategy for k in kernels]


OWN_LAYOUT_CASES = [
    # (name, function, argument specs (shape, memory order), whether NumPy's result keeps the order)
    ("fortran", lambda x: np.exp(x) * 2 - x, [((70, 90), (1, 0))], True),
    ("fortran pair", lambda x, y: x * y + 1, [((70, 90), (1, 0)), ((70, 90), (1, 0))], True),
    ("permuted 3-d", lambda x: np.sqrt(np.abs(x)) + x, [((5, 6, 7), (2, 0, 1))], True),
    ("fortran with a scalar", lambda x, s: x * s, [((70, 90), (1, 0)), ((), ())], True),
    ("fortran and C", lambda x, y: x + y, [((70, 90), (1, 0)), ((70, 90), (0, 1))], False),
    ("fortran, and its row sums in the same kernel", lambda x: (x * 2, (x * 2).sum(1)),
     [((70, 90), (1, 0))], True),
    ("fortran, read again by a sort", lambda x: (x * 2, np.sort(x * 2, 1)),
     [((70, 90), (1, 0))], False),
]


@pytest.mark.parametrize("name, fn, specs, kept", OWN_LAYOUT_CASES, ids=[c[0] for c in OWN_LAYOUT_CASES])
def test_elementwise_results_keep_their_inputs_order(name, fn, specs, kept, rng):
    """An elementwise result of inputs that share a memory order is stored in it, as NumPy's
    ufuncs store theirs (a Fortran result of Fortran inputs), and computed flat over memory (or,
    beside a reduction, by its loops in memory order); a result another kernel reads stays
    C-ordered (that kernel's loops assume it)."""
    args = [_permuted(rng, shape, order) if shape else np.float32(1.5) for shape, order in specs]
    result = check(fn, *args, backend="cpu")
    first = result[0] if isinstance(result, tuple) else result
    if kept:
        want = fn(*args)
        want = want[0] if isinstance(want, tuple) else want
        assert first.strides == want.strides, (first.strides, want.strides)
    else:
        assert first.flags.c_contiguous


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _layernorm(x, axis):
    centered = x - x.mean(axis, keepdims=True)
    return centered / np.sqrt((centered * centered).mean(axis, keepdims=True) + 1e-5)


WHOLE_ROW_PROGRAMS = [
    ("softmax over rows", lambda x: _softmax(x, 1)),
    ("softmax over columns", lambda x: _softmax(x, 0)),
    ("layernorm over rows", lambda x: _layernorm(x, 1)),
    ("layernorm over columns", lambda x: _layernorm(x, 0)),
    ("normalized by row sums", lambda x: x / x.sum(1, keepdims=True)),
    ("exp and its column sums", lambda x: (np.exp(x), np.exp(x).sum(0))),
]


@pytest.mark.parametrize("shape", [(130, 70), (64, 64), (5, 300), (257, 129)])
@pytest.mark.parametrize("name, fn", WHOLE_ROW_PROGRAMS, ids=[c[0] for c in WHOLE_ROW_PROGRAMS])
def test_whole_row_programs_of_fortran_inputs(name, fn, shape, rng):
    """Programs whose results have the input's shape and need a reduction of its row (softmax,
    normalizations) on a Fortran input: the loops walk memory order, the reduced axis's values
    kept in a row buffer found by its index's name (a softmax over columns once read its buffer
    at the kept index), and the full-size results stored in the input's order, as NumPy's."""
    x = _permuted(rng, shape, (1, 0))
    result = check(fn, x, backend="cpu")
    result = result if isinstance(result, tuple) else (result,)
    want = fn(x)
    want = want if isinstance(want, tuple) else (want,)
    if len(autofuse.jit(fn, backend="cpu").lower(x).kernels) == 1:
        # (a result made by a later kernel from C-ordered intermediates stays C-ordered)
        for got, expected in zip(result, want):
            if got.ndim == 2:
                assert got.flags.f_contiguous == expected.flags.f_contiguous


def test_a_broadcast_view_argument_sets_no_memory_order(rng):
    """An argument that is a broadcast view (stride 0) is read along the other inputs' order: the
    sum over rows of b * x stays a rows kernel."""
    b = np.broadcast_to(rng.standard_normal(300).astype(np.float32), (200, 300))
    x = rng.standard_normal((200, 300)).astype(np.float32)
    fn = lambda b, x: (b * x).sum(1)        # noqa: E731
    check(fn, b, x, backend="cpu")
    assert autofuse.jit(fn, backend="cpu").lower(b, x).kernels[-1].strategy == "rows"
