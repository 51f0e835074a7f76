"""The CPU backend's matrix products: BLAS (np.dot) on tiles of rows, the epilogue applied to each
tile while it is in cache; operand prologues evaluated on the host."""
from __future__ import annotations

import numpy as np

from ...ir.graph import Node
from .kernel import MATMUL_PARALLEL_FLOPS, MATMUL_TILE_BYTES, MATMUL_TILE_MAX_BYTES, Argument, \
    planned_cores


class Matmul:
    """Methods of the CPU kernel writer (source.CpuSource) for matmul groups."""

    # -- matmul ------------------------------------------------------------------------------------
    def matmul(self):
        group = self.group
        node = group.matmul
        operands = []
        for source in node.inputs:
            chain = self._chain(source)
            operands.append(Argument(source, "operand", chain))
        # NOTE: operand chains (layout ops) are evaluated on the host as NumPy views; epilogue
        # inputs stay kernel arguments.
        epilogue_inputs = [a for a in self.inputs if not self._feeds_only_operands(a.node, operands)]
        batch = node.shape[:-2]
        m, n = node.shape[-2:]
        row_bytes = max(1, n * node.dtype.itemsize)
        rows = max(1, min(m, MATMUL_TILE_BYTES // row_bytes))
        if not batch:
            # NOTE: each BLAS call packs all of B again, so short tiles pay it many times: a
            # thread's share of the rows a call where that fits MATMUL_TILE_MAX_BYTES (one core,
            # 1024^3 float32 with its epilogue: 16.0 ms in 64-row tiles, 11.3 in 512-row ones,
            # NumPy's product alone 11.0)
            share = -(-m // planned_cores())
            rows = max(rows, min(share, m, MATMUL_TILE_MAX_BYTES // row_bytes))
        blocks = -(-m // rows)
        # NOTE: an operand that is a transpose of the last two axes is passed untransposed and
        # read as `.T` (BLAS transposes it): the host's contiguous copy of the transposed view
        # (np.ascontiguousarray) cost more than the product (attention's gradient, 4 x 256 x 256
        # @ 256 x 64: 0.9-1.7 ms against 0.45 for its other products). Not A where the product
        # has several row tiles: a tile of it would be a slice of the columns, which numba's
        # np.dot copies (and warns of).
        blas = node.dtype.kind == "f"
        whole = not self.dynamic and blocks == 1
        swapped = [blas and _swaps_last(arg.chain) and (k == 1 or whole)
                   for k, arg in enumerate(operands)]
        operands = [_without_last(arg) if swap else arg for arg, swap in zip(operands, swapped)]
        self.inputs = operands + epilogue_inputs
        self.argname = {a.node.id: f"a{k}" for k, a in enumerate(self.inputs)}
        self._zero_d_views()
        for arg in operands:
            arg.view = "operand"
        r = self.renderer
        if self.dynamic:
            # NOTE: M may be a kernel argument (dynamic/): tiles of a fixed height, their count
            # computed in the kernel.
            rows = max(1, MATMUL_TILE_BYTES // max(1, n * node.dtype.itemsize))
            blocks = f"-(-{m} // {rows})"
        batch_index = tuple(f"b{d}" for d in range(len(batch)))
        count = int(np.prod(batch, dtype=np.int64))
        # NOTE: tiles (or batch entries) run on numba's threads, each BLAS call on one thread
        # (blas.py keeps the BLAS library numba calls single-threaded during the call): one pool,
        # so two pools never wait on each other's threads (H: 2 cores, another process busy:
        # 32-378 ms a 1024x2048x512 product with BLAS's two threads, 32-40 ms this way).
        tiles = -(-m // rows)
        parallel = count * tiles >= 2 and 2 * count * m * n * node.inputs[0].shape[-1] >= \
            MATMUL_PARALLEL_FLOPS
        opened = self.loops(list(batch_index), list(batch), parallel and bool(batch))
        loop = "numba.prange" if parallel and not batch else "range"
        r.emit(f"for blk in {loop}({blocks}):")
        r.push()
        r.emit(f"lo = blk * {rows}")
        r.emit(f"hi = min({m}, lo + {rows})")
        prefix = "".join(f"{i}, " for i in batch_index)
        if blas:
            a = _operand("a0", prefix, "lo:hi", swapped[0])
            b = _operand("a1", prefix, None, swapped[1])
            r.emit(f"tile = np.dot({a}, {b})")
        else:
            a, b = "a0", "a1"
            k = node.inputs[0].shape[-1]
            r.emit(f"tile = np.zeros((hi - lo, {n}), {r.ctor(node.dtype)})")
            r.emit("for i in range(lo, hi):")
            r.push()
            r.emit(f"for kk in range({k}):")
            r.push()
            r.emit(f"x = {a}[{prefix}i, kk]")
            r.emit(f"for j in range({n}):")
            r.push()
            r.emit(f"tile[i - lo, j] = tile[i - lo, j] + x * {b}[{prefix}kk, j]")
            r.pop()
            r.pop()
            r.pop()
        r.emit("for i in range(lo, hi):")
        r.push()
        r.emit(f"for j in range({n}):")
        r.push()
        r.special[node.id] = lambda index: "tile[i - lo, j]"
        index = batch_index + ("i", "j")
        for k, arg in enumerate(self.outputs):
            self.store(k, arg.node, index)
        r.pop()
        r.pop()
        r.pop()
        self.close(opened)
        return ("blas-tiles" if blas else "loop-tiles"), parallel

    def _chain(self, source: Node) -> tuple:
        """The members between a group input and a matmul operand, outermost first."""
        chain = []
        while source.id in self.group.members:
            chain.append(source)
            source = source.inputs[0]
        return tuple(reversed(chain))

    def _feeds_only_operands(self, node: Node, operands) -> bool:
        """Whether group input `node` is read only to build matmul operands (on the host), so
        the kernel itself never loads it."""
        roots = {arg.chain[0].inputs[0].id if arg.chain else arg.node.id for arg in operands}
        if node.id not in roots:
            return False
        chain = [n for arg in operands for n in arg.chain]
        chain_ids = {n.id for n in chain}
        matmul = self.group.matmul.id
        # NOTE: a chain member that is also a result (`v = x[:1]; return v, v @ v`) or is read by
        # the epilogue (`v = x.T; (v @ w) + v`) makes the epilogue read the input itself.
        for member in self.group.members.values():
            if member.id in chain_ids or member.id == matmul:
                continue
            if any(s.id == node.id or s.id in chain_ids for s in member.inputs):
                return False
        return not any(n.id in self.group.outputs for n in chain)


def _swaps_last(chain: tuple) -> bool:
    """Whether an operand's host chain ends in a transpose of its last two axes alone."""
    if not chain or chain[-1].op != "transpose":
        return False
    perm = tuple(chain[-1].attrs["perm"])
    n = len(perm)
    return n >= 2 and perm == tuple(range(n - 2)) + (n - 1, n - 2)


def _without_last(arg: Argument) -> Argument:
    """The operand before its final transpose: the chain less it, or its source where nothing is
    left (the host then passes that array as it is, contiguous)."""
    chain = arg.chain[:-1]
    return Argument(arg.node if chain else arg.chain[-1].inputs[0], "operand", chain)


def _operand(name: str, prefix: str, rows, swapped: bool) -> str:
    """An operand of a tile's np.dot: the batch entry's matrix (`rows` of it where given), or,
    where the host passed it untransposed, all of it read transposed (the tile is all of it)."""
    batch = prefix.rstrip(", ")
    if swapped:
        return f"{name}[{batch}].T" if batch else f"{name}.T"
    if rows is None:
        return f"{name}[{batch}]" if batch else name
    return f"{name}[{prefix}{rows}]"
