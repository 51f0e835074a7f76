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
                  r"int_reciprocal)\(")

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


def source(name: str, dtype, suffix: str) -> tuple[str, dict]:
    """(definition source, globals it needs) of helper `name` for `dtype`."""
    dtype = np.dtype(dtype)
    names, values = {}, {}
    for key, value in _constants(dtype).items():
        names[key] = f"h_{suffix}_{key}"
        values[names[key]] = value
    names["T"] = f"h_{suffix}_T"
    values[names["T"]] = dtype.type
    text = _TEMPLATES[name].replace("{s}", suffix)
    for key, global_name in names.items():
        text = text.replace("{" + key + "}", global_name)
    return text, values
