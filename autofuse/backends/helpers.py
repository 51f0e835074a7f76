"""Small scalar functions some op spellings call (floor, cube root, integer power, ...), written
once as source that numba compiles both as CPU functions and as CUDA device functions.

Each is instantiated per dtype (`math_floor_f32`) with its constants typed in that dtype; the
float rounding helpers use the add-and-subtract-2**p trick, which rounds half to even exactly.
Spellings and constants were checked against NumPy on both targets (float32 PTX holds no f64).
"""
from __future__ import annotations

import re

import numpy as np

SELECT = re.compile(r"\bselect\(")


def uses_select(text: str, helper_texts=()) -> bool:
    """Whether generated code calls selection.select (its module then imports it)."""
    return any(SELECT.search(t) for t in (text, *helper_texts))


CALL = re.compile(r"\b(math_floor|math_ceil|math_trunc|round_even|cube_root|int_power|"
                  r"int_reciprocal|hyperbolic_tangent|exponential|logarithm)\(")

# NOTE: float32 tanh on the CPU: libm's scalar tanhf keeps LLVM from vectorizing the loop (a
# bias+GELU kernel ran 25x slower than NumPy's SIMD tanh); this branch-free rational
# approximation vectorizes. Its coefficients are Eigen's float ptanh (a [13/6] minimax rational
# on |x| <= 7.9053, numbers carried over, code ours); measured at most 6 ulp from np.tanh over
# 16M normal samples (tests/test_cpu_backend.py checks a dense sweep). CUDA and float64 keep
# math.tanh (libdevice / libm).
_RATIONAL_TANH = """
def hyperbolic_tangent_{s}(x):
    c = min(max(x, -{CLAMP}), {CLAMP})
    x2 = c * c
    p = (((((({A6} * x2 + {A5}) * x2 + {A4}) * x2 + {A3}) * x2 + {A2}) * x2 + {A1}) * x2 + {A0}) * c
    q = (({B3} * x2 + {B2}) * x2 + {B1}) * x2 + {B0}
    r = p / q
    r = x if abs(x) < {TINY} else r
    return x if x != x else r
"""
_TANH_CONSTANTS = {
    "CLAMP": 7.90531110763549805, "TINY": 0.0004,
    "A0": 4.89352455891786e-03, "A1": 6.37261928875436e-04, "A2": 1.48572235717979e-05,
    "A3": 5.12229709037114e-08, "A4": -8.60467152213735e-11, "A5": 2.00018790482477e-13,
    "A6": -2.76076847742355e-16,
    "B0": 4.89352518554385e-03, "B1": 2.26843463243900e-03, "B2": 1.18534705686654e-04,
    "B3": 1.19825839466702e-06,
}

