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
from .staged_plan import Plan


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    node = source.group.matmul
    a, b = node.inputs
    k = a.shape[-1]
    nb = source.numba_type(node.dtype)
    zero = r.constant(node.dtype.type(0))
    sa, sb = plan.tm + plan.pad_a, plan.tn + plan.pad_b
    base_b = -(-plan.depth * sa // 4) * 4
    area = max(4, base_b + plan.depth * sb)
    align = "" if source.simulator else ", alignment=32"
    for name in ("address", "sload4"):
        r.globals[name] = ("vector", name)
    r.emit(f"t = {source.ix('cuda.threadIdx.x')}")
    r.emit(f"tx = t % {plan.tn // plan.ry}")
    r.emit(f"ty = t // {plan.tn // plan.ry}")
    r.emit(f"smem = cuda.shared.array({area}, {nb}{align})")
    batch = tuple("0" if extent == 1 else f"b{d}" for d, extent in enumerate(node.shape[:-2]))
    if plan.keep_b and plan.depth:        # (one tile across N: col0 is 0 for every item)
        _stage(source, plan, b, "b", tuple("0" for _ in batch), "0", zero, start="0")
    lanes = _vector_outputs(source, plan)
    r.emit("w = cuda.blockIdx.x")
    r.emit(f"while w < {plan.items}:")
    r.push()
    _item(source, plan, batch)
    acc = [[f"c{x}_{y}" for y in range(plan.ry)] for x in range(plan.rx)]
    for row in acc:
        r.emit(" = ".join(row) + f" = {zero}")
    rounds = -(-k // plan.depth) if plan.depth else 0
    if rounds > 1:
        r.emit(f"for k0 in range(0, {k}, {plan.depth}):")
        r.push()
    origin = "k0" if rounds > 1 else "0"
    if rounds:
        r.emit("cuda.syncthreads()")          # the last round's (or item's) readers are done
        _stage(source, plan, a, "a", batch, origin, zero)
        if not plan.keep_b:
            _stage(source, plan, b, "b", batch, origin, zero)
        r.emit("cuda.syncthreads()")
        _steps(source, plan, acc, sa, sb, base_b)
    if rounds > 1:
        r.pop()
    _epilogue(source, plan, acc, batch, lanes)
    r.emit("w += cuda.gridDim.x")
    r.pop()
    strategy = (f"staged {plan.tm}x{plan.tn}, {plan.rx}x{plan.ry} per thread, K {k} staged "
                f"{plan.depth} deep" + (", B kept" if plan.keep_b else ""))
    return source.finish(strategy, plan.threads, (plan.blocks, 1, 1))


def _item(source, plan: Plan, batch: tuple) -> None:
    """Item w's batch coordinates (b0 ...) and its tile's origin (row0, col0)."""
    r = source.renderer
    node = source.group.matmul
    m, n = node.shape[-2:]
    across, down = -(-n // plan.tn), -(-m // plan.tm)
    r.emit(f"col0 = (w % {across}) * {plan.tn}" if across > 1 else "col0 = 0")
    r.emit(f"row0 = ((w // {across}) % {down}) * {plan.tm}" if down > 1 else "row0 = 0")
    kept = [d for d, name in enumerate(batch) if name != "0"]
    if kept:
        r.emit(f"rest = w // {across * down}")
    for d in reversed(kept):
        if d == kept[0]:
            r.emit(f"b{d} = rest")
        else:
            r.emit(f"b{d} = rest % {node.shape[d]}")
            r.emit(f"rest = rest // {node.shape[d]}")


def _stage(source, plan: Plan, operand, which: str, batch: tuple, origin: str, zero: str,
           start: str = "") -> None:
    """One operand's tile for the K round at `origin` into shared memory: A as [k][m] rows of
    tm + pad_a, B as [k][n] rows of tn + pad_b after A's; consecutive threads read along the
    operand's unit-stride axis; elements past M, N or K are zeros."""
    r = source.renderer
    node = source.group.matmul
    m, n = node.shape[-2:]
    k = node.inputs[0].shape[-1]
    depth = plan.depth
    if which == "a":
        tile, extent, fast_k, row = plan.tm, m, plan.a_along_k, plan.tm + plan.pad_a
        start, base = start or "row0", 0
    else:
        tile, extent, fast_k, row = plan.tn, n, not plan.b_along_n, plan.tn + plan.pad_b
        start, base = start or "col0", -(-depth * (plan.tm + plan.pad_a) // 4) * 4
    r.emit(f"for e in range(t, {depth * tile}, {plan.threads}):")
    r.push()
    inner, outer = ("sk", "sq") if fast_k else ("sq", "sk")
    across = depth if fast_k else tile
    r.emit(f"{outer} = {source.ix(f'e // {across}')}")
    r.emit(f"{inner} = {source.ix(f'e - {outer} * {across}')}")
    r.emit(f"gq = {start} + sq")
    r.emit(f"gk = {origin} + sk" if origin != "0" else "gk = sk")
    guards = []
    if extent % tile:
        guards.append(f"gq < {extent}")
    if k % depth:
        guards.append(f"gk < {k}")
    index = batch + (("gq", "gk") if which == "a" else ("gk", "gq"))
    if guards:
        r.emit(f"v = {zero}")
    _open(r, " and ".join(guards))
    r.emit(f"v = {r.value(operand, index)}")
    _close(r, " and ".join(guards))
    r.emit(f"smem[{source.ix(f'{base} + sk * {row} + sq')}] = v")
    r.pop()


def _steps(source, plan: Plan, acc, sa: int, sb: int, base_b: int) -> None:
    """The FMAs over the staged K round, `unroll` steps written out a loop iteration."""
    r = source.renderer
    rx, ry, unroll = plan.rx, plan.ry, plan.unroll
    r.emit(f"pa = ty * {rx}")
    r.emit(f"pb = {base_b} + tx * {ry}")
    r.emit(f"for kq in range({plan.depth // unroll}):")
    r.push()
    for u in range(unroll):
        for side, count, pointer, stride in (("a", rx, "pa", sa), ("b", ry, "pb", sb)):
            at = f"{pointer} + {u * stride}" if u else pointer
            names = [f"{side}{i}_" for i in range(count)]
            if count == 4 and stride % 4 == 0:
                r.emit(f"{', '.join(names)} = sload4(smem, {source.ix(at)})")
            else:
                for i, name in enumerate(names):
                    r.emit(f"{name} = smem[{source.ix(f'{at} + {i}' if i else at)}]")
        for x in range(rx):
            sums = ", ".join(f"{acc[x][y]} + a{x}_ * b{y}_" for y in range(ry))
            r.emit(f"{', '.join(acc[x])} = {sums}")
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
    """Each of the thread's rows: the epilogue on its ry results, stored as vectors where the
    whole run lies inside the result and the output is aligned, else one by one, guarded."""
    r = source.renderer
    m, n = source.group.matmul.shape[-2:]
    rx, ry = plan.rx, plan.ry
    r.emit(f"gj = col0 + tx * {ry}")
    whole_runs = n % plan.tn == 0
    for x in range(rx):
        r.emit(f"gi = row0 + ty * {rx} + {x}" if x else f"gi = row0 + ty * {rx}")
        rows = None if m % plan.tm == 0 else f"gi < {m}"
        _open(r, rows)
        if lanes:
            checks = [f"v{name}" for name in lanes] + ([] if whole_runs else [f"gj + {ry} <= {n}"])
            r.emit(f"if {' and '.join(checks)}:")
            r.push()
            _row(source, acc[x], batch, lanes, guarded=False)
            r.pop()
            r.emit("else:")
            r.push()
        _row(source, acc[x], batch, {}, guarded=not whole_runs)
        if lanes:
            r.pop()
        _close(r, rows)


def _row(source, sums: list, batch: tuple, lanes: dict, guarded: bool) -> None:
    """One row of the thread's results through the epilogue into every output: `lanes[name]`
    elements a store where given, else one; `guarded`: each column checked against N."""
    r = source.renderer
    node = source.group.matmul
    n = node.shape[-1]
    values = {}
    for y, total in enumerate(sums):
        column = f"gj + {y}" if y else "gj"
        check = f"{column} < {n}" if guarded else None
        _open(r, check)
        r.special[node.id] = lambda index, name=source.register_value(total, node): name
        index = batch + ("gi", column)
        kept = [i for i, extent in zip(index, node.shape) if extent != 1]
        for param in source.outputs:
            moving = iter(kept)
            out = tuple("0" if extent == 1 else next(moving) for extent in param.node.shape)
            value = source.stored(param.node, r.value(param.node, out))
            flat = source.offset(param.node.shape, contiguous(param.node.shape), out)
            if param.name in lanes:
                held = f"s{param.name}_{y}"
                r.emit(f"{held} = {value}")
                values.setdefault(param.name, []).append((flat, held))
            else:
                r.emit(f"{param.name}[{flat}] = {value}")
        _close(r, check)
    for param in source.outputs:
        width = lanes.get(param.name)
        if not width:
            continue
        stored = values[param.name]
        for start in range(0, len(stored), width):
            flat = stored[start][0]
            names = ", ".join(held for _, held in stored[start:start + width])
            r.emit(f"vstore{width}({param.name}, {flat}, {names})")
