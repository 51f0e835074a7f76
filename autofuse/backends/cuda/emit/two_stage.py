"""Reductions whose outputs are too few to fill the GPU with a thread (columns) or a block (rows)
each: the reduced extent cut into chunks across blocks, and the chunks' partial results combined
by the last block to finish, in the same launch (XLA's two-stage tree reduction, done in one
kernel, the way the split kernel does it for a reduction to one value).

The grid is tiles x chunks. A tile is `width` consecutive outputs (of the flattened outer index),
a chunk a stretch of the reduced extent (flattened over the reduced axes, row-major); the block of
(tile, chunk) reduces its outputs over its chunk, `height` threads an output, and threads next to
each other in a warp take elements next to each other in memory:
- "rows" layout, where the reduced space's last axis is reduced (memory runs along the reduction):
  one output a block, the threads striding along the chunk, combined by a block reduction;
- "columns" layout, where the last axis is kept: thread t takes output t % width and the chunk's
  reduced elements t // width, + height, ...; lanes of a warp combine by shuffles, warps through
  shared memory.
With one chunk a block stores its outputs. With more, each block writes its partials, counts
itself done on its tile's counter, and the last block of a tile combines the tile's partials in
chunk order (so results are the same run to run) and stores the outputs, then resets the counter.
Outputs of the reduced space's shape that need no reduction's result (`y` of `y, y.sum(0)`) are
stored as the loop reaches them.

Measured on an H200: see BENCHMARKS.md (31ba589, 2026-11-24) and benchmarks/experiments/
reduction_shapes_probe.py.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ...accumulators import acc_dtype, paired, second_dtype
from . import runs
from .two_stage_plan import Chunk, Plan


def write(source, shape, axes, outer: int, inner: int, p: Plan, row_outputs: list):
    """The kernel, rendered by `source` (a KernelWriter) for its group's reductions over `axes` of
    `shape`; `row_outputs` are stored in the loop. (A plan with a run of outputs a thread is
    run_two_stage.py's: the writer sends it there.)"""
    r = source.renderer
    ix = source.ix
    nodes = source.group.reductions
    ragged = start(source, shape, axes, [d for d in range(len(shape)) if d not in axes], outer,
                   inner, p)
    for node in nodes:
        _declare_shared(source, node, p)
    accs = []
    for node in nodes:
        acc, idx = r.name("acc"), r.name("k")
        source.acc.init(node, acc, idx, node.dtype)
        accs.append((acc, idx))
    _loop(source, shape, axes, p, accs, row_outputs)
    for node, (acc, idx) in zip(nodes, accs):
        _reduce_height(source, node, acc, idx, p)
    guard = " and ".join(["h == 0"] + ([f"o < {outer}"] if ragged else []))
    strategy = (f"two-stage {p.layout}, {p.width}x{p.height} threads, "
                f"{p.tiles} tiles x {p.chunks} chunks")
    if p.least:
        strategy = strategy.replace(" x ", " x at most ") + " (chosen at launch)"
    if p.chunks == 1:
        _results(source, accs)
        source.store_reduced(shape, axes, guard)
        return _finish(source, strategy, p, (p.tiles, 1, 1))
    parts = _write_partials(source, accs, outer, p, guard)
    r.emit("if last[0] != 0:    # the tile's last block: its partials, in chunk order")
    r.push()
    r.emit("cuda.threadfence()")
    for node, (acc, idx), (part, parti) in zip(nodes, accs, parts):
        source.acc.init(node, acc, idx, node.dtype)
        if ragged:
            r.emit(f"if o < {outer}:")
            r.push()
        with chunk_loop(source, p):
            at = ix(f"b * {outer} + o")
            source.acc.merge(node, acc, idx, source.from_partial(node, f"{part}[{at}]"),
                             f"{parti}[{at}]" if parti else "0")
        if ragged:
            r.pop()
        _reduce_height(source, node, acc, idx, p)
    _results(source, accs)
    source.store_reduced(shape, axes, guard)
    reset_counter(source)
    r.pop()
    return _finish(source, strategy, p, (p.tiles * p.chunks, 1, 1))


def _finish(source, strategy: str, p: Plan, grid: tuple):
    """The kernel; a class plan's with its launch rule: its grid from the reduced extent at each
    call's sizes (cuda/dynamic.py, by two_stage_plan.chunking)."""
    kernel = source.finish(strategy, p.threads, grid, _bound(p, source.device))
    if p.least:
        kernel.launch_rule = ("chunks", p.tiles, p.chunks, p.least, p.height)
    return kernel


def start(source, shape, axes, outer_axes, outer: int, inner: int, p: Plan) -> bool:
    """The kernel's opening: the block's tile and chunk, the thread's output `o` (its indices
    over `outer_axes`) and place `h`, and its stretch `e` .. `end` of the chunk; returns whether
    the last tile is ragged (its threads past `outer` take no elements)."""
    r = source.renderer
    ix = source.ix
    r.emit(f"t = {ix('cuda.threadIdx.x')}")
    if p.tiles == 1:
        r.emit("tile = 0")
        r.emit(f"s = {ix('cuda.blockIdx.x')}")
    elif p.chunks == 1:
        r.emit(f"tile = {ix('cuda.blockIdx.x')}")
        r.emit("s = 0")
    else:
        r.emit(f"tile = {ix(f'cuda.blockIdx.x % {p.tiles}')}")
        r.emit(f"s = {ix(f'cuda.blockIdx.x // {p.tiles}')}")
    if p.layout == "rows":
        r.emit("h = t")
        r.emit("o = tile")
    else:
        r.emit(f"h = {ix(f't // {p.width}')}")
        r.emit(f"o = {ix(f'tile * {p.width} + t % {p.width}')}")
    source._outer_index(outer_axes, shape, "o")
    chunk = p.chunk
    if p.least:
        chunk = "chunk"
        emit_chunk(source, p)
    r.emit(f"start = {ix(f's * {chunk}')}")
    r.emit(f"e = {ix('start + h')}")
    # NOTE: a class's extent (a size argument, int64) narrowed as the start is: numba takes
    # min(uint, int64) in float64
    extent = ix(str(inner), literal=source.dynamic)
    r.emit(f"end = {ix(f'min(start + {chunk}, {extent})')}")
    ragged = outer % p.width != 0
    if ragged:
        r.emit(f"if o >= {outer}:    # past the last output: no elements")
        r.push()
        r.emit("end = e")
        r.pop()
    return ragged


def emit_chunk(source, p: Plan) -> None:
    """A class plan's chunks as two_stage_plan.chunking gives them at the call's extent: `chunk`,
    elements a chunk, an argument (two_stage_plan.Chunk, of the group's reduction as the launch
    rule counts it), and `nch`, the chunks of the grid its launch rule gave."""
    reduction = source.group.reductions[0]
    source.sizes.append(Chunk("chunk", reduction.inputs[0], tuple(reduction.attrs["axes"]),
                              p.chunks, p.least, p.height))
    launched = "cuda.gridDim.x" if p.tiles == 1 else f"cuda.gridDim.x // {p.tiles}"
    source.renderer.emit(f"nch = {source.ix(launched)}")


@contextlib.contextmanager
def chunk_loop(source, p: Plan):
    """The last block's loop over the tile's chunks (`b`), its body emitted inside."""
    r = source.renderer
    if p.least:
        # NOTE: a class's loop counted to its chunks, unguarded: the fixed count with each step
        # guarded by the chunks (a size, not a number) ran x.T @ g float64 at 1.077x its
        # specialized kernel, counted 1.007x (H200, experiments/xtg_class_variants.py)
        r.emit(f"for u in range({source.ix(f'(nch + {p.height - 1} - h) // {p.height}')}):")
        r.push()
        r.emit(f"b = {source.ix(f'h + u * {p.height}')}")
        yield
        r.pop()
        return
    # NOTE: a fixed count a thread, each guarded, so that every read is issued at once
    # (the split kernel's last block measured the loop `range(h, chunks, height)` slower).
    r.emit(f"for u in range({-(-p.chunks // p.height)}):")
    r.push()
    r.emit(f"b = {source.ix(f'h + u * {p.height}')}")
    r.emit(f"if b < {p.chunks}:")
    r.push()
    yield
    r.pop()
    r.pop()


def reset_counter(source) -> None:
    r = source.renderer
    r.emit("if t == 0:")
    r.push()
    r.emit("counter[tile] = 0")
    r.pop()


def _bound(p: Plan, device) -> int:
    """Blocks an SM the kernel's registers must allow (launch bounds): as many as fit its threads,
    so that the grid, sized to Tuning.split_blocks (8 blocks of 256 an SM), runs as one wave (compile.py
    lowers the bound, at last drops it, where it would make ptxas spill)."""
    return max(1, device.threads_per_sm // p.threads)


def _slots(node, position, slot: str, p: Plan) -> tuple:
    """The shared slots combining `node`'s value at `slot` (at a run's position, a name: the
    position's stretch of `p.threads` slots): the value's and the index's."""
    at = slot if position is None else f"{position} * {p.threads} + {slot}"
    return f"sc{node.id}[{at}]", f"sci{node.id}[{at}]"


def _declare_shared(source, node, p: Plan, positions: int = 1) -> None:
    """Shared memory for combining an output's `height` threads: the block reduction's (rows
    layout) or one slot a thread (columns), for each of a run's `positions`."""
    if p.height == 1:
        return
    if p.layout == "rows":
        source.declare_shared(node)
        return
    r = source.renderer
    arg = paired(node)
    dtype = acc_dtype(node)
    r.emit(f"sc{node.id} = cuda.shared.array({p.threads * positions}, {source.numba_type(dtype)})")
    if arg:
        r.emit(f"sci{node.id} = cuda.shared.array({p.threads * positions}, "
               f"{source.numba_type(second_dtype(node))})")


def _loop(source, shape, axes, p: Plan, accs, row_outputs, nodes=None, run=None,
          steps: int = 1, loads: int = 0) -> None:
    """The thread's elements of its chunk, `ilp` a step (all loaded before any is combined, in
    element order; `steps` times as many), then one at a time; `nodes` (the group's reductions
    unless given), at each position of `run` if given, combined into `accs` and row outputs
    stored at each element. `loads`: a step's loads at most (else the tuning's, a class's own
    for a class kernel)."""
    r = source.renderer
    nodes = source.group.reductions if nodes is None else nodes
    items = [(node, position) for node in nodes for position in runs.positions(run)]
    # NOTE: a run's positions are loads of their own: Tuning.output_run_steps elements a step
    # keep the text short (BENCHMARKS.md)
    if run is None:
        loads = loads or (source.tuning.class_two_stage_loads if source.dynamic else
                          source.tuning.two_stage_loads)
        if any(node.op == "expsum" for node in nodes):
            loads = max(loads, source.tuning.expsum_loads)
        ilp = source.ilp(p.chunk, p.height, loads, loads) * steps
    else:
        steps = source.tuning.class_run_steps if source.dynamic else \
            source.tuning.output_run_steps
        ilp = steps if source.dynamic or p.chunk >= steps * p.height else 1

    def element(flat: str, suffix: str) -> tuple:
        names = [f"r{a}{suffix}" for a in axes]
        source.delinearize(flat, names, [shape[a] for a in axes])
        return tuple(f"r{d}{suffix}" if d in axes else f"i{d}" for d in range(len(shape)))

    def step(count: int) -> None:
        taken = []
        for u in range(count):
            flat = "e" if u == 0 else f"e{u}"
            if u:
                r.emit(f"{flat} = {source.ix(f'e + {u * p.height}')}")
            index = element(flat, f"_{u}" if u else "")
            taken.append((flat, index, [r.value(n.inputs[0], runs.at(run, index, position))
                                        for n, position in items]))
        for flat, index, values in taken:
            for (node, _), (acc, idx), value in zip(items, accs, values):
                source.acc.combine(node, acc, idx, value, node.dtype, flat)
            for param in row_outputs:
                source.store(param, index)
        r.emit(f"e = {source.ix(f'e + {count * p.height}')}")

    if ilp > 1:
        r.emit(f"while e + {(ilp - 1) * p.height} < end:")
        r.push()
        step(ilp)
        r.pop()
    r.emit("while e < end:")
    r.push()
    step(1)
    r.pop()


def _reduce_heights(source, entries: list, p: Plan, positions: int = 0) -> None:
    """Combine the `height` threads of each output into its thread h == 0, for each of
    `entries` ((node, run position, acc, idx)), through one barrier; with `positions`, each
    entry's statements in a loop `for j in range(positions)` (its position and names use j)."""
    if p.height == 1:
        return
    if p.layout == "rows":
        for node, _, acc, idx, *_ in entries:
            source.block_reduce(node, acc, idx, p.threads)
        return
    r = source.renderer
    # NOTE: in a warp, lanes width, 2 width, ... apart hold the same output; the simulator
    # takes shared memory all the way (block_reduce does the same there).
    lanes = [] if source.simulator else [w for w in (16, 8, 4, 2, 1) if p.width <= w]
    if lanes:
        with _positions(r, positions):
            for node, _, acc, idx, *_ in entries:
                source.warp_reduce(node, acc, idx, lanes)
    in_warp = 32 // p.width if lanes else 1       # threads of an output a warp combined
    groups = p.height // in_warp
    if groups == 1:
        return
    if in_warp > 1:             # the first lane of each output's lanes in a warp
        slot = source.ix(f"h // {in_warp} * {p.width} + t % {p.width}")
        r.emit(f"if h % {in_warp} == 0:")
        r.push()
    else:
        slot = "t"
    with _positions(r, positions):
        for node, position, acc, idx, *_ in entries:
            sc, sci = _slots(node, position, slot, p)
            r.emit(f"{sc} = {acc}")
            if paired(node):
                r.emit(f"{sci} = {idx}")
    if in_warp > 1:
        r.pop()
    r.emit("cuda.syncthreads()")
    r.emit("if h == 0:")
    r.push()
    r.emit(f"for g in range(1, {groups}):")
    r.push()
    other = source.ix(f"g * {p.width} + t")
    with _positions(r, positions):
        for node, position, acc, idx, *_ in entries:
            sc, sci = _slots(node, position, other, p)
            arg = paired(node)
            source.acc.merge(node, acc, idx, sc, sci if arg else "0")
    r.pop()
    r.pop()


@contextlib.contextmanager
def _positions(r, positions: int):
    """A loop `for j in range(positions)` around the statements emitted inside (none where 0)."""
    if positions:
        r.emit(f"for j in range({positions}):")
        r.push()
    yield
    if positions:
        r.pop()


def _reduce_height(source, node, acc: str, idx: str, p: Plan, position=None) -> None:
    """Combine the `height` threads of each output (at a run's position) into its thread h == 0."""
    _reduce_heights(source, [(node, position, acc, idx)], p)


def _results(source, accs) -> None:
    """Each reduction's result, as its dtype, for the stores."""
    r = source.renderer
    for node, (acc, idx) in zip(source.group.reductions, accs):
        final = source.acc.final(node, acc, idx)
        result = r.name("red")
        r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
        r.special[node.id] = lambda index, result=result: result


def _write_partials(source, accs, outer: int, p: Plan, guard: str) -> list:
    """Store this block's partials (scratch arrays `chunks` x `outer`), then count the block done
    on its tile's counter; `last[0]` says whether it was the tile's last. Returns the partials'
    names per reduction (the index array's None where not an arg-reduction)."""
    r = source.renderer
    at = source.ix(f"s * {outer} + o")
    names = []
    r.emit(f"if {guard}:")
    r.push()
    for k, (node, (acc, idx)) in enumerate(zip(source.group.reductions, accs)):
        arg = paired(node)
        part, parti = f"part{k}", (f"parti{k}" if arg else None)
        source.scratch.append((part, p.chunks * outer, source.partial_dtype(node)))
        r.emit(f"{part}[{at}] = {source.to_partial(node, acc)}")
        if arg:
            source.scratch.append((parti, p.chunks * outer, source.second_partial_dtype(node)))
            r.emit(f"{parti}[{at}] = {idx}")
        names.append((part, parti))
    count_done(source, p)
    return names


def count_done(source, p: Plan) -> None:
    """After a block's partials (in an `if` scope this closes): counts the block done on its
    tile's counter; `last[0]` says whether it was the tile's last."""
    r = source.renderer
    # NOTE: each writer makes its partials visible device-wide before the barrier, and the
    # counter's atomic comes after the barrier, so a block that sees the count complete sees
    # every partial of its tile.
    r.emit("cuda.threadfence()")
    r.pop()
    source.scratch.append(("counter", p.tiles, np.dtype(np.int32)))
    r.emit(f"last = cuda.shared.array(1, {source.numba_type(np.int32)})")
    r.emit("cuda.syncthreads()")
    r.emit("if t == 0:")
    r.push()
    r.emit(f"last[0] = cuda.atomic.add(counter, tile, 1) == "
           f"{'nch - 1' if p.least else p.chunks - 1}")
    r.pop()
    r.emit("cuda.syncthreads()")