# NOTE: exp on the CPU: libm's scalar exp and expf keep LLVM from vectorizing a loop (softmax rows
# ran at 0.6-1.1x NumPy, whose exp is SIMD); this branch-free version vectorizes. Cody-Waite
# reduction by n = round(x / ln 2), then Cephes's expf polynomial (float32) or exp Pade form
# (float64) on [-ln2/2, ln2/2] (S. L. Moshier's Cephes library: coefficients and the split of ln 2
# carried over, code ours), times 2**n built from exponent bits as two halves, so that results
# in the subnormal range round once and overflow gives inf. x is clamped first (NaN to the low
# end; it is returned at the end). tests/test_cpu_backend.py sweeps it against np.exp.
_EXPONENTIAL = """
def exponential_{s}(x):
    c = x if x > {LO} else {LO}
    c = c if c < {HI} else {HI}
    t = (c * {LOG2E} + {ROUNDER}) - {ROUNDER}
    r = (c - t * {LN2_HI}) - t * {LN2_LO}
{POLYNOMIAL}
    n = {I}(t)
    h = n >> {I1}
    y = p * from_bits_{s}((h + {BIAS}) << {MANTISSA}) * from_bits_{s}((n - h + {BIAS}) << {MANTISSA})
    return y if x == x else x
"""
# p = exp(r) on [-ln2/2, ln2/2]: float32's polynomial, float64's Pade form
_EXP_POLYNOMIAL = {
    "f": """\
    p = ((((({P0} * r + {P1}) * r + {P2}) * r + {P3}) * r + {P4}) * r + {P5}) * (r * r) + r + {ONE}""",
    "d": """\
    rr = r * r
    pr = r * (({P0} * rr + {P1}) * rr + {P2})
    p = {ONE} + {TWO} * (pr / (((({Q0} * rr + {Q1}) * rr + {Q2}) * rr + {Q3}) - pr))""",
}
_EXP_CONSTANTS = {
    "f": {"LO": -104.0, "HI": 89.0, "LOG2E": 1.44269504088896341, "ROUNDER": 1.5 * 2.0 ** 23,
          "LN2_HI": 0.693359375, "LN2_LO": -2.12194440e-4,
          "P0": 1.9875691500e-4, "P1": 1.3981999507e-3, "P2": 8.3334519073e-3,
          "P3": 4.1665795894e-2, "P4": 1.6666665459e-1, "P5": 5.0000001201e-1},
    "d": {"LO": -746.0, "HI": 710.0, "LOG2E": 1.4426950408889634073599, "ROUNDER": 1.5 * 2.0 ** 52,
          "LN2_HI": 6.93145751953125e-1, "LN2_LO": 1.42860682030941723212e-6, "TWO": 2.0,
          "P0": 1.26177193074810590878e-4, "P1": 3.02994407707441961300e-2,
          "P2": 9.99999999999999999910e-1, "Q0": 3.00198505138664455042e-6,
          "Q1": 2.52448340349684104192e-3, "Q2": 2.27265548208155028766e-1,
          "Q3": 2.00000000000000000009e0},
}

# NOTE: log on the CPU, for the same reason as exp: the exponent and mantissa read from the bits
# (subnormals scaled up by 2**MANTISSA+2 first), the mantissa moved into [sqrt(1/2), sqrt(2)), then
# Cephes's logf polynomial (float32) or log P/Q rational (float64) of m - 1, plus e * ln 2 in two
# parts (Cephes: coefficients carried over, code ours). Negative, zero, infinite and NaN operands
# are NumPy's answers, chosen at the end. tests/test_cpu_backend.py sweeps it against np.log.
_LOGARITHM = """
def logarithm_{s}(x):
    tiny = x < {TINY}
    b = to_bits_{s}(x * {UP} if tiny else x)
    e = ((b >> {MANTISSA}) & {EXP_MASK}) - {HALF_BIAS} - ({UP_BITS} if tiny else {I0})
    m = from_bits_{s}((b & {MANT_MASK}) | {HALF_BITS})
    low = m < {SQRTH}
    e = e - ({I1} if low else {I0})
    f = (m + m - {ONE}) if low else (m - {ONE})
    fe = {T}(e)
    z = f * f
{POLYNOMIAL}
    y = y + fe * {LN2_LO} - {HALF} * z
    r = (f + y) + fe * {LN2_HI}
    r = {NAN} if x < {ZERO} else r
    r = {MINUS_INF} if x == {ZERO} else r
    return x if (x != x or x == {INF}) else r
"""
# y = log(1 + f) - f + f^2 / 2 on [sqrt(1/2) - 1, sqrt(2) - 1]: float32's polynomial, float64's
# rational function
_LOG_POLYNOMIAL = {
    "f": """\
    p = (((((({P0} * f + {P1}) * f + {P2}) * f + {P3}) * f + {P4}) * f + {P5}) * f + {P6}) * f
    y = ((p + {P7}) * f + {P8}) * f * z""",
    "d": """\
    p = ((((({P0} * f + {P1}) * f + {P2}) * f + {P3}) * f + {P4}) * f + {P5})
    q = ((((f + {Q0}) * f + {Q1}) * f + {Q2}) * f + {Q3}) * f + {Q4}
    y = f * (z * p / q)""",
}
_LOG_CONSTANTS = {
    "f": {"SQRTH": 0.70710678118654752440, "HALF": 0.5, "LN2_HI": 0.693359375,
          "LN2_LO": -2.12194440e-4, "P0": 7.0376836292e-2, "P1": -1.1514610310e-1,
          "P2": 1.1676998740e-1, "P3": -1.2420140846e-1, "P4": 1.4249322787e-1,
          "P5": -1.6668057665e-1, "P6": 2.0000714765e-1, "P7": -2.4999993993e-1,
          "P8": 3.3333331174e-1},
    "d": {"SQRTH": 0.70710678118654752440, "HALF": 0.5, "LN2_HI": 0.693359375,
          "LN2_LO": -2.121944400546905827679e-4, "P0": 1.01875663804580931796e-4,
          "P1": 4.97494994976747001425e-1, "P2": 4.70579119878881725854e0,
          "P3": 1.44989225341610930846e1, "P4": 1.79368678507819816313e1,
          "P5": 7.70838733755885391666e0, "Q0": 1.12873587189167450590e1,
          "Q1": 4.52279145837532221105e1, "Q2": 8.29875266912776603211e1,
          "Q3": 7.11544750618563894466e1, "Q4": 2.31251620126765340583e1},
}

