"""Elementwise calls: NumPy's dtype resolution (NEP 50), broadcasting checks, casts and `out=`."""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, DTypeError, NumPyValueError, ShapeError, UnsupportedError, where
from ..ir.infer import same_shape, ufunc_loop
from ..ir.graph import Node
from ..ir.ops import takes_complex
from .context import check_dtype, current
from .tracer import Tracer, fresh

_WEAK_TYPES = (int, float, complex)
_PYTHON_DTYPES = {int: np.int64, float: np.float64, complex: np.complex128}


def operand_type(x, what: str):
    """The dtype NumPy resolves an operand by: a dtype, or int/float/complex for a weak Python
    scalar."""
    if isinstance(x, Tracer):
        return x.weak if x.weak in _WEAK_TYPES else x.dtype
    if isinstance(x, bool) or isinstance(x, np.bool_):
        return np.dtype(bool)
    if isinstance(x, _WEAK_TYPES) and not isinstance(x, np.generic):
        # (an int subclass, such as a traced size, resolves as int)
        return next(t for t in _WEAK_TYPES if isinstance(x, t))
    if isinstance(x, (np.ndarray, np.generic)):
        return check_dtype(x.dtype, what)
    if isinstance(x, (list, tuple)):
        return check_dtype(np.asarray(x).dtype, what)
    raise ArgumentError(f"{what}: cannot trace an operand of type {type(x).__name__}{where()}")


def to_node(x, dtype, what: str) -> Node:
    """`x` as a node of `dtype`: casts traced values, makes constants of Python and NumPy values."""
    ctx = current()
    dtype = np.dtype(dtype)
    if isinstance(x, Tracer):
        node = x.node
        if node.dtype != dtype:
            if x.weak is int and dtype.kind in "iu" and x._buffer.node.op == "input":
                index = x._buffer.node.attrs["index"]
                narrowest = ctx.weak_int_casts.get(index)
                if narrowest is None or dtype.itemsize < narrowest.itemsize:
                    ctx.weak_int_casts[index] = dtype
            node = ctx.emit("cast", [node], {"dtype": dtype})
        return node
    if isinstance(x, (int, float, bool, complex)) and not isinstance(x, np.generic):
        try:
            value = np.asarray(x, dtype=dtype)
        except OverflowError as error:
            raise DTypeError(f"{what}: {error}{where()}") from None
        # NOTE: a traced size (dynamic/sizes.Size: an int with the symbols it came from)
        sized = getattr(x, "symbols", None) and dtype.kind in "if"
        return ctx.constant(value, count=int.__int__(x) if sized else None)
    return ctx.constant(np.asarray(x).astype(dtype))


def result_shape(what: str, *shapes) -> tuple:
    common = same_shape(shapes)
    if common is not None:
        return common
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        text = " ".join(str(tuple(s)) for s in shapes)
        raise ShapeError(f"{what}: operands could not be broadcast together with shapes {text}"
                         f"{where()}") from None


def _shape_of(x):
    return tuple(getattr(x, "shape", ()) if not isinstance(x, (list, tuple)) else np.shape(x))


def wrap_result(node: Node, operands) -> Tracer:
    """A fresh array holding `node`: a NumPy scalar where every operand was 0-d (NumPy's rule)."""
    scalar = node.ndim == 0 and all(_shape_of(x) == () for x in operands)
    return fresh(node, scalar=scalar)


_PYTHON_TYPES = {"c": complex, "f": float, "i": int, "u": int, "b": bool}
# Python's bool keeps these operators; every other operator computes on bools as ints
_BOOL_OPERATORS = {"bitwise_and", "bitwise_or", "bitwise_xor", "less", "less_equal", "greater",
                   "greater_equal", "equal", "not_equal"}


def is_python_scalar(x) -> bool:
    """A Python bool/int/float, or a traced one (a weak scalar argument or a result computed
    from them by Python operators)."""
    if isinstance(x, Tracer):
        return x.weak is not None
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _as_python_int(x):
    """A Python bool operand as Python's arithmetic sees it: an int."""
    if isinstance(x, Tracer) and x.weak is bool:
        node = current().emit("cast", [x.node], {"dtype": np.dtype(np.int64)})
        return fresh(node, weak=int)
    if isinstance(x, bool):
        return int(x)
    return x


