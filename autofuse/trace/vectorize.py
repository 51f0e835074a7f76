"""np.vectorize(pyfunc)(...) on traced arrays: pyfunc called once on the whole (broadcast) arrays.

NumPy calls pyfunc element by element. Calling it on whole arrays is the same exactly when every
op it makes is elementwise, so the ops the call recorded are checked: elementwise ops, constants
and broadcasts only, and a result of the arguments' broadcast shape. Otherwise (a reduction, a
slice, a sort of its argument) pyfunc is traced once per element, up to MAX_ELEMENTS; past that
the call is refused, saying why. NumPy hands pyfunc NumPy scalars, so Python scalar arguments
are taken as NumPy's (strong) types here, as NumPy's conversion makes them. The outputs' dtypes
are those pyfunc gives on the first elements (`otypes` where given); the values are computed as
NumPy's object loop computes them, on Python floats, ints and complexes (float64, int64,
complex128), and cast to those dtypes. pyfunc must be
traceable: NumPy functions and operators (np.where for an `if`, np.exp for math.exp: math.* and
Python control flow need values a trace does not know). `otypes` casts the results, `excluded`
arguments are passed as they are; `signature=` (core dimensions) is refused.
"""
from __future__ import annotations

import numpy as np

from ..errors import NumPyValueError, TraceError, UnsupportedError, ValueNeeded, where
from ..ir.ops import ELEMENTWISE, OPS
from .batching import recorded
from .layout import as_tracer, astype, broadcast_to, reshape, stack
from .tracer import Tracer, fresh
from . import ufuncs

MAX_ELEMENTS = 64      # elements traced one by one where pyfunc is not elementwise
_ALLOWED = ("constant", "broadcast_to")


def call(vectorized: np.vectorize, args: tuple, kwargs: dict):
    what = "np.vectorize"
    name = getattr(vectorized.pyfunc, "__name__", "pyfunc")
    if vectorized.signature is not None:
        raise UnsupportedError(
            f"{what}: signature={vectorized.signature!r} (core dimensions) is not supported"
            f"{where()}\n  for one core axis use np.apply_along_axis, or write {name} for the "
            f"last axis of a stack (axis=-1)")
    excluded = vectorized.excluded
    positions = [i for i in range(len(args)) if i not in excluded]
    names = [key for key in kwargs if key not in excluded]
    operands = [_strong(as_tracer(args[i], what)) for i in positions] + \
        [_strong(as_tracer(kwargs[key], what)) for key in names]
    shape = ufuncs.result_shape(what, *(o.shape for o in operands))
    otypes = [np.dtype(t) for t in vectorized.otypes] if vectorized.otypes else None
    if not operands:
        raise UnsupportedError(f"{what}: a call with no array arguments{where()}")
    if 0 in shape and otypes is None:
        raise NumPyValueError(f"{what}: cannot call `vectorize` on size 0 inputs unless `otypes` "
                              f"is set{where()}")

    def run(values):
        given, named = list(args), dict(kwargs)
        for i, value in zip(positions + names, values):
            if isinstance(i, int):
                given[i] = value
            else:
                named[i] = value
        try:
            out = vectorized.pyfunc(*given, **named)
        except ValueNeeded:
            raise
        except TraceError as error:
            raise TraceError(f"{what}: {name} is called with traced arrays, so it must be "
                             f"written with NumPy functions and operators (np.where for an `if`,"
                             f" np.exp for math.exp): {error}") from error
        outs = out if isinstance(out, tuple) else (out,)
        return [as_tracer(o, what) for o in outs], isinstance(out, tuple)

    if otypes is None:      # NumPy's: the types of pyfunc's outputs on the first elements
        firsts, _ = run([o[(0,) * o.ndim] for o in operands])
        otypes = [o.dtype for o in firsts]
    (outs, several), nodes = recorded(lambda: run([_as_python(o) for o in operands]))
    reason = _not_elementwise(nodes, outs, shape)
    if reason is None:
        outs = [o if o.shape == shape else broadcast_to(o, shape, what) for o in outs]
    elif int(np.prod(shape)) <= MAX_ELEMENTS:
        outs = _unrolled(run, [_as_python(o) for o in operands], shape, outs)
    else:
        raise UnsupportedError(
            f"{what}: {name} is not elementwise ({reason}), and the arguments broadcast to "
            f"{shape}, more elements than the {MAX_ELEMENTS} autofuse traces one by one"
            f"{where()}\n  write it with elementwise NumPy operations (np.where for choices)")
    if len(otypes) != len(outs):
        raise NumPyValueError(f"{what}: {name} gave {len(outs)} outputs, otypes names "
                              f"{len(otypes)}{where()}")
    outs = [astype(o, t, copy=False) for o, t in zip(outs, otypes)]
    results = [fresh(o.node) for o in outs]       # arrays, 0-d too, as NumPy's vectorize gives
    return tuple(results) if several else results[0]


def _as_python(x: Tracer) -> Tracer:
    """The values as the Python objects NumPy's object loop hands pyfunc: float64, complex128,
    int64 (a Python int), bool."""
    kind = x.dtype.kind
    dtype = {"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.int64}.get(kind)
    return x if dtype is None or x.dtype == dtype else astype(x, dtype)


def _strong(x: Tracer) -> Tracer:
    return fresh(x.node) if x.weak is not None else x


def _not_elementwise(nodes, outs, shape) -> str | None:
    for node in nodes:
        if node.op not in _ALLOWED and OPS[node.op].kind != ELEMENTWISE:
            return f"it computes {node.op}"
    for out in outs:
        if len(out.shape) > len(shape) or np.broadcast_shapes(out.shape, shape) != shape:
            return f"it returns shape {out.shape} for arguments of shape {shape}"
    return None


def _unrolled(run, operands, shape, first_outs) -> list[Tracer]:
    """pyfunc traced on each element (0-d arrays), each output stacked into `shape`, in the
    dtype of the first element's output (NumPy's otypes from its first call)."""
    spread = [broadcast_to(o, shape, "np.vectorize") if o.shape != shape else o
              for o in operands]
    per_element = []
    for index in np.ndindex(*shape):
        outs, _ = run([o[index] for o in spread])
        per_element.append(outs)
    if not per_element:
        return first_outs
    results = []
    for k in range(len(per_element[0])):
        dtype = per_element[0][k].dtype
        values = [reshape(astype(outs[k], dtype, copy=False), (), "np.vectorize")
                  for outs in per_element]
        results.append(reshape(stack(values, 0, "np.vectorize"), shape, "np.vectorize"))
    return results
