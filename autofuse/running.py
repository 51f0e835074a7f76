"""A built entry run on a call's leaves: NumPy's checks and errors first, arguments written in
place, and the results assembled as NumPy returns them (`run`; jit.caller's general path)."""
from __future__ import annotations

import functools

import numpy as np
from numpy._core.multiarray import may_share_memory as _may_share_memory   # (no dispatch layer)

from . import tree
from .errors import DTypeError, NumPyValueError, UnsupportedError, where


def run(entry, leaves):
    """Execute a built entry on the argument leaves; returns the result NumPy would."""
    if entry.single_array:
        # NOTE: the common case (one array result, no argument written, no Python-int range
        # check) skips the general result assembly below.
        value = entry.program([leaves[index] for index in entry.input_leaves])[0]
        for leaf in leaves:
            if value is leaf:
                return value.copy()
        return value
    traced = entry.traced
    for index, dtype in traced.weak_int_casts.items():
        value = leaves[index]
        low, high = _int_bounds(dtype)
        if not low <= value <= high:
            raise DTypeError(f"{entry.name}(): Python integer {value} out of bounds for {dtype}"
                             f"{where()}")
    for index in traced.nonnegative:
        if leaves[index] < 0:
            raise NumPyValueError(f"{entry.name}(): np.power: Integers to negative integer powers "
                                  f"are not allowed. (argument exponent {leaves[index]}){where()}")
    _check_written_arguments_unaliased(entry, leaves)
    inputs = [leaves[index] for index in entry.input_leaves]
    outputs = entry.program(inputs)
    for output_index, error, message in traced.checks:
        if bool(outputs[output_index]):
            raise error(f"{entry.name}(): {message}")
    for leaf_index, output_index in traced.mutations:
        target = leaves[leaf_index]
        if isinstance(target, np.ndarray):
            np.copyto(target, outputs[output_index], casting="unsafe")
        else:
            entry.program.copy_into(target, outputs[output_index])
    results = []
    for spec in traced.outputs:
        if spec[0] == "argument":
            results.append(leaves[spec[1]])
        elif spec[0] == "constant":
            results.append(spec[1])
        else:
            results.append(_as_returned(_not_an_argument(outputs[spec[1]], leaves), spec[2]))
    return tree.unflatten(traced.structure, results)


def _check_written_arguments_unaliased(entry, leaves) -> None:
    """The trace treats every argument as its own memory: refuse a call where the function writes
    an argument that shares memory with another (NumPy would see the write through both)."""
    arrays = [(index, leaf) for index, leaf in enumerate(leaves) if type(leaf) is np.ndarray or
              isinstance(leaf, np.ndarray)]
    for written, _ in entry.traced.mutations:
        target = leaves[written]
        for index, leaf in arrays:
            if index != written and _may_share_memory(target, leaf):
                raise UnsupportedError(
                    f"{entry.name}(): argument {written} is written in place and shares memory with "
                    f"argument {index}; autofuse traces arguments as separate arrays, so pass copies"
                    f"{where()}")


@functools.lru_cache(maxsize=None)
def _int_bounds(dtype) -> tuple:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _not_an_argument(value, leaves):
    """A computed result is a new array, even where the program returns an input unchanged
    (x.astype(x.dtype), x.copy(), x + 0 folded away): copy it if it is an argument object."""
    if isinstance(value, np.ndarray) and any(value is leaf for leaf in leaves):
        return value.copy()
    return value


def _as_returned(value, kind: str):
    if kind == "scalar":
        # NOTE: a device array stays a 0-d device array (CuPy's and torch's own convention).
        return value[()] if isinstance(value, np.ndarray) else value
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "complex":
        return complex(value)
    if kind == "bool":
        return bool(value)
    return value
