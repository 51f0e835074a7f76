"""Division by a divisor that stays the same over a thread's elements (a row's sum in softmax, a
row's deviation in layernorm, a scalar argument, a constant), rendered as a multiplication by the
divisor's reciprocal and one correction, which gives NumPy's correctly rounded quotient.

Why: a float32 `a / b` compiles to PTX's div.rn.f32, which ptxas expands into a reciprocal
(MUFU.RCP), five FMAs, a range check (FCHK) and a branch to a slow path, for every element, the
reciprocal included although b is the same for the whole row. Here the reciprocal is taken once
(IEEE 1 / b), and each element costs a multiply, two FMAs and a range test.

Why it is exact (P. Markstein, IBM J. Res. Dev. 34(1), 1990): with y = RN(1/b) and q = RN(a * y),
which is within one ulp of a / b, the residual a - b * q is a float and fma(-q, b, a) gives it
exactly, and RN(q + residual * y) = fma(residual, y, q) is RN(a / b), provided nothing overflows
or underflows on the way. tests/test_cuda_divide.py checks the identity over every significand of
the dividend for dozens of divisors, against NumPy's division, bit for bit.

The ranges that keep it so, for float32: 2^-26 <= |b| <= 2^26 (y normal, far from overflow) and
2^-100 <= |a| <= 2^100 (the quotient, 2^-126 .. 2^126, normal; the residual's last bit above
float32's smallest). Anything else (zeros, tiny or huge values, infinities, NaN) takes the IEEE
division: a thread's vector step is computed again with it where any of its dividends falls
outside, a branch it rarely takes.

The correction's fused multiply-adds are numba.cuda.fma on a GPU; under numba's simulator, which
runs kernels as Python, they are `fma` below, fma32 (the simulator's own cuda.fma is a * b + c,
which rounds twice).
"""
from __future__ import annotations

import numpy as np

# The ranges above (float32 computations only; other dtypes keep the plain division).
DIVISOR_RANGE = (np.float32(2.0 ** -26), np.float32(2.0 ** 26))
DIVIDEND_RANGE = (np.float32(2.0 ** -100), np.float32(2.0 ** 100))


def fma32(a, b, c):
    """float32 fused multiply-add, RN(a * b + c) rounded once, for NumPy arrays or scalars.

    a * b is exact in float64 (24 + 24 bits); the float64 sum s is off from the exact one by err
    (TwoSum, exact). Rounding s to float32 gives the right answer except where s lies exactly
    halfway between two float32s while the exact sum does not: there err says which side."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):     # infinities and NaN pass through as a * b + c's
        p = a * b
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)
        rounded = s.astype(np.float32)
        away = np.where(s > rounded, np.nextafter(rounded, np.float32(np.inf)),
                        np.nextafter(rounded, np.float32(-np.inf)))
        halfway = (rounded.astype(np.float64) + away.astype(np.float64)) / 2
        take_away = (s == halfway) & np.isfinite(s) & (err != 0) & (
            np.sign(err) == np.sign(away.astype(np.float64) - rounded.astype(np.float64)))
    result = np.where(take_away, away, rounded)
    return result[()] if result.ndim == 0 else result


def divide(a, b):
    """What a generated kernel computes for a / b with an unchanging b, in NumPy (the tests' model
    of the rendered statements): the reciprocal with its correction inside the ranges, IEEE
    division outside them."""
    a, b = np.asarray(a, np.float32), np.float32(b)
    with np.errstate(all="ignore"):
        y = np.float32(1) / b
        q = a * y
        corrected = fma32(fma32(-q, b, a), y, q)
        divisor_ok = DIVISOR_RANGE[0] <= abs(b) <= DIVISOR_RANGE[1]
        dividend_ok = (DIVIDEND_RANGE[0] <= np.abs(a)) & (np.abs(a) <= DIVIDEND_RANGE[1])
        return np.where(divisor_ok & dividend_ok, corrected, a / b)


def render(renderer, a: str, b: str, constant_b=None, simulator: bool = False) -> str | None:
    """Statements computing float32 a / b for a divisor `b` that does not change over the loop
    the division sits in; the name of the quotient, or None where the plain division stays.

    Only inside a vector step whose stores collect range tests (renderer.deferred is a list,
    see emit/vector.py's vector_lanes_store): the test of each quotient joins that list, and the step
    is computed again with IEEE division where any fails, so the common path has no branch. (A
    branch a quotient cost more than the division it saved: H200, x torch.compile, layernorm
    1.005 -> 1.013, softmax 0.795 -> 0.827.) `constant_b`: b's value where b is a constant."""
    r = renderer
    if r.deferred is None:
        return None
    fma = "fma" if simulator else "cuda.fma"
    low, high = (r.constant(v) for v in DIVIDEND_RANGE)
    if constant_b is not None:
        value = np.float32(constant_b)
        if not DIVISOR_RANGE[0] <= abs(value) <= DIVISOR_RANGE[1]:
            return None
        y, divisor_ok = r.constant(np.float32(1) / value), None
    else:
        y, divisor_ok = reciprocal(r, b)
    if simulator:
        r.globals["fma"] = ("divide", "fma")
    q, result = r.name("q"), r.name()
    r.emit(f"{q} = {a} * {y}")
    r.emit(f"{result} = {fma}({fma}(-{q}, {b}, {a}), {y}, {q})")
    # the range tests, joined by & (no short circuit, so no branch)
    r.deferred += ([divisor_ok] if divisor_ok is not None else []) + [
        f"({low} <= abs({a})) & (abs({a}) <= {high})"]
    return result


def reciprocal(renderer, b: str) -> tuple[str, str]:
    """(1 / b, whether b is inside its range) as names: made once a scope (a rows kernel makes
    them at the row's, before its vector loop) and found again."""
    r = renderer
    found = r._lookup(("reciprocal", b))
    if found is None:
        y, divisor_ok = r.name("rcp"), r.name("rok")
        r.emit(f"{y} = {r.constant(np.float32(1))} / {b}")
        r.emit(f"{divisor_ok} = ({r.constant(DIVISOR_RANGE[0])} <= abs({b})) & "
               f"(abs({b}) <= {r.constant(DIVISOR_RANGE[1])})")
        r.scopes[-1][("reciprocal", b)] = found = (y, divisor_ok)
    return found


def fma(a, b, c):
    """The simulator's fused multiply-add in generated kernels."""
    return np.float32(fma32(a, b, c))
