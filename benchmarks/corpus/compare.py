"""Whether a result matches NumPy's: the same structure, shapes and dtypes, and values within a
tolerance set by the dtype (integers and booleans exactly)."""
from __future__ import annotations

import numpy as np

# The largest normwise relative error, max|got - want| / max|want|, a dtype's result may have.
TOLERANCE = {"float16": 1e-2, "float32": 1e-4, "complex64": 1e-4,
             "float64": 1e-10, "complex128": 1e-10}


def leaves(value) -> list:
    """The arrays and scalars of a result, in order; None stays a leaf."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def compare(got, want, variant: str = "") -> dict:
    """{"correct": bool, "max_error": float or None, "note": str} for `got` against NumPy's `want`.

    A result is held to its dtype's tolerance, or to the `variant` dtype's (the program's inputs)
    where that is looser: a float64 result computed from float32 sums (NumPy's promotion of a
    float32 sum divided by an int64 count) carries float32 rounding."""
    got_leaves, want_leaves = leaves(got), leaves(want)
    if len(got_leaves) != len(want_leaves):
        return _wrong(f"{len(got_leaves)} results where NumPy returns {len(want_leaves)}")
    worst, notes = 0.0, []
    for index, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        if w is None or g is None:
            if (g is None) != (w is None):
                notes.append(f"result {index}: {type(g).__name__} where NumPy has {type(w).__name__}")
            continue
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            notes.append(f"result {index}: shape {g.shape} where NumPy's is {w.shape}")
            continue
        if g.dtype != w.dtype:
            notes.append(f"result {index}: dtype {g.dtype} where NumPy's is {w.dtype}")
        error, note = _error(g, w, variant)
        worst = max(worst, error)
        if note:
            notes.append(f"result {index}: {note}")
    return {"correct": not notes, "max_error": worst, "note": "; ".join(notes)}


def _error(got, want, variant: str = "") -> tuple[float, str]:
    """(normwise relative error, why it is too large or "")."""
    if want.size == 0:
        return 0.0, ""
    if want.dtype.kind in "biu" and got.dtype.kind in "biu":
        differ = int(np.count_nonzero(got != want))
        return float(differ), (f"{differ} of {want.size} integers differ" if differ else "")
    got_nan, want_nan = np.isnan(got), np.isnan(want)
    if np.any(got_nan != want_nan):
        return float("inf"), f"NaN at {int(np.count_nonzero(got_nan != want_nan))} other places"
    finite = np.isfinite(want)
    infinite = ~finite & ~want_nan
    if np.any(got[infinite] != want[infinite]):
        return float("inf"), "infinities differ"
    if not finite.any():
        return 0.0, ""
    difference = np.abs(got[finite].astype(np.complex128) - want[finite].astype(np.complex128))
    scale = max(float(np.abs(want[finite]).max()), 1e-30)
    error = float(difference.max()) / scale
    tolerance = max(TOLERANCE.get(str(want.dtype), 1e-4), TOLERANCE.get(variant, 0.0))
    return error, (f"max relative error {error:.3g} over {tolerance:g}" if error > tolerance else "")


def judged(got, want, exact, variant: str = "") -> dict:
    """compare(), except that a value error over the tolerance is forgiven where `exact` (the
    program run in float64 on the same inputs) shows NumPy's own answer in `variant` to be at
    least as far off: float32 column sums in NumPy add 2^20 rows one after another (zscore's
    normwise error 2.2e-4 against float64), and a more careful answer must not read as wrong.
    The note then gives both errors."""
    result = compare(got, want, variant)
    if result["correct"] or exact is None:
        return result
    if any("max relative error" not in note for note in result["note"].split("; ")):
        return result
    ours, numpy_own = _errors(got, exact), _errors(want, exact)
    if len(ours) == len(numpy_own) and all(
            mine <= max(TOLERANCE.get(variant, 1e-4), 1.5 * theirs)
            for mine, theirs in zip(ours, numpy_own)):
        result.update(correct=True, note=(
            f"off NumPy's {variant} answer, but NumPy's is off the float64 answer by "
            f"{max(numpy_own):.2g} and this one by {max(ours):.2g}"))
    return result


def _errors(got, exact) -> list[float]:
    """Each float array's normwise relative error against `exact`'s, result by result."""
    found = []
    for g, e in zip(leaves(got), leaves(exact)):
        if g is None or e is None or np.asarray(e).dtype.kind != "f":
            continue
        g, e = np.asarray(g), np.asarray(e, dtype=np.float64)
        found.append(_error(g, e)[0] if g.shape == e.shape and e.size else float("inf"))
    return found


def _wrong(note: str) -> dict:
    return {"correct": False, "max_error": None, "note": note}
