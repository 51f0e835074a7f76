"""Scatter groups on the CPU: the base copied into the result, then one pass over the values
adding each row at its index (the values' producers computed as it goes).

Serially the values are added in their order, as NumPy's add.at does. Where the values are many
and the base small (a histogram of 10^7 values into 1000 bins) the pass runs on several threads:
the values are cut into a fixed number of pieces, each adding into a zeroed private copy of the
result, and the copies are then added to the base in piece order (so the answer does not depend
on the thread count; float sums differ from NumPy's order by rounding only). `ScatterTuning` says
when; it is a value passed to the generator (source.generate), never a module global.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import scattering


@dataclass(frozen=True)
class ScatterTuning:
    """When a CPU scatter-add runs on threads, each piece of the values into its own copy."""
    pieces: int = 8                 # the fixed number of pieces (and private copies)
    min_values: int = 1 << 16       # fewer value elements add serially (fork-join costs more)
    max_copies_share: float = 0.25  # the copies' elements (pieces x base) at most this share of
    #                                 the value elements: zeroing and merging them stays cheap


DEFAULT_SCATTER = ScatterTuning()


def parallel_scatter(base_size: int, value_size: int, tuning: ScatterTuning) -> bool:
    """Whether `value_size` value elements go into `base_size` result elements on threads."""
    return value_size >= tuning.min_values and \
        tuning.pieces * base_size <= tuning.max_copies_share * value_size


class Scatter:
    """Methods of the CPU source writer (source.CpuSource); see the module docstring."""

    def scatter(self):
        node = self.group.scatter
        base, indices, values = node.inputs
        if len(self.outputs) != 1 or self.outputs[0].node.id != node.id:
            raise NotImplementedError("a scatter kernel stores only its result (fusion/scatter.py)")
        self._zero_d_views()
        r = self.renderer
        rows = values.shape[0]
        parallel = parallel_scatter(node.size, values.size, self.scatter_tuning)
        held = r.ctor(r.held(node.dtype))
        if not parallel:
            self._copy_base(node, lambda index: r.value(base, index))
            self._add_rows(node, "o0", (), "0", str(rows))
            return "serial scatter", False
        pieces = self.scatter_tuning.pieces
        step = -(-rows // pieces)
        copies = r.name("copies")
        r.emit(f"{copies} = np.zeros({(pieces,) + node.shape!r}, {held})")
        r.emit(f"for c in numba.prange({pieces}):")
        r.push()
        self._add_rows(node, copies, ("c",), f"c * {step}", f"min({rows}, (c + 1) * {step})")
        r.pop()

        def merged(index):
            total = r.name("total")
            r.emit(f"{total} = {r.value(base, index)}")
            piece = f"{copies}[c, {', '.join(index)}]"
            r.emit(f"for c in range({pieces}):")
            r.emit(f"    {total} = {scattering.added(r, node.dtype, total, piece)}")
            return total
        self._copy_base(node, merged)
        return f"scatter into {pieces} private copies", True

    def _copy_base(self, node, value) -> None:
        """o0 over the result's shape, each element `value(index)`."""
        r = self.renderer
        index = tuple(f"j{d}" for d in range(node.ndim))
        opened = self.loops(list(index), list(node.shape), False)
        r.emit(f"o0[{', '.join(index)}] = {value(index)}")
        self.close(opened)

    def _add_rows(self, node, target: str, lead: tuple, start: str, stop: str) -> None:
        """Each values row in [start, stop) added into `target` (indexed by `lead` first) at its
        index."""
        r = self.renderer
        indices, values = node.inputs[1], node.inputs[2]
        r.emit(f"for i0 in range({start}, {stop}):")
        r.push()
        position = scattering.target(r, node, r.value(indices, ("i0",)))
        r.emit(f"if {scattering.inside(node, position)}:")
        r.push()
        rest = tuple(f"i{d}" for d in range(1, values.ndim))
        opened = self.loops(list(rest), list(values.shape[1:]), False)
        value = r.value(values, ("i0",) + rest)
        cell = f"{target}[{', '.join(lead + (position,) + rest)}]"
        r.emit(f"{cell} = {scattering.added(r, node.dtype, cell, value)}")
        self.close(opened)
        r.pop()
        r.pop()
