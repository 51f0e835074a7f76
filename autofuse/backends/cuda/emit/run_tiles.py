"""The columns kernel with a run (runs.py) whose shared input is read a row a thread: x of
`x @ w` with w of a few columns, each thread the N outputs of one row of x.

Read straight from global memory, neighbouring threads would read x a row apart (256 bytes at
K = 64 float32), each warp load touching 32 lines; that made a run slower than a thread an output
on the H200 (runs.choose's NOTE). Here a block of `threads` threads takes as many consecutive rows
and walks the reduced axis a chunk at a time: the block copies the chunk of its rows into shared
memory (each warp copying whole lines, in order), waits, and each thread reads its own row there,
once for all of its run's outputs. A chunk's row is padded by one element so that the threads'
reads of one column fall in different banks.

The loop over a block's rows steps by the grid (every thread of a block takes the same number of
steps: the barriers are reached by all); threads past the last row copy nothing and compute
nothing. The positions of the run are written out, as in columns.py.
"""
from __future__ import annotations

from ..kernel import storage_dtype
from . import runs


def write(source, shape, axes, outer_axes, outer: int, run: runs.Run):
    r = source.renderer
    ix = source.ix
    staged = run.staged
    node = next(n for n in source.group.inputs if n.id == staged.node)
    axis = axes[0]
    rows = outer // run.size                    # the rows (the other kept axis)
    row = next(d for d in outer_axes if d != run.axis)
    extent, chunk, threads, mine = shape[axis], staged.chunk, staged.threads, staged.rows
    height = threads * mine                     # a block's rows
    chunks = -(-extent // chunk)
    ragged = extent % chunk != 0
    # NOTE: where every output is stored as x is, the results are gathered in x's tile (after a
    # barrier), so a block holds one array: more blocks an SM
    width = run.size
    outs = list(source.outputs)
    reuse = all(storage_dtype(p.node.dtype) == node.dtype for p in outs)
    size = height * (chunk + 1)
    if reuse:
        size = max(size, height * width * len(outs))
    r.emit(f"tile = cuda.shared.array({size}, {source.numba_type(node.dtype)})")
    r.emit(f"t = {ix('cuda.threadIdx.x')}")
    r.emit(f"base = {ix(f'cuda.blockIdx.x * {height}')}")
    r.emit(f"sc = {ix(f't % {chunk}')}      # the chunk's column this thread copies")
    r.emit(f"s0 = {ix(f't // {chunk}')}")
    r.emit(f"while base < {rows}:")
    r.push()
    # NOTE: a thread's rows past the last are clamped to it, so that every load the operand makes
    # is in bounds; their results are not stored
    names = [f"i{row}_{u}" for u in range(mine)]
    for u, name in enumerate(names):
        r.emit(f"{name} = {ix(f'min(base + t + {u * threads}, {rows - 1})')}")
    accs = {}
    for reduction in source.group.reductions:
        accs[reduction.id] = [[(r.name("acc"), r.name("k"), r.name("red"))
                               for _ in runs.positions(run)] for _ in names]
        for acc, idx, _ in (entry for entries in accs[reduction.id] for entry in entries):
            source.acc.init(reduction, acc, idx, reduction.dtype)
    step = threads // chunk                     # a tile's rows a pass of the block copies
    r.emit(f"for c in range({chunks}):")
    r.push()
    r.emit("cuda.syncthreads()      # the chunk before is read")
    last = extent - 1
    r.emit(f"gc = {ix(f'min(c * {chunk} + sc, {last})' if ragged else f'c * {chunk} + sc')}")
    # NOTE: a batch's loads written out before its stores, so that they are in flight together
    # (a loop of load-then-store waits out each load's latency in turn); rows and columns past
    # the last are clamped to it (in bounds; never read back)
    loads = max(1, min(source.tuning.run_stage_loads, mine * chunk))
    batches, rest = divmod(mine * chunk, loads)
    if batches > 1:
        r.emit(f"for cb in range({batches}):")
        r.push()
        _copy(source, node, staged, loads, step, rows, f"cb * {loads * step} + ")
        r.pop()
    elif batches == 1:
        _copy(source, node, staged, loads, step, rows, "")
    if rest:
        _copy(source, node, staged, rest, step, rows, f"{batches * loads * step} + ")
    r.emit("cuda.syncthreads()")
    span = f"min({chunk}, {extent} - c * {chunk})" if ragged else str(chunk)
    r.emit(f"for q in range({span}):")
    r.push()
    r.emit(f"r{axis} = {ix(f'c * {chunk} + q')}")
    held = []
    for u, name in enumerate(names):
        own = ["0"] * node.ndim
        own[staged.row], own[staged.along] = name, f"r{axis}"
        source.tiles[(node.id, tuple(own))] = \
            f"tile[{ix(f'(t + {u * threads}) * {chunk + 1} + q')}]"
        held.append((node.id, tuple(own)))
    for reduction in source.group.reductions:
        for name, entries in zip(names, accs[reduction.id]):
            full = tuple(name if d == row else f"i{d}" if d not in axes else f"r{d}"
                         for d in range(len(shape)))
            for position, (acc, idx, _) in zip(runs.positions(run), entries):
                value = r.value(reduction.inputs[0], runs.at(run, full, position))
                source.acc.combine(reduction, acc, idx, value, reduction.dtype, f"r{axis}")
    for key in held:
        del source.tiles[key]
    r.pop()
    r.pop()
    # the results of a block's rows gathered in shared memory (a thread's N outputs of a row
    # are N elements apart in memory: stored from each thread, every warp store would touch N
    # lines, and L2 would take each line's sectors in parts), then stored a line at a time
    gathered = []
    if reuse:
        r.emit("cuda.syncthreads()      # the tile's last chunk is read")
    for k, param in enumerate(outs):
        if reuse:
            gathered.append((param, "tile", k * height * width))
            continue
        dtype = source.numba_type(storage_dtype(param.node.dtype))
        r.emit(f"rt{k} = cuda.shared.array({height * width}, {dtype})")
        gathered.append((param, f"rt{k}", 0))
    for u, name in enumerate(names):
        # (the row's own index name in every index: the renderer's memo keeps rows apart)
        for reduction in source.group.reductions:
            results = []
            for acc, idx, result in accs[reduction.id][u]:
                r.emit(f"{result} = {r.convert(reduction.dtype, acc, op_result=True)}")
                results.append(result)
            r.special[reduction.id] = run.result(results, shape, axes)
        named = [name if d == row else f"i{d}" for d in range(len(shape))]
        outer_index = tuple(named[d] for d in range(len(shape)) if d not in axes)
        keep_index = tuple("0" if d in axes else named[d] for d in range(len(shape)))
        for position in range(width):
            for param, array, offset in gathered:
                index = outer_index if param.node.ndim == len(outer_index) else keep_index
                value = r.value(param.node, runs.at(run, index, position))
                slot = ix(f"{offset} + (t + {u * threads}) * {width} + {position}")
                r.emit(f"{array}[{slot}] = {source.stored(param.node, value)}")
    r.emit("cuda.syncthreads()")
    total = rows * width
    r.emit(f"for e in range({-(-height * width // threads)}):")
    r.push()
    r.emit(f"flat = {ix(f'e * {threads} + t')}")
    r.emit(f"at = {ix(f'base * {width} + flat')}")
    r.emit(f"if flat < {height * width} and at < {total}:")
    r.push()
    for param, array, offset in gathered:
        r.emit(f"{param.name}[at] = {array}[{ix(f'{offset} + flat')}]")
    r.pop()
    r.pop()
    r.emit(f"base = {ix(f'base + cuda.gridDim.x * {height}')}")
    r.pop()
    blocks = max(1, min(-(-rows // height), 65535))
    strategy = (f"columns, {run.size} outputs a thread" +
                (f" for each of {mine} rows" if mine > 1 else "") +
                f", {height} rows a block staged {chunk} elements at a time")
    registers = source.tuning.run_stage_registers
    bound = max(1, source.device.registers_per_sm // (threads * registers)) if registers else 0
    written = source.finish(strategy, threads, (blocks, 1, 1), bound)
    if source.dynamic:          # (a shape class's: a block `height` rows, the rest by the grid)
        written.launch_rule = ("run tiles", height, run.size)
    return written


def _copy(source, node, staged, count: int, step: int, rows: int, start: str) -> None:
    """`count` elements of the chunk's column `gc` copied to the tile, from rows
    s0 + start + e * step (e < count): their loads, then their stores."""
    r, ix = source.renderer, source.ix
    for e in range(count):
        r.emit(f"cg{e} = {ix(f'min(base + s0 + {start}{e * step}, {rows - 1})')}")
        index = ["0"] * node.ndim
        index[staged.row], index[staged.along] = f"cg{e}", "gc"
        r.emit(f"cv{e} = {source.load(node, tuple(index))}")
    for e in range(count):
        r.emit(f"tile[{ix(f'(s0 + {start}{e * step}) * {staged.chunk + 1} + sc')}] = cv{e}")
