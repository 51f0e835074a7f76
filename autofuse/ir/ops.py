"""The op table: one row per IR op, read by the tracer, interpreter, printer, fusion and code generators.

Elementwise rows name their NumPy ufunc (the reference, and the dtype rule through
`ufunc.resolve_dtypes`) and their kernel spelling: a Python expression over operands {0}, {1}, ...
and typed constants {ZERO}, {ONE}, ... that numba compiles for both the CPU and CUDA targets.
Spellings are keyed by the dtype kind of the computation ('f' float, 'i' signed, 'u' unsigned,
'b' bool; '*' any).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

ELEMENTWISE = "elementwise"
REDUCE = "reduce"
LAYOUT = "layout"
MATMUL = "matmul"
SOURCE = "source"


@dataclass(frozen=True)
class Op:
    name: str
    kind: str
    arity: int | None = None                 # None: variadic
    ufunc: np.ufunc | None = None            # NumPy reference and dtype rule (elementwise)
    spell: dict = field(default_factory=dict)
    # reductions: the accumulator's start and how a value joins it ({acc}, {0})
    init: str | None = None
    combine: str | None = None
    cost: int = 1                            # relative arithmetic cost (for recompute decisions)
    transcendental: bool = False             # a math-library call: worth computing once a row
    exact_on_halves: bool = False            # float16 result is a float16 operand (or its
    #                                          negation): never needs rounding

    def spelling(self, kind: str) -> str:
        """The kernel spelling of this op for a computation of dtype kind `kind`."""
        if kind in self.spell:
            return self.spell[kind]
        if kind == "u" and "i" in self.spell:
            return self.spell["i"]
        return self.spell["*"]


def _ew(name, arity, spell, ufunc=None, cost=1, transcendental=False, exact_on_halves=False):
    if isinstance(spell, str):
        spell = {"*": spell}
    return Op(name, ELEMENTWISE, arity, ufunc or getattr(np, name), spell, cost=cost,
              transcendental=transcendental, exact_on_halves=exact_on_halves)


# NaN-aware selections (Python's max/min drop NaN); ties give the second operand, as NumPy's
# array loops do.
_NAN_MAX = "({0} if ({0} > {1} or {0} != {0}) else {1})"
_NAN_MIN = "({0} if ({0} < {1} or {0} != {0}) else {1})"
_FMAX = "({0} if ({0} > {1} or {1} != {1}) else {1})"
_FMIN = "({0} if ({0} < {1} or {1} != {1}) else {1})"

_ROWS = [
    # arithmetic
    _ew("add", 2, {"*": "({0} + {1})", "b": "({0} or {1})"}),
    _ew("subtract", 2, "({0} - {1})"),
    _ew("multiply", 2, {"*": "({0} * {1})", "b": "({0} and {1})"}),
    _ew("divide", 2, "({0} / {1})", cost=4),
    # NOTE: numba's integer // and % give 0 for a zero divisor (error_model="numpy"), as NumPy;
    # INT_MIN // -1 must wrap to INT_MIN, hence the guard.
    _ew("floor_divide", 2, {"*": "({0} // {1})", "i": "(({ZERO} - {0}) if {1} == {MINUS_ONE} else {0} // {1})",
                            "b": "({0} and {1})"}, cost=8),
    _ew("remainder", 2, {"*": "({0} % {1})", "b": "False"}, cost=8),
    _ew("power", 2, {"f": "({0} ** {1})", "i": "int_power({0}, {1})"}, cost=16, transcendental=True),
    _ew("negative", 1, "(-{0})", exact_on_halves=True),
    _ew("positive", 1, "(+{0})", exact_on_halves=True),
    _ew("absolute", 1, {"*": "abs({0})", "b": "{0}"}, exact_on_halves=True),
    _ew("square", 1, {"*": "({0} * {0})", "b": "({0} and {0})"}),
    _ew("reciprocal", 1, {"f": "({ONE} / {0})", "i": "int_reciprocal({0})"}, cost=4),
    _ew("sign", 1, {"f": "({ONE} if {0} > {ZERO} else ({MINUS_ONE} if {0} < {ZERO} else "
                         "({0} if {0} != {0} else {ZERO})))",
                    "i": "({ONE} if {0} > {ZERO} else ({MINUS_ONE} if {0} < {ZERO} else {ZERO}))",
                    "u": "({ONE} if {0} > {ZERO} else {ZERO})"}),
    # exponentials and logarithms
    _ew("exp", 1, "math.exp({0})", cost=8, transcendental=True),
    _ew("exp2", 1, "math.exp2({0})", cost=8, transcendental=True),
    _ew("expm1", 1, "math.expm1({0})", cost=8, transcendental=True),
    _ew("log", 1, "math.log({0})", cost=8, transcendental=True),
    _ew("log2", 1, "math.log2({0})", cost=8, transcendental=True),
    _ew("log10", 1, "math.log10({0})", cost=8, transcendental=True),
    _ew("log1p", 1, "math.log1p({0})", cost=8, transcendental=True),
    _ew("sqrt", 1, "math.sqrt({0})", cost=4),
    _ew("cbrt", 1, "cube_root({0})", cost=8, transcendental=True),
    # trigonometry
    _ew("sin", 1, "math.sin({0})", cost=8, transcendental=True),
    _ew("cos", 1, "math.cos({0})", cost=8, transcendental=True),
    _ew("tan", 1, "math.tan({0})", cost=8, transcendental=True),
    _ew("arcsin", 1, "math.asin({0})", cost=8, transcendental=True),
    _ew("arccos", 1, "math.acos({0})", cost=8, transcendental=True),
    _ew("arctan", 1, "math.atan({0})", cost=8, transcendental=True),
    _ew("arctan2", 2, "math.atan2({0}, {1})", cost=8, transcendental=True),
    _ew("sinh", 1, "math.sinh({0})", cost=8, transcendental=True),
    _ew("cosh", 1, "math.cosh({0})", cost=8, transcendental=True),
    _ew("tanh", 1, {"f": "hyperbolic_tangent({0})", "*": "math.tanh({0})"}, cost=8, transcendental=True),
    _ew("arcsinh", 1, "math.asinh({0})", cost=8, transcendental=True),
    _ew("arccosh", 1, "math.acosh({0})", cost=8, transcendental=True),
    _ew("arctanh", 1, "math.atanh({0})", cost=8, transcendental=True),
    _ew("hypot", 2, "math.hypot({0}, {1})", cost=8, transcendental=True),
    _ew("copysign", 2, "math.copysign({0}, {1})", exact_on_halves=True),
    _ew("radians", 1, "({0} * {RADIANS})"),
    _ew("degrees", 1, "({0} * {DEGREES})"),
    # rounding
    _ew("floor", 1, {"f": "math_floor({0})", "*": "{0}"}),  # math.floor is an int on the CPU
    _ew("ceil", 1, {"f": "math_ceil({0})", "*": "{0}"}),
    _ew("trunc", 1, {"f": "math_trunc({0})", "*": "{0}"}),
    _ew("rint", 1, {"f": "round_even({0})", "*": "{0}"}),
    # comparisons and selection
    _ew("maximum", 2, {"f": _NAN_MAX, "*": "max({0}, {1})", "b": "({0} or {1})"}, exact_on_halves=True),
    _ew("minimum", 2, {"f": _NAN_MIN, "*": "min({0}, {1})", "b": "({0} and {1})"}, exact_on_halves=True),
    _ew("fmax", 2, {"f": _FMAX, "*": "max({0}, {1})", "b": "({0} or {1})"}, exact_on_halves=True),
    _ew("fmin", 2, {"f": _FMIN, "*": "min({0}, {1})", "b": "({0} and {1})"}, exact_on_halves=True),
    _ew("less", 2, "({0} < {1})"),
    _ew("less_equal", 2, "({0} <= {1})"),
    _ew("greater", 2, "({0} > {1})"),
    _ew("greater_equal", 2, "({0} >= {1})"),
    _ew("equal", 2, "({0} == {1})"),
    _ew("not_equal", 2, "({0} != {1})"),
    _ew("isnan", 1, {"f": "math.isnan({0})", "*": "False"}),
    _ew("isinf", 1, {"f": "math.isinf({0})", "*": "False"}),
    _ew("isfinite", 1, {"f": "math.isfinite({0})", "*": "True"}),
    Op("where", ELEMENTWISE, 3, None, {"*": "({1} if {0} else {2})"}, exact_on_halves=True),
    # logic and bits
    _ew("logical_and", 2, "({0} != {ZERO} and {1} != {ZERO})"),
    _ew("logical_or", 2, "({0} != {ZERO} or {1} != {ZERO})"),
    _ew("logical_xor", 2, "(({0} != {ZERO}) != ({1} != {ZERO}))"),
    _ew("logical_not", 1, "({0} == {ZERO})"),
    _ew("bitwise_and", 2, {"*": "({0} & {1})", "b": "({0} and {1})"}),
    _ew("bitwise_or", 2, {"*": "({0} | {1})", "b": "({0} or {1})"}),
    _ew("bitwise_xor", 2, {"*": "({0} ^ {1})", "b": "({0} != {1})"}),
    _ew("invert", 1, {"*": "(~{0})", "b": "(not {0})"}),
    _ew("left_shift", 2, "({0} << {1})"),
    _ew("right_shift", 2, "({0} >> {1})"),
    # dtype conversion: attrs dtype
    Op("cast", ELEMENTWISE, 1, None, {"*": "{CAST}({0})", "b": "({0} != {ZERO_IN})"}),
    # reductions over attrs axes, result dtype in attrs dtype
    Op("sum", REDUCE, 1, np.add, {}, init="{ZERO}", combine="{acc} + {0}"),
    Op("prod", REDUCE, 1, np.multiply, {}, init="{ONE}", combine="{acc} * {0}"),
    Op("max", REDUCE, 1, np.maximum, {}, init="{LOWEST}", combine=_NAN_MAX.format("{0}", "{acc}")),
    Op("min", REDUCE, 1, np.minimum, {}, init="{HIGHEST}", combine=_NAN_MIN.format("{0}", "{acc}")),
    Op("any", REDUCE, 1, np.logical_or, {}, init="False", combine="{acc} or {0}"),
    Op("all", REDUCE, 1, np.logical_and, {}, init="True", combine="{acc} and {0}"),
    Op("argmax", REDUCE, 1, None, {}),
    Op("argmin", REDUCE, 1, None, {}),
    # layout: index maps
    Op("broadcast_to", LAYOUT, 1),
    Op("transpose", LAYOUT, 1),
    Op("reshape", LAYOUT, 1),
    Op("slice", LAYOUT, 1),
    Op("setslice", LAYOUT, 2),
    Op("concatenate", LAYOUT, None),
    # matmul over equal batch dims: (..., M, K) @ (..., K, N)
    Op("matmul", MATMUL, 2, np.matmul),
    # sources
    Op("input", SOURCE, 0),
    Op("constant", SOURCE, 0),
    Op("iota", SOURCE, 0),
]

OPS: dict[str, Op] = {row.name: row for row in _ROWS}

ELEMENTWISE_UFUNCS: dict[str, Op] = {
    row.name: row for row in _ROWS if row.kind == ELEMENTWISE and row.ufunc is not None
}

REDUCTIONS = tuple(row.name for row in _ROWS if row.kind == REDUCE)


def typed_constants(dtype: np.dtype) -> dict[str, object]:
    """The values behind the named constants a spelling may use, in the computation's dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        t = dtype.type
        lowest, highest = -np.inf, np.inf
        # NOTE: NumPy's float32 degrees uses 180f/pi_f, which differs from float32(180/pi).
        extra = {"INF": t(np.inf), "HALF": t(0.5), "MINUS_ONE": t(-1),
                 "RADIANS": t(math.pi / 180.0), "DEGREES": t(t(180.0) / t(math.pi))}
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lowest, highest = info.min, info.max
        extra = {"MINUS_ONE": dtype.type(-1)} if dtype.kind == "i" else {}
    else:
        lowest, highest = False, True
        extra = {}
    values = {"ZERO": dtype.type(0), "ONE": dtype.type(1), "TWO": dtype.type(2),
              "LOWEST": dtype.type(lowest), "HIGHEST": dtype.type(highest)}
    values.update(extra)
    return values
