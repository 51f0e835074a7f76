"""np.cov and np.corrcoef as NumPy computes them: centre the rows, one matmul, scale; corrcoef
divides by the standard deviations read off the diagonal (a strided slice of the flat matrix)."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError, where
from .indexing import getitem
from .layout import as_tracer, astype, concatenate, reshape, squeeze, transpose
from .matmul import matmul
from .reductions import mean
from .tracer import Tracer, fresh
from .context import current
from . import ufuncs


def _rows(value: Tracer, dtype, what: str) -> Tracer:
    """np.array(value, ndmin=2, dtype=dtype)."""
    if value.ndim > 2:
        raise ShapeError(f"{what}: m has more than 2 dimensions (shape {value.shape}){where()}")
    x = astype(value, dtype, copy=False)
    if x.ndim < 2:
        x = reshape(x, (1,) * (2 - x.ndim) + x.shape, what)
    return x


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None) -> Tracer:
    what = "np.cov"
    for value in (rowvar, bias, ddof):
        if isinstance(value, Tracer):
            value._concrete(f"{what}: rowvar, bias and ddof")
    if fweights is not None or aweights is not None:
        raise UnsupportedError(f"{what}: fweights= and aweights= are not supported{where()}")
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"{what}: ddof must be integer{where()}")
    m_ = as_tracer(m, what)
    operands = [m_] + ([as_tracer(y, what)] if y is not None else [])
    if dtype is None:
        dtype = np.result_type(*(t.dtype for t in operands), np.float64)
    X = _rows(m_, dtype, what)
    if not rowvar and m_.ndim != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return fresh(current().constant(np.array([]).reshape(0, 0)))
    if y is not None:
        Y = _rows(operands[1], dtype, what)
        if not rowvar and Y.shape[0] != 1:
            Y = transpose(Y)
        X = concatenate([X, Y], 0, what)
    if ddof is None:
        ddof = 0 if bias else 1
    centred = ufuncs.apply("subtract", X, mean(X, axis=1, keepdims=True))
    fact = X.shape[1] - ddof
    if fact <= 0:
        fact = 0.0
    with np.errstate(divide="ignore"):
        factor = np.true_divide(1, fact)
    other = transpose(centred)
    if other.dtype.kind == "c":                 # NumPy's X @ X.T.conj()
        other = ufuncs.apply("conjugate", other)
    product = matmul(centred, other, what)
    scaled = astype(ufuncs.apply("multiply", product, factor), product.dtype, copy=False)
    return squeeze(scaled)


def corrcoef(x, y=None, rowvar=True, bias=np._NoValue, ddof=np._NoValue, *, dtype=None) -> Tracer:
    what = "np.corrcoef"
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ufuncs.apply("divide", c, c)
    size = c.shape[0]
    diagonal = getitem(reshape(c, (size * size,), what), slice(None, None, size + 1))
    stddev = ufuncs.apply("sqrt", diagonal)
    c = ufuncs.apply("divide", c, reshape(stddev, (size, 1), what))
    c = ufuncs.apply("divide", c, reshape(stddev, (1, size), what))
    return ufuncs.apply("minimum", ufuncs.apply("maximum", c, -1), 1)
