"""Arguments that speak only DLPack (`__dlpack__` and `__dlpack_device__`, no NumPy array and no
`__cuda_array_interface__`): read without a copy, and results handed back in the caller's kind.

On the CPU the argument is read as a NumPy array (`np.from_dlpack`); on a CUDA device as an
array of an installed library that imports DLPack without copying, CuPy's if installed, else
torch's (`from_dlpack`), whose memory pool and stream the call then uses, as for their own arrays.
Both share the argument's memory, so an in-place update writes it.

Results come back through the argument's array-API namespace (`__array_namespace__()`'s
`from_dlpack`, as the array API standard defines it; else its top-level module's `from_dlpack`,
as torch has), again without a copy; an argument returned unchanged is the caller's own object.
Where neither exists, results stay in the importing library's kind (NumPy, CuPy or torch).
"""
from __future__ import annotations

import sys

import numpy as np

from . import tree
from .errors import ArgumentError, where

# DLPack's DLDeviceType codes (dlpack.h)
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13
_HOST = (CPU, CUDA_HOST)               # memory NumPy can read in place


def foreign(value) -> bool:
    """Whether `value` is an array autofuse reads only through DLPack."""
    return hasattr(value, "__dlpack_device__") and hasattr(value, "__dlpack__") and \
        not isinstance(value, np.ndarray) and not hasattr(value, "__cuda_array_interface__")


class Imported:
    """The foreign leaves of one call, read as arrays autofuse takes, and how to hand results
    back (`back(result)`)."""

    def __init__(self, originals: dict):
        self.originals = originals           # id(imported array) -> (imported, the caller's)
        self.namespace = None
        for _, original in originals.values():
            self.namespace = _namespace(original)
            if self.namespace is not None:
                break

    def back(self, result):
        leaves, structure = tree.flatten(result)
        return tree.unflatten(structure, [self._one(leaf) for leaf in leaves])

    def _one(self, value):
        found = self.originals.get(id(value))
        if found is not None and found[0] is value:
            return found[1]                  # an argument returned unchanged
        if self.namespace is None or not _is_array(value):
            return value
        return self.namespace.from_dlpack(value)


def _namespace(value):
    """Where `from_dlpack` makes arrays of `value`'s kind: its array-API namespace, else its
    top-level module where that has one (torch, for a CPU tensor); None where neither does."""
    get = getattr(value, "__array_namespace__", None)
    if get is not None:
        try:
            return get()
        except Exception:
            pass
    module = sys.modules.get(type(value).__module__.split(".")[0])
    return module if hasattr(module, "from_dlpack") else None


def _is_array(value) -> bool:
    return isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__")


def import_leaves(name: str, leaves: list) -> tuple[list, Imported]:
    """(leaves, Imported): a call's leaves with every foreign one read as an array autofuse takes
    (`name`: the function, for errors), and the record that hands results back."""
    originals = {}
    converted = []
    for index, leaf in enumerate(leaves):
        if foreign(leaf):
            array = read(leaf, f"{name}() argument {index}")
            originals[id(array)] = (array, leaf)
            leaf = array
        converted.append(leaf)
    return converted, Imported(originals)


def read(value, what: str):
    """`value` as a NumPy array (host memory) or a CuPy/torch array (CUDA memory), sharing its
    memory; an ArgumentError says why not."""
    try:
        device = int(value.__dlpack_device__()[0])
    except Exception as error:
        raise ArgumentError(f"{what}: {type(value).__name__}.__dlpack_device__() failed "
                            f"({type(error).__name__}: {error}){where()}") from None
    if device in _HOST:
        importer = np.from_dlpack
    elif device in (CUDA, CUDA_MANAGED):
        importer = _cuda_importer()
        if importer is None:
            raise ArgumentError(f"{what}: a {type(value).__name__} in CUDA memory is read through "
                                f"DLPack by CuPy or torch, and neither is installed{where()}")
    else:
        raise ArgumentError(f"{what}: a {type(value).__name__} on DLPack device type {device} "
                            f"(neither the CPU nor a CUDA GPU) cannot be read{where()}")
    try:
        return importer(value)
    except Exception as error:
        raise ArgumentError(f"{what}: reading a {type(value).__name__} through DLPack failed "
                            f"({type(error).__name__}: {error}){where()}") from None


def _cuda_importer():
    for module in ("cupy", "torch"):
        try:
            return __import__(module).from_dlpack
        except Exception:
            continue
    return None
