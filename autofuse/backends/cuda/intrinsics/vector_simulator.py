"""The vector intrinsics (vector.py) as plain Python over NumPy arrays, for numba's CUDA
simulator: the same names and meaning, so the simulator tests the kernels' logic."""
from __future__ import annotations

import numpy as np


def functions(widths) -> dict:
    """{name: function} for each of vector.py's intrinsics, vectors of each of `widths` lanes."""
    def address(array):
        return array.__array_interface__["data"][0]

    def load(array, index, lanes):
        return tuple(array[index + lane] for lane in range(lanes))

    def store(array, index, values):
        for lane, value in enumerate(values):
            array[index + lane] = value

    def shared_load4(array, index):
        assert index % 4 == 0, f"a 16-byte shared read at element {index} is misaligned"
        return load(array.reshape(-1), index, 4)

    def shared_store4(array, index, *values):
        assert index % 4 == 0, f"a 16-byte shared write at element {index} is misaligned"
        flat = array.reshape(-1)
        assert np.shares_memory(flat, array)
        store(flat, index, values)

    def hinted_load(lanes, qualifier):
        if lanes == 1:
            return lambda a, i: a[i]
        return lambda a, i: load(a, i, lanes)

    def hinted_store(lanes, qualifier):
        return lambda a, i, *v: store(a, i, v[:lanes])

    def grid_signal():
        pass

    functions = {"address": address, "sload4": shared_load4, "sstore4": shared_store4,
                 "hinted_load": hinted_load, "hinted_store": hinted_store,
                 "launch_dependents": grid_signal, "wait_for_prerequisite": grid_signal}
    for lanes in widths:
        functions[f"vload{lanes}"] = lambda a, i, lanes=lanes: load(a, i, lanes)
        functions[f"vstore{lanes}"] = lambda a, i, *v, lanes=lanes: store(a, i, v[:lanes])
    return functions
