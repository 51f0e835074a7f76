"""The CUDA backend's side of shape classes (autofuse/dynamic/): grid-stride kernels (elementwise
and loop groups), rows kernels (reductions along trailing axes: a varying number of rows of a
fixed length), reductions across a varying extent (split and two-stage kernels whose chunks are
chosen at launch, emit/two_stage_plan.py; columns kernels, a thread an output) with the class's
sizes as int64 arguments, compiled once; a program per call's sizes launches them on a grid
computed from its sizes (KernelSource.launch_rule). Their scratch (partials, counters) is sized
by the static plan: the builds must agree on it.

Column tiles (whole-column programs: batchnorm, column softmax) take the reduced extent and
the columns as sizes; their tile is the one of many columns over a long extent (emit/tiles.py);
row tiles the rows, planned as for many rows; the float32 tiles product its M (guards and grid).
Other strategies (strips, transposes, tensor-core products) decide their launch and their
loops on sizes at planning time: a group of theirs keeps its sizes static (the builder says why
in the fused text).
"""
from __future__ import annotations

import dataclasses
import math
import re

from ...dynamic.instances import instantiate_graph
from ...dynamic.policy import LATER, Slower
from . import device_for, simulating, tuning_of
from .compile import CompiledKernel, module_text
from .emit import two_stage_plan
from .emit.strip import MAX_GRID_Y
from .emit.two_stage_plan import chunking
from .index_folding import canonical
from .kernel import INDEX_LIMIT, MAX_GRID, Size
from .plan import choose
from .runtime.program import CudaProgram, SimulatorProgram
from .writer import generate

def _strides(entry, simulator: bool) -> dict:
    return {} if simulator else getattr(entry, "input_strides", {})


def dynamic_texts(entry) -> list:
    """Per kernel record: (what must agree between builds, the comparable text, the text)."""
    simulator = simulating()
    tuning, device = tuning_of(entry.options), device_for(simulator)
    texts = []
    for record in entry.kernels:
        group = record.group
        source = generate(group, record.name, _strides(entry, simulator), simulator,
                          round_halves=entry.options.get("float16", "numpy") == "numpy",
                          tuning=tuning, device=device, dynamic=True,
                          varying=getattr(entry, "varying", ()))
        if not (source.launch_rule or source.rule) or (source.scratch and not source.launch_rule):
            raise ValueError(f"the CUDA kernel's strategy ({source.strategy}) plans on its sizes")
        if getattr(entry, "sized_kernels", False):
            _refuse_runs(group, tuning, device, simulator, _strides(entry, simulator),
                         getattr(entry, "varying", ()))
        text = module_text(source, simulator)
        meta = (source.strategy, source.name, source.block, source.launch_rule, source.rule,
                tuple((s.name, s.node.id, s.axis, s.stride) for s in source.sizes), source.min_blocks,
                source.overlaps, tuple((p.name, p.node.id, p.by_value) for p in source.params),
                tuple((p.name, p.node.id) for p in source.outputs),
                tuple((name, count, dtype.str) for name, count, dtype in source.scratch))
        record.strategy, record.dynamic_kernel = source.strategy, source
        texts.append((meta, text, text))
    return texts


def same_kernel(concrete: str, built: str) -> bool:
    """Whether a class kernel's text at a size (`concrete`) is the text built for that size,
    up to how its index arithmetic is spelled: `ix(sr * n0 + sc)` at size 1 is the built
    `ix(sr + sc)`, at size 0 the built `sc` (a transpose's row length; the same arithmetic)."""
    return concrete == built or _folded(concrete) == _folded(built)


_CAST = re.compile(r"\b(ix|sx)\(")


def _folded(text: str) -> str:
    """`text` with each index cast's expression in one spelling (index_folding.canonical) and a
    cast of a lone name dropped (its value is an index already)."""
    out, at = [], 0
    while (found := _CAST.search(text, at)) is not None:
        out.append(text[at:found.start()])
        depth, end = 1, found.end()
        while depth and end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        inner = canonical(_folded(text[found.end():end - 1]))
        out.append(inner if inner.isidentifier() else f"{found.group(1)}({inner})")
        at = end
    out.append(text[at:])
    return "".join(out)


def other_kinds(own, template) -> str | None:
    """Why the class `template` is refused for a call whose own program (planned for its sizes)
    is `own`, or None: the call moves at least Tuning.class_kinds_bytes and the two programs'
    kernels are of other kinds (plans, or runs of outputs a thread)."""
    tuning = tuning_of(own.options)
    moved = sum(node.nbytes for group in own.fused.groups
                for node in (*group.inputs, *group.outputs.values()))
    if moved < tuning.class_kinds_bytes:
        return None
    theirs, ours = _kinds(own, False), _kinds(template, True)
    if theirs == ours:
        return None
    return f"its kernels for the call's sizes ({_named(theirs)}) are of other kinds than a " \
           f"class's ({_named(ours)})"


