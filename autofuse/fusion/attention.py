"""Which values may share a kernel with attention's softmax_matmul (ir/attention.py): the
legality rules of an output group whose product is a softmax_matmul.

The flash kernel computes the scores' product q @ k^T (marked `attention="scores"`) and the
elementwise ops from it to the scores tile by tile, never storing them; so the marked product
and everything that feeds the scores join it. A block reads its query rows once, but every block
reads all keys and values: elementwise work on k or v would be redone for every block of query
rows, so only layout ops and casts of them join (as for any product's operands). Consumers join
as a product's epilogue (legality._matmul_into).
"""
from __future__ import annotations

from ..ir.attention import scores_product
from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, LAYOUT, MATMUL

# the operand each input position of a product feeds: q @ k^T's, and softmax_matmul's (s, v)
_ROLES = {"matmul": ("q", "k"), "softmax_matmul": ("scores", "v")}


def attention_group(g) -> bool:
    return g.matmul is not None and g.matmul.op == "softmax_matmul"


def roles(p: Node, g, users: dict) -> set:
    """What `p` feeds in `g`: "q", "k", "v", "scores" (through members), or "epilogue"."""
    found, stack, seen = set(), [p], {p.id}
    while stack:
        node = stack.pop()
        for user in users.get(node.id, ()):
            if user.id not in g.members:
                continue
            if user.op == "softmax_matmul" or scores_product(user):
                for position, source in enumerate(user.inputs):
                    if source.id == node.id:
                        found.add(_ROLES[user.op][position])
                if user.op == "matmul":
                    found.add("scores")
                continue
            if user.id not in seen:
                seen.add(user.id)
                stack.append(user)
    return found or {"epilogue"}


def attention_reason(p: Node, g, users: dict, is_output: bool) -> str | None:
    """May `p` join the attention group `g`? None if so, else why not."""
    if is_output:
        return ("{p} is also a result of the function; the attention kernel writes only its "
                "output and what is computed from it")
    if p.kind == MATMUL:
        if scores_product(p) and roles(p, g, users) == {"scores"}:
            return None
        return "two matmuls cannot share one kernel"
    if p.kind not in (ELEMENTWISE, LAYOUT) and p.op != "iota":
        return f"a {p.kind} result feeding attention is computed apart and stored"
    fed = roles(p, g, users)
    if fed & {"k", "v"} and p.kind != LAYOUT and p.op != "cast":
        return ("elementwise work on attention's keys or values would be redone for every block "
                "of query rows; it is materialized")
    return None
