"""An integer's bits read as a float and back, for generated CPU helpers (helpers.py's exponential
builds 2**n from its exponent bits; its logarithm splits a float into exponent and mantissa).
numba has no public bitcast of scalars; these are one LLVM `bitcast` each, so loops that call
them still vectorize.

Imported by the generated modules that need them (cpu/__init__.module_text); numba is imported
here, so only modules that compile load this file.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _from_bits(width: int, float_type, llvm_float):
    @intrinsic
    def from_bits(typingctx, bits):
        if not isinstance(bits, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            value, = args
            target = ir.IntType(width)
            if bits.bitwidth > width:
                value = builder.trunc(value, target)
            elif bits.bitwidth < width:
                value = builder.sext(value, target)
            return builder.bitcast(value, llvm_float)
        return float_type(bits), codegen
    return from_bits


def _to_bits(float_type, integer_type, width: int):
    @intrinsic
    def to_bits(typingctx, value):
        if value != float_type:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(width))
        return integer_type(value), codegen
    return to_bits


from_bits_f32 = _from_bits(32, types.float32, ir.FloatType())
from_bits_f64 = _from_bits(64, types.float64, ir.DoubleType())
to_bits_f32 = _to_bits(types.float32, types.int32, 32)
to_bits_f64 = _to_bits(types.float64, types.int64, 64)
