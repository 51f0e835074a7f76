"""`select(condition, a, b)`: `a` where `condition` holds, else `b`, as one LLVM `select`, for
the op table's spellings (np.where, NaN-aware maximum and minimum, sign) in generated CPU and CUDA
code.

Python's `a if c else b` (and `and` / `or`) is control flow to numba: every one is three basic
blocks before LLVM folds them back into a select. numba's front end costs grow faster than the
number of blocks (SSA reconstruction and liveness walk every block for every variable), so a
kernel of many `np.where` elements spent most of its compile there: Game of Life's 782-line
stencil kernel took 5.2 s to PTX, 2.9 s with selects and `&` / `|` (2-core development machine).
Both operands are evaluated, so spellings use it only where both are plain values; guarded
loads and divisions keep the conditional expression.

`select_python` is the same for numba's CUDA simulator, which runs kernels as Python.
"""
from __future__ import annotations

from numba import types
from numba.core.extending import intrinsic


@intrinsic
def select(typingctx, condition, a, b):
    """`a` if `condition` else `b`, both evaluated; the result has a and b's unified type."""
    a_type, b_type = types.unliteral(a), types.unliteral(b)
    result = a_type if a_type == b_type else typingctx.unify_pairs(a_type, b_type)
    if result is None or isinstance(result, (types.Optional, types.Undefined)):
        return None

    def codegen(context, builder, signature, args):
        test = context.cast(builder, args[0], signature.args[0], types.boolean)
        first = context.cast(builder, args[1], signature.args[1], result)
        second = context.cast(builder, args[2], signature.args[2], result)
        return builder.select(test, first, second)
    return result(condition, a, b), codegen


def select_python(condition, a, b):
    """select under numba's CUDA simulator."""
    return a if condition else b
