"""How a scan's running value starts and takes the next element, spelled for both code generators
from the op table: the combining ufunc's elementwise spelling (ir/ops.py) in the scan's dtype,
narrow integers wrapped back to their width and float16 rounded each step (as NumPy's loops)."""
from __future__ import annotations

import re

import numpy as np

from ..ir.graph import Node
from ..ir.ops import OPS, SCAN_IDENTITY, typed_constants

_FIELD = re.compile(r"\{([A-Z_]+)\}")


def identity(r, node: Node) -> str:
    """The scan's identity as a typed constant of the dtype the kernel holds its values in."""
    held = r.held(node.dtype)
    return r.constant(typed_constants(held)[SCAN_IDENTITY[node.attrs["ufunc"]]])


def combine(r, node: Node, earlier: str, later: str) -> str:
    """The expression combining the running value `earlier` with the element `later`."""
    held = r.held(node.dtype)
    template = OPS[node.attrs["ufunc"]].spelling(held.kind)
    fields = typed_constants(held)
    names = {field: r.constant(fields[field]) for field in set(_FIELD.findall(template))}
    expression = _FIELD.sub(lambda m: names[m.group(1)], template).format(earlier, later)
    if held != node.dtype:
        return r.convert(node.dtype, expression, op_result=True)
    if node.dtype.kind in "iu":
        return f"{r.ctor(node.dtype)}({expression})"
    if node.dtype.kind == "b":
        return f"{r.ctor(np.bool_)}({expression})"
    return expression


def same_element(index: tuple, full: tuple, shape: tuple) -> bool:
    """Whether `index` names the element `full` of an array of `shape` (an axis of one element
    is read at "0" through broadcasts)."""
    return all(a == b or size == 1 for a, b, size in zip(index, full, shape))