def _named(kinds: tuple) -> str:
    return ", ".join(kind + (" with runs" if run else "") for kind, run in kinds)


def _kinds(entry, dynamic: bool) -> tuple:
    """Per kernel of `entry`: its plan's strategy and whether a thread computes a run (or a
    strip) of outputs, as planned for the entry's sizes (`dynamic`: as a class kernel, counting
    varying extents by their stand-ins)."""
    simulator = simulating()
    tuning, device = tuning_of(entry.options), device_for(simulator)
    strides = _strides(entry, simulator)
    varying = getattr(entry, "varying", ()) if dynamic else ()
    return tuple((plan.strategy, plan.run is not None)
                 for plan in (choose(record.group, tuning, device, simulator, dynamic, strides,
                                     varying) for record in entry.kernels))


def _refuse_runs(group, tuning, device, simulator: bool, strides: dict, varying: tuple) -> None:
    """The automatic policy keeps a group static where its kernel for its sizes computes runs of
    a row's outputs a thread (emit/runs.py) and its class kernel does not (x @ w with 10
    columns ran 2.9x, x.T @ g 3.8x the specialized kernel as classes without runs, H100). Their
    classes with runs: x @ w's stages x's rows as the specialized kernel does
    (emit/run_tiles.py), 1.00-1.04x; x.T @ g's two-stage kernel, Tuning.class_run_steps
    elements a step, 1.007x (H200, benchmarks/experiments/two_stage_class_steps.py)."""
    static = choose(group, tuning, device, simulator, False, strides)
    if static.run is not None and \
            choose(group, tuning, device, simulator, True, strides, varying).run is None:
        raise Slower(f"its kernel for its sizes ({static.reason}) runs 2-4x faster than one with "
                     f"sizes as arguments; {LATER}")


def prepare_dynamic(entry, shapes, raw_texts: list) -> None:
    """Compile-ready class kernels: each takes the sizes it uses after its outputs."""
    simulator = simulating()
    inputs = {node.attrs["index"]: node for node in entry.graph.inputs}
    entry.dynamic_kernels = []
    for record, text, raw in zip(entry.kernels, shapes.texts, raw_texts):
        source = record.dynamic_kernel
        sizes = [Size(f"n{s}", inputs[shapes.places[s][0][0]], shapes.places[s][0][1])
                 for s in text.symbols]
        source = dataclasses.replace(source, sizes=list(source.sizes) + sizes)
        generic = _with_parameters(text.generic(raw), source)
        kernel = CompiledKernel(record, source, generic, simulator)
        record.source = generic
        record.reason = (f"sizes {', '.join(s.name for s in sizes)} are arguments; "
                         f"the grid is computed from them at each size") if sizes else \
            "the compact product kernel: its sizes and strides are arguments" if source.rule \
            else "no size of the class reaches it"
        record.ptx_provider = None if simulator else kernel.ptx_text
        record.launch = {"block": source.block}     # (each size's record adds its grid)
        entry.dynamic_kernels.append(kernel)
    entry.program = None


def _with_parameters(text: str, source) -> str:
    names = [p.name for p in source.params] + [p.name for p in source.outputs]
    names += [size.name for size in source.sizes] + [name for name, _, _ in source.scratch]
    definition = re.compile(rf"^def {re.escape(source.name)}\([^)]*\):", re.MULTILINE)
    return definition.sub(f"def {source.name}({', '.join(names)}):", text, count=1)


