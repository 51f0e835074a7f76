"""The pipeline for one signature: trace -> simplify -> partition -> compile, kept as an Entry."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .fusion import partition
from .fusion.rolled import expand, loop_steps
from .ir.graph import Graph
from .ir.periods import COPIES, GROUPINGS, find_period, shorten
from .kernels import Kernel
from .ir.passes import PassRecord, simplify
from .ir.split import split_total_reductions
from .ir.online import online_sums
from .ir.attention import lower_attention
from .ir.products import lower_products
from .ir.unroll import unroll_short_reductions
from .trace import Traced, leaf_spec, trace
from .trace.fourier_kernels import lower_transforms
from .trace.budget import MAX_OPS
from .tree import LEAF


@dataclass
class Entry:
    """Everything autofuse built for one call signature."""
    name: str
    backend: str
    traced: Traced
    graph: Graph                       # simplified
    history: list[PassRecord]
    fused: object = None               # fusion.FusedProgram
    kernels: list = field(default_factory=list)         # kernels.Kernel, one a group
    program: object = None             # callable: list of input arrays -> list of output arrays
    build_seconds: float = 0.0
    input_strides: dict = field(default_factory=dict)   # input node id -> element strides or None
    host_strides: dict = field(default_factory=dict)    # ... of every array input (CPU reads)
    input_leaves: tuple = ()           # for each graph input, the argument leaf it reads
    single_array: bool = False         # the result is one array: nothing else to assemble
    options: dict = field(default_factory=dict)         # jit's backend options (cuda_graph)
    specialized: dict = field(default_factory=dict)     # argument name -> value the trace needed
    dynamic: object = None             # dynamic.Shapes: sizes taken at run time, static reasons
    loop: object = None                # ir.periods.Period: a loop simplified and fused on a few steps
    function_key: str = ""             # the traced function's (disk_cache.function_key)
    misaligned: frozenset = frozenset()  # input node ids whose array's base address was not a
    #                                      multiple of 16 bytes at this signature's first call


def cost_model(backend: str, options: dict | None = None):
    """The backend's cost model for a jit's `options`."""
    from .backends import get_backend
    return get_backend(backend).cost_model(options or {})


def build(fn, structure, leaves, statics, backend: str, name: str, options=None) -> Entry:
    from .backends import get_backend
    from .backends.disk_cache import function_key
    target, key = get_backend(backend), function_key(fn)
    target.before_trace(key)
    entry = assemble(fn, structure, leaves, leaf_specs(leaves, statics, name), statics, backend,
                     name, options)
    entry.function_key = key
    target.prepare(entry)
    return entry


def _misaligned(leaf) -> bool:
    """Whether an array argument's data starts off a 16-byte boundary (a view of another
    array's elements past its start, say): kernels assume the others' vectors aligned."""
    interface = getattr(leaf, "__cuda_array_interface__", None) or \
        getattr(leaf, "__array_interface__", None)
    return bool(interface) and interface["data"][0] % 16 != 0


def roll(graph: Graph, simplified, cost):
    """(graph, history, fused program, period) of a traced loop simplified and partitioned on a
    few of its steps and written out for all (ir/periods.py, fusion/rolled.py), or None where
    the graph holds no such loop or its steps did not come out alike. `history` is the few
    steps' simplification. Where one step's kernels differ from the next's, but every few steps
    repeat (a value recomputed in the next steps' kernels up to a bound, then stored), those few
    steps are taken as one (periods.GROUPINGS). Where no grouping comes out alike, each is tried
    again with every kernel held to one (grouped) step's values (CostModel.max_steps) where that
    moves about as many bytes, and the one whose whole program moves the fewest is taken."""
    # NOTE: a value read by every step is read by COPIES - 1 or more groups of the cut graph; only
    # while that exceeds the groups a value is recomputed in is it stored there as in the whole
    # graph (a value defined within the loop's first steps and read by later ones likewise)
    if cost.max_recompute_groups >= COPIES - 1:
        return None
    found = find_period(graph)
    tried = []
    for period in (found.grouped(k) for k in GROUPINGS) if found is not None else ():
        short = shorten(graph, period) if period is not None else None
        if short is None:
            continue
        cut, copy_of = short
        simple, history = simplified(cut)
        original = {n.id: n for n in cut.nodes}
        fused = partition(simple, cost)
        whole = expand(simple, fused, copy_of, original, period)
        if whole is not None:
            return whole[0], history, whole[1], period
        tried.append((period, simple, history, copy_of, original, fused.bytes_fused()))
    # NOTE: a kernel spanning steps (a value carried through every step and read only after the
    # loop, fused whole into the last step's kernel) keeps the steps from coming out alike; held
    # to one step, each step stores that value, as NumPy does, and the loop compiles once. Taken
    # where the few steps move at most CostModel.held_bytes times the bytes they move unbounded,
    # and of those the grouping whose whole program moves the fewest bytes (a grouping of several
    # traced steps keeps the values between them on chip)
    best = None
    for period, simple, history, copy_of, original, unbounded in tried:
        held = dataclasses.replace(cost, max_steps=1,
                                   steps=loop_steps(simple, copy_of, original))
        fused = partition(simple, held)
        if fused.bytes_fused() > cost.held_bytes * unbounded:
            continue
        whole = expand(simple, fused, copy_of, original, period)
        if whole is None:
            continue
        whole[1].cost = cost
        moved = (whole[1].bytes_fused(), len(whole[1].groups))
        if best is None or moved < best[0]:
            best = moved, (whole[0], history, whole[1], dataclasses.replace(period, held=1))
    return best[1] if best is not None else None


def leaf_specs(leaves, statics, name: str) -> list:
    return [None if i in statics else leaf_spec(leaf, f"{name}() argument {i}")
            for i, leaf in enumerate(leaves)]


def assemble(fn, structure, leaves, specs, statics, backend: str, name: str, options=None,
             sizes=None, sized_kernels: bool = False, flash: bool = True) -> Entry:
    """Every stage but the backend's: trace `leaves` by their `specs` (watching `sizes`,
    dynamic/sizes.py), simplify, partition; the kernel records are left for the backend to fill.
    `sized_kernels`: a class build refuses a kernel for its sizes that is much faster than its
    class kernel (the backend's Slower); `flash`: a class build lowers attention to its one
    flash kernel (its batch a size argument), else to three kernels that take any size."""
    from .backends import get_backend
    traced = trace(fn, structure, specs, statics, name, (options or {}).get("max_ops", MAX_OPS),
                   sizes)
    target = get_backend(backend)
    limits = target.product_limits(options or {})
    if sizes is not None:
        # NOTE: M varies in a shape class: a product is not made a reduction for a few rows
        limits = dataclasses.replace(limits, vector_left=False, attention_head=(
            limits.attention_head if flash else 0), varying=tuple(sizes.stand_ins.items()))
    fourier = target.fourier_limits(options or {}, leaves)
    cost = cost_model(backend, options)
    if sizes is not None:
        # NOTE: the class's sizes are decided on as at its stand-ins (CostModel.varying)
        cost = dataclasses.replace(cost, varying=tuple(sizes.stand_ins.items()))

    def simplified(graph: Graph):
        # NOTE: transforms first: a traced one may hold DFT-matrix products for the product planner
        graph = lower_attention(lower_transforms(graph, fourier), limits.attention_head)
        graph = split_total_reductions(unroll_short_reductions(lower_products(
            graph, limits, lambda node: specs[node.attrs["index"]].strides)))
        return simplify(online_sums(graph, cost.max_row, cost.extent)
                        if cost.online_sums else graph)

    rolled = roll(traced.graph, simplified, cost) \
        if (options or {}).get("roll_loops", True) else None
    if rolled is not None:
        graph, history, fused, loop = rolled
    else:
        (graph, history), fused, loop = simplified(traced.graph), None, None
    entry = Entry(name, backend, traced, graph, history, options=dict(options or {}), loop=loop)
    entry.sized_kernels = sized_kernels
    entry.varying = () if sizes is None else tuple(sizes.stand_ins.items())
    entry.input_leaves = tuple(node.attrs["index"] for node in graph.inputs)
    entry.single_array = (traced.outputs == [("node", 0, "array")] and not traced.mutations
                          and not traced.weak_int_casts and not traced.nonnegative
                          and not traced.checks
                          and traced.structure is LEAF)
    # NOTE: NumPy arrays reach a device as compact C-ordered copies (the CUDA runtime's general
    # path), so a device kernel reads them without their host strides; device arrays keep theirs.
    entry.input_strides = {node.id: specs[node.attrs["index"]].strides for node in graph.inputs
                           if specs[node.attrs["index"]] is not None
                           and not isinstance(leaves[node.attrs["index"]], np.ndarray)}
    entry.misaligned = frozenset(node.id for node in graph.inputs
                                 if _misaligned(leaves[node.attrs["index"]]))
    # (the arrays as the CPU backend reads them: NumPy arrays with their own strides)
    entry.host_strides = {node.id: specs[node.attrs["index"]].strides for node in graph.inputs
                          if specs[node.attrs["index"]] is not None}
    entry.fused = fused or partition(graph, cost)
    entry.kernels = [Kernel(group) for group in entry.fused.groups]   # (backends fill them)
    return entry
