"""float16 in generated CUDA kernels: widening, rounding and the three ops a GPU computes exactly
as NumPy does, as numba intrinsics.

CUDA kernels hold float16 values in float32 registers (render.Renderer.held) and round each
float16 result to float16 as it is made, as NumPy's float16 loops do (they convert to float,
compute, convert back). Spelled with numba's own casts, every op costs the float32 op, a
conversion to float16 and one back, and the compiler can fold none of them away: numba lowers
float16 casts to inline PTX (cuda_fp16's __float2half), which NVVM cannot see through.

Here the casts are LLVM's own `fpext` and `fptrunc`, so NVVM removes a round trip
(fptrunc(fpext(h)) is h), and float16 add, subtract and multiply are one PTX instruction each
(add.rn.f16, sub.rn.f16, mul.rn.f16) on the operands as halves: a chain of them stays in float16
registers, and only values that leave it (tanh's argument, a float32 op's operand) are widened.

Why the answers are NumPy's: NumPy computes a float16 a + b as float16(float32(a) + float32(b)),
two roundings; PTX's add.rn.f16 rounds the exact sum once. For +, -, * and / of p-bit operands
computed in a q-bit format, rounding twice equals rounding once when q >= 2p + 2 (S. A. Figueroa,
"When is double rounding innocuous?", SIGNUM Newsletter 30(3), 1995): float32's q = 24 and
float16's p = 11 meet it exactly; subnormal float16 results round to a fixed grid coarser than
float32's, which keeps it so. tests/test_cuda_half.py checks the identity against products and
sums rounded once from float64 (where they are exact), over every pair of a large sample with
subnormals, overflow, zeros of both signs, infinities and NaN. The explicit `.rn` keeps ptxas
from fusing a multiply and an add into one fma.rn.f16 (which would round once where NumPy rounds
twice). Division and square root have no float16 instruction in PTX and stay float32 ops.

Under numba's CUDA simulator the same names are NumPy scalar operations with the same meaning.
"""
from __future__ import annotations

import numpy as np

# float16 ops computed natively: the IR op's name -> the PTX instruction's
NATIVE = {"add": "add", "subtract": "sub", "multiply": "mul"}


def _simulator_functions() -> dict:
    def widen(value):
        return np.float32(value)

    def narrow(value):
        return np.float16(value)

    def native(op):
        ufunc = getattr(np, op)

        def compute(a, b):     # NumPy's own float16 loop: float32, then rounded to float16
            return np.float32(ufunc(np.float16(a), np.float16(b)))
        compute.__name__ = f"half_{op}"
        return compute

    functions = {"widen": widen, "narrow": narrow}
    functions.update({f"half_{op}": native(op) for op in NATIVE})
    return functions


def _intrinsics() -> dict:
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    half, single, bits = ir.HalfType(), ir.FloatType(), ir.IntType(16)

    def to_half(context, builder, value, kind):
        """An LLVM `half` from a numba value: float16 (numba keeps its 16 bits as i16) as it is,
        float64 by one rounding, anything else through float32 (exact for every integer below
        2^24; larger ones are past float16's range either way)."""
        if kind == types.float16:
            return builder.bitcast(value, half)
        if kind != types.float64:
            value = context.cast(builder, value, kind, types.float32)
        return builder.fptrunc(value, half)

    @intrinsic
    def widen(typingctx, value):
        """float32 of a value: a float16 exactly (fpext), anything else as numba casts it."""
        if not isinstance(value, (types.Float, types.Integer, types.Boolean)):
            return None

        def codegen(context, builder, signature, args):
            if value == types.float16:
                return builder.fpext(builder.bitcast(args[0], half), single)
            return context.cast(builder, args[0], value, types.float32)
        return types.float32(value), codegen

    @intrinsic
    def narrow(typingctx, value):
        """float16 of a value, rounded to nearest even once (fptrunc)."""
        if not isinstance(value, (types.Float, types.Integer, types.Boolean)):
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(to_half(context, builder, args[0], value), bits)
        return types.float16(value), codegen

    def native(instruction: str):
        @intrinsic
        def compute(typingctx, a, b):
            """float32 (a float16 value) of `instruction`.rn.f16 on a and b as halves."""
            if not all(isinstance(x, (types.Float, types.Integer, types.Boolean)) for x in (a, b)):
                return None

            def codegen(context, builder, signature, args):
                operands = [builder.bitcast(to_half(context, builder, v, k), bits)
                            for v, k in zip(args, signature.args)]
                # NOTE: NVVM's inline PTX takes 16-bit operands as i16 ("h"), not as half.
                asm = ir.InlineAsm(ir.FunctionType(bits, [bits, bits]),
                                   f"{instruction}.rn.f16 $0, $1, $2;", "=h,h,h")
                result = builder.call(asm, operands)
                return builder.fpext(builder.bitcast(result, half), single)
            return types.float32(a, b), codegen
        return compute

    functions = {"widen": widen, "narrow": narrow}
    functions.update({f"half_{op}": native(instruction) for op, instruction in NATIVE.items()})
    return functions


class Spelling:
    """How a CUDA kernel's source spells float16 values (render.Renderer.halves): names from this
    module, imported by the kernel's module (cuda.module_text)."""

    def __init__(self, renderer):
        self.renderer = renderer

    def _use(self, name: str) -> str:
        self.renderer.globals[name] = ("half", name)
        return name

    def widen(self, expression: str) -> str:
        return f"{self._use('widen')}({expression})"

    def narrow(self, expression: str) -> str:
        return f"{self._use('narrow')}({expression})"

    def op(self, op: str, args: list) -> str | None:
        """The float16 result (held as float32) of `op` on float16 operands, or None where the
        op has no native form."""
        if op not in NATIVE or len(args) != 2:
            return None
        return f"{self._use(f'half_{op}')}({args[0]}, {args[1]})"


def __getattr__(name: str):
    """widen, narrow and half_add ... made on first use (PEP 562), so importing this module for
    Spelling (the kernel writer, on every call's path to the disk cache) does not import numba."""
    if name not in ("widen", "narrow", *(f"half_{op}" for op in NATIVE)):
        raise AttributeError(name)
    from numba import config
    functions = _simulator_functions() if config.ENABLE_CUDASIM else _intrinsics()
    globals().update(functions)
    return functions[name]