def _grid(group, source, made: dict) -> tuple | None:
    """The grid at a call's sizes, by the kernel's launch rule (None: past what it launches)."""
    if source.launch_rule[0] == "tiles":    # (emit/matmul_tiles.py: tm x tn tiles of the result)
        _, tm, tn = source.launch_rule
        shape = made[group.matmul.id].shape
        batch = 1
        for size in shape[:-2]:
            batch *= size
        return max(1, -(-shape[-1] // tn)), max(1, -(-shape[-2] // tm)), max(1, batch)
    if source.launch_rule[0] == "strip":        # (emit/strip.py: a block's strips of a row)
        _, height, block, lanes = source.launch_rule
        rows, cols = made[group.root.id].shape
        strips = -(-rows // height)
        return None if strips > MAX_GRID_Y else \
            (max(1, -(-(cols // lanes) // block)), max(1, strips), 1)
    if source.launch_rule[0] == "transpose":    # (emit/transpose.py: a block a tile at a time)
        rows, cols = made[group.root.id].shape
        side = source.launch_rule[1]
        return max(1, min(-(-rows // side) * -(-cols // side), MAX_GRID)), 1, 1
    if source.launch_rule[0] == "attention":    # (emit/attention.py: a block a tile of a batch
        shape = made[group.matmul.id].shape     # entry's query rows)
        return max(1, -(-shape[-2] // source.launch_rule[1]) * math.prod(shape[:-2])), 1, 1
    return _blocks(group, source, made), 1, 1


def _idle(group, source, made: dict, options) -> bool:
    """Whether a class's rows kernel (a block a row) would leave the GPU idle at a call's sizes
    where the call moves at least Tuning.class_kinds_bytes: few long rows, which the kernel for
    the sizes splits over many blocks (a two-stage kernel; H200: sum(-1) over 4 rows of 2^23 ran
    26.6x as a class of a block a row). The call then compiles on its own: the class check the
    builder makes at the sizes it was built for (other_kinds), made again at each size."""
    if source.launch_rule[0] != "rows":
        return False
    simulator = simulating()
    tuning, device = tuning_of(options), device_for(simulator)
    reduction = group.reductions[0]
    operand = made[reduction.inputs[0].id]
    if operand.nbytes < tuning.class_kinds_bytes:
        return False
    axes = reduction.attrs["axes"]
    rows = math.prod(size for d, size in enumerate(operand.shape) if d not in axes)
    layout = two_stage_plan.plan(operand.shape, axes, rows, operand.size // max(1, rows), tuning,
                                 device, simulator)
    return layout is not None and layout.layout == "rows"


def _blocks(group, source, made: dict) -> int:
    """The grid's blocks along x at a call's sizes, by a one-dimensional launch rule."""
    rule, number = source.launch_rule[:2]
    if rule == "elements":
        return max(1, min(-(-made[group.root.id].size // number), MAX_GRID))
    reduction = group.reductions[0]
    shape, axes = made[reduction.inputs[0].id].shape, reduction.attrs["axes"]
    rows = inner = 1
    for d, size in enumerate(shape):
        rows *= 1 if d in axes else size
        inner *= size if d in axes else 1
    if rule == "row tiles":         # ("row tiles", rows a block, most blocks): tiles.py's grid
        return max(1, min(-(-rows // number), source.launch_rule[2]))
    if rule == "run tiles":         # ("run tiles", rows a block, outputs a row): run_tiles.py
        return max(1, min(-(-(rows // source.launch_rule[2]) // number), 65535))
    if rule == "outputs":           # a thread an output (columns.py's grid)
        return max(1, min(-(-rows // number), 65535))
    if rule == "split":             # ("split", most blocks, elements a block at least)
        return max(1, min(number, -(-inner // source.launch_rule[2])))
    if rule == "column tiles":      # ("column tiles", most blocks, columns a tile): tiles.py
        return max(1, min(-(-rows // source.launch_rule[2]), number))
    if rule == "chunks":            # ("chunks", tiles, most chunks, least a chunk, height)
        _, tiles, most, least, height = source.launch_rule
        return tiles * chunking(inner, most, least, height)[1]
    return max(1, min(rows, number))


def widest(entry, made: dict | None = None) -> int:
    """The most elements a kernel of `entry` spans (an array it reads or writes, its loop or
    reduced space: what KernelSource.fits_32_bits counts), at `made`'s sizes (node id -> node)
    where given. (A value no kernel touches, attention's scores, counts for nothing.)"""
    find = (lambda node: made[node.id]) if made is not None else (lambda node: node)
    widest = 0
    for group in entry.fused.groups:
        nodes = [group.root, *group.inputs, *group.outputs.values(),
                 *(node.inputs[0] for node in group.reductions)]
        widest = max([widest] + [find(node).size for node in nodes])
    return widest


def instantiate(entry, sizes: dict):
    """(graph, program, kernel records) of the class entry at `sizes`, or why the call compiles
    on its own: a size past the 32-bit indices its kernels were written with or a grid they
    can launch, or a rows kernel that would leave the GPU idle (`_idle`)."""
    graph, made = instantiate_graph(entry, sizes)
    if 2 * widest(entry, made) >= INDEX_LIMIT:
        return "its kernels would index past 32 bits at this size"
    simulator = simulating()
    kernels = []
    for kernel in entry.dynamic_kernels:
        source = kernel.source.rebound(made)        # (a product's grid: from its Grid rule)
        if source.launch_rule:
            grid = _grid(kernel.group, source, made)
            if grid is None:
                return "its grid at this size is past what the kernel launches"
            if _idle(kernel.group, source, made, entry.options):
                return "the class's rows kernel, a block a row, would leave the GPU idle at " \
                       "these few long rows (a kernel for the sizes splits each over many blocks)"
            source = dataclasses.replace(source, grid=grid)
        record = dataclasses.replace(kernel.record, launch=dict(kernel.record.launch,
                                                                grid=source.grid))
        kernels.append(CompiledKernel(record, source, kernel.text, simulator, kernel))
    records = [kernel.record for kernel in kernels]
    instance = dataclasses.replace(entry, graph=graph)
    if simulator:
        return graph, SimulatorProgram(instance, kernels), records
    program = CudaProgram(instance, kernels, tuning_of(entry.options))
    # NOTE: the bytes a call moves decide graph replay or direct launches: this size's, not the
    # stand-in's (entry.fused)
    program.bytes_fused = sum(p.node.nbytes for kernel in kernels for p in
                              kernel.source.params + kernel.source.outputs if not p.by_value)
    return graph, program, records
