"""Which kernels groups share: groups of one structure share a kernel outright (a loop's sweeps
on other buffers), and groups that differ only in where their slices start, or in the scalar
constants their elementwise ops read, share one that takes those as arguments.

A loop over an index (`out[i] = a * x[i] + b * out[i - 1]`, a row at a time; `y[i] = f(x[i]) + i`)
makes one group a step, each reading and writing rows at other offsets, perhaps with the loop's
counter as a constant: their structures differ only in the `start` of their slices and slice
assignments and in those constants' values, so each would be written and compiled anew (an EWMA
over 40 rows: 39 kernels, 10 s of numba on the CPU). Here those become arguments of one kernel
(`Lifted`), which each group's launch passes its own values of: the text is the same, the compile
happens once. Only what differs within such a family is lifted; the rest stays literal (a
stencil's fixed offsets keep the kernels' fast paths, a constant keeps its folding).

This module is the decision (`plan`); the renderer writes a lifted start or constant as its name
(render.Renderer.lifted) and each backend passes the values (CUDA: starts among a kernel's size
arguments, which `Lifted` reads like kernel.Size, constants not yet; CPU: both, before the arrays).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..fusion.group import EVERY, EVERY_START, SLICING, Group
from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE

# Group kinds whose kernels read slice starts and constants only through the renderer (a sort's
# or scan's planner reads starts itself; a product's operands are planned by their layout).
LIFTABLE = ("elementwise", "loop", "input")
# Lifted arguments' names start with this, which no name the renderers make does
PREFIX = "lifted_"


@dataclass(frozen=True)
class Lifted:
    """A runtime argument of a shared kernel: where slice (or slice assignment) `node` starts
    along `axis` (an int64), or (`operand` set) the scalar constant `node` reads at that operand
    position (of the constant's dtype). Read as CUDA's kernel.Size arguments are (name, node,
    value, moved)."""
    name: str
    node: Node
    axis: int = 0
    operand: int | None = None
    stride: bool = False            # (a Size's field: never a stride)

    @property
    def value(self):
        if self.operand is not None:
            return self.node.inputs[self.operand].attrs["value"].array[()]
        return int(self.node.attrs["start"][self.axis])

    @property
    def dtype(self) -> np.dtype:
        """The argument's type: int64 for a start, the constant's dtype for a scalar."""
        if self.operand is not None:
            return self.node.inputs[self.operand].dtype
        return np.dtype(np.int64)

    def argument(self):
        """The value as a kernel takes it (a NumPy scalar of `dtype`)."""
        return self.dtype.type(self.value)

    @property
    def key(self) -> tuple:
        """What the renderer looks the name up by."""
        if self.operand is not None:
            return ("value", self.node.id, self.operand)
        return ("start", self.node.id, self.axis)

    def moved(self, node: Node, strides: dict | None = None) -> "Lifted":
        return dataclasses.replace(self, node=node)


def plan(groups: list, strides: dict, scalars=lambda dtype: True,
         liftable=lambda group: group.kind in LIFTABLE) -> dict:
    """{group id: frozenset of places} its kernel takes as arguments (group.structure's
    `lifted`): for each family of groups equal up to their slice starts and their elementwise
    ops' scalar constants (those whose dtype `scalars` accepts; None: none), the places that
    differ between its members. Only groups `liftable` accepts (a backend's kernels for them
    read starts and constants through the renderer) join a family."""
    wildcard = EVERY if scalars is not None else EVERY_START
    families: dict = {}
    for group in groups:
        if liftable(group):
            families.setdefault(group.structure(strides, lifted=wildcard), []).append(group)
    lifted = {}
    for members in families.values():
        if len(members) < 2:
            continue
        seen: dict = {}
        for group in members:
            for place, value in _places(group, scalars):
                seen.setdefault(place, set()).add(value)
        varying = frozenset(place for place, found in seen.items() if len(found) > 1)
        if varying:
            lifted.update((group.id, varying) for group in members)
    return lifted


def _places(group: Group, scalars):
    """(place, its value in this group) of each start and each scalar constant operand of an
    elementwise member that `scalars` accepts, members in the canonical order."""
    members = group.canonical()[1]
    inside = {n.id for n in members} | {n.id for n in group.inputs}
    for j, node in enumerate(members):
        if node.op in SLICING:
            for axis, start in enumerate(node.attrs["start"]):
                yield ("start", j, axis), start
        if scalars is not None and node.kind == ELEMENTWISE:
            for k, source in enumerate(node.inputs):
                if source.id not in inside and scalars(source.dtype):
                    yield ("value", j, k), source.attrs["value"]


def arguments(group: Group, lifted: frozenset) -> list:
    """The Lifted arguments of `group`'s kernel for the lifted places, in order: lifted_off0,
    lifted_off1, ... for starts, lifted_k0, lifted_k1, ... for constants. (The prefix keeps them
    apart from the renderer's own names: constants named k0, k1, ... were overwritten by a
    reduction's `k2 = 0`, and NPBench azimint's shared masked sums read a bin's bound as 0.)"""
    members = group.canonical()[1]
    found, starts, constants = [], 0, 0
    for kind, j, position in sorted(lifted):
        if kind == "start":
            found.append(Lifted(f"{PREFIX}off{starts}", members[j], axis=position))
            starts += 1
        else:
            found.append(Lifted(f"{PREFIX}k{constants}", members[j], operand=position))
            constants += 1
    return found


def names(arguments_of: list) -> dict:
    """{Lifted.key: argument name}: what the renderer writes for each lifted place."""
    return {argument.key: argument.name for argument in arguments_of}


def describe(arguments_of: list) -> str:
    """What a shared kernel is passed for one group: "slice starts (2, 1) and scalars (3.0,)"."""
    starts = tuple(a.value for a in arguments_of if a.operand is None)
    scalars = tuple(a.value.item() for a in arguments_of if a.operand is not None)
    return " and ".join(text for text in (starts and f"slice starts {starts}",
                                          scalars and f"scalars {scalars}") if text)
