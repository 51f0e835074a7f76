"""The scatter-add kernel: a grid-stride loop over the values, each added by an atomic to a
zeroed buffer of sums; the last block to finish writes the result (base plus sums) and zeroes
the sums again for the next call.

The sums are a scratch buffer the runtime allocates zeroed once per launch step and the kernel
leaves zeroed (as the split reduction's counter), so no launch clears memory first and the
result needs no initialization: the last block (found by an atomic ticket after a fence, as in
emit/split.py) reads every sum once all blocks have added theirs. That last pass is one block
over the base, cheap for a histogram's bins and slower for a base of millions of elements.

Atomics add in the dtype of their buffer (`accumulator`): float32, float64, int32, int64,
uint32 and uint64 as they are; narrower integers in 32 bits (wrapped back to their width at the
end: the same answer as NumPy's wrapping adds), bools as int32 counts (the result is `or`),
float16 in float32 (rounded once at the end, where NumPy rounds after every add). Complex values
have no CUDA scatter kernel (plan.py refuses them).
"""
from __future__ import annotations

import numpy as np

from ....arrays import contiguous
from ..kernel import MAX_GRID, KernelSource
from ... import scattering


def accumulator(dtype) -> np.dtype:
    """The dtype a scatter's atomics add in, for a result of `dtype`."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.dtype(np.int32)
    if dtype.kind in "iu" and dtype.itemsize < 4:
        return np.dtype(np.int32 if dtype.kind == "i" else np.uint32)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


def launch(values: int, threads: int, most: int) -> int:
    """Blocks of a scatter over `values` elements: one element a thread, at most `most`."""
    return max(1, min(-(-values // threads), most, MAX_GRID))


class Scatters:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def scatter(self) -> KernelSource:
        r = self.renderer
        node = self.group.scatter
        base, indices, values = node.inputs
        acc = accumulator(node.dtype)
        threads = 32 if self.simulator else self.tuning.scatter_threads
        blocks = 3 if self.simulator else launch(
            values.size, threads, self.tuning.scatter_blocks_per_sm * self.device.sms)
        self.split_reduction = True         # the last block reads the others' sums: no overlap
        self.scratch.append(("sync_sums", max(1, node.size), acc))
        self.scratch.append(("counter", 1, np.dtype(np.int32)))
        inner = int(np.prod(node.shape[1:], dtype=np.int64))
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        r.emit(f"last = cuda.shared.array(1, {self.numba_type(np.int32)})")
        self.identity_shape = values.shape

        def compute(flat, element):
            pass

        def add(flat, element):
            position = scattering.target(r, node, r.value(indices, element[:1]))
            r.emit(f"if {scattering.inside(node, position)}:")
            r.push()
            value = r.value(values, element)
            if node.dtype.kind == "b":
                value = f"(1 if {value} else 0)"
            rest = self.offset(node.shape[1:], contiguous(node.shape[1:]), element[1:])
            cell = position if inner == 1 else self.ix(f"{position} * {inner} + {rest}")
            r.emit(f"cuda.atomic.add(sync_sums, {cell}, {r.ctor(acc)}({value}))")
            r.pop()
        self.strided_loop(values.size, values.shape, 1, compute, add)
        r.emit("cuda.threadfence()")
        r.emit("cuda.syncthreads()")
        r.emit("if t == 0:")
        r.emit(f"    last[0] = cuda.atomic.add(counter, 0, 1) == {blocks - 1}")
        r.emit("cuda.syncthreads()")
        r.emit("if last[0] != 0:")
        r.push()
        r.emit("cuda.threadfence()")
        r.emit("j = t")
        r.emit(f"while j < {node.size}:")
        r.push()
        index = self.element_index("j", node.shape, "_b")
        total = r.name("sum")
        r.emit(f"{total} = sync_sums[j]")
        r.emit(f"sync_sums[j] = {r.ctor(acc)}(0)")
        r.emit(f"o0[j] = {self.stored(node, self._result(node, r.value(base, index), total))}")
        r.emit(f"j = {self.ix(f'j + {threads}')}")
        r.pop()
        r.emit("if t == 0:")
        r.emit("    counter[0] = 0")
        r.pop()
        accumulated = "" if acc == node.dtype else f", added in {acc.name}"
        return self.finish(f"atomic scatter{accumulated}", threads, (blocks, 1, 1))

    def _result(self, node, base: str, total: str) -> str:
        """The base element plus its sum, as the result's held value."""
        r = self.renderer
        if node.dtype.kind == "b":
            return f"({base} or {total} != 0)"
        held = r.held(node.dtype)
        if held != node.dtype:                   # float16: added in float32, rounded once
            return r.convert(node.dtype, f"({base} + {total})")
        return scattering.added(r, node.dtype, base, f"{r.ctor(node.dtype)}({total})")

