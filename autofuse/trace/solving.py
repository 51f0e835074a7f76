"""np.linalg.solve, inv, det, slogdet and cholesky of stacks of small matrices (n <= MAX_N),
with NumPy's dtypes, broadcasting and errors around the unrolled factorizations of
trace/elimination.py; a singular (or, for cholesky, not positive definite) matrix is found by
the program and raises LinAlgError after the call, as NumPy raises it."""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, LinAlgError, ShapeError, UnsupportedError, describe, where
from . import checks
from .creation import full
from .elimination import MAX_N, back_substitute, cholesky_lower, entries, factor
from .layout import as_tracer, astype, broadcast_to, stack
from .tracer import Tracer


def solve(a, b) -> Tracer:
    what = "np.linalg.solve"
    a, b = _operands(what, a, b)
    n = _square(what, a, describe(a))
    vector = b.ndim == 1          # NumPy 2: b is one vector only when it is 1-d, else (..., n, k)
    if vector:
        core, signature = b.shape, "(m,m),(m)->(m)"
    else:
        if b.ndim < 2:
            raise LinAlgError(f"{what}: {b.ndim}-dimensional array given. Array must be at least "
                              f"two-dimensional (b: {describe(b)}){where()}")
        core, signature = b.shape[-2:], "(m,m),(m,n)->(m,n)"
    if core[0] != n:
        raise ShapeError(f"{what}: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {signature} (size {core[0]} is different from {n}) "
                         f"(a: {describe(a)}, b: {describe(b)}){where()}")
    batch = _batch(what, a.shape[:-2], b.shape[:-len(core)], a, b)
    shape = batch + tuple(core)
    if 0 in shape:
        return full(shape, 0, a.dtype, what=what)
    right = [[b[..., i]] for i in range(n)] if vector else entries(b)
    factored = factor(entries(a), right)
    _raise_if_singular(what, factored.singular, a)
    solution = back_substitute(factored.upper, factored.right)
    result = _assemble(solution, batch)
    return result[..., 0] if vector else result


def inv(a) -> Tracer:
    what = "np.linalg.inv"
    (a,) = _operands(what, a)
    n = _square(what, a, describe(a))
    if a.size == 0:
        return full(a.shape, 0, a.dtype, what=what)
    zero, one = (full((), v, a.dtype, what=what) for v in (0, 1))
    identity = [[one if i == j else zero for j in range(n)] for i in range(n)]
    factored = factor(entries(a), identity)
    _raise_if_singular(what, factored.singular, a)
    return _assemble(back_substitute(factored.upper, factored.right), a.shape[:-2])


def slogdet(a) -> tuple[Tracer, Tracer]:
    """(sign, logabsdet) as a plain tuple (NumPy returns the named tuple SlogdetResult)."""
    what = "np.linalg.slogdet"
    (a,) = _operands(what, a)
    _square(what, a, describe(a))
    if a.shape[-1] == 0 or a.size == 0:
        return full(a.shape[:-2], 1, a.dtype, what=what), full(a.shape[:-2], 0, a.dtype, what=what)
    factored = factor(entries(a), [[] for _ in range(a.shape[-1])])
    pivots = [row[0] for row in factored.upper]
    sign = np.sign(pivots[0])
    for pivot in pivots[1:]:
        sign = sign * np.sign(pivot)
    if factored.odd is not False:
        sign = np.where(factored.odd, -sign, sign)
    logabsdet = np.log(abs(pivots[0]))
    for pivot in pivots[1:]:
        logabsdet = logabsdet + np.log(abs(pivot))
    return _over(sign, a.shape[:-2]), _over(logabsdet, a.shape[:-2])


def det(a) -> Tracer:
    """The product of LU's pivots with the sign of its row swaps (NumPy computes sign *
    exp(logabsdet): the same value up to rounding, a zero where a pivot is zero)."""
    what = "np.linalg.det"
    (a,) = _operands(what, a)
    _square(what, a, describe(a))
    if a.shape[-1] == 0 or a.size == 0:
        return full(a.shape[:-2], 1, a.dtype, what=what)
    factored = factor(entries(a), [[] for _ in range(a.shape[-1])])
    product = factored.upper[0][0]
    for row in factored.upper[1:]:
        product = product * row[0]
    if factored.odd is not False:
        product = np.where(factored.odd, -product, product)
    return _over(product, a.shape[:-2])


