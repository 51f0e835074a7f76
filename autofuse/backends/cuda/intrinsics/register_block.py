"""A thread's block of matrix-product accumulators held in a local array, and one K step of its
outer product, as numba intrinsics: `filled(count)` sets the array's `count` elements to a value;
`outer_product(rows, cols)` reads `rows` values of A and `cols` of B from row k of two shared
slabs (A's at columns tm + spacing * i, B's at tn + spacing * j) and adds their products to the
accumulators, acc[i * cols + j] += a[i] * b[j], in that order (an fmul then an fadd, as numba
lowers `c += a * b`: NVVM contracts them to the same fma); `outer_values(rows, cols)` does the
same for values a kernel already read (the tiles and compact kernels' 16-byte shared loads).

Why: written out as Python statements, a slab of a 8 x 8 block is 16 shared reads and 64 `+=`
a K step, over a thousand statements for a 16-deep slab, and numba's front end (SSA, liveness,
typing, lowering) takes 10-25 s over them; as one call a K step it takes a fraction of that, and
NVVM receives the same arithmetic. Every index into the accumulators is a constant, so LLVM's
SROA keeps the array in registers (ptxas reports no local memory; tests/test_cuda_ptx.py).

Under numba's CUDA simulator the same names are plain Python over NumPy arrays
(register_block_simulator.py).
"""
from __future__ import annotations

from numba import config


def _intrinsics():
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic
    from numba.cuda import cgutils

    def element(context, builder, array_type, array, indices):
        """A pointer to array[indices] (no wraparound: every index is non-negative)."""
        made = context.make_array(array_type)(context, builder, array)
        return cgutils.get_item_pointer(context, builder, array_type, made, indices,
                                        wraparound=False)

    def accumulate(context, builder, acc_type, acc_value, a: list, b: list) -> None:
        """acc[i * len(b) + j] += a[i] * b[j] (an fmul then an fadd), every index a constant."""
        intp = context.get_value_type(types.intp)
        for i, left in enumerate(a):
            for j, right in enumerate(b):
                at = element(context, builder, acc_type, acc_value,
                             [ir.Constant(intp, i * len(b) + j)])
                builder.store(builder.fadd(builder.load(at), builder.fmul(left, right)), at)

    def index(context, builder, value, value_type):
        return context.cast(builder, value, value_type, types.intp)

    def filled(count: int):
        """fill(acc, value): acc[0 .. count) = value."""
        @intrinsic
        def fill(typingctx, acc, value):
            if not isinstance(acc, types.Array) or acc.dtype != value:
                return None

            def codegen(context, builder, signature, args):
                intp = context.get_value_type(types.intp)
                for i in range(count):
                    builder.store(args[1], element(context, builder, signature.args[0], args[0],
                                                   [ir.Constant(intp, i)]))
                return context.get_dummy_value()
            return types.void(acc, value), codegen
        return fill

    def outer_product(rows: int, cols: int):
        """outer(acc, sa, sb, k, tm, tn, spacing): acc[i * cols + j] += sa[k, tm + spacing * i]
        * sb[k, tn + spacing * j] for every i < rows, j < cols."""
        @intrinsic
        def outer(typingctx, acc, sa, sb, k, tm, tn, spacing):
            arrays = (acc, sa, sb)
            if not all(isinstance(a, types.Array) for a in arrays) or sa.ndim != 2 \
                    or sb.ndim != 2 or len({a.dtype for a in arrays}) != 1 \
                    or acc.dtype not in (types.float32, types.float64):
                return None

            def codegen(context, builder, signature, args):
                acc_type, sa_type, sb_type = signature.args[:3]
                acc_value, sa_value, sb_value = args[:3]
                k_at, tm_at, tn_at, step = (index(context, builder, value, kind) for value, kind
                                            in zip(args[3:], signature.args[3:]))
                intp = context.get_value_type(types.intp)

                def row(array_type, array, origin, count):
                    values = []
                    for i in range(count):
                        column = builder.add(origin, builder.mul(step, ir.Constant(intp, i)))
                        values.append(builder.load(element(context, builder, array_type, array,
                                                           [k_at, column])))
                    return values
                accumulate(context, builder, acc_type, acc_value,
                           row(sa_type, sa_value, tm_at, rows), row(sb_type, sb_value, tn_at, cols))
                return context.get_dummy_value()
            return types.void(acc, sa, sb, k, tm, tn, spacing), codegen
        return outer

    def outer_values(rows: int, cols: int):
        """outer(acc, a_0 .. a_{rows-1}, b_0 .. b_{cols-1}): acc[i * cols + j] += a_i * b_j, the
        values already in registers (read from shared memory by vector loads)."""
        @intrinsic
        def outer(typingctx, acc, *values):
            if not isinstance(acc, types.Array) or acc.dtype not in (types.float32, types.float64) \
                    or len(values) != rows + cols or any(v != acc.dtype for v in values):
                return None

            def codegen(context, builder, signature, args):
                acc_type, acc_value = signature.args[0], args[0]
                values = cgutils.unpack_tuple(builder, args[1])     # (the *values, a tuple)
                accumulate(context, builder, acc_type, acc_value, values[:rows], values[rows:])
                return context.get_dummy_value()
            return types.void(acc, types.StarArgTuple.from_types(values)), codegen
        return outer

    return {"filled": filled, "outer_product": outer_product, "outer_values": outer_values}


if config.ENABLE_CUDASIM:
    from .register_block_simulator import functions as _simulator_functions
    globals().update(_simulator_functions())
else:
    globals().update(_intrinsics())
