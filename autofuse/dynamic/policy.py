"""Which argument dimensions are dynamic, and the shape-class key of a call.

`jit(dynamic=None)` (automatic) makes a dimension dynamic once calls of one argument structure
have shown two sizes in it; `dynamic=True` makes every dimension of a contiguous NumPy array
argument a candidate from the first call; `dynamic=False` specializes every shape. A dimension
the builder had to keep static (builder.py says why) stays static for that structure; one kept
static only because its kernels written for each size are faster (attention's flash kernel,
runs of a row's outputs) is specialized for SPECIALIZED sizes, then a class after all (as
torch.compile caps its recompiles at 8): a training loop's batch and its last short batch keep
their fast kernels, a server's every batch size does not compile anew.

The class key is the signature's key with each dynamic dimension's size replaced by a symbol
marker; dimensions of equal size share one marker (`x + y` needs their sizes equal). Sizes 0 and
1 keep their value in the key (NumPy's broadcasting and squeeze decide on them): a call of such a
size takes the class program only where the class was checked to run it (Shapes.joins).
"""
from __future__ import annotations

import numpy as np

from ..arrays import interface

SPECIALIZED = 4         # sizes a dimension is specialized for where its class would be slower
LATER = f"a class after {SPECIALIZED} sizes, or with jit(dynamic=True)"


class Slower(ValueError):
    """A backend's refusal of a class kernel where one exists but the kernel written for the
    sizes is much faster (attention's flash kernel, runs of a row's outputs): the automatic
    policy keeps the size static until it has seen SPECIALIZED sizes."""


def candidates(leaves, statics) -> list:
    """(leaf, dim) of every dimension a shape class may leave dynamic: NumPy and device arrays
    traced as C-contiguous (other layouts key on their strides)."""
    found = []
    for index, leaf in enumerate(leaves):
        if index in statics or not _contiguous_array(leaf):
            continue
        found += [(index, dim) for dim in range(len(shape_of(leaf)))]
    return found


def shape_of(leaf) -> tuple:
    """An array argument's shape: NumPy's, or a device array's interface's (an object may offer
    only __cuda_array_interface__)."""
    return leaf.shape if type(leaf) is np.ndarray else interface(leaf)[0]


def _contiguous_array(leaf) -> bool:
    if type(leaf) is np.ndarray:
        return leaf.flags.c_contiguous
    if hasattr(leaf, "__cuda_array_interface__"):
        return interface(leaf)[2] is None
    return False


class Policy:
    """The dynamic dimensions of one jitted function, per argument structure."""

    def __init__(self, mode):
        self.mode = mode                    # None (automatic), True or False
        self._first: dict = {}              # structure -> {(leaf, dim): the first size seen}
        self._varied: dict = {}             # structure -> {(leaf, dim) seen with two sizes}
        self._sizes: dict = {}              # structure -> {(leaf, dim): sizes seen (a few)}
        self.static: dict = {}              # structure -> {(leaf, dim): why it stays static}
        self.slower: dict = {}              # structure -> {(leaf, dim) static as only faster}

    def places(self, structure, leaves, statics) -> list:
        """The dimensions of this call to treat as dynamic (noting the sizes it brings)."""
        if self.mode is False:
            return []
        found = candidates(leaves, statics)
        kept = self.static.get(structure, {})
        if self.mode is True:
            return [p for p in found if p not in kept]
        first = self._first.setdefault(structure, {})
        varied = self._varied.setdefault(structure, set())
        seen = self._sizes.setdefault(structure, {})
        for leaf, dim in found:
            size = shape_of(leaves[leaf])[dim]
            if first.setdefault((leaf, dim), size) != size:
                varied.add((leaf, dim))
            sizes = seen.setdefault((leaf, dim), set())
            if len(sizes) <= SPECIALIZED:
                sizes.add(size)
        return [p for p in found if p in varied and (p not in kept or self.insists(structure, p))]

    def insists(self, structure, place) -> bool:
        """Whether a dimension kept static only because a class would be slower has now shown
        more than SPECIALIZED sizes: it takes a class after all."""
        return place in self.slower.get(structure, ()) and \
            len(self._sizes.get(structure, {}).get(place, ())) > SPECIALIZED

    def keep_static(self, structure, places: dict, slower=()) -> None:
        """Remember dimensions the builder kept static ((leaf, dim) -> why), and which of them
        only because a class would be slower."""
        self.static.setdefault(structure, {}).update(places)
        for place in places:
            if place in slower:
                self.slower.setdefault(structure, set()).add(place)
            else:
                self.slower.get(structure, set()).discard(place)


def class_key(key, leaves, places: list, joined: bool = False):
    """(the class key, symbol -> places): `key` from signature.Binder.split with the shapes of
    dynamic dimensions replaced by markers. `joined`: sizes 0 and 1 take markers as other sizes
    do (the key under which a class that runs them is found)."""
    parts, structure = key
    parts = list(parts)
    markers: dict = {}                      # size -> marker number
    symbols: dict = {}                      # marker number -> places
    shapes = {}
    for leaf, dim in places:
        size = shape_of(leaves[leaf])[dim]
        shape = shapes.setdefault(leaf, list(leaves[leaf].shape))
        if size in (0, 1) and not joined:
            continue
        marker = markers.setdefault(size, len(markers))
        symbols.setdefault(marker, []).append((leaf, dim))
        shape[dim] = ("n", marker)
    for leaf, shape in shapes.items():
        # NOTE: a leaf's key part holds its shape (signature.leaf_key: first for NumPy arrays,
        # after the type for device arrays)
        part = list(parts[leaf])
        part[part.index(tuple(leaves[leaf].shape))] = ("class",) + tuple(shape)
        parts[leaf] = tuple(part)
    return (tuple(parts), structure), symbols
