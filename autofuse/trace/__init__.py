"""trace(fn, arguments) -> Traced: run the user's function on tracer arrays and record a Graph."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentError, TraceError, where
from ..ir.graph import Graph
from .. import tree
from ..arrays import interface
from . import methods  # noqa: F401  (installs the ndarray interface on Tracer)
from .budget import MAX_OPS
from .context import Buffer, TraceContext, check_dtype
from .interpose import numpy_creation_traced
from .masking import MaskedSelection
from .tracer import Tracer, fresh


@dataclass(frozen=True)
class LeafSpec:
    """What the signature records about one argument leaf."""
    kind: str                  # "array", "scalar" (NumPy scalar), "weak" (Python bool/int/float),
                               # "sequence" (a list or tuple of numbers, taken as np.asarray of it)
    shape: tuple = ()
    dtype: np.dtype = np.dtype("float64")
    strides: tuple | None = None   # element strides when not C-contiguous
    writeable: bool = True
    weak: type | None = None


@dataclass
class Traced:
    graph: Graph
    structure: object                   # of the result
    outputs: list                       # per result leaf: ("node", i, kind) / ("argument", leaf) / ("constant", v)
    mutations: list = field(default_factory=list)    # (argument leaf index, graph output index)
    weak_int_casts: dict = field(default_factory=dict)
    nonnegative: tuple = ()     # Python int argument leaves NumPy refuses when negative (exponents)
    checks: tuple = ()          # (graph output index, error class, message): raised where True


def _tracer_for(ctx: TraceContext, index: int, spec: LeafSpec) -> Tracer:
    if spec.kind in ("weak", "scalar", "sequence"):
        ctx.specializable.add(index)
    if spec.kind == "weak":
        node = ctx.input((), spec.dtype, index, weak=True)
        return Tracer(Buffer(node, writeable=False), node=node, weak=spec.weak)
    node = ctx.input(spec.shape, spec.dtype, index, weak=False)
    if spec.kind == "sequence":
        tracer = Tracer(Buffer(node, writeable=False), node=node)
        tracer.sequence = True
        return tracer
    if spec.kind == "scalar":
        return Tracer(Buffer(node, writeable=False), node=node, scalar=True)
    buffer = Buffer(node, writeable=spec.writeable, strides=spec.strides)
    return Tracer(buffer, node=node)


def trace(fn, structure, specs: list[LeafSpec], statics: dict, name: str | None = None,
          max_ops: int = MAX_OPS, sizes=None) -> Traced:
    """Call `fn` with tracers in place of the argument leaves described by `specs`.

    `structure` is the flattened (args, kwargs) pair; `statics` maps leaf index -> the Python value
    passed through unchanged (static arguments, None); past `max_ops` recorded operations the
    trace stops with a TraceError naming the loop (budget.py); `sizes` (dynamic.sizes.Watch) marks
    the stand-in sizes of dynamic dimensions, whose uses by the user's code it notes.
    """
    ctx = TraceContext(name or getattr(fn, "__name__", "f"), max_ops)
    ctx.sizes = sizes
    with ctx, numpy_creation_traced():
        leaves = []
        tracers: dict[int, Tracer] = {}
        for index, spec in enumerate(specs):
            if index in statics:
                leaves.append(statics[index])
            else:
                tracers[index] = _tracer_for(ctx, index, spec)
                leaves.append(tracers[index])
        args, kwargs = tree.unflatten(structure, leaves)
        result = fn(*args, **kwargs)
        out_leaves, out_structure = tree.flatten(result)
        nodes, outputs = [], []
        argument_buffers = {id(t._buffer): i for i, t in tracers.items() if t.weak is None}
        for leaf in out_leaves:
            outputs.append(_output(leaf, nodes, argument_buffers))
        mutations = []
        for index, tracer in tracers.items():
            if tracer._buffer.version > 0:
                mutations.append((index, len(nodes)))
                nodes.append(tracer._buffer.node)
        checks = []
        for node, error, message in ctx.checks:
            checks.append((len(nodes), error, message))
            nodes.append(node)
    graph = Graph(ctx.builder.nodes, ctx.inputs, nodes, ctx.name)
    return Traced(graph, out_structure, outputs, mutations, _weak_int_checks(specs, statics, ctx),
                  tuple(sorted(ctx.nonnegative)), tuple(checks))


def _weak_int_checks(specs, statics: dict, ctx: TraceContext) -> dict:
    """Python int argument index -> the narrowest dtype its value must fit on every call: the
    int64 it is passed as, or a narrower dtype it was cast to (2**70 is refused, never wrapped)."""
    checks = {index: spec.dtype for index, spec in enumerate(specs)
              if index not in statics and spec.weak is int}
    checks.update(ctx.weak_int_casts)
    return checks


def _output(leaf, nodes: list, argument_buffers: dict):
    if isinstance(leaf, Tracer) and leaf.sequence:
        leaf.python_use("returning a list or tuple argument")
    if isinstance(leaf, Tracer):
        if not leaf._chain and id(leaf._buffer) in argument_buffers and leaf.weak is None \
                and not leaf.scalar:
            return ("argument", argument_buffers[id(leaf._buffer)])
        nodes.append(leaf.node)
        if leaf.weak is not None:
            kind = leaf.weak.__name__
        else:
            kind = "scalar" if leaf.scalar else "array"
        return ("node", len(nodes) - 1, kind)
    if leaf is None or isinstance(leaf, (bool, int, float, str, np.generic)):
        return ("constant", leaf)
    if isinstance(leaf, np.ndarray):
        return ("constant", leaf.copy())
    if isinstance(leaf, MaskedSelection):
        raise leaf.unsupported("returning")
    raise TraceError(f"the traced function returned a {type(leaf).__name__}, which autofuse cannot "
                     f"return; return arrays, scalars, or tuples/lists/dicts of them")


def _check_plain_array(value, where_text: str) -> None:
    """Refuse ndarray subclasses with their own semantics (np.matrix's `*` is a matmul, masked
    arrays skip masked values): autofuse would compute the plain-array answer."""
    if type(value) not in (np.ndarray, np.memmap):
        raise ArgumentError(f"{where_text}: cannot trace a {type(value).__module__}."
                            f"{type(value).__name__} (an ndarray subclass with its own semantics); "
                            f"pass np.asarray(...) of it{where()}")


_WEAK_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64),
                complex: np.dtype(np.complex128)}


def leaf_spec(value, where_text: str) -> LeafSpec:
    """The signature of one argument leaf, or ArgumentError for what cannot be traced."""
    if isinstance(value, np.ndarray):
        _check_plain_array(value, where_text)
        dtype = check_dtype(value.dtype, where_text)
        strides = None
        if not value.flags.c_contiguous and value.size:
            strides = tuple(s // value.itemsize for s in value.strides)
        return LeafSpec("array", value.shape, dtype, strides, bool(value.flags.writeable))
    if isinstance(value, np.generic):
        return LeafSpec("scalar", (), check_dtype(value.dtype, where_text))
    if tree.numeric_sequence(value):
        array = np.asarray(value)
        return LeafSpec("sequence", array.shape, check_dtype(array.dtype, where_text), None, False)
    if hasattr(value, "__cuda_array_interface__"):
        shape, dtype, strides, _ = interface(value)
        return LeafSpec("array", shape, check_dtype(dtype, where_text), strides, True)
    if isinstance(value, (bool, int, float, complex)):
        return LeafSpec("weak", (), _WEAK_DTYPES[type(value)], weak=type(value))
    raise ArgumentError(f"{where_text}: cannot trace a value of type {type(value).__name__}; pass "
                        f"arrays or numbers, or mark it static with static_argnames{where()}")


__all__ = ["trace", "Traced", "LeafSpec", "leaf_spec", "fresh"]