def cholesky(a, /, *, upper=False) -> Tracer:
    """L (lower, L @ L.T = a) from a's lower triangle, or with upper=True U = L.T from a's upper
    triangle, as LAPACK's potrf reads only that triangle."""
    what = "np.linalg.cholesky"
    if isinstance(upper, Tracer):
        upper = upper._concrete(f"{what}: upper")
    (a,) = _operands(what, a)
    n = _square(what, a, describe(a))
    if a.size == 0:
        return full(a.shape, 0, a.dtype, what=what)
    lower, failed = cholesky_lower(entries(a, transpose=bool(upper)))
    checks.raise_if(failed, LinAlgError,
                    f"{what}: Matrix is not positive definite (a: {describe(a)}){where()}")
    zero = full((), 0, a.dtype, what=what)
    rows = [[lower[i][j] if j <= i else zero for j in range(n)] for i in range(n)]
    if upper:
        rows = [list(column) for column in zip(*rows)]
    return _assemble(rows, a.shape[:-2])


def _operands(what: str, *arrays) -> list[Tracer]:
    """The arrays in NumPy's linalg dtype: float32 where every one is float32, else float64
    (integers and bools too); complex is not supported here, float16 NumPy refuses."""
    arrays = [as_tracer(x, what) for x in arrays]
    dtype = np.dtype(np.float32)
    for x in arrays:
        if x.dtype.kind == "c":
            raise UnsupportedError(f"{what}: complex matrices ({describe(x)}) are not supported; "
                                   f"only real ones (float32, float64, ints){where()}")
        if x.dtype.kind == "f" and x.dtype not in (np.float32, np.float64):
            raise DTypeError(f"{what}: array type {x.dtype.name} is unsupported in linalg"
                             f"{where()}")
        if x.dtype != np.float32:
            dtype = np.dtype(np.float64)
    return [astype(x, dtype, copy=False) for x in arrays]


def _square(what: str, a: Tracer, shapes: str) -> int:
    """n of a stack of n x n matrices: NumPy's LinAlgErrors for others, UnsupportedError past
    MAX_N."""
    if a.ndim < 2:
        raise LinAlgError(f"{what}: {a.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional ({shapes}){where()}")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{what}: Last 2 dimensions of the array must be square ({shapes})"
                          f"{where()}")
    n = a.shape[-1]
    if n > MAX_N:
        raise UnsupportedError(f"{what}: matrices up to {MAX_N}x{MAX_N} are supported, got "
                               f"{n}x{n} ({shapes}): autofuse unrolls the elimination at trace "
                               f"time, which grows as n^3{where()}")
    return n


def _batch(what: str, first: tuple, second: tuple, a, b) -> tuple:
    try:
        return np.broadcast_shapes(first, second)
    except ValueError:
        raise ShapeError(f"{what}: operands could not be broadcast together: the stacks of a "
                         f"{list(first)} and of b {list(second)} (a: {describe(a)}, b: "
                         f"{describe(b)}){where()}") from None


def _raise_if_singular(what: str, singular, a: Tracer) -> None:
    if singular is not False:
        checks.raise_if(singular, LinAlgError, f"{what}: Singular matrix (a: {describe(a)}){where()}")


def _over(x: Tracer, batch: tuple) -> Tracer:
    return x if x.shape == batch else broadcast_to(x, batch)


def _assemble(rows: list, batch: tuple) -> Tracer:
    """The stack (..., rows, columns) whose entries are `rows` (each of the batch shape or
    broadcasting to it)."""
    return stack([stack([_over(x, batch) for x in row], -1) for row in rows], -2)


FUNCTIONS = {np.linalg.solve: solve, np.linalg.inv: inv, np.linalg.det: det,
             np.linalg.slogdet: slogdet, np.linalg.cholesky: cholesky}
