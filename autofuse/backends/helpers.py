"""Small scalar functions some op spellings call (floor, cube root, integer power, ...), written
once as source that numba compiles both as CPU functions and as CUDA device functions.

Each is instantiated per dtype (`math_floor_f32`) with its constants typed in that dtype; the
float rounding helpers use the add-and-subtract-2**p trick, which rounds half to even exactly.
Spellings and constants were checked against NumPy on both targets (float32 PTX holds no f64).
"""
from __future__ import annotations

import re

import numpy as np

CALL = re.compile(r"\b(math_floor|math_ceil|math_trunc|round_even|cube_root|int_power|"
                  r"int_reciprocal|hyperbolic_tangent)\(")

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
    if name == "hyperbolic_tangent" and not (target == "cpu" and np.dtype(dtype) == np.float32):
        return "math.tanh"
    return None


def source(name: str, dtype, suffix: str) -> tuple[str, dict]:
    """(definition source, globals it needs) of helper `name` for `dtype` (see `alias` for
    helpers that a target spells as a library call instead)."""
    dtype = np.dtype(dtype)
    constants = _constants(dtype)
    if name == "hyperbolic_tangent":
        template = _RATIONAL_TANH
        constants.update({k: dtype.type(v) for k, v in _TANH_CONSTANTS.items()})
    else:
        template = _TEMPLATES[name]
    names, values = {}, {}
    for key, value in constants.items():
        names[key] = f"h_{suffix}_{key}"
        values[names[key]] = value
    names["T"] = f"h_{suffix}_T"
    values[names["T"]] = dtype.type
    text = template.replace("{s}", suffix)
    for key, global_name in names.items():
        text = text.replace("{" + key + "}", global_name)
    return text, values