_TEMPLATES = {
    "math_floor": """
def math_floor_{s}(x):
    if abs(x) < {MAGIC}:
        r = math.copysign((abs(x) + {MAGIC}) - {MAGIC}, x)
        if r > x:
            r = math.copysign(r - {ONE}, x)
        return r
    return x
""",
    "math_ceil": """
def math_ceil_{s}(x):
    if abs(x) < {MAGIC}:
        r = math.copysign((abs(x) + {MAGIC}) - {MAGIC}, x)
        if r < x:
            r = math.copysign(r + {ONE}, x)
        return r
    return x
""",
    "math_trunc": """
def math_trunc_{s}(x):
    a = abs(x)
    if a < {MAGIC}:
        r = (a + {MAGIC}) - {MAGIC}
        if r > a:
            r = r - {ONE}
        return math.copysign(r, x)
    return x
""",
    "round_even": """
def round_even_{s}(x):
    if abs(x) < {MAGIC}:
        return math.copysign((abs(x) + {MAGIC}) - {MAGIC}, x)
    return x
""",
    "cube_root": """
def cube_root_{s}(x):
    if x == {ZERO} or not math.isfinite(x):
        return x + x
    scale = {ONE}
    if abs(x) < {CBRT_SMALL}:
        x = x * {CBRT_UP}
        scale = {CBRT_DOWN}
    y = math.copysign(abs(x) ** {THIRD}, x)
    y = y - (y * y * y - x) / ({THREE} * y * y)
    return y * scale
""",
    "int_power": """
def int_power_{s}(a, b):
    r = {ONE}
    if b < {ZERO}:
        if a == {ONE}:
            return {ONE}
        if a == {ZERO} - {ONE}:
            return {ONE} if (b & {ONE}) == {ZERO} else {ZERO} - {ONE}
        return {ZERO}
    while b != {ZERO}:
        if b & {ONE}:
            r = {T}(r * a)
        a = {T}(a * a)
        b = b >> {ONE}
    return r
""",
    "int_reciprocal": """
def int_reciprocal_{s}(x):
    if x == {ZERO}:
        return {LOWEST}
    if x == {ONE}:
        return {ONE}
    if x == {ZERO} - {ONE}:
        return {ZERO} - {ONE}
    return {ZERO}
""",
}


