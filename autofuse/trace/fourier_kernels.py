"""The fft node written as traced kernels, and the pass that does it where the plan says so.

`lower_transforms(graph, limits)` plans each fft node (ir/fourier_plan.plan): a node kept runs as the
backend's library step; a node traced is replaced by the transform unrolled into elementwise
complex ops on slices and joins (trace/transforms.py), traced on its own at the node's shape and
spliced in, so it fuses with what surrounds it. Each plan's reason is recorded on the node that
takes its place (a kept fft node's attrs `plan`, with the `library` that runs it; the traced
result's `fft`), and the fused text prints it.
"""
from __future__ import annotations

import numpy as np

from ..ir.fourier_plan import FourierLimits, plan
from ..ir.graph import Attrs, Graph, Node
from ..ir.passes import Rewriter
from .context import Buffer, TraceContext
from .indexing import getitem
from .layout import astype, concatenate, moveaxis
from .tracer import Tracer
from . import complexes, creation, transforms, ufuncs


def lower_transforms(graph: Graph, limits: FourierLimits) -> Graph:
    """The graph with each fft node planned: kept (marked with its plan) or traced."""
    if not any(node.op == "fft" for node in graph.nodes):
        return graph
    rewriter = Rewriter(graph)
    users = graph.users()
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        if node.op != "fft":
            rewriter.mapping[node.id] = rewriter.keep(node, inputs)
            continue
        chosen = plan(node, limits, users)
        if chosen.strategy == "library":
            attrs = Attrs({**node.attrs.as_dict(), "library": limits.library,
                           "plan": chosen.reason})
            kept = Node(node.id, node.op, inputs, attrs, node.shape, node.dtype, node.origin)
            rewriter.nodes.append(kept)
            rewriter.mapping[node.id] = kept
        else:
            rewriter.mapping[node.id] = _splice(rewriter, node, inputs[0], chosen.reason,
                                                _route(node, limits))
    return rewriter.finish()


def _route(node: Node, limits: FourierLimits) -> transforms.Plan:
    """How the traced transform computes each length: a transform short enough to join its
    neighbours' kernel through the DFT matrix (a short sum a term, one kernel with them, where
    radix stages would be a kernel a stage); others as transforms.Plan measured."""
    if max(node.attrs["lengths"]) <= limits.max_traced_length:
        return transforms.Plan(max_matrix=limits.max_traced_length,
                               min_radix2=limits.max_traced_length + 1, matrix_as_sum=True)
    return transforms.DEFAULT


def _splice(rewriter: Rewriter, node: Node, source: Node, reason: str,
            route: transforms.Plan) -> Node:
    """The traced transform of `source`, its nodes added to the rewriter with new ids; the last
    carries the plan's reason."""
    nodes, argument, result = _traced(node, route)
    mapping = {argument.id: source}
    for traced in nodes:
        if traced.op == "input":
            continue
        attrs = traced.attrs
        if traced is result:
            attrs = Attrs({**attrs.as_dict(), "fft": reason})
        mapping[traced.id] = rewriter.adopt(traced, tuple(mapping[n.id] for n in traced.inputs),
                                            attrs, node.origin)
    if result.id == argument.id:      # (a transform of length 1 that changes nothing)
        return source
    return mapping[result.id]


def _traced(node: Node, route: transforms.Plan) -> tuple[list, Node, Node]:
    """(nodes, the input node, the result node) of the transform traced on its own."""
    context = TraceContext(f"np.fft.{node.attrs['function']}")
    with context:
        argument = context.input(node.inputs[0].shape, node.inputs[0].dtype, 0, weak=False)
        x = Tracer(Buffer(argument, writeable=False), node=argument)
        result = traced_transform(x, node.attrs, route)
        result_node = result.node
    return context.builder.nodes, argument, result_node


def traced_transform(x: Tracer, attrs, route: transforms.Plan = transforms.DEFAULT) -> Tracer:
    """The fft node's value from elementwise ops, slices and joins: one 1-D transform an axis,
    the real axis last (rfft first, irfft last), as NumPy's n-dimensional functions order them."""
    function, norm = attrs["function"], attrs["norm"]
    axes, lengths = list(attrs["axes"]), list(attrs["lengths"])
    if function == "rfft":
        x = _real_forward(x, lengths[-1], axes[-1], norm, route)
        for axis, n in reversed(list(zip(axes[:-1], lengths[:-1]))):
            x = _complex(x, n, axis, norm, False, route)
        return x
    if function == "irfft":
        for axis, n in reversed(list(zip(axes[:-1], lengths[:-1]))):
            x = _complex(x, n, axis, norm, True, route)
        return _real_inverse(x, lengths[-1], axes[-1], norm, route)
    for axis, n in reversed(list(zip(axes, lengths))):
        x = _complex(x, n, axis, norm, function == "ifft", route)
    return x


def _scale(norm: str, n: int, inverse: bool) -> float:
    """The factor NumPy applies after the unnormalized transform of length n."""
    if norm == "ortho":
        return 1 / np.sqrt(n)
    divides = "backward" if inverse else "forward"
    return 1 / n if norm == divides else 1.0


def _fit(x: Tracer, n: int) -> Tracer:
    """x's last axis cropped or padded with zeros to n."""
    size = x.shape[-1]
    if n <= size:
        return getitem(x, (Ellipsis, slice(0, n))) if n < size else x
    zeros = creation.zeros(x.shape[:-1] + (n - size,), dtype=x.dtype)
    return concatenate([x, zeros], -1, "np.fft")


def _complex_dtype(x: Tracer) -> np.dtype:
    return np.dtype(np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128)


def _scaled(z: Tracer, norm: str, n: int, inverse: bool) -> Tracer:
    scale = _scale(norm, n, inverse)
    if scale == 1.0:
        return z
    real = np.empty(0, z.dtype).real.dtype
    return ufuncs.apply("multiply", z, np.asarray(scale, dtype=real))


def _complex(x: Tracer, n: int, axis: int, norm: str, inverse: bool, route,
             terms: int | None = None) -> Tracer:
    dtype = _complex_dtype(x)
    moved = moveaxis(astype(x, dtype, copy=False), axis, -1)
    z = _scaled(transforms.dft(_fit(moved, n), inverse, route, terms), norm, n, inverse)
    return moveaxis(z, -1, axis)


def _real_forward(x: Tracer, n: int, axis: int, norm: str, route) -> Tracer:
    """The transform of real input keeps its first n // 2 + 1 terms (the rest are their
    conjugates)."""
    return _complex(x, n, axis, norm, False, route, n // 2 + 1)


def _real_inverse(x: Tracer, n: int, axis: int, norm: str, route) -> Tracer:
    """The real inverse of a Hermitian half: the half fitted to n // 2 + 1 terms, extended by its
    conjugates in reverse, transformed back; the real part drops the imaginary parts of the
    zero and Nyquist terms, which NumPy ignores too."""
    half = _fit(moveaxis(x, axis, -1), n // 2 + 1)
    mirrored = getitem(half, (Ellipsis, slice(n - n // 2 - 1, 0, -1)))
    full = concatenate([half, complexes.conjugate(mirrored)], -1, "np.fft")
    result = _scaled(complexes.real(transforms.dft(full, True, route)), norm, n, True)
    return moveaxis(result, -1, axis)
