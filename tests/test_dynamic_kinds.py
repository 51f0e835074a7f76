"""Shape classes over the group kinds main grew after the first class build (scans, sorts,
gathers with their bounds checks, column reductions): 50 batch sizes against NumPy, compiles
counted through cache_info(), and the dimensions that stay static saying why."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

RNG = np.random.default_rng(2033)
SIZES = [7, 0, 1] + [n for n in range(2, 50) if n != 7]       # 50 batch sizes
TABLE = RNG.standard_normal((20, 16))


def cumsum_rows(x):
    return np.cumsum(x * 2.0, axis=1)


def cumsum_batch(x):
    return np.cumsum(x, axis=0) + 1.0


def sort_rows(x):
    return np.sort(x * 1.5, axis=-1)


def take_rows(table, i):
    return np.take(table, i, axis=0) * 2.0


def take_along(x, i):
    return np.take_along_axis(x, i, axis=1) + x[:, :1]


def column_sums(x):
    return (x * x).sum(axis=0)


def column_max(x):
    return np.max(x - 1.0, axis=0)


# name -> (function, arguments at batch size n, most compiles over SIZES)
KINDS = {
    "cumsum_rows": (cumsum_rows, lambda n: (RNG.standard_normal((n, 16)),), 2),
    "cumsum_batch": (cumsum_batch, lambda n: (RNG.standard_normal((n, 16)),), 2),
    "sort_rows": (sort_rows, lambda n: (RNG.standard_normal((n, 16)).astype(np.float32),), 2),
    # sizes 0 and 1 of the index vector compile on their own (a size-1 index loads at 0)
    "take_rows": (take_rows, lambda n: (TABLE, RNG.integers(-20, 20, n)), 4),
    "take_along": (take_along, lambda n: (RNG.standard_normal((n, 16)),
                                          RNG.integers(0, 16, (n, 5))), 3),
    # size 0: no column layout (the rows loops), compiled on its own
    "column_sums": (column_sums, lambda n: (RNG.standard_normal((n, 16)),), 3),
    "column_max": (column_max, lambda n: (RNG.standard_normal((n, 300)).astype(np.float32),), 3),
}


def _check(fn, f, args):
    try:
        with np.errstate(all="ignore"):
            want = fn(*args)
    except ValueError as refused:              # (max of no rows: NumPy's error, as NumPy says it)
        with pytest.raises(ValueError, match=str(refused).split(" operation")[0]):
            f(*args)
        return
    got = f(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    tolerance = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_fifty_batch_sizes_of_main_kinds(kind):
    fn, make, most = KINDS[kind]
    f = autofuse.jit(fn, backend="cpu")
    for n in SIZES:
        _check(fn, f, make(n))
    info = f.cache_info()
    assert info.compiles <= most, (kind, info)
    assert info.instances >= len(SIZES) - most
    assert "# dynamic: n0 = " in f.lower(*make(9)).as_text("fused")


def test_column_reduction_with_a_dynamic_kept_axis_too():
    f = autofuse.jit(column_sums, backend="cpu", dynamic=True)
    for rows, columns in [(5, 7), (3, 40), (130, 9), (1, 1), (64, 1), (200, 300)]:
        _check(column_sums, f, (RNG.standard_normal((rows, columns)),))
    text = f.lower(RNG.standard_normal((6, 5))).as_text("fused")
    assert "n0 = x.shape[0]" in text and "n1 = x.shape[1]" in text


def test_class_kernels_read_strided_and_reversed_arguments():
    f = autofuse.jit(cumsum_rows, backend="cpu")
    for n in (5, 6, 8):
        _check(cumsum_rows, f, (RNG.standard_normal((n, 16)),))
    compiles = f.cache_info().compiles
    base = RNG.standard_normal((40, 32))
    for view in (base[::2, ::2], base[::-3, 5:21], base[:9, :16].T[:, :9].T):
        _check(cumsum_rows, f, (view,))
    _check(cumsum_rows, f, (RNG.standard_normal((11, 16)),))
    assert f.cache_info().compiles > compiles        # (strided layouts compile on their own)


def test_a_bounds_error_names_the_calls_own_shapes():
    f = autofuse.jit(take_rows, backend="cpu")
    for n in (5, 6):
        _check(take_rows, f, (TABLE, RNG.integers(0, 20, n)))
    with pytest.raises(autofuse.OutOfBoundsError, match=r"indices \(7,\)"):
        f(TABLE, np.full(7, 25))
    assert f.cache_info().compiles == 2


def test_a_count_of_the_batch_is_a_size_form():
    """A mean's divisor over a dynamic axis (and the size itself used as a value) is written as
    a form of the size, `as_f64((6 * n0))`: the program stays one class. Sizes 0 and 1 compile
    apart where the simplifier folds a reduction over one element (the text says why); the
    first call's size compiles before the dimension turns dynamic."""
    def mse(x):
        return ((x - 1.0) ** 2).mean()

    def column_mean(x):
        return x.mean(axis=0) + x.sum(axis=0) / x.shape[0]
    for fn, most in ((mse, 2), (column_mean, 4)):
        f = autofuse.jit(fn, backend="cpu")
        for n in (0, 1, 2, 3, 4, 5, 9, 17, 64, 1000):
            _check(fn, f, (RNG.standard_normal((n, 6)),))
        assert f.cache_info().compiles <= most, (fn.__name__, f.cache_info())
        lowered = f.lower(RNG.standard_normal((9, 6)))
        assert "# dynamic: n0 = x.shape[0]" in lowered.as_text("fused")
        assert "n0" in lowered.kernels[-1].source


