"""Flattening of nested arguments and results (tuples, lists, dicts) into leaves and back."""
from __future__ import annotations

import numpy as np


class Leaf:
    """The place of one leaf in a structure."""
    __slots__ = ()

    def __repr__(self):
        return "*"


LEAF = Leaf()


_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


def numeric_sequence(item) -> bool:
    """A non-empty list or tuple of numbers (nested rectangularly) that np.asarray makes a bool,
    int or float array: an argument NumPy would take as an array."""
    if not isinstance(item, (list, tuple)) or hasattr(item, "_fields") or not item:
        return False
    if not all(isinstance(v, _NUMBERS) or numeric_sequence(v) for v in item):
        return False
    try:
        return np.asarray(item).dtype.kind in "biuf"
    except ValueError:            # ragged
        return False


def flatten(value, sequences: int | None = None) -> tuple[list, object]:
    """(leaves, structure): tuples, lists and dicts are containers; everything else is a leaf.
    A list or tuple of numbers `sequences` or more levels down is a leaf too (an argument taken
    as an array: 2 for the (args, kwargs) pair, 0 for one argument)."""
    leaves: list = []

    def walk(item, depth=0):
        if sequences is not None and depth >= sequences and numeric_sequence(item):
            leaves.append(item)
            return LEAF
        if isinstance(item, tuple) and not hasattr(item, "_fields"):
            return ("tuple", tuple(walk(v, depth + 1) for v in item))
        if isinstance(item, list):
            return ("list", tuple(walk(v, depth + 1) for v in item))
        if isinstance(item, dict):
            keys = tuple(item)
            return ("dict", keys, tuple(walk(item[k], depth + 1) for k in keys))
        leaves.append(item)
        return LEAF

    return leaves, walk(value)


def unflatten(structure, leaves):
    """The inverse of `flatten`."""
    iterator = iter(leaves)

    def build(node):
        if node is LEAF:
            return next(iterator)
        if node[0] == "tuple":
            return tuple(build(v) for v in node[1])
        if node[0] == "list":
            return [build(v) for v in node[1]]
        return {key: build(v) for key, v in zip(node[1], node[2])}

    return build(structure)
