"""A product's epilogue written once: the accumulators staged through shared memory a row of each
thread's block at a time, then a loop over the staged rows applies the epilogue and stores.

A product kernel holds a thread's 8 x 8 results in registers; writing its epilogue for each of
them renders the epilogue 64 times, which for a long one (a sum of other products' results, a
GELU) is most of the kernel's source and of numba's compile (NPBench's conv2d written with shifted
slices: 1,637 lines, 26 s to PTX). Here pass x stages every thread's row x of its block (by
constant indices into the accumulators, which stay in registers), the block walks the staged
rows with consecutive threads on consecutive columns (coalesced stores), and the epilogue is in
the text once. The general kernel (emit/matmul.py) calls it where an epilogue has more than
Tuning.epilogue_loop ops. It costs warm time where the epilogue's loads matter (written out, a
thread's 64 results' loads are all in flight at once): conv2d's last product 4-6% on an H200, and
4-40% where the float32 tiles kernel tried it, which therefore writes its epilogues out.
"""
from __future__ import annotations

from ....fusion.legality import operand_chain


def epilogue_ops(group) -> int:
    """The ops of a product group's epilogue: its members past the product, not feeding an
    operand (inline constants and broadcasts are free)."""
    chain = operand_chain(group) | {group.matmul.id}
    return sum(1 for member in group.nodes if member.id not in chain
               and member.op not in ("constant", "broadcast_to"))


def applies(source, group) -> bool:
    """Whether this product kernel loops its epilogue (Tuning.epilogue_loop)."""
    limit = source.tuning.epilogue_loop
    return bool(limit) and epilogue_ops(group) > limit


def write(source, registers: list, staged_at, shape: tuple, threads: int, global_row: str,
          batch: tuple, value, shared: str | None = None) -> None:
    """The looped epilogue. `registers[x][y]`: a thread's result (x, y); `staged_at(x, y)`: the
    (row, column) texts where it is staged in pass x; `shape`: the staged rows x columns;
    `global_row`: the result row of staged row `i` in pass `x` (text); `value(text)`: the
    product's value from its staged element; `shared`: an existing shared array with room for
    `shape` (else one is declared). Every output is stored at the result index."""
    r = source.renderer
    node = source.group.matmul
    rows, columns = shape
    m, n = node.shape[-2:]
    if shared is not None:
        r.emit(f"se = {shared}")
    else:
        r.emit(f"se = cuda.shared.array(({rows}, {columns}), {source.numba_type(node.dtype)})")
    r.emit(f"for x in range({len(registers)}):")
    r.push()
    for x, row in enumerate(registers):
        r.emit(f"{'if' if x == 0 else 'elif'} x == {x}:")
        r.push()
        for y, register in enumerate(row):
            i, j = staged_at(x, y)
            r.emit(f"se[{i}, {j}] = {register}")
        r.pop()
    r.emit("cuda.syncthreads()")
    r.emit(f"for e in range(t, {rows * columns}, {threads}):")
    r.push()
    r.emit(f"i = e // {columns}")
    r.emit(f"j = e - i * {columns}")
    r.emit(f"gi = {global_row}")
    r.emit("gj = col0 + j")
    r.emit(f"if gi < {m} and gj < {n}:")
    r.push()
    r.special[node.id] = lambda index, name=value("se[i, j]"): name
    for param in source.outputs:
        source.store(param, tuple(batch) + ("gi", "gj"))
    r.pop()
    r.pop()
    r.emit("cuda.syncthreads()")
    r.pop()


def strategy(looped: bool) -> str:
    return ", epilogue looped over staged rows" if looped else ""