def apply_operator(name: str, *operands) -> Tracer:
    """A Python operator (+, <, ~, ...): NumPy's ufunc `name`, except that when every operand is a
    Python scalar the result is the Python scalar Python computes (True + True == 2)."""
    if not any(isinstance(x, Tracer) for x in operands) or \
            not all(is_python_scalar(x) for x in operands):
        return apply(name, *operands)
    if name not in _BOOL_OPERATORS:
        operands = tuple(_as_python_int(x) for x in operands)
    result = apply(name, *operands)
    return fresh(result.node, weak=_PYTHON_TYPES[result.dtype.kind])


def apply(name: str, *operands, out=None, dtype=None, casting="same_kind"):
    """Trace NumPy's ufunc `name` on `operands` (with its `out=` and `dtype=` keywords)."""
    ufunc = getattr(np, name)
    what = f"np.{name}"
    if len(operands) != ufunc.nin:
        raise ArgumentError(f"{what} takes {ufunc.nin} operands, got {len(operands)}{where()}")
    types = tuple(operand_type(x, what) for x in operands)
    if all(isinstance(t, type) for t in types):
        # NOTE: NumPy converts all-Python-scalar operands to arrays first (int -> int64, float ->
        # float64); resolve_dtypes would pick its object loop for two Python ints instead.
        types = tuple(np.dtype(_PYTHON_DTYPES[t]) for t in types)
    signature = None if dtype is None else (None,) * ufunc.nin + (check_dtype(dtype, what),)
    try:
        if signature is None:
            loop = ufunc_loop(name, types)
        else:
            loop = tuple(np.dtype(d) for d in ufunc.resolve_dtypes(types + (None,), signature=signature))
    except TypeError:
        names = ", ".join(t.__name__ if isinstance(t, type) else str(t) for t in types)
        raise DTypeError(f"{what} is not defined for operands of type {names}{where()}") from None
    result_shape(what, *(_shape_of(x) for x in operands))
    refuse_complex(name, loop, what)
    if name == "power" and loop[1].kind == "i":
        _check_exponent(operands[1], what)
    nodes = [to_node(x, dt, what) for x, dt in zip(operands, loop[:-1])]
    node = current().emit(name, nodes)
    if out is not None:
        return write_out(node, out, what, casting)
    return wrap_result(node, operands)


def refuse_complex(name: str, dtypes, what: str) -> None:
    """UnsupportedError where op `name` would compute on complex operands it has no spelling for
    (NumPy orders complex numbers lexicographically; autofuse does not)."""
    if any(np.dtype(dtype).kind == "c" for dtype in dtypes) and not takes_complex(name):
        raise UnsupportedError(f"{what} of complex operands is not supported by autofuse (ordering "
                               f"and rounding of complex numbers are not); compare or round "
                               f"np.real(z) and np.imag(z), or np.abs(z){where()}")


def _check_exponent(exponent, what: str) -> None:
    """NumPy refuses integers to negative integer powers: refuse exponents known now, and have the
    jit check a Python int argument used directly as the exponent on each call."""
    message = f"{what}: Integers to negative integer powers are not allowed.{where()}"
    if isinstance(exponent, Tracer):
        node = exponent.node
        if node.op == "constant":
            if np.any(node.attrs["value"].array < 0):
                raise NumPyValueError(message)
        elif exponent.weak is int and node.op == "input":
            current().nonnegative.add(node.attrs["index"])
        elif exponent.dtype.kind == "i":
            from . import checks
            checks.nonnegative_exponent(exponent, message)
        return
    if np.any(np.asarray(exponent) < 0):
        raise NumPyValueError(message)


def write_out(node: Node, out, what: str, casting: str = "same_kind"):
    """Store `node` into the traced array `out` as NumPy's `out=` does; returns `out`."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise UnsupportedError(f"{what}: out= with {len(out)} arrays{where()}")
        (out,) = out
    if not isinstance(out, Tracer) or out.weak is not None or out.scalar:
        raise ArgumentError(f"{what}: out= must be an array made or passed in the traced function, "
                            f"got {type(out).__name__}{where()}")
    if casting != "unsafe" and not np.can_cast(node.dtype, out.dtype, casting=casting):
        raise DTypeError(f"{what}: cannot cast the result from {node.dtype} to the out= array's "
                         f"{out.dtype} with casting rule '{casting}'{where()}")
    shape = result_shape(what, node.shape, out.shape)
    if shape != out.shape:
        raise ShapeError(f"{what}: result of shape {node.shape} does not fit out= of shape "
                         f"{out.shape}{where()}")
    ctx = current()
    if node.dtype != out.dtype:
        node = ctx.emit("cast", [node], {"dtype": out.dtype})
    if node.shape != out.shape:
        node = ctx.emit("broadcast_to", [node], {"shape": out.shape})
    out.assign(node, what)
    return out
