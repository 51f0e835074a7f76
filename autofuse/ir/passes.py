"""Simplification passes (pure Graph -> Graph functions) and the runner that verifies and records them.

Every rewrite is exact: NumPy would compute the same bits (no float reassociation, no x + 0 -> x,
which changes -0.0).
"""
from __future__ import annotations

import dataclasses
import operator
import time

import numpy as np

from .graph import Attrs, Graph, Node
from .interpreter import evaluate_node
from .ops import ELEMENTWISE, LAYOUT, REDUCE, SCAN

FOLD_LIMIT = 64          # constant-fold results of at most this many elements


class Rewriter:
    """Rebuilds a graph node by node; a node keeps its id while it is unchanged."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.mapping: dict[int, Node] = {}
        self.nodes: list[Node] = []
        self._next = max((n.id for n in graph.nodes), default=-1) + 1

    def inputs_of(self, node: Node) -> tuple:
        mapping = self.mapping
        return tuple([mapping[n.id] for n in node.inputs])

    def keep(self, node: Node, inputs: tuple) -> Node:
        if all(map(operator.is_, inputs, node.inputs)):
            new = node
        else:
            # NOTE: the constructor, not dataclasses.replace (which reads the fields each call)
            new = Node(node.id, node.op, inputs, node.attrs, node.shape, node.dtype, node.origin)
        self.nodes.append(new)
        return new

    def make(self, like: Node, op: str, inputs=(), attrs=None) -> Node:
        from .infer import infer
        attrs = Attrs(attrs)
        shape, dtype = infer(op, tuple(inputs), attrs)
        node = Node(self._next, op, tuple(inputs), attrs, tuple(shape), np.dtype(dtype), like.origin)
        self._next += 1
        self.nodes.append(node)
        return node

    def adopt(self, node: Node, inputs: tuple, attrs=None, origin=None) -> Node:
        """A copy of `node` (from another graph: a sub-trace spliced in) under a new id, reading
        `inputs`."""
        new = Node(self._next, node.op, tuple(inputs), node.attrs if attrs is None else attrs,
                   node.shape, node.dtype, origin if origin is not None else node.origin)
        self._next += 1
        self.nodes.append(new)
        return new

    def each(self, replace) -> Graph:
        """The graph rebuilt in order: each node replaced by `replace(node, inputs)` (a node this
        rewriter made from the rebuilt inputs) where that is not None, else kept."""
        for node in self.graph.nodes:
            inputs = self.inputs_of(node)
            new = replace(node, inputs)
            self.mapping[node.id] = new if new is not None else self.keep(node, inputs)
        return self.finish()

    def finish(self) -> Graph:
        outputs = [self.mapping[n.id] for n in self.graph.outputs]
        inputs = [self.mapping[n.id] for n in self.graph.inputs]
        return Graph(self.nodes, inputs, outputs, self.graph.name)


def dead_code(graph: Graph) -> Graph:
    """Drop nodes no output depends on (inputs always stay: they are the signature)."""
    live = {n.id for n in graph.outputs} | {n.id for n in graph.inputs}
    for node in reversed(graph.nodes):
        if node.id in live:
            live.update(n.id for n in node.inputs)
    return Graph([n for n in graph.nodes if n.id in live], graph.inputs, graph.outputs, graph.name)


def common_subexpressions(graph: Graph) -> Graph:
    """Merge nodes with the same op, inputs and attributes."""
    rewriter = Rewriter(graph)
    seen: dict = {}
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        key = (node.op, tuple(n.id for n in inputs), node.attrs, node.shape, node.dtype.str)
        if node.op != "input" and key in seen:
            rewriter.mapping[node.id] = seen[key]
            continue
        new = rewriter.keep(node, inputs)
        seen[key] = new
        rewriter.mapping[node.id] = new
    return rewriter.finish()


def constant_fold(graph: Graph) -> Graph:
    """Evaluate small nodes whose inputs are all constants.

    A broadcast of a constant stays as it is: kernels read its one value in place (np.zeros(n)
    must not become an n-element array in memory).
    """
    rewriter = Rewriter(graph)
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        foldable = (node.kind in (ELEMENTWISE, LAYOUT, REDUCE, SCAN) and node.op != "broadcast_to" and inputs
                    and all(n.op == "constant" for n in inputs) and node.size <= FOLD_LIMIT)
        if foldable:
            with np.errstate(all="ignore"):
                value = evaluate_node(node, [n.attrs["value"].array for n in inputs])
            rewriter.mapping[node.id] = rewriter.make(node, "constant", (), {"value": np.array(value)})
        else:
            rewriter.mapping[node.id] = rewriter.keep(node, inputs)
    return rewriter.finish()


def _is_scalar_constant(node: Node, value) -> bool:
    # NOTE: a count of elements (a mean's divisor, attrs "count") stays as written: in a shape
    # class it is a form of a size, 1 only at size 1, where the class's program must be the same
    if node.op != "constant" or node.ndim != 0 or node.attrs.get("count") is not None:
        return False
    array = node.attrs["value"].array
    return bool(array == value) and not (array.dtype.kind == "f" and np.signbit(array))


def _is_one(node: Node) -> bool:
    """A one-element constant 1 (not -1, not -0.0), broadcast or not: x * it is x, bit for bit."""
    while node.op == "broadcast_to":
        node = node.inputs[0]
    if node.op != "constant" or node.size != 1 or node.attrs.get("count") is not None:
        return False
    array = node.attrs["value"].array
    return bool(array.reshape(()) == 1) and not (array.dtype.kind == "f" and np.signbit(array).any())


def _identity(node: Node, inputs: tuple) -> Node | None:
    """The input a node can be replaced by without changing a single bit, or None."""
    op = node.op
    first = inputs[0] if inputs else None
    same = first is not None and first.shape == node.shape and first.dtype == node.dtype
    if op in ("reshape", "broadcast_to") and same:
        return first
    if op == "transpose" and node.attrs["perm"] == tuple(range(node.ndim)):
        return first
    if op == "slice" and same and all(s == 0 for s in node.attrs["start"]) and \
            all(s == 1 for s in node.attrs["step"]):
        return first
    if op == "cast" and same:
        return first
    if op == "positive" and same:
        return first
    if op in ("multiply", "divide") and node.dtype.kind in "fiu" and same and \
            (_is_scalar_constant(inputs[1], 1) or (op == "multiply" and _is_one(inputs[1]))):
        return first
    if op == "multiply" and node.dtype.kind in "fiu" and inputs[1].shape == node.shape and \
            inputs[1].dtype == node.dtype and _is_one(inputs[0]):
        return inputs[1]
    if op == "subtract" and same and _is_scalar_constant(inputs[1], 0):
        return first
    if op == "negative" and first.op == "negative" and first.inputs[0].shape == node.shape:
        return first.inputs[0]
    if op == "setslice" and same and inputs[1].op == "slice" and \
            inputs[1].inputs[0].id == first.id and \
            inputs[1].attrs["start"] == node.attrs["start"] and \
            inputs[1].attrs["step"] == node.attrs["step"]:
        return first         # x[a:b] = x[a:b] (what `x[i] += v` leaves after its in-place add)
    return None


def algebraic(graph: Graph) -> Graph:
    """Exact identities: x*1, x/1, x-0, --x, no-op reshapes/transposes/casts, a region assigned
    to itself; chains of layout ops."""
    rewriter = Rewriter(graph)
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        replacement = _identity(node, inputs)
        if replacement is None and node.op == "reshape" and inputs[0].op == "reshape":
            replacement = rewriter.make(node, "reshape", inputs[0].inputs, node.attrs.as_dict())
        if replacement is None and node.op == "transpose" and inputs[0].op == "transpose":
            inner, outer = inputs[0].attrs["perm"], node.attrs["perm"]
            perm = tuple(inner[p] for p in outer)
            source = inputs[0].inputs[0]
            replacement = source if perm == tuple(range(len(perm))) else \
                rewriter.make(node, "transpose", (source,), {"perm": perm})
        if replacement is None and node.op == "broadcast_to" and inputs[0].op == "broadcast_to":
            replacement = rewriter.make(node, "broadcast_to", inputs[0].inputs, node.attrs.as_dict())
        rewriter.mapping[node.id] = replacement if replacement is not None else rewriter.keep(node, inputs)
    return rewriter.finish()


def _swaps_last_two(node: Node) -> bool:
    perm = node.attrs["perm"]
    return len(perm) >= 2 and perm == tuple(range(len(perm) - 2)) + (len(perm) - 1, len(perm) - 2)


def transposed_products(graph: Graph) -> Graph:
    """`(a @ b).T` read nowhere else as `b.T @ a.T`: the product is written in the layout it is
    read in (each element the same dot product), so no kernel transposes it afterwards (a
    gradient of `q @ k.T` with respect to k is one)."""
    users = graph.users()
    rewriter = Rewriter(graph)
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        source = inputs[0] if inputs else None
        if node.op == "transpose" and source.op == "matmul" and _swaps_last_two(node) and \
                len(users[node.inputs[0].id]) == 1 and not source.attrs and \
                all(operand.ndim >= 2 for operand in source.inputs) and \
                node.inputs[0].id not in {n.id for n in graph.outputs}:
            swapped = []
            for operand in reversed(source.inputs):
                perm = tuple(range(operand.ndim - 2)) + (operand.ndim - 1, operand.ndim - 2)
                swapped.append(rewriter.make(node, "transpose", (operand,), {"perm": perm}))
            rewriter.mapping[node.id] = rewriter.make(node, "matmul", tuple(swapped))
        else:
            rewriter.mapping[node.id] = rewriter.keep(node, inputs)
    return rewriter.finish()


PIPELINE = (constant_fold, algebraic, common_subexpressions, transposed_products, dead_code)


@dataclasses.dataclass
class PassRecord:
    name: str
    seconds: float
    nodes_before: int
    nodes_after: int
    graph: Graph


def simplify(graph: Graph, rounds: int = 3) -> tuple[Graph, list[PassRecord]]:
    """Run the pipeline until nothing changes (at most `rounds` times), verifying after each pass
    the nodes it made."""
    history: list[PassRecord] = []
    checked: set = set()
    graph.verify(checked)
    for _ in range(rounds):
        before = graph.nodes
        for simplification in PIPELINE:
            start = time.perf_counter()
            result = simplification(graph)
            if not _same_nodes(result.nodes, graph.nodes):    # (an unchanged graph was verified)
                result.verify(checked)
            history.append(PassRecord(simplification.__name__, time.perf_counter() - start,
                                      len(graph.nodes), len(result.nodes), result))
            graph = result
        if _same_nodes(graph.nodes, before):
            break
    return graph, history


def _same_nodes(a: tuple, b: tuple) -> bool:
    """Whether two node sequences hold the same node objects in the same order."""
    return len(a) == len(b) and all(map(operator.is_, a, b))
