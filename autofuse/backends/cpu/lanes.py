"""What a row reduction's lanes (rows.py) need from LLVM beyond numba's arrays: a buffer on the
stack and a loop bound it cannot see through.

The lanes of a row reduction are a small buffer of accumulators the innermost loop vectorizes
over. In an array from `np.empty` (heap memory that LLVM must assume may alias the arrays the
loop reads) they are loaded and stored at every block of the row, unless LLVM unrolls the loop
over the row's blocks in full, which it does wherever the row length is a constant number: then
it forwards every store to the next load, at the price of a body of row-length statements
(layernorm over 1024x1024 float32: 13.6 s of compile, 13 s of it LLVM's). `stack_array` makes
the buffer an `alloca`, which LLVM knows nothing else reads, so it keeps the lanes in registers
across a loop of any length; `opaque` hides the constant bound, so that loop stays a loop.

Imported by the generated modules that use them (cpu/__init__.module_text).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def stack_array(typingctx, count, dtype):
    """`np.empty(count, dtype)` in the function's stack frame (its entry block: one buffer a
    call, reused by every iteration). `count` a literal integer, small (a row's lanes)."""
    if not isinstance(count, types.IntegerLiteral):
        return None
    if not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    element = dtype.dtype
    array_type = types.Array(element, 1, "C")
    size = count.literal_value

    def codegen(context, builder, signature, args):
        stored = context.get_data_type(element)
        data = cgutils.alloca_once(builder, stored, size=size)
        array = context.make_array(array_type)(context, builder)
        item = context.get_abi_sizeof(stored)
        intp = context.get_value_type(types.intp)
        context.populate_array(array, data=data, shape=[intp(size)], strides=[intp(item)],
                               itemsize=intp(item), meminfo=None)
        return array._getvalue()
    return array_type(count, dtype), codegen


@intrinsic
def opaque(typingctx, value):
    """`value` through an empty inline assembly statement, which LLVM cannot fold: a constant loop
    bound it then does not unroll in full."""
    if not isinstance(value, types.Integer):
        return None
    integer = types.unliteral(value)

    def codegen(context, builder, signature, args):
        kind = args[0].type
        return builder.asm(ir.FunctionType(kind, [kind]), "", "=r,0", [args[0]],
                           side_effect=False)
    return integer(integer), codegen
