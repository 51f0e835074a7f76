"""A class program's graph at one call's sizes: the stand-in graph with every size form evaluated."""
from __future__ import annotations

from ..ir.graph import Graph, Node
from .forms import evaluate


def instantiate_graph(entry, sizes: dict) -> tuple[Graph, dict]:
    """The class entry's simplified graph at `sizes`, and node id -> its node there."""
    graph = entry.graph
    made: dict = {}
    pattern = entry.dynamic.nodes
    values = evaluate(pattern, sizes)
    for node, (_, _, _, shape, attrs) in zip(graph.nodes, values):
        made[node.id] = Node(node.id, node.op, tuple(made[i.id] for i in node.inputs), attrs,
                             tuple(shape), node.dtype, node.origin)
    new = Graph([made[n.id] for n in graph.nodes], [made[n.id] for n in graph.inputs],
                [made[n.id] for n in graph.outputs], graph.name)
    return new, made
