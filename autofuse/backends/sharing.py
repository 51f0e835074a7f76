"""Which kernels groups share: groups of one structure share a kernel outright (a loop's sweeps
on other buffers), and groups that differ only in where their slices start share one that takes
those starts as arguments.

A loop over an index (`out[i] = a * x[i] + b * out[i - 1]`, a row at a time) makes one group a
step, each reading and writing rows at other offsets: their structures differ only in the
`start` of their slices and slice assignments, so each would be written and compiled anew (an
EWMA over 40 rows: 39 kernels, 10 s of numba on the CPU). Here those starts become int64
arguments of one kernel (`Offset`), which each group's launch passes its own values of: the
text is the same, the compile happens once. Only the starts that differ within such a family are
lifted; the others stay literals (a stencil's fixed offsets keep the kernels' fast paths).

This module is the decision (`plan`); the renderer writes a lifted start as its name
(render.Renderer.lifted) and each backend passes the values (CUDA: among a kernel's size
arguments, which `Offset` reads like kernel.Size; CPU: before the arrays).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..fusion.group import EVERY_START, SLICING, Group
from ..ir.graph import Node

# Group kinds whose kernels read slice starts only through the renderer (a sort's or scan's
# planner reads them itself; a product's operands are planned by their layout).
LIFTABLE = ("elementwise", "loop", "input")


@dataclass(frozen=True)
class Offset:
    """A runtime int64 argument of a shared kernel: where slice (or slice assignment) `node`
    starts along `axis`. Read as CUDA's kernel.Size arguments are (name, node, value, moved)."""
    name: str
    node: Node
    axis: int
    stride: bool = False            # (a Size's field: an offset is never a stride)

    @property
    def value(self) -> int:
        return int(self.node.attrs["start"][self.axis])

    def moved(self, node: Node, strides: dict | None = None) -> "Offset":
        return dataclasses.replace(self, node=node)


def plan(groups: list, strides: dict) -> dict:
    """{group id: frozenset of (member position, axis)} whose starts its kernel takes as
    arguments: for each family of groups equal up to their slice starts, the places whose starts
    differ between its members (absent: none)."""
    families: dict = {}
    for group in groups:
        if group.kind in LIFTABLE and any(n.op in SLICING for n in group.nodes):
            families.setdefault(group.structure(strides, lifted=EVERY_START), []).append(group)
    lifted = {}
    for members in families.values():
        if len(members) < 2:
            continue
        seen: dict = {}
        for group in members:
            for place, start in _starts(group):
                seen.setdefault(place, set()).add(start)
        varying = frozenset(place for place, values in seen.items() if len(values) > 1)
        if varying:
            lifted.update((group.id, varying) for group in members)
    return lifted


def _starts(group: Group):
    """((member position, axis), start) of each slicing member, in the canonical order."""
    for j, node in enumerate(group.canonical()[1]):
        if node.op in SLICING:
            for axis, start in enumerate(node.attrs["start"]):
                yield (j, axis), start


def offsets(group: Group, lifted: frozenset) -> list:
    """The Offset arguments of `group`'s kernel for the lifted places: off0, off1, ... in order."""
    members = group.canonical()[1]
    return [Offset(f"off{k}", members[j], axis) for k, (j, axis) in enumerate(sorted(lifted))]


def names(offsets_of: list) -> dict:
    """{(node id, axis): argument name}: what the renderer writes for each lifted start."""
    return {(offset.node.id, offset.axis): offset.name for offset in offsets_of}
