"""Tiles of outputs a block: whole-column programs (softmax, normalization along a leading axis)
as column tiles, and short rows (16 to 512 elements) as row tiles.

Row tiles: a block of `width` rows x `height` lanes of a warp a row (a "rows" layout Plan), the
lanes walking the row `height` elements apart, combined by xor shuffles (every lane gets the
result), with no barrier; the rows kernel's block a row spent more on its block reductions than
on reading rows this short (sum over 64-255 elements: 2.5x the memory floor on an H200).

Column tiles:

A block of `width` x `height` threads takes `width` consecutive outputs (of the flattened kept
index, so a warp reads `width` consecutive elements of the contiguous last axis in each of
32 / width rows) and walks the reduced extent `height` threads a column. The group's reductions
run in passes: a pass holds the reductions that need no result of one not yet done (layernorm's
mean, then its variance); each pass walks the column tile once, combines the column's `height`
partials (two_stage's shuffles and shared memory) and hands the result to every thread of the
column through shared memory. A last walk stores the outputs of the reduced space's shape.

Each pass reads the tile again: from DRAM at the sizes measured (a wave's tiles span the whole
matrix); narrower tiles whose wave fits the L2 measured slower still, for want of threads
(benchmarks/results/REDUCTIONS.md).
"""
from __future__ import annotations

import numpy as np

from ....ir.graph import Node
from ...accumulators import ARG, acc_dtype, paired, second_dtype
from . import two_stage


