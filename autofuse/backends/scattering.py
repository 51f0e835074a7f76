"""A scatter-add spelled for both code generators: the position a value lands at (a negative index
counted from the end; one still outside the base lands nowhere) and how a value joins the sum
there, from the op table's add in the result's dtype (bools: or; narrow integers wrapped back to
their width, as NumPy's add.at does)."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from ..ir.ops import OPS


def target(r, node: Node, index: str) -> str:
    """Emit the wrapped position of the values row whose index is `index`; returns its name.
    The caller adds the row only where `inside(...)` holds."""
    size = node.shape[0]
    name = r.name("at")
    r.emit(f"{name} = {index} + {size} if {index} < 0 else {index}")
    return name


def inside(node: Node, position: str) -> str:
    """The condition that `position` (target's) is a row of the base."""
    return f"{position} >= 0 and {position} < {node.shape[0]}"


def added(r, dtype, earlier: str, value: str) -> str:
    """`earlier + value` in `dtype`, as np.add computes it there."""
    dtype = np.dtype(dtype)
    expression = OPS["add"].spelling(dtype.kind).format(earlier, value)
    if dtype.kind in "iub":
        return f"{r.ctor(dtype)}({expression})"
    return expression
