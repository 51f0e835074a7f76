"""Tensor cores in generated CUDA kernels: PTX `mma.sync` (one warp's tile product, mma_shapes.py
names each) and the conversions that feed it, as numba intrinsics through llvmlite inline PTX
(numba.cuda has no API for them; benchmarks/experiments/mma_probe.py measured the route).

- `mma_f64_m8n8k4((a,), (b,), (c0, c1)) -> (d0, d1)` and the other shapes of SHAPES: D = A x B
  + C on the registers the table lays out (tuples), every lane of the warp calling it together;
- `pack_halves(low, high)`: two float16 values (held as float32, or float16) as one 32-bit word,
  the low one first in memory order (an LLVM fptrunc, which NVVM folds with a load's widening);
- `tf32(x)`: x rounded to TF32 (cvt.rna.tf32.f32), the bits mma's .tf32 operands read;
- `tf32_split(x) -> (high, low)`: high = tf32(x), low = tf32(x - high), for "3xtf32" products.

Under numba's CUDA simulator the same names are mma_simulator.py's Python functions.
"""
from __future__ import annotations

from .mma_shapes import SHAPES

NAMES = (*SHAPES, "pack_halves", "tf32", "tf32_split")


def _intrinsics() -> dict:
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    f64, f32, u32 = ir.DoubleType(), ir.FloatType(), ir.IntType(32)
    llvm = {"f64": f64, "f32": f32, "u32": u32}
    numba_type = {"f64": types.float64, "f32": types.float32, "u32": types.uint32}
    letter = {"f64": "d", "f32": "f", "u32": "r"}

    def asm(builder, results: list, arguments: list, text: str, constraints: str, args) -> list:
        # NOTE: marked as having side effects, so LLVM never sinks a warp-wide mma into a
        # branch that only some lanes take (an epilogue's bounds check reading its result).
        struct = ir.LiteralStructType(results)
        call = builder.call(ir.InlineAsm(ir.FunctionType(struct, arguments), text, constraints,
                                         side_effect=True), args)
        return [builder.extract_value(call, i) for i in range(len(results))]

    def make_mma(shape):
        groups = [(shape.word, len(shape.a)), (shape.word, len(shape.b)),
                  (shape.accumulator, len(shape.c))]
        wanted = [types.UniTuple(numba_type[kind], count) for kind, count in groups]
        result = wanted[2]
        operands = [kind for kind, count in groups for _ in range(count)]
        constraints = ",".join([f"={letter[shape.accumulator]}"] * len(shape.c)
                               + [letter[kind] for kind in operands])

        def codegen(context, builder, sig, args):
            values = []
            for value, given, want in zip(args, sig.args, wanted):
                value = context.cast(builder, value, given, want)
                values += [builder.extract_value(value, i) for i in range(want.count)]
            d = asm(builder, [llvm[shape.accumulator]] * len(shape.c),
                    [llvm[kind] for kind in operands], shape.text, constraints, values)
            return context.make_tuple(builder, result, d)

        def mma(typingctx, a, b, c):
            given = (a, b, c)
            if not all(isinstance(x, types.BaseTuple) and len(x) == w.count
                       for x, w in zip(given, wanted)):
                return None
            return result(*given), codegen
        mma.__name__ = mma.__qualname__ = shape.name
        mma.__doc__ = f"{shape.ptx}: (A registers, B registers, C registers) -> D registers."
        return intrinsic(mma)

    @intrinsic
    def pack_halves(typingctx, low, high):
        if not all(isinstance(x, types.Float) for x in (low, high)):
            return None

        def codegen(context, builder, sig, args):
            words = []
            for value, given in zip(args, sig.args):
                half = value if given == types.float16 else builder.fptrunc(value, ir.HalfType())
                words.append(builder.zext(builder.bitcast(half, ir.IntType(16)), u32))
            return builder.or_(words[0], builder.shl(words[1], ir.Constant(u32, 16)))
        return types.uint32(low, high), codegen

    def rounded(builder, value):
        convert = ir.InlineAsm(ir.FunctionType(u32, [f32]), "cvt.rna.tf32.f32 $0, $1;", "=r,f")
        return builder.call(convert, [value])

    @intrinsic
    def tf32(typingctx, x):
        def codegen(context, builder, sig, args):
            return rounded(builder, context.cast(builder, args[0], sig.args[0], types.float32))
        return types.uint32(types.float32), codegen

    @intrinsic
    def tf32_split(typingctx, x):
        result = types.UniTuple(types.uint32, 2)

        def codegen(context, builder, sig, args):
            value = context.cast(builder, args[0], sig.args[0], types.float32)
            high = rounded(builder, value)
            low = rounded(builder, builder.fsub(value, builder.bitcast(high, f32)))
            return context.make_tuple(builder, result, [high, low])
        return result(types.float32), codegen

    functions = {name: make_mma(shape) for name, shape in SHAPES.items()}
    functions.update(pack_halves=pack_halves, tf32=tf32, tf32_split=tf32_split)
    return functions


def __getattr__(name: str):
    """The intrinsics, made on first use (PEP 562): importing this module imports no numba."""
    if name not in NAMES:
        raise AttributeError(name)
    from numba import config
    if config.ENABLE_CUDASIM:
        from .mma_simulator import functions
        made = functions()
    else:
        made = _intrinsics()
    globals().update(made)
    return made[name]
