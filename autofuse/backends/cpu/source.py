"""Generated source for one fusion group as one numba CPU function (loops, phases, blocks)."""
from __future__ import annotations


import numpy as np

from ...arrays import contiguous
from ...fusion.group import Group, keepdims_shape, outer_shape
from ...ir.graph import Node
from ...ir.ops import ELEMENTWISE, OPS, REDUCE, typed_constants
from ...ir.printer import is_inline_constant
from .. import helpers, sharing
from ..accumulators import Accumulators
from ..render import Renderer, short
from .kernel import (CROSS_TILE, CPU_SPELLINGS, LANED, LANES, PARALLEL_ELEMENTS, SHORT_LANES, SPLIT_ELEMENTS,
                     Argument, KernelSource)
from .columns import Columns
from .loops import Loops
from .regions import Regions
from .matmul import Matmul
from .sorting import Sorting
from .scans import Scans
from .scatter import DEFAULT_SCATTER, Scatter, ScatterTuning

def _accumulator(node: Node) -> np.dtype:
    """float32 sums and products accumulate in float64 on the CPU (cheap there, and exact-er),
    but for a matrix product's sum (ir/products.py), which accumulates in float32 as BLAS's sgemv
    and NumPy's matmul do: a row's 64 lanes each sum K/64 terms, at twice float64's vector width
    (1024^2 matrix-vector product: 204 -> see the commit)."""
    if node.op == "sum" and node.attrs.get("product") and node.dtype == np.float32:
        return node.dtype
    if node.op in ("sum", "prod") and node.dtype == np.float32:
        return np.dtype(np.float64)
    if node.op in ("argmax", "argmin"):     # the running extreme value, not its index
        return node.inputs[0].dtype
    return node.dtype


def _column_accumulator(node: Node) -> np.dtype:
    """Down columns float32 sums accumulate in float32, as NumPy's own axis-0 sums do (row after
    row into a row of accumulators): a float64 row of 4096 accumulators is the whole L1 and halves
    the vector width (4096 x 4096 float32 summed over axis 0 on one core: 8.4 ms in float64,
    3.9 ms in float32, NumPy 3.3 ms). Blocks of rows merged at the end keep the error at or under
    NumPy's."""
    if node.op in ("sum", "prod") and node.dtype == np.float32:
        return node.dtype
    return _accumulator(node)


