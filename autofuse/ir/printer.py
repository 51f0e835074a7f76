"""The text form of a graph: Python-like, values named in order, a shape/dtype comment per line."""
from __future__ import annotations

import functools

import numpy as np

from .graph import Constant, Graph, Node

_SHORT = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "float16": "f16", "float32": "f32", "float64": "f64"}


def type_text(shape, dtype) -> str:
    """f32[1024,512]; f32[] for a 0-d value."""
    return f"{_short_name(np.dtype(dtype))}[{','.join(str(s) for s in shape)}]"


@functools.lru_cache(maxsize=None)
def _short_name(dtype: np.dtype) -> str:
    return _SHORT.get(dtype.name, dtype.name)


def is_inline_constant(node: Node) -> bool:
    return node.op == "constant" and node.ndim == 0


def scalar_text(node: Node) -> str:
    value = node.attrs["value"].array
    return f"{_SHORT.get(value.dtype.name, value.dtype.name)}({value[()]})"


def operand_text(node: Node, names: dict) -> str:
    return scalar_text(node) if is_inline_constant(node) else names[node.id]


def attr_text(value) -> str:
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, Constant):
        return repr(value)
    return repr(value)


def node_text(node: Node, names: dict) -> str:
    """`opname(operands, key=value, ...)` for one node."""
    parts = [operand_text(n, names) for n in node.inputs]
    parts += [f"{key}={attr_text(value)}" for key, value in node.attrs.as_dict().items()]
    return f"{node.op}({', '.join(parts)})"


def name_nodes(nodes) -> dict:
    """Names v0, v1, ... in order, skipping inline constants."""
    names = {}
    for node in nodes:
        if not is_inline_constant(node):
            names[node.id] = f"v{len(names)}"
    return names


def line(left: str, node: Node, width: int = 44) -> str:
    comment = type_text(node.shape, node.dtype)
    if node.origin:
        comment += f"  {node.origin}"
    return f"{left:<{width}} # {comment}"


def graph_text(graph: Graph) -> str:
    """The whole graph as deterministic, readable text."""
    names = name_nodes(graph.inputs + tuple(n for n in graph.nodes if n.op != "input"))
    params = ", ".join(f"{names[n.id]}: {type_text(n.shape, n.dtype)}" for n in graph.inputs)
    lines = [f"def {graph.name}({params}):"]
    for node in graph.nodes:
        if node.op == "input" or is_inline_constant(node):
            continue
        lines.append(line(f"    {names[node.id]} = {node_text(node, names)}", node))
    outputs = ", ".join(operand_text(n, names) for n in graph.outputs)
    lines.append(f"    return ({outputs}{',' if len(graph.outputs) == 1 else ''})")
    return "\n".join(lines)