def test_a_float32_mean_past_the_exact_integers_is_one_class():
    """The count is fitted from the whole number it was traced from, not from its float32 value
    (2^24 and more elements round), and a reduction over every axis splits at every size."""
    def mse(x):
        return ((x - np.float32(1)) ** 2).mean()
    f = autofuse.jit(mse, backend="cpu")
    for n in (65536, 65537, 70001, 3, 0):
        x = RNG.standard_normal((n, 256)).astype(np.float32)
        with np.errstate(all="ignore"):
            want = mse(x)
        np.testing.assert_allclose(f(x), want, rtol=1e-5)
    assert f.cache_info().compiles <= 2, f.cache_info()


def test_a_gathered_tables_rows_bound_the_check_at_each_size():
    """The table's rows are the bound of the indices' check (a constant of the program): as a
    count it is a form of the size, so the rows are dynamic and the check is each call's."""
    def gather_from(table, i):
        return np.take(table, i, axis=0) * 2
    g = autofuse.jit(gather_from, backend="cpu")
    for rows in (5, 6, 7, 20, 2, 1):
        table = RNG.standard_normal((rows, 3))
        _check(gather_from, g, (table, np.array([0, rows - 1, -1, -rows])))
        for bad in (rows, -rows - 1):
            with pytest.raises(autofuse.OutOfBoundsError, match=f"axis 0 with size {rows} "):
                g(table, np.array([bad, 0, 0, 0]))
    text = g.lower(RNG.standard_normal((7, 3)), np.arange(4)).as_text("fused")
    assert "# dynamic: n0 = table.shape[0]" in text and "DTypeError" not in text


def test_debug_names_the_class_and_the_calls_sizes(capsys):
    f = autofuse.jit(sort_rows, backend="cpu")
    f(RNG.standard_normal((4, 16)).astype(np.float32))
    with autofuse.debug(1):
        f(RNG.standard_normal((6, 16)).astype(np.float32))
        f(RNG.standard_normal((6, 16)).astype(np.float32))
        f(RNG.standard_normal((3, 16)).astype(np.float32))
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[autofuse]")]
    assert len(lines) == 2
    assert lines[0].startswith("[autofuse] compile sort_rows(f32[6,16])")
    assert lines[1].startswith("[autofuse] cache hit sort_rows(f32[3,16])")
    assert all("(shape class sort_rows(f32[n0,16]): n0 = x.shape[0])" in line for line in lines)