def _constants(dtype: np.dtype) -> dict:
    t = dtype.type
    values = {"ZERO": t(0), "ONE": t(1)}
    if dtype.kind in "iu":
        # NOTE: NumPy's integer reciprocal of 0 is 1/0 converted to a C int: INT_MIN on x86,
        # truncated for narrower types (0 for int8 and int16).
        wide = np.int64 if dtype.itemsize == 8 else np.int32
        values["LOWEST"] = np.array(np.iinfo(wide).min).astype(dtype)[()]
    if dtype.kind == "f":
        single = dtype == np.float32
        values.update(MAGIC=t(2.0 ** (23 if single else 52)), THIRD=t(1.0) / t(3.0), THREE=t(3.0),
                      CBRT_SMALL=t(2.0 ** -100), CBRT_UP=t(2.0 ** (126 if single else 300)),
                      CBRT_DOWN=t(2.0 ** (-42 if single else -100)))
    return values


def alias(name: str, dtype, target: str) -> str | None:
    """The library function a helper stands for on `target`, where no helper is needed."""
    dtype = np.dtype(dtype)
    if name == "hyperbolic_tangent" and not (target == "cpu" and dtype == np.float32):
        return "math.tanh"
    if name == "exponential" and not (target == "cpu" and dtype in (np.float32, np.float64)):
        return "math.exp"
    if name == "logarithm" and not (target == "cpu" and dtype in (np.float32, np.float64)):
        return "math.log"
    return None


def source(name: str, dtype, suffix: str) -> tuple[str, dict]:
    """(definition source, globals it needs) of helper `name` for `dtype` (see `alias` for
    helpers that a target spells as a library call instead). The constants every helper of a
    dtype shares are named h_<suffix>_<KEY>; a helper's own ones also carry its name, so two
    helpers in one kernel never read each other's (exp's and log's polynomials are both P0...)."""
    dtype = np.dtype(dtype)
    template, own = _own(name, dtype)
    names, values = {}, {}
    for key, value in _constants(dtype).items():
        names[key] = f"h_{suffix}_{key}"
        values[names[key]] = value
    for key, value in own.items():
        names[key] = f"h_{suffix}_{name}_{key}"
        values[names[key]] = value
    names["T"] = f"h_{suffix}_T"
    values[names["T"]] = dtype.type
    text = template.replace("{s}", suffix)
    for key, global_name in names.items():
        text = text.replace("{" + key + "}", global_name)
    return text, values


def _own(name: str, dtype: np.dtype) -> tuple[str, dict]:
    """(template, its own constants) of helper `name` for `dtype`."""
    single = dtype == np.float32
    integer = np.int32 if single else np.int64
    if name == "hyperbolic_tangent":
        return _RATIONAL_TANH, {k: dtype.type(v) for k, v in _TANH_CONSTANTS.items()}
    if name == "exponential":
        own = {k: dtype.type(v) for k, v in _EXP_CONSTANTS["f" if single else "d"].items()}
        own.update(I=integer, I1=integer(1), BIAS=integer(127 if single else 1023),
                   MANTISSA=integer(23 if single else 52))
        return _EXPONENTIAL.replace("{POLYNOMIAL}", _EXP_POLYNOMIAL["f" if single else "d"]), own
    if name == "logarithm":
        own = {k: dtype.type(v) for k, v in _LOG_CONSTANTS["f" if single else "d"].items()}
        width, mantissa, exponent = (32, 23, 0xff) if single else (64, 52, 0x7ff)
        mantissa_mask = ~(exponent << mantissa) & ((1 << width) - 1)
        own.update(I0=integer(0), I1=integer(1), MANTISSA=integer(mantissa),
                   EXP_MASK=integer(exponent), HALF_BIAS=integer(exponent // 2 - 1),
                   UP_BITS=integer(mantissa + 2), UP=dtype.type(2.0 ** (mantissa + 2)),
                   TINY=np.finfo(dtype).tiny,
                   MANT_MASK=np.array(mantissa_mask, np.uint64).astype(integer)[()],
                   HALF_BITS=np.array(0.5, dtype).view(integer)[()], NAN=dtype.type(np.nan),
                   INF=dtype.type(np.inf), MINUS_INF=dtype.type(-np.inf))
        return _LOGARITHM.replace("{POLYNOMIAL}", _LOG_POLYNOMIAL["f" if single else "d"]), own
    return _TEMPLATES[name], {}
