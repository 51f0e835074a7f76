"""Short rows through shared memory: the columns kernel of a thread a row, where the rows are so
short (at most Tuning.short_rows elements, written out: columns._written_out) that a thread
reading its own row makes every warp load touch as many lines as the row has elements (softmax
over rows of 10 float32 ran at 6x its memory floor on the H200: BENCHMARKS.md).

A block of threads takes as many consecutive rows. The rows of each full-size input it reads
directly (contiguous, of the reduced space's shape) are copied into shared memory as one stretch
of memory, a warp reading whole lines in order; each thread then reads its row there. Outputs of
the reduced space's shape are gathered in shared memory the same way and stored as one stretch;
the reduced outputs (one a row) are stored by each thread, already in order. A row is padded by
one element in shared memory, so that the threads' reads of one element of their rows fall in
different banks.

`plan` decides (what is staged, how many rows a block); `open_block`, `register`, `gather` and
`close_block` write the text around columns.py's body of a row.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....arrays import contiguous


@dataclass(frozen=True)
class Plan:
    inputs: tuple        # node ids of the inputs staged
    outputs: tuple       # node ids of the outputs gathered
    threads: int         # threads (rows) a block
    rows: int            # the reduced space's rows
    width: int           # elements a row


def plan(group, shape, axes, params: dict, outputs: list, threads: int,
         shared: int) -> Plan | None:
    """Where the reduced space is (rows, width) with the last axis reduced, some output is of
    that shape, and every staged or gathered array a float32 or float64 C-contiguous (rows,
    width): what to stage, and a block's rows (`threads`, halved until the tiles fit the
    `shared` bytes a block may declare); else None.

    NOTE: the gain is the gathered stores. On the H100 (benchmarks/experiments/short_rows_ab.py),
    softmax over rows of 10 went from 62.4 to 18.6 us (float32) and 101 to 33.8 (float64), where
    reductions alone over rows of 12 (mean and variance) stayed at 22.5-22.8 and the norms of
    3-vectors were 6% slower staged (27.3 against 25.8): without an output of the rows' shape,
    nothing is staged."""
    if len(shape) != 2 or tuple(axes) != (1,) or shape[0] < 2:
        return None
    rows, width = shape
    staged = [n for n in group.inputs if _fits(n, shape, params.get(n.id))]
    gathered = [p.node for p in outputs if p.node.shape == tuple(shape)]
    if not gathered:
        return None
    if any(n.dtype not in (np.float32, np.float64) for n in gathered):
        return None
    row_bytes = (width + 1) * sum(n.dtype.itemsize for n in [*staged, *gathered])
    while threads > 32 and threads * row_bytes > shared:
        threads //= 2
    if threads * row_bytes > shared:
        return None
    return Plan(tuple(n.id for n in staged), tuple(n.id for n in gathered), threads, rows, width)


def _fits(node, shape, param) -> bool:
    if node.shape != tuple(shape) or node.dtype not in (np.float32, np.float64):
        return False
    return param is not None and not param.by_value and \
        (param.strides is None or tuple(param.strides) == contiguous(node.shape))


def open_block(source, p: Plan) -> None:
    """The tiles, the block's loop over its rows, the staged inputs' copies and a barrier, and
    the thread's row `i0` (clamped to the last: in bounds; its results not stored)."""
    r, ix = source.renderer, source.ix
    for node in _nodes(source, p.inputs + p.outputs):
        r.emit(f"st{node.id} = cuda.shared.array({p.threads * (p.width + 1)}, "
               f"{source.numba_type(node.dtype)})")
    r.emit(f"t = {ix('cuda.threadIdx.x')}")
    r.emit(f"base = {ix(f'cuda.blockIdx.x * {p.threads}')}")
    r.emit(f"while base < {p.rows}:")
    r.push()
    if p.inputs:
        _stretch(source, p)
        for e in range(p.width):
            for node in _nodes(source, p.inputs):
                param = source.names[node.id]
                r.emit(f"sv{node.id}_{e} = {param.name}[sa{e}]")
        for e in range(p.width):
            for node in _nodes(source, p.inputs):
                r.emit(f"st{node.id}[ss{e}] = sv{node.id}_{e}")
        r.emit("cuda.syncthreads()")
    r.emit(f"i0 = {ix(f'min(base + t, {p.rows - 1})')}")


def register(source, p: Plan, elements: list) -> None:
    """Each staged input's element k of the thread's row read from its tile."""
    for node_id in p.inputs:
        for k in range(len(elements)):
            source.tiles[(node_id, ("i0", str(k)))] = \
                f"st{node_id}[{source.ix(f't * {p.width + 1} + {k}')}]"


def guard(p: Plan) -> str:
    """The condition under which the thread's row exists (its reduced outputs stored)."""
    return f"base + t < {p.rows}"


def gather(source, p: Plan, param, index: tuple, k: int) -> bool:
    """Element k of the thread's row of a gathered output put in its tile; False where `param`
    is not gathered."""
    if param.node.id not in p.outputs:
        return False
    r = source.renderer
    value = r.value(param.node, index)
    r.emit(f"st{param.node.id}[{source.ix(f't * {p.width + 1} + {k}')}] = "
           f"{source.stored(param.node, value)}")
    return True


def close_block(source, p: Plan) -> None:
    """The gathered outputs stored as one stretch (after a barrier), the tiles' use ended (a
    barrier), and the loop's step."""
    r, ix = source.renderer, source.ix
    for node_id in p.inputs:
        for k in range(p.width):
            source.tiles.pop((node_id, ("i0", str(k))), None)
    if p.outputs:
        r.emit("cuda.syncthreads()")
        if not p.inputs:              # (else the copies' places, computed in open_block)
            _stretch(source, p, store=True)
        total = p.rows * p.width
        stored = [q for q in source.outputs if q.node.id in p.outputs]
        for e in range(p.width):
            r.emit(f"if sf{e} < {total}:")
            r.push()
            for param in stored:
                r.emit(f"{param.name}[sf{e}] = st{param.node.id}[ss{e}]")
            r.pop()
    r.emit("cuda.syncthreads()      # the tiles are read")
    r.emit(f"base = {ix(f'base + cuda.gridDim.x * {p.threads}')}")
    r.pop()


def _stretch(source, p: Plan, store: bool = False) -> None:
    """For each of the `width` elements a thread moves: its place in the block's stretch of
    memory (`sf<e>`; `sa<e>` clamped to the array, for loads) and in the padded tile (`ss<e>`)."""
    r, ix = source.renderer, source.ix
    last = p.rows * p.width - 1
    for e in range(p.width):
        r.emit(f"sl{e} = {ix(f'{e * p.threads} + t')}")
        r.emit(f"sf{e} = {ix(f'base * {p.width} + sl{e}')}")
        if not store:
            r.emit(f"sa{e} = {ix(f'min(sf{e}, {last})')}")
        r.emit(f"ss{e} = {ix(f'sl{e} + sl{e} // {p.width}')}")


def _nodes(source, ids: tuple) -> list:
    found = {n.id: n for n in source.group.nodes}
    found.update({n.id: n for n in source.group.inputs})
    return [found[i] for i in ids]
