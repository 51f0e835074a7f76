"""Generated source for one fusion group as one numba CPU function (loops, phases, blocks)."""
from __future__ import annotations


import numpy as np

from ...fusion.group import Group, keepdims_shape, outer_shape
from ...ir.graph import Node
from ...ir.printer import is_inline_constant
from .. import helpers, sharing
from ..accumulators import Accumulators
from ..render import Renderer, short
from .kernel import (CROSS_TILE, CPU_SPELLINGS, PARALLEL_ELEMENTS, SPLIT_ELEMENTS, Argument,
                     KernelSource)
from .columns import Columns
from .layout import Layouts, memory_space
from .rows import RowPasses, _accumulator, _column_accumulator
from .loops import Loops
from .regions import Regions
from .matmul import Matmul
from .sorting import Sorting
from .scans import Scans
from .scatter import DEFAULT_SCATTER, Scatter, ScatterTuning

class CpuSource(Layouts, RowPasses, Loops, Regions, Matmul, Columns, Sorting, Scans, Scatter):
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
        self.renderer.counts = dynamic
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
            # NOTE: an input read in C order is ravelled in the kernel, not by the host call:
            # numba's ravel of a C array is a view made in compiled code, the host's a new array
            # object (0.1-0.2 us an argument of a 1,000-element call of ~4 us); where the array
            # is not C-contiguous both copy it. (Outputs stay the host's views: a copy of one
            # would drop its writes.)
            for arg in self.inputs:
                if arg.view == "flat" and arg.order is None:
                    arg.view = "ravelled"
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
        # NOTE: a shape class (dynamic) splits a reduction over every axis at every size: its
        # text must be the stand-in's
        if outer_size == 1 and (inner_size >= SPLIT_ELEMENTS or self.dynamic and
                                len(axes) == len(shape)) and not dependent and not row_outputs:
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
        chunks = 64 if self.dynamic else min(64, shape[first])
        step = -(-shape[first] // chunks)
        if self.dynamic:
            # NOTE: sizes may be kernel arguments (a shape class): the chunks' length computed in
            # the kernel, a chunk past the first axis merging its identity
            step = r.name("step")
            r.emit(f"{step} = -(-{shape[first]} // {chunks})")
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
        ravelled = [k for k, arg in enumerate(self.inputs) if arg.view == "ravelled"]
        params += [f"a{k}_nd" if k in ravelled else f"a{k}" for k in range(len(self.inputs))]
        params += [f"o{k}" for k in range(len(self.outputs))]
        lines = [f"def {self.name}({', '.join(params)}):"]
        lines += [f"    a{k} = a{k}_nd.ravel()" for k in ravelled] + r.lines + ["    return 0"]
        helper_sources = []
        values = dict(r.globals)
        for helper_name, dtype in sorted(r.helpers):
            suffix = short(dtype)
            text, constants = helpers.source(helper_name, dtype, suffix)
            helper_sources.append(text)
            values.update(constants)
        return KernelSource(self.name, "\n".join(lines), values, self.inputs, self.outputs,
                            parallel, strategy, helper_sources, self.lifted)


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
