"""The two-stage columns kernel (two_stage.py) where a thread computes a run of outputs
(runs.py): the gradient `x.T @ g` of a linear classifier, each thread the 10 outputs of one of
x's columns over its chunk of rows.

A reduction's accumulators are a local array of the run's length. The loop over the chunk
writes each position out (its values differ: g[k, 0], g[k, 1], ...; x[k, i] is loaded once for
all), indexing the array with numbers, and everything after it (the combining of a column's
threads, the partials, the last block's merge) is a loop `for j in range(run)`: numba's front
end takes about as long for each statement it types as the rest of the kernel together took at
16 positions written out (5.99 s against 0.82 for a thread an output, on the 2-core machine; see
BENCHMARKS.md), and LLVM unrolls these loops, so the array stays in registers (tests/
test_cuda_ptx.py checks that no local memory is used).
"""
from __future__ import annotations

from ...accumulators import acc_dtype, paired, second_dtype
from . import two_stage
from .two_stage import Plan, _declare_shared, _loop, _positions, _reduce_heights


def write(source, shape, axes, outer: int, inner: int, p: Plan, run):
    r = source.renderer
    ix = source.ix
    nodes = source.group.reductions
    size = run.size
    outer = outer // size
    outer_axes = [d for d in range(len(shape)) if d not in axes and d != run.axis]
    ragged = two_stage.start(source, shape, axes, outer_axes, outer, inner, p)
    for node in nodes:
        _declare_shared(source, node, p, size)
    arrays = []
    for node in nodes:
        acc, idx = r.name("acc"), r.name("k")
        arg = paired(node)
        r.emit(f"{acc} = cuda.local.array({size}, "
               f"{source.numba_type(acc_dtype(node))})")
        if arg:
            r.emit(f"{idx} = cuda.local.array({size}, {source.numba_type(second_dtype(node))})")
        arrays.append((acc, idx, arg))

    def at(position) -> list:
        """Each reduction's (acc, idx) at a position (a number, or the loop's j)."""
        return [(f"{acc}[{position}]", f"{idx}[{position}]" if arg else idx)
                for acc, idx, arg in arrays]

    def entries() -> list:
        return [(node, "j", *names) for node, names in zip(nodes, at("j"))]

    _initialize(source, nodes, at, size)
    # (_loop's items are node-major: every position of the first reduction, then the next's)
    _loop(source, shape, axes, p, [at(position)[k] for k in range(len(nodes))
                                   for position in range(size)], [], run=run)
    _reduce_heights(source, entries(), p, size)
    guard = " and ".join(["h == 0"] + ([f"o < {outer}"] if ragged else []))
    strategy = (f"two-stage {p.layout}, {p.width}x{p.height} threads, "
                f"{p.tiles} tiles x {p.chunks} chunks, {size} outputs a thread")
    bound = _bound(p, source.device, source.tuning)
    if p.chunks == 1:
        _results(source, nodes, at, run, shape, axes)
        source.store_reduced(shape, axes, guard, run)
        return _finish(source, strategy, p, (p.tiles, 1, 1), bound)
    stretch = p.chunks * outer            # a position's partials in its reduction's array
    parts = _write_partials(source, nodes, arrays, outer, stretch, p, guard, size)
    r.emit("if last[0] != 0:    # the tile's last block: its partials, in chunk order")
    r.push()
    r.emit("cuda.threadfence()")
    _initialize(source, nodes, at, size)
    if ragged:
        r.emit(f"if o < {outer}:")
        r.push()
    with two_stage.chunk_loop(source, p), _positions(r, size):
        place = ix(f"j * {stretch} + b * {outer} + o")
        for node, (acc, idx), (part, parti) in zip(nodes, at("j"), parts):
            source.acc.merge(node, acc, idx, source.from_partial(node, f"{part}[{place}]"),
                             f"{parti}[{place}]" if parti else "0")
    if ragged:
        r.pop()
    _reduce_heights(source, entries(), p, size)
    _results(source, nodes, at, run, shape, axes)
    source.store_reduced(shape, axes, guard, run)
    two_stage.reset_counter(source)
    r.pop()
    return _finish(source, strategy, p, (p.tiles * p.chunks, 1, 1), bound)


def _finish(source, strategy: str, p: Plan, grid: tuple, bound: int):
    """The kernel; a class plan's with its launch rule (two_stage._finish's)."""
    kernel = source.finish(strategy, p.threads, grid, bound)
    if p.least:
        kernel.launch_rule = ("chunks", p.tiles, p.chunks, p.least, p.height)
    return kernel


def _initialize(source, nodes, at, size: int) -> None:
    with _positions(source.renderer, size):
        for node, (acc, idx) in zip(nodes, at("j")):
            source.acc.init(node, acc, idx, node.dtype)


def _write_partials(source, nodes, arrays, outer: int, stretch: int, p: Plan, guard: str,
                    size: int) -> list:
    """This block's partials: a scratch array a reduction, `size` stretches of `chunks` x
    `outer`; then the block counted done. Returns each reduction's (partials, index partials or
    None)."""
    r = source.renderer
    names = []
    r.emit(f"if {guard}:")
    r.push()
    for k, node in enumerate(nodes):
        arg = paired(node)
        names.append((f"part{k}", f"parti{k}" if arg else None))
        source.scratch.append((names[-1][0], size * stretch, source.partial_dtype(node)))
        if arg:
            source.scratch.append((names[-1][1], size * stretch, source.second_partial_dtype(node)))
    with _positions(r, size):
        place = source.ix(f"j * {stretch} + s * {outer} + o")
        for node, (acc, idx, arg), (part, parti) in zip(nodes, arrays, names):
            r.emit(f"{part}[{place}] = {source.to_partial(node, f'{acc}[j]')}")
            if arg:
                r.emit(f"{parti}[{place}] = {idx}[j]")
    two_stage.count_done(source, p)
    return names


def _results(source, nodes, at, run, shape, axes) -> None:
    """Each reduction's result at each position, as its dtype, for the stores."""
    r = source.renderer
    for k, node in enumerate(nodes):
        results = []
        for position in range(run.size):
            acc, idx = at(position)[k]
            final = source.acc.final(node, acc, idx)
            results.append(r.name("red"))
            r.emit(f"{results[-1]} = {r.convert(node.dtype, final, op_result=True)}")
        r.special[node.id] = run.result(results, shape, axes)


def _bound(p: Plan, device, tuning) -> int:
    """Blocks an SM the launch bounds ask registers for: as many as give each thread
    Tuning.output_run_registers (0: no bound), for the run's accumulators (64 measured
    fastest of 32, 64 and none on the H200: BENCHMARKS.md)."""
    registers = tuning.output_run_registers
    return max(1, device.registers_per_sm // (p.threads * registers)) if registers else 0
