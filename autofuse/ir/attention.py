"""Attention's pattern, found in a traced graph: `softmax(s) @ v` where the scores s are one
product q @ k^T carried through elementwise ops (a scale, a cast, a mask by np.where, a bias).

`lower_attention(graph, limits)` rewrites each: the softmax's max, subtraction, exp, sum and
division and the product with v become one `softmax_matmul(s, v)` node whose `attention`
attribute says why, and the scores' product is marked `attention="scores"` (ir/products.py keeps
it a product), so that the partitioner puts the product, the ops between and the softmax_matmul
in one kernel (fusion/attention.py), which never stores the scores. The product of a softmax that
does not qualify is marked `attention="not flash attention: <why>"`. Backends without such a
kernel leave it off (ProductLimits.attention_head 0).
"""
from __future__ import annotations

from dataclasses import dataclass

from .graph import Attrs, Graph, Node
from .ops import ELEMENTWISE
from .passes import Rewriter, dead_code

SCORES = "scores"


def scores_product(node: Node) -> bool:
    """Whether `node` is the product of an attention's scores (marked `attention="scores"`, or
    "scores 2", "scores 3" ... where a program has several: one product each, never merged)."""
    mark = node.attrs.get("attention") if node.op == "matmul" else None
    return isinstance(mark, str) and mark.split(" ")[0] == SCORES


@dataclass(frozen=True)
class Found:
    product: Node          # q @ k^T, (..., Sq, Sk)
    path: tuple            # the elementwise ops from the product to the scores, in order
    scores: Node           # what the softmax reads (the product itself where path is empty)
    values: Node           # v, (..., Sk, Dv)
    reason: str


def _last_axis(node: Node, op: str, source: Node) -> bool:
    return node.op == op and node.inputs[0] is source and \
        tuple(node.attrs["axes"]) == (source.ndim - 1,)


def _kept(node: Node, op: str, source: Node) -> Node | None:
    """The reduction `op` of `source` over its last axis that `node` is with keepdims (a
    reshape of it to (..., 1)), or None."""
    if node.op != "reshape" or node.shape != source.shape[:-1] + (1,):
        return None
    inner = node.inputs[0]
    return inner if _last_axis(inner, op, source) else None


def _softmax(p: Node) -> tuple | None:
    """(scores, the softmax's nodes) where `p` is exp(s - s.max(-1, keepdims=True)) divided by
    its sum over the last axis, else None."""
    if p.op != "divide" or p.inputs[0].op != "exp":
        return None
    e, denominator = p.inputs
    total = _kept(denominator, "sum", e)
    shifted = e.inputs[0]
    if total is None or shifted.op != "subtract" or shifted.shape != e.shape:
        return None
    s, top = shifted.inputs
    largest = _kept(top, "max", s)
    if largest is None or s.shape != e.shape:
        return None
    return s, (largest, top, shifted, e, total, denominator, p)


def _path(s: Node) -> tuple[Node | None, tuple, str | None]:
    """(the product, the elementwise ops from it to `s`, None), or (None, (), why not): the
    scores must come from exactly one product of their shape through elementwise ops."""
    products, path, seen, stack = set(), [], set(), [s]
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        if node.op == "matmul" and node.shape == s.shape:
            products.add(node)
            continue
        if node.kind != ELEMENTWISE or node.shape != s.shape:
            continue
        path.append(node)
        stack.extend(node.inputs)
    if len(products) != 1:
        return None, (), ("the scores are not one product q @ k^T carried through elementwise "
                          "ops" if not products else "the scores combine several products")
    product = next(iter(products))
    carried = {product.id}
    for node in sorted(path, key=lambda n: n.id):
        if any(source.id in carried for source in node.inputs):
            carried.add(node.id)
    return product, tuple(n for n in sorted(path, key=lambda n: n.id) if n.id in carried), None


def match(node: Node, users: dict, outputs: set, head: int) -> tuple[Found | None, str | None]:
    """For a matmul `node`: (the pattern, None) where it is attention's P @ V and qualifies;
    (None, why not) where its left operand is a softmax that does not; else (None, None)."""
    found = _softmax(node.inputs[0])
    if found is None:
        return None, None
    s, softmax = found
    values = node.inputs[1]
    inside = {n.id for n in softmax} | {node.id}
    for member in softmax:
        if member.id in outputs or any(u.id not in inside for u in users[member.id]):
            return None, "a value of the softmax is also used elsewhere (it would be stored)"
    product, path, why = _path(s)
    if product is None:
        return None, why
    inside |= {n.id for n in path} | {product.id}
    for member in (product, *path):
        if member.id in outputs or any(u.id not in inside for u in users[member.id]):
            return None, "the scores (or a value between them and q @ k^T) are used elsewhere"
    q = product.inputs[0]
    sq, sk = s.shape[-2:]
    d, dv = q.shape[-1], values.shape[-1]
    if any(x.dtype.kind != "f" for x in (product, s, values)) or values.dtype != s.dtype:
        return None, "the scores and v are not floating-point values of one dtype"
    if max(d, dv) > head:
        return None, (f"the head dimension ({max(d, dv)}) is larger than the kernel holds "
                      f"(at most {head})")
    # (an empty batch launches no block: a shape class's kernel runs it)
    if 0 in (sq, sk, d, dv):
        return None, "an extent is 0"
    ops = ", ".join(n.op for n in path)
    # (no extent but the head's in the words: a shape class compares them between sizes)
    reason = (f"flash attention: softmax(q @ k^T{' then ' + ops if ops else ''}) @ v, "
              f"head {d}"
              f"{'' if dv == d else f' (v {dv})'}: one kernel, the scores never stored (a "
              f"running max and sum a row over tiles of keys)")
    return Found(product, path, s, values, reason), None


def lower_attention(graph: Graph, head: int) -> Graph:
    """Rewrite each attention of `graph` whose head dimension is at most `head` (0: none)."""
    if not head or sum(node.op == "matmul" for node in graph.nodes) < 2:
        return graph
    users = graph.users()
    outputs = {node.id for node in graph.outputs}
    found, notes, marked = {}, {}, {}
    for node in graph.nodes:
        if node.op == "matmul":
            pattern, why = match(node, users, outputs, head)
            if pattern is not None and pattern.product.id not in marked:
                found[node.id] = pattern
                marked[pattern.product.id] = SCORES if not marked else f"{SCORES} {len(marked) + 1}"
            elif why is not None:
                notes[node.id] = f"not flash attention: {why}"
    if not found and not notes:
        return graph
    rewriter = Rewriter(graph)
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        mark = marked.get(node.id, notes.get(node.id))
        if node.id in found:
            pattern = found[node.id]
            operands = (rewriter.mapping[pattern.scores.id], rewriter.mapping[pattern.values.id])
            new = rewriter.make(node, "softmax_matmul", operands, {"attention": pattern.reason})
        elif mark is not None:
            new = Node(node.id, node.op, inputs, Attrs({**node.attrs.as_dict(), "attention": mark}),
                       node.shape, node.dtype, node.origin)
            rewriter.nodes.append(new)
        else:
            new = rewriter.keep(node, inputs)
        rewriter.mapping[node.id] = new
    return dead_code(rewriter.finish())
