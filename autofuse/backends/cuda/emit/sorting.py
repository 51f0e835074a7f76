"""The sort group's kernel: each row sorted by one block with a bitonic network, then the group's
consumers (a median's or quantile's reads of fixed positions and interpolation, values of the
sorted row) computed from the sorted row.

A row of N elements is padded to P, the next power of two; every element carries its position
in the row, and the network orders by (NaN last, value, position) with padding after everything.
That is a strict total order, so the result is THE stable sort: argsort ties keep their order
(NumPy's kind="stable", and a valid answer for its unstable kinds), NaN comes last as in NumPy,
and -0.0 and 0.0 are ties. Rows whose keys and positions fit in shared memory (P <= Tuning.sort_row
and 48 KiB) are sorted there ("bitonic rows"), loaded through the group's producers. Longer rows
(fusion leaves such a sort alone: fusion/sorting.py) run the same network over per-block scratch
in global memory ("bitonic rows, global"), which the program replaces by the array library's sort
(CuPy's, torch's: runtime/library_sort.py) where the arrays are that library's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....fusion.group import Group
from ....fusion.sorting import in_row, row_shapes
from ..kernel import KernelSource, storage_dtype

LIBRARY = " (CuPy's or torch's sort for their arrays)"    # the strategy's words where it may


@dataclass(frozen=True)
class Plan:
    rows: int                     # rows (the product of the other axes)
    length: int                   # N, a row's elements
    padded: int                   # P, the next power of two (at least 2)
    threads: int
    on_chip: bool                 # keys and positions in shared memory, else in global scratch
    library: bool                 # the program may hand the sort to the array library's


def plan(group: Group, tuning, shared: int, simulator: bool) -> tuple[Plan, str]:
    """How the sort group's rows are sorted, and why; `shared`: the bytes of shared memory a block
    may declare (Device.shared_per_block)."""
    sort = group.sort
    shape, outer, _ = row_shapes(sort)
    n = shape[-1]
    padded = max(2, 1 << max(0, n - 1).bit_length())
    key_bytes = storage_dtype(np.float32 if sort.inputs[0].dtype == np.float16
                              else sort.inputs[0].dtype).itemsize
    fits = padded * (key_bytes + 4) <= shared
    # NOTE: a group holding more than its sort was fused for rows the fusion pass bounds
    # (CostModel.max_sort_row), which fit on chip whatever the tuning says.
    on_chip = fits and (padded <= tuning.sort_row or len(group.nodes) > 1)
    threads = max(32, min(padded // 2, 32 if simulator else tuning.sort_threads))
    rows = int(np.prod(outer, dtype=np.int64))
    alone = len(group.nodes) == 1
    chosen = Plan(rows, n, padded, threads, on_chip, not on_chip and alone and tuning.library_sort)
    if on_chip:
        return chosen, (f"rows of {n} elements (padded to {padded}) fit in shared memory: a block "
                        f"sorts a row (bitonic, {threads} threads), then computes its consumers")
    why = (f"rows of {n} elements (padded to {padded}) do not fit in shared memory: the sort "
           f"runs over global scratch, a block a row")
    if chosen.library:
        why += "; with CuPy or torch arrays, their library sort runs instead"
    return chosen, why


class Sorts:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def sort_rows(self, chosen: Plan) -> KernelSource:
        r = self.renderer
        sort = self.group.sort
        source = sort.inputs[0]
        shape, outer, keep = row_shapes(sort)
        n, padded, threads = chosen.length, chosen.padded, chosen.threads
        last = len(shape) - 1
        key_dtype = storage_dtype(r.held(source.dtype))
        key_type, order_type = self.numba_type(key_dtype), self.numba_type(np.int32)
        blocks = max(1, min(chosen.rows, self.tuning.row_grid))
        r.emit("t = cuda.threadIdx.x")
        r.emit("row = cuda.blockIdx.x")
        if chosen.on_chip:
            r.emit(f"keys = cuda.shared.array({padded}, {key_type})")
            r.emit(f"order = cuda.shared.array({padded}, {order_type})")
            r.emit("base = 0")
        else:
            self.scratch.append(("keys", blocks * padded, key_dtype))
            self.scratch.append(("order", blocks * padded, np.dtype(np.int32)))
            r.emit(f"base = cuda.blockIdx.x * {padded}")
        row_index = tuple(f"i{d}" for d in range(last))
        full = row_index + (f"r{last}",)
        r.emit(f"while row < {chosen.rows}:")
        r.push()
        self._outer_index(list(range(last)), shape, "row")
        self._load_row(source, full, n, padded, threads, key_dtype)
        self._network(n, padded, threads)
        self._hold_sorted(sort, row_index, key_dtype)
        self._store_sorted(shape, outer, keep, row_index, full, n, threads)
        r.emit("cuda.syncthreads()")
        r.emit("row += cuda.gridDim.x")
        r.pop()
        strategy = "bitonic rows" if chosen.on_chip else "bitonic rows, global"
        if chosen.library:
            strategy += LIBRARY
        return self.finish(strategy, threads, (blocks, 1, 1))

    def _load_row(self, source, full, n, padded, threads, key_dtype) -> None:
        r = self.renderer
        r.emit("j = t")
        r.emit(f"while j < {padded}:")
        r.push()
        r.emit(f"if j < {n}:")
        r.push()
        r.emit(f"{full[-1]} = j")
        value = r.value(source, full)
        if key_dtype.kind != r.held(source.dtype).kind:          # bools as bytes
            value = f"{r.ctor(key_dtype)}({value})"
        r.emit(f"keys[base + j] = {value}")
        r.pop()
        r.emit("order[base + j] = j")
        r.emit(f"j += {threads}")
        r.pop()
        r.emit("cuda.syncthreads()")

    def _network(self, n, padded, threads) -> None:
        """The bitonic network over (NaN last, value, position), padding (positions >= n) last."""
        r = self.renderer
        for line in (
                "k = 2",
                f"while k <= {padded}:",
                "    s = k // 2",
                "    while s > 0:",
                "        p = t",
                f"        while p < {padded // 2}:",
                "            low = p & (s - 1)",
                "            lo = base + (p - low) * 2 + low",
                "            hi = lo + s",
                "            ka = keys[lo]",
                "            kb = keys[hi]",
                "            ia = order[lo]",
                "            ib = order[hi]",
                f"            if ia >= {n} or ib >= {n}:",
                "                after = ia > ib",
                "            elif (ka != ka) != (kb != kb):",
                "                after = ka != ka",
                "            elif ka == kb or ka != ka:",
                "                after = ia > ib",
                "            else:",
                "                after = ka > kb",
                "            if after == (((lo - base) & k) == 0):",
                "                keys[lo] = kb",
                "                keys[hi] = ka",
                "                order[lo] = ib",
                "                order[hi] = ia",
                f"            p += {threads}",
                "        cuda.syncthreads()",
                "        s //= 2",
                "    k *= 2"):
            r.emit(line)

    def _hold_sorted(self, sort, row_index, key_dtype) -> None:
        r = self.renderer
        if sort.op == "argsort":
            spell = lambda at: f"{r.ctor(np.int64)}(order[base + {at}])"
        elif sort.dtype.kind == "b":
            spell = lambda at: f"(keys[base + {at}] != 0)"
        else:
            spell = lambda at: f"keys[base + {at}]"

        def sorted_value(index):
            if not in_row(index, row_index, sort.shape):
                return None
            return spell(index[-1])
        r.special[sort.id] = sorted_value

    def _store_sorted(self, shape, outer, keep, row_index, full, n, threads) -> None:
        r = self.renderer
        per_row, rows = [], []
        for param in self.outputs:
            if param.node.shape == outer:
                per_row.append((param, row_index))
            elif param.node.shape == keep:
                per_row.append((param, row_index + ("0",)))
            else:
                rows.append(param)
        if per_row:
            r.emit("if t == 0:")
            r.push()
            for param, index in per_row:
                self.store(param, index)
            r.pop()
        if rows:
            r.emit("j = t")
            r.emit(f"while j < {n}:")
            r.push()
            r.emit(f"{full[-1]} = j")
            for param in rows:
                self.store(param, full)
            r.emit(f"j += {threads}")
            r.pop()