class CpuSource(Loops, Regions, Matmul, Columns, Sorting, Scans, Scatter):
    def __init__(self, group: Group, name: str, dynamic: bool = False, lifted: tuple = (),
                 into: Node | None = None, scatter_tuning: ScatterTuning = DEFAULT_SCATTER,
                 strides: dict | None = None, own_layout: bool = False):
        self.group = group
        self.strides = strides or {}    # input node id -> element strides (None: C order)
        self.own_layout = own_layout    # its outputs may take their inputs' memory order
        self.space_rows = set()         # outputs of the reduced space's shape, in a permuted space
        self.lifted = list(lifted)      # sharing.Lifted: starts and scalars taken as arguments
        self.into = into                # the slice assignment's base, written in place (in_place)
        self.scatter_tuning = scatter_tuning
        self.name = name
        self.dynamic = dynamic      # sizes may become arguments: no choice may saturate on them
        self.inputs = [Argument(n) for n in group.inputs]
        self.outputs = [Argument(n) for n in group.outputs.values()]
        self.argname = {}
        for k, arg in enumerate(self.inputs):
            self.argname[arg.node.id] = f"a{k}"
        self.flat = False
        self._scratch_at = None        # [line, depth] where per-row scratch buffers are made
        self.renderer = Renderer(group, self.load)
        self.renderer.ones = not dynamic
        self.renderer.spellings = CPU_SPELLINGS
        self.renderer.lifted = sharing.names(self.lifted)
        self.accumulators = Accumulators(self.renderer)

    # -- loads and stores ------------------------------------------------------------------------
    def load(self, node: Node, index: tuple) -> str:
        name = self.argname[node.id]
        if node.ndim == 0:
            return f"{name}[0]"
        if self.flat and node.shape == self.group.root.shape:
            return f"{name}[i]"
        return f"{name}[{', '.join(index)}]"

    def store(self, k: int, node: Node, index: tuple) -> None:
        value = self.renderer.value(node, index)
        target = f"o{k}[0]" if node.ndim == 0 else (
            f"o{k}[i]" if self.flat else f"o{k}[{', '.join(index)}]")
        self.renderer.emit(f"{target} = {value}")

    def write(self) -> KernelSource:
        kind = self.group.kind
        if kind == "output":
            strategy, parallel = self.matmul()
        elif kind == "input":
            strategy, parallel = self.reduction()
        elif kind == "sort":
            strategy, parallel = self.sort_rows()
        elif kind == "scan":
            strategy, parallel = self.scan()
        elif kind == "scatter":
            strategy, parallel = self.scatter()
        elif self.into is not None:
            strategy, parallel = self.region()
        else:
            strategy, parallel = self.pointwise()
        return self.finish(strategy, parallel)

    def pointwise(self):
        shape = self.group.root.shape
        size = int(np.prod(shape, dtype=np.int64))
        # NOTE: a shape class's kernel is written parallel at every size: each call's size picks
        # its threaded or serial variant (backends/cpu/dynamic.py's Variants)
        parallel = size >= PARALLEL_ELEMENTS or self.dynamic
        stored = self.shared_order(shape)
        across = stored is None and self.reads_across(shape)
        self.flat = self.group.kind == "elementwise" and len(shape) > 1 and not across and all(
            n.shape in (shape, ()) for n in self.group.inputs)
        if self.flat:
            for arg in self.inputs + self.outputs:
                arg.view = "flat" if arg.node.shape == shape else "one"
                arg.order = stored if arg.node.shape == shape else None
            opened = self.loops(["i"], [size], parallel)
            index = tuple(f"i{d}" for d in range(len(shape)))
        else:
            self._zero_d_views()
            index = tuple(f"i{d}" for d in range(len(shape)))
            opened = self.tiled_loops(list(index), list(shape), parallel, CROSS_TILE) \
                if across else self.loops(list(index), list(shape), parallel)
        for k, arg in enumerate(self.outputs):
            self.store(k, arg.node, index)
        self.close(opened)
        if across:
            return f"nest, the last two axes in {CROSS_TILE}x{CROSS_TILE} tiles", parallel
        if stored is not None:
            return f"flat, in its inputs' memory order {stored}", parallel
        return ("flat" if self.flat else "nest"), parallel

    def shared_order(self, shape) -> tuple | None:
        """The axis order (slowest first) in which every full-size input of an elementwise
        group is stored contiguously, where it is not C's and the group's outputs may take it
        (`own_layout`: they are the function's results, read by no other kernel): the group then
        runs flat over memory, its outputs allocated in that order, as NumPy's ufuncs keep
        their inputs' order (a Fortran input, a Fortran result). Else None."""
        if not self.own_layout or self.dynamic or self.group.kind != "elementwise" or \
                len(shape) < 2 or any(n.shape not in (tuple(shape), ()) for n in self.group.inputs):
            return None
        found = None
        for node in self.group.inputs:
            if node.shape != tuple(shape):
                continue
            order = _stored_order(self.strides.get(node.id), tuple(shape))
            if order is None or (found is not None and order != found):
                return None
            found = order
        return found

    def reads_across(self, shape) -> bool:
        """Whether the group reads an array across its memory order while it writes along the
        last axis (a transpose that moves the last axis, a full-size input stored in another
        order) over a space big enough for tiles (CROSS_TILE in each of the last two axes)."""
        if self.dynamic or len(shape) < 2 or min(shape[-2:]) < 2 * CROSS_TILE:
            return False
        for member in self.group.nodes:
            if member.op == "transpose" and member.ndim >= 2 and \
                    tuple(member.attrs["perm"])[-1] != member.ndim - 1:
                return True
        for node in self.group.inputs:
            strides = self.strides.get(node.id)
            if node.shape == tuple(shape) and strides is not None and \
                    abs(strides[-1]) > min(abs(s) for s, size in zip(strides, shape) if size > 1):
                return True
        return False

    def _zero_d_views(self):
        for arg in self.inputs + self.outputs:
            if arg.node.ndim == 0:
                arg.view = "one"

    # -- reductions --------------------------------------------------------------------------------
    def reduction(self):
        self._zero_d_views()
        shape, axes = self.group.reduce_space
        outer_axes = [d for d in range(len(shape)) if d not in axes]
        outer_sizes = [shape[d] for d in outer_axes]
        outer_size = int(np.prod(outer_sizes, dtype=np.int64))
        inner_size = int(np.prod([shape[a] for a in axes], dtype=np.int64))
        full = tuple(f"i{d}" if d not in axes else f"r{d}" for d in range(len(shape)))
        reductions = self.group.reductions
        dependent = any(self.group.depends_on_reduction(r.inputs[0]) for r in reductions)
        row_outputs = [a for a in self.outputs if a.node.shape == shape and shape != outer_shape(shape, axes)]
        order = None if row_outputs and not self.own_layout else \
            self.memory_order(shape, axes, bool(row_outputs))
        if order is not None:
            # the loops walk the reduced space in its main input's memory order (a Fortran-
            # ordered matrix's sum over rows runs as a column reduction): the space's axes
            # permuted, each index named by its place there, the values read at the same names;
            # outputs of the space's shape (softmax's) stored in that order too
            shape, axes, full = memory_space(shape, axes, order)
            for arg in row_outputs:
                arg.order = order
                self.space_rows.add(arg.node.id)
            outer_axes = [d for d in range(len(shape)) if d not in axes]
            outer_sizes = [shape[d] for d in outer_axes]
        if outer_size == 1 and inner_size >= SPLIT_ELEMENTS and not dependent and not row_outputs:
            return self.split_reduction(shape, axes, full)
        parallel = outer_size > 1 and outer_size * inner_size >= PARALLEL_ELEMENTS
        if self.dynamic:
            parallel = bool(outer_axes)     # (each call's size picks threads or not: Variants)
        if self.column_layout(shape, axes):
            return self.column_reduction(shape, axes, full, parallel, _column_accumulator)
        opened = self.chunked_loops([f"i{d}" for d in outer_axes], outer_sizes, parallel)
        keep = self.kept(reductions, row_outputs, axes, shape) if len(axes) == 1 else {}
        for position, node in enumerate(reductions):
            self.phase(node, axes, shape, full, keep.get(position, []))
        self.store_outputs(shape, axes, full)
        self.close(opened)
        return "rows", parallel

    def memory_order(self, shape, axes, rows: bool = False) -> tuple | None:
        """The reduced space's axes in the memory order of the first input read at its full
        size (slowest first; read directly or through one transpose: x.T.sum(0)), where that is
        not their own order and the loops can follow it: no axis of length 1, the kept axes in
        their own order (the outputs are stored by them), every output of the reduced shape (or,
        with `rows`, of the space's, stored in that order); else None."""
        if self.dynamic or 1 in shape or len(shape) < 2:
            return None
        shapes = (outer_shape(shape, axes),) + ((tuple(shape),) if rows else ())
        if any(arg.node.shape not in shapes for arg in self.outputs):
            return None
        strides = self._space_strides(tuple(shape))
        if strides is None:
            return None
        order = tuple(sorted(range(len(shape)), key=lambda d: (-abs(strides[d]), d)))
        kept = [d for d in order if d not in axes]
        if order == tuple(range(len(shape))) or kept != sorted(kept):
            return None
        return order

    def _space_strides(self, shape: tuple) -> tuple | None:
        """The element strides, along the reduced space's axes, of the first input the group
        reads at the space's full size through elementwise ops, reductions and slices, or
        through one transpose whose result they read; None where there is none."""
        readers = {}
        for member in self.group.nodes:
            for source in member.inputs:
                readers.setdefault(source.id, []).append(member)

        def along(node) -> bool:
            return all(m.kind in (ELEMENTWISE, REDUCE) or m.op == "slice"
                       for m in readers.get(node.id, ()))
        for node in self.group.inputs:
            own = self.strides.get(node.id) or contiguous(node.shape)
            if any(step == 0 and size > 1 for step, size in zip(own, node.shape)):
                continue                # (a broadcast view has no memory order of its own)
            if node.shape == shape and along(node):
                return tuple(own)
            for member in readers.get(node.id, ()):
                if member.op == "transpose" and member.shape == shape and along(member):
                    return tuple(own[p] for p in member.attrs["perm"])
        return None

    def _row_values(self, root: Node) -> set:
        """Members computed at the row index when `root` is: elementwise nodes reached without
        crossing a reduction or an index map."""
        found, stack = set(), [root]
        while stack:
            n = stack.pop()
            if n.id in found or n.id not in self.group.members or n.kind != ELEMENTWISE:
                continue
            if n.id in self.renderer.special or is_inline_constant(n):
                continue
            found.add(n.id)
            stack.extend(n.inputs)
        return found

    def kept(self, reductions, row_outputs, axes, shape) -> dict:
        """Expensive row values a phase computes that a later phase or the row store needs again
        (softmax's exp(x - max)): {phase position: [nodes]}. The phase stores them in a row
        buffer; later passes load them instead of computing them again."""
        sets = [self._row_values(node.inputs[0]) for node in reductions]
        later = [set() for _ in reductions]
        tail = set()
        for arg in row_outputs:
            tail |= self._row_values(arg.node)
        for p in range(len(reductions) - 1, -1, -1):
            later[p] = tail | (later[p + 1] | sets[p + 1] if p + 1 < len(reductions) else set())
        keep, taken = {}, set()
        for p, values in enumerate(sets):
            chosen = [self.group.members[i] for i in sorted(values & later[p] - taken)
                      if OPS[self.group.members[i].op].transcendental]
            taken |= {n.id for n in chosen}
            if chosen:
                keep[p] = chosen
        return keep

    def phase(self, node: Node, axes, shape, full, keep=()) -> None:
        """One pass over the reduced axes accumulating `node`; its result named for later use.
        Values in `keep` are stored to a row buffer as computed and read from it afterwards."""
        r = self.renderer
        buffers = []
        for value_node in keep:
            buffer = self.scratch("row", shape[axes[0]], value_node.dtype)
            buffers.append((value_node, buffer))
        acc_type = _accumulator(node)
        acc, idx, result = r.name("acc"), r.name("k"), r.name("red")
        self.init(node, acc, idx, acc_type)
        if axes:
            opened = self.loops([f"r{a}" for a in axes[:-1]], [shape[a] for a in axes[:-1]], False)
            self.innermost([(node, acc, idx, acc_type)], axes[-1], shape[axes[-1]], full,
                           f"r{axes[0]}", buffers)
            self.close(opened)
        else:
            self.combine(node, acc, idx, r.value(node.inputs[0], full), acc_type, "0")
        for value_node, buffer in buffers:
            self._read_from(value_node, buffer, axes[0], full)
        final = idx if node.op in ("argmax", "argmin") else acc
        r.emit(f"{result} = {r.ctor(node.dtype)}({final})")
        r.special[node.id] = lambda index, result=result: result

    def _read_from(self, node: Node, buffer: str, axis: int, full: tuple) -> None:
        r = self.renderer
        # (the place of the reduced axis's index among the values' index: its own axis, or
        # another where the space is walked in memory order, memory_space)
        at = full.index(f"r{axis}")

        def read(index):
            if all(a == b for d, (a, b) in enumerate(zip(index, full)) if d != at):
                return f"{buffer}[{index[at]}]"
            del r.special[node.id]
            try:
                return r.value(node, index)
            finally:
                r.special[node.id] = read
        r.special[node.id] = read

    def innermost(self, items, axis: int, size: int, full: tuple, position: str,
                  buffers=()) -> None:
        """The loop over the innermost reduced axis accumulating each (node, acc, idx, acc_type).

        Without fastmath LLVM keeps a floating-point reduction in source order: one add per
        add-latency. Sums, products, max and min therefore run LANES independent accumulators
        in a small buffer (element k of each block of LANES goes to lane k; the loop over the
        lanes is what LLVM vectorizes), then fold the lanes into the accumulator in lane order
        and finish the tail serially. 64 lanes in a buffer against 8 scalar lanes, one core,
        4096 x 1024 float32: x.max(1) 2.29 -> 0.96 ms, x.sum(1) 1.47 -> 0.98 ms (NumPy 0.96,
        1.19): LLVM left the 8 scalar max lanes unvectorized. argmax/argmin keep a lane's best
        value and its index, updated by selects, and fold the lanes by value, the lower index
        on ties (so the first occurrence wins, as in NumPy; a NaN the first NaN); 4096 x 4096
        float32 x.argmax(1): 77 ms serial, NumPy 2.2 ms (BENCHMARKS.md). any/all stay serial."""
        r = self.renderer
        name = f"r{axis}"
        width = LANES if size >= 2 * LANES else SHORT_LANES     # short rows: fewer lanes to fold
        arg = ("argmax", "argmin")
        laned = size >= 2 * width and all(
            n.op in LANED or (n.op in arg and position == name) for n, *_ in items)
        if not laned:
            self.serial(items, buffers, name, "0", size, full, position)
            return
        body = size - size % width
        block, lane = r.name("rb"), r.name("q")
        lanes = []
        for node, acc, idx, acc_type in items:
            if node.op in arg:
                value_type = node.inputs[0].dtype
                start = r.constant(typed_constants(value_type)[
                    "LOWEST" if node.op == "argmax" else "HIGHEST"])
                buffer = self.scratch("lanes", width, r.held(value_type))
                # (indices as wide as the values, where the row allows: one vector width)
                narrow = r.held(value_type).itemsize <= 4 and size < 1 << 31
                where = self.scratch("where", width, np.dtype(np.int32 if narrow else np.int64))
                r.emit(f"for {lane} in range({width}):")
                r.emit(f"    {buffer}[{lane}] = {start}")
                r.emit(f"    {where}[{lane}] = 0")
                lanes.append((buffer, where))
                continue
            start = r.constant(typed_constants(acc_type)[OPS[node.op].init.strip("{}")])
            buffer = self.scratch("lanes", width, r.held(acc_type))
            r.emit(f"for {lane} in range({width}):")
            r.emit(f"    {buffer}[{lane}] = {start}")
            lanes.append((buffer, None))
        r.emit(f"for {block} in range(0, {body}, {width}):")
        r.push()
        r.emit(f"for {lane} in range({width}):")
        r.push()
        index = tuple(f"({block} + {lane})" if i == name else i for i in full)
        for (node, _, idx, acc_type), (buffer, where) in zip(items, lanes):
            value = r.value(node.inputs[0], index)
            if where is None:
                self.combine(node, f"{buffer}[{lane}]", idx, value, acc_type, "")
                continue
            # (| and &, not or and and: no branch in the loop LLVM vectorizes)
            better, held = r.name("better"), f"{buffer}[{lane}]"
            op = ">" if node.op == "argmax" else "<"
            r.emit(f"{better} = ({value} {op} {held}) | (({value} != {value}) & ({held} == {held}))")
            r.emit(f"{where}[{lane}] = ({block} + {lane}) if {better} else {where}[{lane}]")
            r.emit(f"{buffer}[{lane}] = {value} if {better} else {buffer}[{lane}]")
        for value_node, row in buffers:
            r.emit(f"{row}[{index[full.index(name)]}] = {r.value(value_node, index)}")
        r.pop()
        r.pop()
        for (node, acc, idx, acc_type), (buffer, where) in zip(items, lanes):
            r.emit(f"for {lane} in range({width}):")
            if where is not None:
                r.push()
                self.accumulators.merge(node, acc, idx, f"{buffer}[{lane}]", f"{where}[{lane}]")
                r.pop()
                continue
            r.emit(f"    {acc} = " + self.accumulators.combined(node, f"{buffer}[{lane}]", acc,
                                                                  acc_type))
        if body < size:
            self.serial(items, buffers, name, str(body), size, full, position)

    def serial(self, items, buffers, name, start, stop, full, position) -> None:
        """One accumulator per reduction over `name` in [start, stop), in order."""
        r = self.renderer
        r.emit(f"for {name} in range({start}, {stop}):")
        r.push()
        for node, acc, idx, acc_type in items:
            self.combine(node, acc, idx, r.value(node.inputs[0], full), acc_type, position)
        for value_node, buffer in buffers:
            r.emit(f"{buffer}[{name}] = {r.value(value_node, full)}")
        # any (all) is decided at its first true (false) value: the row's rest is not read
        # (NumPy stops there too; b.any(1) over 2048^2 random bools: 1.09 ms against 0.10)
        if len(items) == 1 and not buffers and items[0][0].op in ("any", "all"):
            node, acc = items[0][:2]
            r.emit(f"if {'' if node.op == 'any' else 'not '}{acc}:")
            r.emit("    break")
        r.pop()

    def init(self, node, acc, idx, acc_type):
        self.accumulators.init(node, acc, idx, acc_type)

    def combine(self, node, acc, idx, value, acc_type, position) -> None:
        self.accumulators.combine(node, acc, idx, value, acc_type, position)

    def store_outputs(self, shape, axes, full) -> None:
        outer_index = tuple(f"i{d}" for d in range(len(shape)) if d not in axes)
        keep_index = tuple("0" if d in axes else f"i{d}" for d in range(len(shape)))
        row = []
        for k, arg in enumerate(self.outputs):
            node = arg.node
            if node.shape == outer_shape(shape, axes):
                self.store(k, node, outer_index)
            elif node.shape == keepdims_shape(shape, axes):
                self.store(k, node, keep_index)
            else:
                row.append((k, node))
        if row:
            opened = self.loops([f"r{a}" for a in axes], [shape[a] for a in axes], False)
            for k, node in row:
                self.store(k, node, full)
            self.close(opened)

    def split_reduction(self, shape, axes, full):
        """A full reduction in chunks of its first axis on all threads, then the chunks combined."""
        r = self.renderer
        first = axes[0]
        chunks = min(64, shape[first])
        step = -(-shape[first] // chunks)
        nodes = self.group.reductions
        names = []
        for node in nodes:
            acc_type = _accumulator(node)
            partial = r.name("partial")
            r.emit(f"{partial} = np.empty({chunks}, {r.ctor(acc_type)})")
            index_partial = r.name("where")
            r.emit(f"{index_partial} = np.zeros({chunks}, np.int64)")
            names.append((node, partial, index_partial, acc_type))
        r.emit(f"for c in numba.prange({chunks}):")
        r.push()
        accs = []
        for node, partial, index_partial, acc_type in names:
            acc, idx = r.name("acc"), r.name("k")
            self.init(node, acc, idx, acc_type)
            accs.append((acc, idx))
        r.emit(f"for r{first} in range(c * {step}, min({shape[first]}, (c + 1) * {step})):")
        r.push()
        items = [(node, acc, idx, acc_type)
                 for (node, _, _, acc_type), (acc, idx) in zip(names, accs)]
        if len(axes) > 1:
            opened = self.loops([f"r{a}" for a in axes[1:-1]], [shape[a] for a in axes[1:-1]],
                                False)
            self.innermost(items, axes[-1], shape[axes[-1]], full, f"r{first}")
            self.close(opened)
        else:
            for node, acc, idx, acc_type in items:
                self.combine(node, acc, idx, r.value(node.inputs[0], full), acc_type, f"r{first}")
        r.pop()
        for (node, partial, index_partial, _), (acc, idx) in zip(names, accs):
            r.emit(f"{partial}[c] = {acc}")
            r.emit(f"{index_partial}[c] = {idx}")
        r.pop()
        for node, partial, index_partial, acc_type in names:
            acc, idx, result = r.name("acc"), r.name("k"), r.name("red")
            self.init(node, acc, idx, acc_type)
            r.emit(f"for c in range({chunks}):")
            r.push()
            self.accumulators.merge(node, acc, idx, f"{partial}[c]", f"{index_partial}[c]")
            r.pop()
            final = idx if node.op in ("argmax", "argmin") else acc
            r.emit(f"{result} = {r.ctor(node.dtype)}({final})")
            r.special[node.id] = lambda index, result=result: result
        self.store_outputs(shape, axes, full)
        return "split", True




    # -- the module --------------------------------------------------------------------------------
    def finish(self, strategy: str, parallel: bool) -> KernelSource:
        r = self.renderer
        params = [argument.name for argument in self.lifted]
        params += [f"a{k}" for k in range(len(self.inputs))] + [f"o{k}" for k in range(len(self.outputs))]
        lines = [f"def {self.name}({', '.join(params)}):"] + r.lines + ["    return 0"]
        helper_sources = []
        values = dict(r.globals)
        for helper_name, dtype in sorted(r.helpers):
            suffix = short(dtype)
            text, constants = helpers.source(helper_name, dtype, suffix)
            helper_sources.append(text)
            values.update(constants)
        return KernelSource(self.name, "\n".join(lines), values, self.inputs, self.outputs,
                            parallel, strategy, helper_sources, self.lifted)


def _stored_order(strides, shape: tuple) -> tuple | None:
    """The axis order (slowest first) in which an array of these element strides is stored
    contiguously, where it is and that order is not C's; else None (C order, gaps, negative or
    zero strides)."""
    if strides is None or any(s <= 0 for s, n in zip(strides, shape) if n > 1):
        return None
    order = tuple(sorted(range(len(shape)), key=lambda d: (-strides[d] if shape[d] > 1 else 0, d)))
    step = 1
    for d in reversed(order):
        if shape[d] > 1 and strides[d] != step:
            return None
        step *= shape[d]
    return None if order == tuple(range(len(shape))) else order


def memory_space(shape, axes, order) -> tuple:
    """(shape, reduced axes, the values' index) of a reduced space walked in `order` (its axes,
    slowest in memory first): position k of the new space is axis order[k], named i<k> (kept) or
    r<k> (reduced); the index of the space's values names each of their axes by its place."""
    moved = tuple(shape[d] for d in order)
    reduced = tuple(k for k, d in enumerate(order) if d in axes)
    names = [f"r{k}" if k in reduced else f"i{k}" for k in range(len(order))]
    return moved, reduced, tuple(names[order.index(d)] for d in range(len(shape)))


def generate(group: Group, name: str, dynamic: bool = False, lifted: tuple = (),
             into: Node | None = None,
             scatter_tuning: ScatterTuning = DEFAULT_SCATTER,
             strides: dict | None = None, own_layout: bool = False) -> KernelSource:
    """The numba function of `group`; `lifted` (sharing.Lifted): slice starts and scalars it
    takes as arguments; `into`: the base its slice assignment writes in place
    (fusion/in_place.region_base); `scatter_tuning`: when a scatter-add runs on threads
    (cpu/scatter.py); `strides`: the inputs' element strides (None: C order), which the loops
    of a reduction follow; `own_layout`: the outputs may be stored in the inputs' order."""
    return CpuSource(group, name, dynamic, lifted, into, scatter_tuning, strides,
                     own_layout).write()


__all__ = ["generate", "KernelSource", "Argument", "is_inline_constant"]
