"""Tensor cores in generated CUDA kernels: PTX `mma.sync` (one warp's tile product, mma_shapes.py
names each) and the conversions that feed it, as numba intrinsics through llvmlite inline PTX
(numba.cuda has no API for them; benchmarks/experiments/mma_probe.py measured the route).

- `mma_f64_m8n8k4((a,), (b,), (c0, c1)) -> (d0, d1)` and the other shapes of SHAPES: D = A x B
  + C on the registers the table lays out (tuples), every lane of the warp calling it together;
- `pack_halves(low, high)`: two float16 values (held as float32, or float16) as one 32-bit word,
  the low one first in memory order (an LLVM fptrunc, which NVVM folds with a load's widening);
- `tf32(x)`: x rounded to TF32 (cvt.rna.tf32.f32), the bits mma's .tf32 operands read;
- `tf32_split(x) -> (high, low)`: high = tf32(x), low = tf32(x - high), for "3xtf32" products;
- `ldmatrix4(shared, word)` / `ldmatrix4t(shared, word)` -> 4 words: `ldmatrix...x4.b16` (`.trans`
  the second), four 8 x 8 float16 matrices read by the warp together, each lane naming one row
  (lanes 8q..8q+7 the rows of matrix q) by its word in a shared uint32 array; lane l gets word l % 4
  of row l // 4 of each (with .trans: the transposed matrix's);
- `cp_async16(shared, word, pointer, element, nbytes)`: `cp.async.cg` of 16 bytes from
  pointer[element] to shared[word:word + 4], only its first `nbytes` read (the rest zeros);
  `cp_async_commit()` closes this thread's group of copies, `cp_async_waitN()` (N = 0 ... 6)
  waits until at most N of its groups are in flight.

Under numba's CUDA simulator the same names are mma_simulator.py's Python functions.
"""
from __future__ import annotations

from .mma_shapes import SHAPES

WAITS = tuple(f"cp_async_wait{n}" for n in range(7))
COPIES = ("ldmatrix4", "ldmatrix4t", "cp_async16", "cp_async_commit", *WAITS)
NAMES = (*SHAPES, "pack_halves", "tf32", "tf32_split", *COPIES)


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
    functions.update(_copies(intrinsic, ir, types, asm))
    return functions


def _copies(intrinsic, ir, types, asm) -> dict:
    """ldmatrix and cp.async (see the module docstring)."""
    u32 = ir.IntType(32)

    def shared_address(context, builder, array_type, array, index_type, index):
        """The 32-bit shared-window address of word `index` of a shared array."""
        data = context.make_array(array_type)(context, builder, array).data
        element = context.get_value_type(array_type.dtype)
        window = builder.ptrtoint(builder.addrspacecast(data, ir.PointerType(element, 3)), u32)
        word = builder.trunc(context.cast(builder, index, index_type, types.intp), u32)
        return builder.add(window, builder.mul(word, ir.Constant(u32, 4)))

    def is_shared(array, index) -> bool:
        return isinstance(array, types.Array) and array.dtype == types.uint32 and \
            isinstance(index, types.Integer)

    def make_ldmatrix(trans: str):
        result = types.UniTuple(types.uint32, 4)
        text = (f"ldmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 {{$0, $1, $2, $3}}, [$4];")

        def codegen(context, builder, sig, args):
            address = shared_address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            words = asm(builder, [u32] * 4, [u32], text, "=r,=r,=r,=r,r", [address])
            return context.make_tuple(builder, result, words)

        def ldmatrix(typingctx, array, index):
            if is_shared(array, index):
                return result(array, index), codegen
        ldmatrix.__name__ = "ldmatrix4t" if trans else "ldmatrix4"
        return intrinsic(ldmatrix)

    def statement(text: str, constraints: str = "", kinds=(), values=()):
        def emit(builder):
            builder.asm(ir.FunctionType(ir.VoidType(), list(kinds)), text,
                        ",".join(filter(None, [constraints, "~{memory}"])), list(values), True)
        return emit

    @intrinsic
    def cp_async16(typingctx, array, index, pointer, element, nbytes):
        if not (is_shared(array, index) and isinstance(pointer, types.CPointer)
                and isinstance(element, types.Integer) and isinstance(nbytes, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            destination = shared_address(context, builder, sig.args[0], args[0], sig.args[1],
                                         args[1])
            offset = context.cast(builder, args[3], sig.args[3], types.intp)
            source = builder.ptrtoint(builder.gep(args[2], [offset]), ir.IntType(64))
            size = builder.trunc(context.cast(builder, args[4], sig.args[4], types.intp), u32)
            statement("cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r",
                      (u32, ir.IntType(64), u32), (destination, source, size))(builder)
            return context.get_dummy_value()
        return types.void(array, index, pointer, element, nbytes), codegen

    def make_fence(text: str, name: str):
        def fence(typingctx):
            def codegen(context, builder, sig, args):
                statement(text)(builder)
                return context.get_dummy_value()
            return types.void(), codegen
        fence.__name__ = name
        return intrinsic(fence)

    made = {"ldmatrix4": make_ldmatrix(""), "ldmatrix4t": make_ldmatrix(".trans"),
            "cp_async16": cp_async16,
            "cp_async_commit": make_fence("cp.async.commit_group;", "cp_async_commit")}
    for n, name in enumerate(WAITS):
        made[name] = make_fence(f"cp.async.wait_group {n};", name)
    return made


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
