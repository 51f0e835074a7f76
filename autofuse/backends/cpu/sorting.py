"""A sort group on the CPU: per row (a prange over the other axes), the row loaded into a buffer
of the thread's own with its producers computed as it is read, sorted by numba, then the group's
outputs written from the sorted row (the row itself, and per-row values such as a median read
from fixed positions of it).

numba's np.sort on a 1-d array and np.argsort(kind="mergesort") order NaN last as NumPy does;
the merge sort is stable, so argsort ties keep their order (NumPy's kind="stable", and a valid
answer for its unstable kinds). Values are sorted by np.sort (a quicksort: equal values are
interchangeable, -0.0 and 0.0 included, as in NumPy's own unstable sort).

Longer rows than the cost model's `max_sort_row` are sorted alone (fusion/sorting.py), and such
a lone sort runs NumPy's own sort (`by_numpy`): NumPy's default sort is vectorized, about 10x
numba's quicksort (2000x512 float32 rows: 7.7 ms against 76 ms; numba's merge argsort 125 ms
against NumPy's stable argsort 67 ms, on this project's shared 2-core machine), which a pass less
over memory does not repay."""
from __future__ import annotations

import numpy as np

from ...fusion.sorting import in_row, row_shapes
from .kernel import PARALLEL_ELEMENTS


def by_numpy(group, cost) -> str | None:
    """Why `group` runs NumPy's sort (a lone sort of rows longer than cost.max_sort_row), or
    None where it is compiled."""
    sort = group.sort
    if group.kind != "sort" or len(group.nodes) != 1 or sort.shape[-1] <= cost.max_sort_row:
        return None
    kind = "np.argsort(kind='stable')" if sort.op == "argsort" else "np.sort"
    return (f"numpy sort ({kind} of rows of {sort.shape[-1]}: NumPy's vectorized sort beats "
            f"numba's per-row sort)")


class Sorting:
    """Methods of the CPU source writer (source.CpuSource); see the module docstring."""

    def sort_rows(self):
        r = self.renderer
        self._zero_d_views()
        sort = self.group.sort
        shape, outer, keep = row_shapes(sort)
        n = shape[-1]
        last = len(shape) - 1
        outer_size = int(np.prod(outer, dtype=np.int64))
        parallel = outer_size > 1 and outer_size * n >= PARALLEL_ELEMENTS
        row_index = tuple(f"i{d}" for d in range(last))
        full = row_index + (f"r{last}",)
        opened = self.loops(list(row_index), list(outer), parallel)
        source = sort.inputs[0]
        row = r.name("row")
        r.emit(f"{row} = np.empty({n}, {r.ctor(r.held(source.dtype))})")
        r.emit(f"for r{last} in range({n}):")
        r.push()
        r.emit(f"{row}[r{last}] = {r.value(source, full)}")
        r.pop()
        done = r.name("sorted")
        if sort.op == "sort":
            r.emit(f"{done} = np.sort({row})")
        else:
            r.emit(f"{done} = np.argsort({row}, kind='mergesort')")

        def sorted_value(index, done=done):
            if not in_row(index, row_index, sort.shape):
                return None
            return f"{done}[{index[-1]}]"
        r.special[sort.id] = sorted_value
        rows = []
        for k, arg in enumerate(self.outputs):
            node = arg.node
            if node.shape == outer:
                self.store(k, node, row_index)
            elif node.shape == keep:
                self.store(k, node, row_index + ("0",))
            else:
                rows.append((k, node))
        if rows:
            r.emit(f"for r{last} in range({n}):")
            r.push()
            for k, node in rows:
                self.store(k, node, full)
            r.pop()
        self.close(opened)
        return "sorted rows", parallel
