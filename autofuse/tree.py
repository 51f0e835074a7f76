"""Flattening of nested arguments and results (tuples, lists, dicts) into leaves and back."""
from __future__ import annotations


class Leaf:
    """The place of one leaf in a structure."""
    __slots__ = ()

    def __repr__(self):
        return "*"


LEAF = Leaf()


def flatten(value) -> tuple[list, object]:
    """(leaves, structure): tuples, lists and dicts are containers; everything else is a leaf."""
    leaves: list = []

    def walk(item):
        if isinstance(item, tuple) and not hasattr(item, "_fields"):
            return ("tuple", tuple(walk(v) for v in item))
        if isinstance(item, list):
            return ("list", tuple(walk(v) for v in item))
        if isinstance(item, dict):
            keys = tuple(item)
            return ("dict", keys, tuple(walk(item[k]) for k in keys))
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
