"""How a reduction's partial results are held and combined: partial dtypes, shared memory, block
and warp reductions."""
from __future__ import annotations


import numpy as np

from ....ir.graph import Node
from ...accumulators import acc_dtype, paired, second_dtype
from ...render import short
from ..kernel import storage_dtype


class Combining:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def numba_type(self, dtype) -> str:
        """The numba type of registers, local and shared arrays holding values of `dtype`."""
        dtype = storage_dtype(dtype) if np.dtype(dtype).kind == "b" else \
            self.renderer.held(dtype)
        name = f"nb_{short(dtype)}"
        self.renderer.globals[name] = ("numba", dtype.name)
        return name

    def partial_dtype(self, node: Node) -> np.dtype:
        """The type of reduction `node`'s partial results in scratch memory: its accumulator's
        (an arg-reduction's: its input's), bools as bytes."""
        return storage_dtype(self.renderer.held(acc_dtype(node)))

    def second_partial_dtype(self, node: Node) -> np.dtype:
        """The type of a paired reduction's second partials (`idx`) in scratch memory: a
        position's int64, expsum's held sum (int64 for the others, which store a 0)."""
        return self.renderer.held(second_dtype(node)) if paired(node) else np.dtype(np.int64)

    def to_partial(self, node: Node, acc: str) -> str:
        """Accumulator `acc` of `node` as its partial's type (a bool as a byte)."""
        return f"{self.renderer.ctor(np.uint8)}({acc})" if self._bool_partial(node) else acc

    def from_partial(self, node: Node, value: str) -> str:
        """A partial of `node` read back as its accumulator's type."""
        return f"({value} != 0)" if self._bool_partial(node) else value

    def _bool_partial(self, node: Node) -> bool:
        return acc_dtype(node).kind == "b"

    def declare_shared(self, node: Node) -> None:
        r = self.renderer
        size = 1024 if self.simulator else 32
        r.emit(f"sh{node.id} = cuda.shared.array({size}, {self.numba_type(acc_dtype(node))})")
        if paired(node):
            r.emit(f"shi{node.id} = cuda.shared.array({size}, "
                   f"{self.numba_type(second_dtype(node))})")

    def block_reduce(self, node: Node, acc: str, idx: str, block: int) -> None:
        """Combine every thread's `acc` into all threads' `acc` (and `idx` for arg-reductions).
        It ends without a barrier: a caller that writes the node's shared array again (a rows
        kernel's next row, a split kernel's last block) passes one of its own first."""
        r = self.renderer
        arg = paired(node)
        sh, shi = f"sh{node.id}", f"shi{node.id}"
        if self.simulator:
            r.emit(f"{sh}[t] = {acc}")
            if arg:
                r.emit(f"{shi}[t] = {idx}")
            r.emit("cuda.syncthreads()")
            step = block // 2
            while step >= 1:
                r.emit(f"if t < {step}:")
                r.push()
                other, other_idx = r.name("sw"), r.name("swi")
                r.emit(f"{other} = {sh}[t + {step}]")
                r.emit(f"{other_idx} = {shi}[t + {step}]" if arg else f"{other_idx} = 0")
                self.acc.merge(node, acc, idx, other, other_idx)
                r.emit(f"{sh}[t] = {acc}")
                if arg:
                    r.emit(f"{shi}[t] = {idx}")
                r.pop()
                r.emit("cuda.syncthreads()")
                step //= 2
            r.emit(f"{acc} = {sh}[0]")
            if arg:
                r.emit(f"{idx} = {shi}[0]")
            return
        self.warp_reduce(node, acc, idx)
        if block > 32:
            warps = block // 32
            r.emit("if t % 32 == 0:")
            r.push()
            r.emit(f"{sh}[t // 32] = {acc}")
            if arg:
                r.emit(f"{shi}[t // 32] = {idx}")
            r.pop()
            r.emit("cuda.syncthreads()")
            r.emit(f"if t % 32 < {warps}:")
            r.push()
            r.emit(f"{acc} = {sh}[t % 32]")
            if arg:
                r.emit(f"{idx} = {shi}[t % 32]")
            r.pop()
            r.emit("else:")
            r.push()
            self.acc.init(node, acc, idx, node.dtype)
            r.pop()
            self.warp_reduce(node, acc, idx)

    def warp_reduce(self, node: Node, acc: str, idx: str, lanes=(16, 8, 4, 2, 1)) -> None:
        """Combine `acc` (and `idx`) across the lanes of a warp `lanes` apart (xor shuffles)."""
        r = self.renderer
        arg = paired(node)
        dtype = self.renderer.held(acc_dtype(node))
        # NOTE: warp shuffles move 32- and 64-bit values only: bools and narrow ints travel as
        # int32 and come back to their own type.
        # Complex values travel as their two parts.
        narrow = dtype.kind == "b" or dtype.itemsize < 4
        for lane in lanes:
            other, other_idx = r.name("sw"), r.name("swi")
            source = f"{r.ctor(np.int32)}({acc})" if narrow else acc
            shuffled = f"cuda.shfl_xor_sync(0xffffffff, {source}, {lane})"
            if narrow:
                shuffled = f"({shuffled} != 0)" if dtype.kind == "b" else f"{r.ctor(dtype)}({shuffled})"
            if dtype.kind == "c":
                real, imag = (f"cuda.shfl_xor_sync(0xffffffff, {acc}.{part}, {lane})"
                              for part in ("real", "imag"))
                shuffled = f"{r.ctor(dtype)}(complex({real}, {imag}))"
            r.emit(f"{other} = {shuffled}")
            r.emit(f"{other_idx} = cuda.shfl_xor_sync(0xffffffff, {idx}, {lane})" if arg
                   else f"{other_idx} = 0")
            self.acc.merge(node, acc, idx, other, other_idx)
