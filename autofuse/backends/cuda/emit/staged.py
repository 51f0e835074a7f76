"""The staged product kernel: stacks of small matrix products ((B, M, K) @ (K, N), (B, M, K) @
(B, K, N), broadcast batches) and K-small products, as emit/staged_plan.py decides.

A block takes work items (one tile of one product's result each; a grid-stride loop over them).
For each, the tile's rows of A and columns of B, all of K (or rounds of `depth`), go through
registers into shared memory, A as [k][m] and B as [k][n]; each thread then accumulates rx x ry
results, reading its rx values of A and ry values of B for one k as 16-byte shared loads, and
applies the epilogue to them and stores them, ry consecutive elements of a row as vector stores
where the output's address and row length allow. Operands are read through their index maps
(prologues, transposes, broadcasts); sizes are constants of the kernel's text.
"""
from __future__ import annotations

import numpy as np

from ....arrays import contiguous
from . import accumulators
from .staged_operands import Operand
from .staged_plan import Plan


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    node = source.group.matmul
    k = node.inputs[0].shape[-1]
    nb = source.numba_type(node.dtype)
    zero = r.constant(node.dtype.type(0))
    align = "" if source.simulator else ", alignment=32"
    for name in ("address", "sload4"):
        r.globals[name] = ("vector", name)
    grouped = plan.together > 1
    if grouped:                       # items side by side: `sub` is this thread's
        r.emit(f"sub = {source.ix(f'cuda.threadIdx.x // {plan.each}')}")
        r.emit(f"t = {source.ix(f'cuda.threadIdx.x % {plan.each}')}")
        r.emit(f"region = sub * {plan.area}")
    else:
        r.emit(f"t = {source.ix('cuda.threadIdx.x')}")
    region = "region" if grouped else ""
    r.emit(f"tx = t % {plan.tn // plan.ry}")
    r.emit(f"ty = t // {plan.tn // plan.ry}")
    r.emit(f"smem = cuda.shared.array({plan.shared}, {nb}{align})")
    batch = tuple("0" if extent == 1 else f"b{d}" for d, extent in enumerate(node.shape[:-2]))
    rounds = -(-k // plan.depth) if plan.depth else 0
    moving = [Operand(source, plan, "a", region)]
    if not plan.keep_b:
        moving.append(Operand(source, plan, "b", region))
    for operand in moving if rounds else ():
        operand.declare()
    if plan.keep_b and rounds:        # (once a block, in the first item's place; col0 is 0)
        _open(source.renderer, "sub == 0" if grouped else None)
        Operand(source, plan, "b").loop(tuple("0" for _ in batch), "0", zero, "0")
        _close(source.renderer, "sub == 0" if grouped else None)
    lanes = _vector_outputs(source, plan)
    steps = -(-plan.items // plan.together)
    partial = f"w < {plan.items}" if plan.items % plan.together else None
    r.emit("wb = cuda.blockIdx.x")
    _item(source, plan, batch, "wb", "")
    if plan.prefetch:
        _open(r, partial)
        for operand in moving:
            operand.fetch(batch, "0", zero)
        _close(r, partial)
    # NOTE: float32 and float64 accumulators a local array indexed by constants, a K step one
    # intrinsic call (intrinsics/register_block.py): the same PTX, less of numba's front end
    block = accumulators.applies(node.dtype, r.held(node.dtype))
    if block:
        acc = accumulators.declare(r, plan.rx, plan.ry, nb)
    r.emit(f"while wb < {steps}:")
    r.push()
    if block:
        r.emit(accumulators.fill(plan.rx, plan.ry, zero))
    else:
        acc = [[f"c{x}_{y}" for y in range(plan.ry)] for x in range(plan.rx)]
        for row in acc:
            r.emit(" = ".join(row) + f" = {zero}")
    if rounds > 1:
        r.emit(f"for k0 in range(0, {k}, {plan.depth}):")
        r.push()
    if rounds:
        r.emit("cuda.syncthreads()")          # the last round's (or item's) readers are done
        _open(r, partial)
        for operand in moving:
            if plan.prefetch:
                operand.store()
            else:
                _stage(operand, plan, batch, "k0" if rounds > 1 else "0", zero)
        _close(r, partial)
        r.emit("cuda.syncthreads()")
    r.emit("wbn = wb + cuda.gridDim.x")
    if plan.prefetch:
        _item(source, plan, batch, "wbn", "n")
        _open(r, f"wn < {plan.items}")
        for operand in moving:
            operand.fetch(tuple(name if name == "0" else f"{name}n" for name in batch), "0",
                          zero, suffix="n")
        _close(r, f"wn < {plan.items}")
    if rounds:
        _steps(source, plan, acc, region, block)
    if rounds > 1:
        r.pop()
    _open(r, partial)
    _epilogue(source, plan, acc, batch, lanes)
    _close(r, partial)
    r.emit("wb = wbn")
    if plan.prefetch:
        for name in ["w", "row0", "col0"] + [name for name in batch if name != "0"]:
            r.emit(f"{name} = {name}n")
    else:
        _item(source, plan, batch, "wb", "")
    r.pop()
    strategy = (f"staged {plan.tm}x{plan.tn}, {plan.rx}x{plan.ry} per thread, K {k} staged "
                f"{plan.depth} deep" + (f", {plan.together} a block" if grouped else "") +
                (", B kept" if plan.keep_b else "") + (", prefetched" if plan.prefetch else ""))
    return source.finish(strategy, plan.threads, (plan.blocks, 1, 1))


def _stage(operand: Operand, plan: Plan, batch: tuple, origin: str, zero: str,
           start: str = "") -> None:
    """One operand's tile for the K round at `origin`, now: held (all reads, then all stores)
    or a loop an element at a time."""
    if plan.held:
        operand.fetch(batch, origin, zero, start)
        operand.store()
    else:
        operand.loop(batch, origin, zero, start)


def _item(source, plan: Plan, batch: tuple, step: str, suffix: str) -> None:
    """The thread's item `w` of the block's step `step`: its batch coordinates (b0 ...) and its
    tile's origin (row0, col0), each name followed by `suffix`."""
    r = source.renderer
    node = source.group.matmul
    m, n = node.shape[-2:]
    across, down = -(-n // plan.tn), -(-m // plan.tm)
    s = suffix
    w = f"w{s}"
    r.emit(f"{w} = {step} * {plan.together} + sub" if plan.together > 1 else f"{w} = {step}")
    r.emit(f"col0{s} = ({w} % {across}) * {plan.tn}" if across > 1 else f"col0{s} = 0")
    r.emit(f"row0{s} = (({w} // {across}) % {down}) * {plan.tm}" if down > 1 else f"row0{s} = 0")
    kept = [d for d, name in enumerate(batch) if name != "0"]
    if kept:
        r.emit(f"rest = {w} // {across * down}")
    for d in reversed(kept):
        if d == kept[0]:
            r.emit(f"b{d}{s} = rest")
        else:
            r.emit(f"b{d}{s} = rest % {node.shape[d]}")
            r.emit(f"rest = rest // {node.shape[d]}")


def _steps(source, plan: Plan, acc, region: str, block: bool) -> None:
    """The FMAs over the staged K round, `unroll` steps written out a loop iteration (`block`:
    the accumulators are a local array, a step one intrinsic call: emit/accumulators.py)."""
    r = source.renderer
    rx, ry, unroll = plan.rx, plan.ry, plan.unroll
    sa, sb = plan.tm + plan.pad_a, plan.tn + plan.pad_b
    own = f"{region} + " if region else ""
    r.emit(f"pa = {own}ty * {rx}")
    r.emit(f"pb = {plan.kept_at if plan.keep_b else own + str(plan.base_b)} + tx * {ry}")
    r.emit(f"for kq in range({plan.depth // unroll}):")
    r.push()
    for u in range(unroll):
        for side, count, pointer, stride in (("a", rx, "pa", sa), ("b", ry, "pb", sb)):
            at = f"{pointer} + {u * stride}" if u else pointer
            names = [f"{side}{i}_" for i in range(count)]
            if count % 4 == 0 and stride % 4 == 0:
                for q in range(0, count, 4):
                    where = f"{at} + {q}" if q else at
                    r.emit(f"{', '.join(names[q:q + 4])} = sload4(smem, {source.ix(where)})")
            else:
                for i, name in enumerate(names):
                    r.emit(f"{name} = smem[{source.ix(f'{at} + {i}' if i else at)}]")
        if block:
            r.emit(accumulators.step(rx, ry))
            continue
        # NOTE: one statement an FMA (a line a row of the thread's block): numba typed the
        # tuple assignment of a row's sums slower (a first call's compile), for the same PTX
        for x in range(rx):
            r.emit("; ".join(f"{acc[x][y]} += a{x}_ * b{y}_" for y in range(ry)))
    r.emit(f"pa += {unroll * sa}")
    r.emit(f"pb += {unroll * sb}")
    r.pop()


def _vector_outputs(source, plan: Plan) -> dict:
    """{output name: elements a store} for the outputs stored as vectors (16 bytes or ry
    elements), each with its alignment checked once (`v<name>`), before the item loop."""
    r = source.renderer
    n = source.group.matmul.shape[-1]
    lanes = {}
    for param in source.outputs:
        item = np.dtype(param.node.dtype).itemsize
        width = min(plan.ry, 16 // item) if item >= 4 else 1
        if width > 1 and n % width == 0 and plan.ry % width == 0:
            lanes[param.name] = width
            r.globals[f"vstore{width}"] = ("vector", f"vstore{width}")
            r.emit(f"v{param.name} = address({param.name}) % 16 == 0")
    return lanes


def _open(r, condition: str | None) -> None:
    """A block under `condition` (a new scope only, where there is none)."""
    if condition:
        r.emit(f"if {condition}:")
        r.push()
    else:
        r.scopes.append({})


def _close(r, condition: str | None) -> None:
    if condition:
        r.pop()
    else:
        r.scopes.pop()


def _epilogue(source, plan: Plan, acc, batch: tuple, lanes: dict) -> None:
    """Each of the thread's rows: the epilogue on its ry results (once, into registers), stored
    as vectors where the whole run lies inside the result and the output is aligned, else one
    by one, guarded."""
    r = source.renderer
    m, n = source.group.matmul.shape[-2:]
    rx, ry = plan.rx, plan.ry
    r.emit(f"gj = col0 + tx * {ry}")
    whole_runs = n % plan.tn == 0
    for x in range(rx):
        r.emit(f"gi = row0 + ty * {rx} + {x}" if x else f"gi = row0 + ty * {rx}")
        rows = None if m % plan.tm == 0 else f"gi < {m}"
        _open(r, rows)
        stores = _row_values(source, acc[x], batch, guarded=not whole_runs)
        if lanes:
            checks = [f"v{name}" for name in lanes] + ([] if whole_runs else [f"gj + {ry} <= {n}"])
            r.emit(f"if {' and '.join(checks)}:")
            r.push()
            for param in source.outputs:
                _store(r, param.name, stores[param.name], lanes.get(param.name, 1), n, False)
            r.pop()
            r.emit("else:")
            r.push()
        for param in source.outputs:
            _store(r, param.name, stores[param.name], 1, n, not whole_runs)
        if lanes:
            r.pop()
        _close(r, rows)


def _row_values(source, sums: list, batch: tuple, guarded: bool) -> dict:
    """One row of the thread's results through the epilogue, into registers: {output name:
    [(its flat offset, the register) for each column]}; `guarded`: columns past N skipped."""
    r = source.renderer
    node = source.group.matmul
    n = node.shape[-1]
    stores = {param.name: [] for param in source.outputs}
    for y, total in enumerate(sums):
        column = f"gj + {y}" if y else "gj"
        check = f"{column} < {n}" if guarded else None
        names = [f"s{param.name}_{y}" for param in source.outputs]
        if guarded:
            for name, param in zip(names, source.outputs):
                r.emit(f"{name} = {source.stored(param.node, r.constant(param.node.dtype.type(0)))}")
        _open(r, check)
        r.special[node.id] = lambda index, name=source.register_value(total, node): name
        index = batch + ("gi", column)
        kept = [i for i, extent in zip(index, node.shape) if extent != 1]
        for name, param in zip(names, source.outputs):
            moving = iter(kept)
            out = tuple("0" if extent == 1 else next(moving) for extent in param.node.shape)
            value = source.stored(param.node, r.value(param.node, out))
            if guarded or not value.isidentifier():
                r.emit(f"{name} = {value}")
                value = name
            flat = source.offset(param.node.shape, contiguous(param.node.shape), out)
            stores[param.name].append((flat, value, column))
        _close(r, check)
    return stores


def _store(r, output: str, stored: list, width: int, n: int, guarded: bool) -> None:
    """An output's registers of one row: `width` elements a store (vectors), or one a store,
    each `guarded` against N."""
    if width > 1:
        for start in range(0, len(stored), width):
            names = ", ".join(name for _, name, _ in stored[start:start + width])
            r.emit(f"vstore{width}({output}, {stored[start][0]}, {names})")
        return
    for flat, name, column in stored:
        if guarded:
            r.emit(f"if {column} < {n}:")
            r.emit(f"    {output}[{flat}] = {name}")
        else:
            r.emit(f"{output}[{flat}] = {name}")
