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
    Integers computed from floats are judged so too, by how many differ from the float64 run's:
    Mandelbrot escape counts after 200 float32 steps flip on the set's boundary wherever a
    rounding differs (a GPU's fused multiply-add: 6,296 of 2048^2 counts off NumPy's on an H100,
    where NumPy's own float32 counts are off the float64 run's at 6,572). The note then gives both
    errors."""
    result = compare(got, want, variant)
    if result["correct"] or exact is None:
        return result
    if any("max relative error" not in note and "integers differ" not in note
           for note in result["note"].split("; ")):
        return result
    ours, numpy_own = _errors(got, exact), _errors(want, exact)
    tolerance = TOLERANCE.get(variant, 1e-4)
    if len(ours) == len(numpy_own) and ours and all(
            mine <= (1.5 * theirs if integers else max(tolerance, 1.5 * theirs))
            for (mine, integers), (theirs, _) in zip(ours, numpy_own)):
        result.update(correct=True, note=(
            f"off NumPy's {variant} answer, but NumPy's is off the float64 answer by "
            f"{_worst(numpy_own)} and this one by {_worst(ours)}"))
    return result


def _errors(got, exact) -> list[tuple[float, bool]]:
    """Each float or integer array's error against `exact`'s, result by result, as (error,
    integers): a float array's normwise relative error, an integer or boolean array's fraction
    of elements that differ."""
    found = []
    for g, e in zip(leaves(got), leaves(exact)):
        if g is None or e is None:
            continue
        g, e = np.asarray(g), np.asarray(e)
        same = g.shape == e.shape and e.size
        if e.dtype.kind in "biu" and g.dtype.kind in "biu":
            found.append((np.count_nonzero(g != e) / e.size if same else float("inf"), True))
        elif e.dtype.kind == "f":
            found.append((_error(g, e.astype(np.float64))[0] if same else float("inf"), False))
    return found


def _worst(errors) -> str:
    """The largest float error and the largest fraction of integers that differ, in words."""
    floats = [error for error, integers in errors if not integers]
    counts = [error for error, integers in errors if integers]
    words = [f"{max(floats):.2g}"] if floats else []
    words += [f"{max(counts):.3%} of its integers"] if counts else []
    return " and ".join(words)


def _wrong(note: str) -> dict:
    return {"correct": False, "max_error": None, "note": note}
