"""The op table: one row per IR op, read by the tracer, interpreter, printer, fusion and code generators.

Elementwise rows name their NumPy ufunc (the reference, and the dtype rule through
`ufunc.resolve_dtypes`) and their kernel spelling: a Python expression over operands {0}, {1}, ...
and typed constants {ZERO}, {ONE}, ... that numba compiles for both the CPU and CUDA targets.
Spellings are keyed by the dtype kind of the computation ('f' float, 'i' signed, 'u' unsigned,
'b' bool, 'c' complex; '*' any but complex). An op computes on complex operands only where it has
a 'c' spelling (the tracer refuses the others: `takes_complex`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

ELEMENTWISE = "elementwise"
REDUCE = "reduce"
LAYOUT = "layout"
MATMUL = "matmul"
SORT = "sort"
SCAN = "scan"
SCATTER = "scatter"
SOURCE = "source"
TRANSFORM = "transform"


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
    # reverse mode (autofuse/autodiff): elementwise, one NumPy expression per input over the
    # cotangent g, the result y and the inputs x0, x1, ... (None: that input gets no gradient);
    # other kinds, the name of a rule in autodiff/structural.py. () : no gradient flows through
    # (comparisons, rounding, argmax); None: no rule written (a gradient through it is an error).
    vjp: tuple | str | None = None
    # ... for complex operands or results (elementwise), under the convention that a complex
    # value's cotangent is dL/d(real part) + i dL/d(imaginary part): "conjugated", the real rule
    # evaluated at the conjugated operands and result (ops analytic with real coefficients, whose
    # cotangent is g times the conjugated derivative); a tuple of expressions of its own; None,
    # none written (a gradient through it is an error)
    vjp_complex: tuple | str | None = None

    def spelling(self, kind: str) -> str:
        """The kernel spelling of this op for a computation of dtype kind `kind`."""
        if kind == "c" and kind not in self.spell:
            raise KeyError(f"{self.name} has no spelling for complex operands")
        if kind in self.spell:
            return self.spell[kind]
        if kind == "u" and "i" in self.spell:
            return self.spell["i"]
        return self.spell["*"]


def takes_complex(name: str) -> bool:
    """Whether op `name` has a spelling for complex operands."""
    return "c" in OPS[name].spell


# cmath's functions of a complex operand (numba compiles them for the CPU and CUDA), by the name of
# the math function the real spelling calls
_CMATH = {"math.exp": "cmath.exp", "math.log": "cmath.log", "math.log10": "cmath.log10",
          "math.sqrt": "cmath.sqrt", "math.sin": "cmath.sin", "math.cos": "cmath.cos",
          "math.tan": "cmath.tan", "math.asin": "cmath.asin", "math.acos": "cmath.acos",
          "math.atan": "cmath.atan", "math.sinh": "cmath.sinh", "math.cosh": "cmath.cosh",
          "math.tanh": "cmath.tanh", "math.asinh": "cmath.asinh", "math.acosh": "cmath.acosh",
          "math.atanh": "cmath.atanh"}


def _ew(name, arity, spell, ufunc=None, cost=1, transcendental=False, exact_on_halves=False,
        vjp=None, complex_spell=None, vjp_complex=None):
    """An elementwise row; `complex_spell`: its spelling for complex operands (True: the '*' one),
    where it has none of its own from cmath (whose functions are analytic: their complex rule is
    the real one at conjugated values)."""
    if isinstance(spell, str):
        spell = {"*": spell}
    call = spell.get("*", "").split("(")[0]
    if complex_spell is True:
        complex_spell = spell["*"]
    elif complex_spell is None and call in _CMATH:
        complex_spell = spell["*"].replace(call + "(", _CMATH[call] + "(")
        if vjp_complex is None and isinstance(vjp, tuple) and vjp:
            vjp_complex = CONJUGATED
    if complex_spell is not None:
        spell = {**spell, "c": complex_spell}
    return Op(name, ELEMENTWISE, arity, ufunc or getattr(np, name), spell, cost=cost,
              transcendental=transcendental, exact_on_halves=exact_on_halves, vjp=vjp,
              vjp_complex=vjp_complex)


CONJUGATED = "conjugated"


# Gradients split evenly between tied operands of maximum / minimum (as jax and torch do); the
# fmax / fmin pair passes it to the operand that is not NaN.
# (Written as g times a bool array, never a Python float times one: that would be float64.)
_TIE = ("g * (x0 > x1) + g * (x0 == x1) * 0.5", "g * (x1 > x0) + g * (x0 == x1) * 0.5")
_TIE_MIN = ("g * (x0 < x1) + g * (x0 == x1) * 0.5", "g * (x1 < x0) + g * (x0 == x1) * 0.5")
_FTIE = ("g * ((x0 > x1) | (x1 != x1)) + g * (x0 == x1) * 0.5",
         "g * ((x1 > x0) | ((x0 != x0) & (x1 == x1))) + g * (x0 == x1) * 0.5")
_FTIE_MIN = ("g * ((x0 < x1) | (x1 != x1)) + g * (x0 == x1) * 0.5",
             "g * ((x1 < x0) | ((x0 != x0) & (x1 == x1))) + g * (x0 == x1) * 0.5")


# NOTE: numba's complex division raises ZeroDivisionError for a zero divisor; NumPy divides each
# part by a real zero (inf or nan parts).
_COMPLEX_DIVIDE = ("(({0} / {1}) if {1} != {ZERO} else "
                   "{COMPLEX}(complex({0}.real / {REAL_ZERO}, {0}.imag / {REAL_ZERO})))")

# NaN-aware selections (Python's max/min drop NaN); ties give the second operand, as NumPy's
# array loops do. Spellings of plain values select with `select` (backends/selection.py: one LLVM
# select, where `a if c else b` is three basic blocks to numba's front end) and join booleans with
# `&` and `|`, never `and` / `or`; a conditional expression stays where an operand must not be
# evaluated (a division by zero, INT_MIN // -1).
_NAN_MAX = "select(({0} > {1}) | ({0} != {0}), {0}, {1})"
_NAN_MIN = "select(({0} < {1}) | ({0} != {0}), {0}, {1})"
_FMAX = "select(({0} > {1}) | ({1} != {1}), {0}, {1})"
_FMIN = "select(({0} < {1}) | ({1} != {1}), {0}, {1})"

_ROWS = [
    # arithmetic
    _ew("add", 2, {"*": "({0} + {1})", "b": "({0} | {1})"}, complex_spell=True,
        vjp=("g", "g"), vjp_complex=CONJUGATED),
    _ew("subtract", 2, "({0} - {1})", complex_spell=True,
        vjp=("g", "-g"), vjp_complex=CONJUGATED),
    _ew("multiply", 2, {"*": "({0} * {1})", "b": "({0} & {1})"}, complex_spell=True,
        vjp=("g * x1", "g * x0"), vjp_complex=CONJUGATED),
    _ew("divide", 2, "({0} / {1})", cost=4, complex_spell=_COMPLEX_DIVIDE,
        vjp=("g / x1", "-g * y / x1"), vjp_complex=CONJUGATED),
    # NOTE: numba's integer // and % give 0 for a zero divisor (error_model="numpy"), as NumPy;
    # INT_MIN // -1 must wrap to INT_MIN, hence the guard.
    _ew("floor_divide", 2, {"*": "({0} // {1})", "i": "(({ZERO} - {0}) if {1} == {MINUS_ONE} else {0} // {1})",
                            "u": "({0} // {1})", "b": "({0} & {1})"}, cost=8,
        vjp=()),
    _ew("remainder", 2, {"*": "({0} % {1})", "b": "False"}, cost=8,
        vjp=("g", "-g * np.floor_divide(x0, x1)")),
    # C's remainder (the sign of the dividend): libm's exact fmod for floats; for integers Python's
    # % (the divisor's sign) moved by one divisor where the signs differ, 0 for a zero divisor.
    _ew("fmod", 2, {"f": "math.fmod({0}, {1})", "b": "False",
                    "*": "(({0} % {1}) - ({1} if ({0} % {1}) != {ZERO} and (({0} % {1}) < {ZERO}) != "
                         "({0} < {ZERO}) else {ZERO}))"}, cost=8,
        vjp=("g", "-g * np.trunc(x0 / x1)")),
    _ew("power", 2, {"f": "({0} ** {1})", "i": "int_power({0}, {1})"}, cost=16, transcendental=True,
        complex_spell="({0} ** {1})",
        vjp=("np.where(x1 == 0, 0, g * x1 * x0 ** (x1 - 1))",
             "g * np.where(x0 > 0, y * np.log(np.where(x0 > 0, x0, 1)), 0)"),
        vjp_complex=("g * np.conjugate(np.where(x1 == 0, 0, x1 * x0 ** (x1 - 1)))",
                     "g * np.conjugate(np.where(x0 == 0, 0, "
                     "y * np.log(np.where(x0 == 0, 1, x0))))")),
    _ew("negative", 1, "(-{0})", exact_on_halves=True, complex_spell=True,
        vjp=("-g",), vjp_complex=CONJUGATED),
    _ew("positive", 1, "(+{0})", exact_on_halves=True, complex_spell=True,
        vjp=("g",), vjp_complex=CONJUGATED),
    # (|z| of a complex z: its cotangent g z / |z|, zero at zero)
    _ew("absolute", 1, {"*": "abs({0})", "b": "{0}"}, exact_on_halves=True, complex_spell=True,
        vjp=("g * np.sign(x0)",), vjp_complex=("g * (x0 / np.where(y == 0, 1, y))",)),
    _ew("square", 1, {"*": "({0} * {0})", "b": "{0}"}, complex_spell=True,
        vjp=("2 * g * x0",), vjp_complex=CONJUGATED),
    _ew("reciprocal", 1, {"f": "({ONE} / {0})", "i": "int_reciprocal({0})"}, cost=4,
        complex_spell="(({ONE} / {0}) if {0} != {ZERO} else {NAN})",
        vjp=("-g * y * y",), vjp_complex=CONJUGATED),
    _ew("sign", 1, {"f": "select({0} > {ZERO}, {ONE}, select({0} < {ZERO}, {MINUS_ONE}, "
                         "select({0} != {0}, {0}, {ZERO})))",
                    "i": "select({0} > {ZERO}, {ONE}, select({0} < {ZERO}, {MINUS_ONE}, {ZERO}))",
                    "u": "select({0} > {ZERO}, {ONE}, {ZERO})"},
        vjp=()),
    # exponentials and logarithms
    _ew("exp", 1, {"f": "exponential({0})", "*": "math.exp({0})"}, cost=8, transcendental=True,
        vjp=("g * y",)),
    _ew("exp2", 1, "math.exp2({0})", cost=8, transcendental=True,
        vjp=("g * y * 0.6931471805599453",)),
    _ew("expm1", 1, "math.expm1({0})", cost=8, transcendental=True,
        vjp=("g * (y + 1)",)),
    _ew("log", 1, {"f": "logarithm({0})", "*": "math.log({0})"}, cost=8, transcendental=True,
        vjp=("g / x0",)),
    _ew("log2", 1, "math.log2({0})", cost=8, transcendental=True,
        vjp=("g / (x0 * 0.6931471805599453)",)),
    _ew("log10", 1, "math.log10({0})", cost=8, transcendental=True,
        vjp=("g / (x0 * 2.302585092994046)",)),
    _ew("log1p", 1, "math.log1p({0})", cost=8, transcendental=True,
        vjp=("g / (x0 + 1)",)),
    _ew("sqrt", 1, "math.sqrt({0})", cost=4,
        vjp=("g / (2 * y)",)),
    _ew("cbrt", 1, "cube_root({0})", cost=8, transcendental=True,
        vjp=("g / (3 * y * y)",)),
    # trigonometry
    _ew("sin", 1, "math.sin({0})", cost=8, transcendental=True,
        vjp=("g * np.cos(x0)",)),
    _ew("cos", 1, "math.cos({0})", cost=8, transcendental=True,
        vjp=("-g * np.sin(x0)",)),
    _ew("tan", 1, "math.tan({0})", cost=8, transcendental=True,
        vjp=("g * (1 + y * y)",)),
    _ew("arcsin", 1, "math.asin({0})", cost=8, transcendental=True,
        vjp=("g / np.sqrt(1 - x0 * x0)",)),
    _ew("arccos", 1, "math.acos({0})", cost=8, transcendental=True,
        vjp=("-g / np.sqrt(1 - x0 * x0)",)),
    _ew("arctan", 1, "math.atan({0})", cost=8, transcendental=True,
        vjp=("g / (1 + x0 * x0)",)),
    _ew("arctan2", 2, "math.atan2({0}, {1})", cost=8, transcendental=True,
        vjp=("g * x1 / (x0 * x0 + x1 * x1)", "-g * x0 / (x0 * x0 + x1 * x1)")),
    _ew("sinh", 1, "math.sinh({0})", cost=8, transcendental=True,
        vjp=("g * np.cosh(x0)",)),
    _ew("cosh", 1, "math.cosh({0})", cost=8, transcendental=True,
        vjp=("g * np.sinh(x0)",)),
    _ew("tanh", 1, {"f": "hyperbolic_tangent({0})", "*": "math.tanh({0})"}, cost=8, transcendental=True,
        vjp=("g * (1 - y * y)",)),
    _ew("arcsinh", 1, "math.asinh({0})", cost=8, transcendental=True,
        vjp=("g / np.sqrt(x0 * x0 + 1)",)),
    _ew("arccosh", 1, "math.acosh({0})", cost=8, transcendental=True,
        vjp=("g / np.sqrt(x0 * x0 - 1)",)),
    _ew("arctanh", 1, "math.atanh({0})", cost=8, transcendental=True,
        vjp=("g / (1 - x0 * x0)",)),
    _ew("hypot", 2, "math.hypot({0}, {1})", cost=8, transcendental=True,
        vjp=("g * x0 / y", "g * x1 / y")),
    _ew("copysign", 2, "math.copysign({0}, {1})", exact_on_halves=True,
        vjp=("np.where((x0 < 0) == (y < 0), g, -g)", None)),
    _ew("radians", 1, "({0} * {RADIANS})",
        vjp=("g * 0.017453292519943295",)),
    _ew("degrees", 1, "({0} * {DEGREES})",
        vjp=("g * 57.29577951308232",)),
    # rounding
    _ew("floor", 1, {"f": "math_floor({0})", "*": "{0}"},
        vjp=()),  # math.floor is an int on the CPU
    _ew("ceil", 1, {"f": "math_ceil({0})", "*": "{0}"},
        vjp=()),
    _ew("trunc", 1, {"f": "math_trunc({0})", "*": "{0}"},
        vjp=()),
    _ew("rint", 1, {"f": "round_even({0})", "*": "{0}"},
        vjp=()),
    # comparisons and selection
    _ew("maximum", 2, {"f": _NAN_MAX, "*": "max({0}, {1})", "b": "({0} | {1})"}, exact_on_halves=True,
        vjp=_TIE),
    _ew("minimum", 2, {"f": _NAN_MIN, "*": "min({0}, {1})", "b": "({0} & {1})"}, exact_on_halves=True,
        vjp=_TIE_MIN),
    _ew("fmax", 2, {"f": _FMAX, "*": "max({0}, {1})", "b": "({0} | {1})"}, exact_on_halves=True,
        vjp=_FTIE),
    _ew("fmin", 2, {"f": _FMIN, "*": "min({0}, {1})", "b": "({0} & {1})"}, exact_on_halves=True,
        vjp=_FTIE_MIN),
    _ew("less", 2, "({0} < {1})", vjp=()),
    _ew("less_equal", 2, "({0} <= {1})", vjp=()),
    _ew("greater", 2, "({0} > {1})", vjp=()),
    _ew("greater_equal", 2, "({0} >= {1})", vjp=()),
    _ew("equal", 2, "({0} == {1})", complex_spell=True, vjp=()),
    _ew("not_equal", 2, "({0} != {1})", complex_spell=True, vjp=()),
    _ew("isnan", 1, {"f": "math.isnan({0})", "*": "False"}, vjp=(), complex_spell="cmath.isnan({0})"),
    _ew("isinf", 1, {"f": "math.isinf({0})", "*": "False"}, vjp=(), complex_spell="cmath.isinf({0})"),
    _ew("isfinite", 1, {"f": "math.isfinite({0})", "*": "True"}, vjp=(),
        complex_spell="cmath.isfinite({0})"),
    Op("where", ELEMENTWISE, 3, None, {"*": "select({0}, {1}, {2})", "c": "({1} if {0} else {2})"},
       exact_on_halves=True,
       vjp=(None, "np.where(x0, g, 0)", "np.where(x0, 0, g)"), vjp_complex=CONJUGATED),
    # logic and bits
    _ew("logical_and", 2, "(({0} != {ZERO}) & ({1} != {ZERO}))", complex_spell=True, vjp=()),
    _ew("logical_or", 2, "(({0} != {ZERO}) | ({1} != {ZERO}))", complex_spell=True, vjp=()),
    _ew("logical_xor", 2, "(({0} != {ZERO}) != ({1} != {ZERO}))", complex_spell=True, vjp=()),
    _ew("logical_not", 1, "({0} == {ZERO})", complex_spell=True, vjp=()),
    _ew("bitwise_and", 2, {"*": "({0} & {1})", "b": "({0} & {1})"}, vjp=()),
    _ew("bitwise_or", 2, {"*": "({0} | {1})", "b": "({0} | {1})"}, vjp=()),
    _ew("bitwise_xor", 2, {"*": "({0} ^ {1})", "b": "({0} != {1})"}, vjp=()),
    _ew("invert", 1, {"*": "(~{0})", "b": "(not {0})"}, vjp=()),
    _ew("left_shift", 2, "({0} << {1})", vjp=()),
    _ew("right_shift", 2, "({0} >> {1})", vjp=()),
    # complex parts: conjugate is NumPy's ufunc (the value itself for real operands); real and
    # imag (NumPy's functions, the tracer passes them complex operands only) give the real dtype.
    # Their cotangents (vjp_complex's convention): conj(g); g as the real part; g as the
    # imaginary part.
    _ew("conjugate", 1, {"*": "{0}"}, complex_spell="{0}.conjugate()", exact_on_halves=True,
        vjp=("g",), vjp_complex=("np.conjugate(g)",)),
    Op("real", ELEMENTWISE, 1, None, {"c": "{0}.real"}, vjp_complex=("g",)),
    Op("imag", ELEMENTWISE, 1, None, {"c": "{0}.imag"}, vjp_complex=("g * 1j",)),
    # dtype conversion: attrs dtype; keyed by the result's kind ('b' to bool) or, for a complex
    # value to a real dtype, 'c' (NumPy keeps the real part)
    Op("cast", ELEMENTWISE, 1, None, {"*": "{CAST}({0})", "b": "({0} != {ZERO_IN})",
                                      "c": "{CAST}({0}.real)"}, vjp=("g",),
       vjp_complex=("g",)),
    # reductions over attrs axes, result dtype in attrs dtype (a "c" key, empty: it takes complex
    # values, by its combine)
    Op("sum", REDUCE, 1, np.add, {"c": ""}, init="{ZERO}", combine="{acc} + {0}", vjp="sum"),
    Op("prod", REDUCE, 1, np.multiply, {"c": ""}, init="{ONE}", combine="{acc} * {0}", vjp="prod"),
    Op("max", REDUCE, 1, np.maximum, {}, init="{LOWEST}", combine=_NAN_MAX.format("{0}", "{acc}"),
       vjp="extremum"),
    Op("min", REDUCE, 1, np.minimum, {}, init="{HIGHEST}", combine=_NAN_MIN.format("{0}", "{acc}"),
       vjp="extremum"),
    Op("any", REDUCE, 1, np.logical_or, {}, init="False", combine="{acc} | {0}", vjp=()),
    Op("all", REDUCE, 1, np.logical_and, {}, init="True", combine="{acc} & {0}", vjp=()),
    Op("argmax", REDUCE, 1, None, {}, vjp=()),
    Op("argmin", REDUCE, 1, None, {}, vjp=()),
    # sum(exp(x - max(x))) over attrs axes (softmax's and log-sum-exp's denominator; ir/online.py
    # writes it where a kernel would otherwise read x twice): a running maximum and a sum scaled
    # to it, one pass (backends/accumulators.py)
    Op("expsum", REDUCE, 1, None, {}, transcendental=True),
    # scans (ufunc.accumulate) along attrs axis, combining by the elementwise row attrs ufunc,
    # in the node's dtype (the tracer casts to NumPy's accumulation dtype first)
    Op("scan", SCAN, 1, None, {}, vjp="scan"),
    # scatter_add(base, indices, values): base (n, *rest) with each values row (k, *rest) added at
    # its int64 index (k,) along the first axis, repeated indices accumulating (np.add.at); a
    # negative index counts from the end, one still outside adds nothing (the tracer has the call
    # check them, trace/checks.py). values are in base's dtype.
    Op("scatter_add", SCATTER, 3, None, {}, vjp="scatter_add"),
    # layout: index maps
    Op("broadcast_to", LAYOUT, 1, vjp="broadcast_to"),
    Op("transpose", LAYOUT, 1, vjp="transpose"),
    Op("reshape", LAYOUT, 1, vjp="reshape"),
    Op("slice", LAYOUT, 1, vjp="slice"),
    Op("setslice", LAYOUT, 2, vjp="setslice"),
    Op("concatenate", LAYOUT, None, vjp="concatenate"),
    # sorts along the last axis (the tracer moves any other axis there): values, or the stable
    # order of them (argsort); NaN last, as NumPy (ir/sorting.py holds their reference and keys)
    Op("sort", SORT, 1, vjp="sort"),
    Op("argsort", SORT, 1, vjp=()),
    # gather(data, index0, ...): data read where int64 indices (all of the result's shape) say,
    # along data axes attrs indexed; each other data axis follows a result axis (attrs kept).
    # A negative index counts from the end; out of range reads a clamped index (the tracer has
    # the call check them, trace/checks.py)
    Op("gather", LAYOUT, None, vjp="gather"),
    # a discrete Fourier transform over attrs axes as np.fft computes it (ir/fourier.py: attrs
    # function fft / ifft / rfft / irfft, lengths, norm); a library step or traced kernels
    Op("fft", TRANSFORM, 1, vjp="fft"),
    # matmul over equal batch dims: (..., M, K) @ (..., K, N)
    Op("matmul", MATMUL, 2, np.matmul, vjp="matmul"),
    # softmax(s, axis=-1) @ v, each step as NumPy computes it (exp(s - max), divided by the sum),
    # for s (..., M, K) and v (..., K, N) of one dtype: attention's second half, which
    # ir/attention.py makes where a backend has a kernel that never stores the scores
    Op("softmax_matmul", MATMUL, 2, vjp=None),
    # sources
    Op("input", SOURCE, 0, vjp=()),
    Op("constant", SOURCE, 0, vjp=()),
    Op("iota", SOURCE, 0, vjp=()),
]

OPS: dict[str, Op] = {row.name: row for row in _ROWS}

ELEMENTWISE_UFUNCS: dict[str, Op] = {
    row.name: row for row in _ROWS if row.kind == ELEMENTWISE and row.ufunc is not None
}

REDUCTIONS = tuple(row.name for row in _ROWS if row.kind == REDUCE)

# The ufuncs a scan combines by, and the typed constant (typed_constants) that is its identity:
# the value a block scan pads with and cumulative_sum's include_initial prepends.
SCAN_IDENTITY = {"add": "ZERO", "multiply": "ONE", "maximum": "LOWEST", "minimum": "HIGHEST",
                 "logical_and": "ONE", "logical_or": "ZERO"}


def typed_constants(dtype: np.dtype) -> dict[str, object]:
    """The values behind the named constants a spelling may use, in the computation's dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        t = dtype.type
        return {"ZERO": t(0), "ONE": t(1), "TWO": t(2), "HALF": t(0.5), "MINUS_ONE": t(-1),
                "NAN": t(complex(np.nan, np.nan)), "REAL_ZERO": t(0).real, "COMPLEX": dtype}
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
