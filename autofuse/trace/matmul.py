"""np.matmul, np.dot and `@`: vectors, matrices, mat-vec and batched stacks, as one IR matmul."""
from __future__ import annotations

import numpy as np

from ..errors import DTypeError, ShapeError, UnsupportedError, where
from .context import current
from .layout import as_tracer, broadcast_to, reshape
from .tracer import Tracer, fresh
from .ufuncs import apply, to_node


def matmul(a, b, what="np.matmul") -> Tracer:
    a, b = as_tracer(a, what), as_tracer(b, what)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"{what}: input operand {0 if a.ndim == 0 else 1} does not have enough "
                         f"dimensions (shapes {a.shape} and {b.shape}){where()}")
    try:
        loop = np.matmul.resolve_dtypes((a.dtype, b.dtype, None))
    except TypeError:
        raise DTypeError(f"{what} is not defined for {a.dtype} and {b.dtype}{where()}") from None
    dtype = np.dtype(loop[-1])
    a2 = a if a.ndim >= 2 else reshape(a, (1, a.shape[0]), what)
    b2 = b if b.ndim >= 2 else reshape(b, (b.shape[0], 1), what)
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"{what}: shapes {a.shape} and {b.shape} are not aligned: {a2.shape[-1]} "
                         f"(last axis of the first) != {b2.shape[-2]} (second-to-last of the second)"
                         f"{where()}")
    try:
        batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
    except ValueError:
        raise ShapeError(f"{what}: batch dimensions of {a.shape} and {b.shape} do not broadcast"
                         f"{where()}") from None
    if a2.shape[:-2] != batch:
        a2 = broadcast_to(a2, batch + a2.shape[-2:], what)
    if b2.shape[:-2] != batch:
        b2 = broadcast_to(b2, batch + b2.shape[-2:], what)
    node = current().emit("matmul", [to_node(a2, dtype, what), to_node(b2, dtype, what)])
    shape = node.shape
    if b.ndim == 1:
        shape = shape[:-1]
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:] if b.ndim > 1 else shape[:-1]
    if shape != node.shape:
        node = current().emit("reshape", [node], {"shape": shape})
    return fresh(node, scalar=node.ndim == 0)


def dot(a, b) -> Tracer:
    """np.dot: a product for scalars; matmul where the second operand has at most 2 dimensions."""
    a, b = as_tracer(a, "np.dot"), as_tracer(b, "np.dot")
    if a.ndim == 0 or b.ndim == 0:
        return apply("multiply", a, b)
    if b.ndim > 2:
        raise UnsupportedError(f"np.dot with a {b.ndim}-D second operand (shape {b.shape}) is not "
                               f"supported; use np.matmul for stacks of matrices{where()}")
    return matmul(a, b, "np.dot")