def plan_rows(group, shape, axes, outer: int, inner: int, tuning, device,
              simulator: bool) -> two_stage.Plan | None:
    """The row tile for reductions over trailing axes of `inner` elements (row_tile_least to
    row_tile_elements) of enough rows to fill the GPU (rows_per_sm an SM), or None: lanes a row
    the power of two that takes about row_tile_items elements each, at most a warp."""
    if inner < tuning.row_tile_least or inner > tuning.row_tile_elements or \
            outer < tuning.rows_per_sm * device.sms:
        return None
    if any(np.dtype(n.dtype).kind == "b" for n in group.reductions):
        return None
    threads = tuning.sim_threads if simulator else tuning.threads
    lanes = min(32, threads, 1 << max(0, (-(-inner // tuning.row_tile_items) - 1).bit_length()))
    width = threads // lanes
    return two_stage.Plan("rows", width, lanes, -(-outer // width), 1, -(-inner // lanes) * lanes)


def plan_columns(group, shape, axes, outer: int, inner: int, tuning, simulator: bool,
                 dynamic: bool = False) -> two_stage.Plan | None:
    """The tile (a two_stage.Plan of one chunk, "columns" layout) for a group whose reductions
    keep the last axis of `shape`, or None where a thread an output (columns) does: the last axis
    reduced, a reduction of booleans, or a reduced extent shorter than two steps of a column's
    threads. `dynamic` (a shape class): the tile is the one of many columns over a long extent,
    whatever `outer` and `inner` are (a class's sizes 2 and 3 must plan as its stand-ins do)."""
    if len(shape) - 1 in axes or outer < 2 or not tuning.column_tiles:
        return None
    if any(np.dtype(n.dtype).kind == "b" for n in group.reductions):
        return None
    threads = tuning.sim_threads if simulator else tuning.column_tile_threads
    width = min(tuning.column_tile_width, threads // 2,
                threads if dynamic else 1 << (outer - 1).bit_length())
    height = threads // width
    if inner < 2 * height and not dynamic:
        return None
    chunk = -(-inner // height) * height
    return two_stage.Plan("columns", width, height, -(-outer // width), 1, chunk)


def passes(group) -> list[list[Node]]:
    """The group's reductions in passes: each after every reduction its input reads."""
    level = {}
    for node in group.reductions:           # (in id order: a reduction after those it reads)
        read = _reductions_read(group, node.inputs[0])
        level[node.id] = 1 + max((level[n] for n in read), default=-1)
    found = [[] for _ in range(1 + max(level.values()))]
    for node in group.reductions:
        found[level[node.id]].append(node)
    return found


def _reductions_read(group, node: Node) -> set:
    """Ids of the group's reductions that `node` reads through members of the group."""
    stack, seen, found = [node], set(), set()
    while stack:
        n = stack.pop()
        if n.id in seen or n.id not in group.members:
            continue
        seen.add(n.id)
        if n.kind == "reduce":
            found.add(n.id)
            continue
        stack.extend(n.inputs)
    return found


def write(source, shape, axes, outer: int, inner: int, p: two_stage.Plan):
    """The kernel, rendered by `source` (a KernelWriter) for its group's reductions over `axes`
    of `shape`: row tiles where `p`'s layout is "rows", else column tiles."""
    r = source.renderer
    ix = source.ix
    rows = p.layout == "rows"
    outer_axes = [d for d in range(len(shape)) if d not in axes]
    grid = min(p.tiles, source.tuning.row_grid)
    r.emit(f"t = {ix('cuda.threadIdx.x')}")
    # c: the block's output a thread works for; h: its place among that output's threads
    r.emit(f"h = {ix(f't % {p.height}' if rows else f't // {p.width}')}")
    r.emit(f"c = {ix(f't // {p.height}' if rows else f't % {p.width}')}")
    shuffles = rows and not source.simulator
    for node in source.group.reductions:
        if shuffles:
            continue
        if rows:        # the simulator: a slot a thread, as two_stage's columns layout
            r.emit(f"sc{node.id} = cuda.shared.array({p.threads}, "
                   f"{source.numba_type(_partial_dtype(node))})")
            if paired(node):
                r.emit(f"sci{node.id} = cuda.shared.array({p.threads}, "
                       f"{source.numba_type(second_dtype(node))})")
        else:
            two_stage._declare_shared(source, node, p)
        r.emit(f"bc{node.id} = cuda.shared.array({p.width}, {source.numba_type(_result_dtype(node))})")
    r.emit(f"tile = {ix('cuda.blockIdx.x')}")
    # NOTE: a class kernel takes its extents as sizes: tiles while a tile's first output is one
    # (ceil(outer / width) is no affine form), and every tile syncs before the next, whatever
    # the grid its launch rule gives
    classed = source.dynamic
    # NOTE: a class's outputs that vary are ragged at every size its builds compare (stand-ins
    # are odd primes: 2, 3 and twice a stand-in are no multiple of a width of 4 or more) and
    # at size 0; a fixed multiple of the width is not: no guard, and `end` no select, a
    # register the loops then need not hold
    ragged = outer % p.width != 0 or (classed and (outer == 0 or p.width < 4))
    # (a class's tiles: its outputs' count over the width, where the plan's count is of as many
    # rows as fill the GPU)
    tiles = ix(str(outer // p.width), literal=True) if classed else p.tiles
    # NOTE: ragged row tiles take their whole tiles in a loop of their own, as a fixed multiple
    # would (no guard), and the last, partial tile after it, in the block whose next tile it is:
    # there a row past the end reads none of its elements (`end` 0) and stores none. One loop
    # that read the last row again for rows past the end, and guarded their stores, took softmax
    # over a class's rows of 128 and 256 from 32 registers to 48 (5 blocks an SM instead of 8):
    # 1.14-1.15x the specialized kernel; with that clamp in the last tile only, still 48 and
    # 1.06-1.10x; as now, 32 and 1.005-1.014x (H200, benchmarks/experiments/
    # rows_class_variants.py)
    split = rows and ragged
    bound = ix(str(outer), literal=True) if classed else outer
    if split:
        r.emit(f"while tile < {ix(f'{bound} // {p.width}') if classed else outer // p.width}:")
    else:
        r.emit(f"while tile * {p.width} < {bound}:" if classed and ragged
               else f"while tile < {tiles}:")
    r.push()
    _tile(source, shape, axes, outer_axes, outer, inner, p, shuffles, ragged and not split)
    # NOTE: the next tile writes the shared arrays again: every thread's reads of this one first
    # (a class's grid is a block a tile up to its launch rule's most: the barrier only where
    # the block has another tile; tiles are the block's alike, so every thread branches alike)
    r.emit(f"tile = {ix('tile + cuda.gridDim.x')}")
    if classed and not shuffles:
        r.emit(f"if tile * {p.width} < {bound}:" if ragged else f"if tile < {tiles}:")
        r.emit("    cuda.syncthreads()")
    elif p.tiles > grid and not shuffles:
        r.emit("cuda.syncthreads()")
    r.pop()
    if split:
        r.emit(f"if tile * {p.width} < {bound}:    # the last tile, part of a tile's rows")
        r.push()
        _tile(source, shape, axes, outer_axes, outer, inner, p, shuffles, True)
        r.pop()
    kind = "row" if rows else "column"
    strategy = (f"{kind} tiles, {p.width}x{p.height} threads, "
                f"{len(passes(source.group))} passes")
    kernel = source.finish(strategy, p.threads, (grid, 1, 1),
                           max(1, source.device.threads_per_sm // p.threads))
    if classed:         # (cuda/dynamic.py: a block a tile of the call's rows or columns, at most
        #                 row_grid)
        kernel.launch_rule = ("row tiles", p.width, source.tuning.row_grid) if rows else \
            ("column tiles", source.tuning.row_grid, p.width)
        if not rows:
            kernel.spill_bytes = source.tuning.class_spill_bytes
    return kernel


def _tile(source, shape, axes, outer_axes, outer: int, inner: int, p: two_stage.Plan,
          shuffles: bool, ragged: bool) -> None:
    """One tile of the block's outputs: their reductions pass by pass, then the outputs of the
    reduced space's shape. `ragged`: the tile may reach past the last output (its outputs'
    count is no multiple of the width, or is a size argument): an output past the end reads
    none of its elements (`end` 0) and stores nothing."""
    r = source.renderer
    ix = source.ix
    rows = p.layout == "rows"
    classed = source.dynamic
    r.emit(f"o = {ix(f'tile * {p.width} + c')}")
    source._outer_index(outer_axes, shape, "o")
    end = ix(str(inner), literal=True) if classed and not rows else inner
    r.emit(f"end = {end}" if not ragged else f"end = {end} if o < {outer} else 0")
    for nodes in passes(source.group):
        accs = []
        for node in nodes:
            acc, idx = r.name("acc"), r.name("k")
            source.acc.init(node, acc, idx, node.dtype)
            accs.append((acc, idx))
        _walk(source, shape, axes, p, accs, [], nodes)
        if shuffles:
            lanes = [w for w in (16, 8, 4, 2, 1) if w < p.height]
            for node, (acc, idx) in zip(nodes, accs):
                source.warp_reduce(node, acc, idx, lanes)
            _results(source, nodes, accs)
            continue
        for node, (acc, idx) in zip(nodes, accs):
            if rows:
                _reduce_lanes(source, node, acc, idx, p)
            else:
                two_stage._reduce_height(source, node, acc, idx, p)
        r.emit("if h == 0:")
        r.push()
        for node, (acc, idx) in zip(nodes, accs):
            final = source.acc.final(node, acc, idx)
            r.emit(f"bc{node.id}[c] = {r.convert(node.dtype, final, op_result=True)}")
        r.pop()
        r.emit("cuda.syncthreads()")
        for node in nodes:
            result = r.name("red")
            r.emit(f"{result} = bc{node.id}[c]")
            r.special[node.id] = lambda index, result=result: result
    outputs = source.store_reduced(shape, axes, "h == 0" + (f" and o < {outer}" if ragged else ""))
    if outputs:
        _walk(source, shape, axes, p, [], outputs, [])


def _walk(source, shape, axes, p: two_stage.Plan, accs, row_outputs, nodes) -> None:
    """A thread's elements of its output: column tiles by two_stage's loop (`ilp` a step, then
    one at a time); row tiles, whose rows are short, as a fixed count of guarded elements, so
    that every load is issued before the first combine (a row of 100 went one load at a time
    through the loop's remainder)."""
    r = source.renderer
    if p.layout != "rows":
        r.emit("e = h")
        # NOTE: a class's columns end at a size argument: where the group reads one array, its
        # loop takes Tuning.class_steps steps at once, as LLVM unrolls a constant trip count
        # (benchmarks/experiments/class_steps_gpu.py, an H100: softmax(0) float16 1.52x -> 0.92x
        # the specialized kernel; with two arrays the registers it takes cost more)
        # (the two-stage kernels' loads a step, not a two-stage class's: x+r layernorm(0), two
        # arrays, took 8 loads a step and ran 1.21x the specialized kernel, H200 at 3d46e72+)
        steps = source.tuning.class_steps if source.dynamic and len(set(source.reads())) == 1 \
            else 1
        two_stage._loop(source, shape, axes, p, accs, row_outputs, nodes, steps=steps,
                        loads=source.tuning.two_stage_loads)
        return
    r.emit(f"for u in range({p.chunk // p.height}):")
    r.push()
    r.emit(f"e = {source.ix(f'h + u * {p.height}')}")
    r.emit("if e < end:")
    r.push()
    names = [f"r{a}" for a in axes]
    source.delinearize("e", names, [shape[a] for a in axes])
    index = tuple(f"r{d}" if d in axes else f"i{d}" for d in range(len(shape)))
    for node, (acc, idx) in zip(nodes, accs):
        source.acc.combine(node, acc, idx, r.value(node.inputs[0], index), node.dtype, "e")
    for param in row_outputs:
        source.store(param, index)
    r.pop()
    r.pop()


def _results(source, nodes, accs) -> None:
    r = source.renderer
    for node, (acc, idx) in zip(nodes, accs):
        final = source.acc.final(node, acc, idx)
        result = r.name("red")
        r.emit(f"{result} = {r.convert(node.dtype, final, op_result=True)}")
        r.special[node.id] = lambda index, result=result: result


def _reduce_lanes(source, node, acc: str, idx: str, p: two_stage.Plan) -> None:
    """Row tiles under the simulator: a row's `height` partials combined by its first thread
    through shared memory (on a GPU: shuffles)."""
    r = source.renderer
    arg = paired(node)
    sc, sci = f"sc{node.id}", f"sci{node.id}"
    r.emit(f"{sc}[t] = {acc}")
    if arg:
        r.emit(f"{sci}[t] = {idx}")
    r.emit("cuda.syncthreads()")
    r.emit("if h == 0:")
    r.push()
    r.emit(f"for g in range(1, {p.height}):")
    r.push()
    source.acc.merge(node, acc, idx, f"{sc}[t + g]", f"{sci}[t + g]" if arg else "0")
    r.pop()
    r.pop()


def _partial_dtype(node: Node):
    return acc_dtype(node)


def _result_dtype(node: Node):
    return np.int64 if node.op in ARG else node.dtype
