"""The product planner: which matrix products become reductions of a broadcast product, and why.

`plan(node, limits, strides)` decides one `matmul` node from its shape and its operands' memory
layout; `lower_products(graph, limits, strides)` rewrites the graph by those decisions, before
partitioning, so the reduction kernels (rows, two-stage, columns) run the products fused with
their producers and consumers. Products the planner keeps stay `matmul` (the tiled kernel), or,
where the backend has one (`ProductLimits.staged`), `matmul` marked `staged=True` for its staged
kernel: stacks of small products and K-small products, all of K staged in shared memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from .attention import scores_product
from .graph import Attrs, Graph, Node
from .ops import ELEMENTWISE, LAYOUT, REDUCE
from .passes import Rewriter
from .split_k import split_chunks, split_product


@dataclass(frozen=True)
class ProductLimits:
    """The shapes a backend runs as reductions (0 turns a rule off)."""
    # A product with M or N at most this (matrix-vector, vector-matrix, dot, a few columns) reads
    # its matrix once as a reduction; a tile of 128 would be mostly padding.
    small_side: int = 16
    # A product with K at most this is a short sum per output, K looped (a thread an output).
    # NOTE: K written out as K elementwise terms of slices ran slower on the H200 (8192x8 @
    # 8x8192 float32: 301 us against 179 us looped); only K = 1, the outer product, is written
    # as a term.
    small_k: int = 16
    # A stack of at least `batch_count` products, each with M, N and K at most `batch_side`, runs
    # a thread per output with K looped: the stack fills the GPU, not one product's tiles.
    batch_side: int = 64
    batch_count: int = 8
    # Whether M-small products (a vector on the left: long sums down the right operand's
    # columns) are reductions too: the CPU's column loops are slower there than its BLAS.
    vector_left: bool = True
    # Whether the backend has a staged kernel (a block a product or a tile of the result, the
    # operands staged in shared memory with all of K): stacks of small products with M and N at
    # least `staged_least`, and K-small products that feed no reduction, stay products for it.
    staged: bool = False
    staged_least: int = 8
    # Split-K (ir/split_k.py): a product with K at least `split_k` and at most `split_outputs`
    # results runs as a stack of products over K chunks of about `split_chunk`, summed after
    # (few output tiles would leave the GPU idle and sum K terms in one long chain). 0: never.
    split_k: int = 0
    split_outputs: int = 1 << 16
    split_chunk: int = 2048
    # Attention (ir/attention.py): softmax(q @ k^T ...) @ v with head dimensions at most this
    # becomes one softmax_matmul node and its scores' product, for the backend's flash kernel.
    # 0: never (the backend has none).
    attention_head: int = 0
    # A product of at most `small_side` columns (above) but at least `columns_least`, with K
    # past `reduction_k`, stays a tiled product: a thread an output re-reads its row of K for
    # each column (an H100, M = 2^17 float32: N = 4, 10, 16 at K = 256 ran 157, 343, 542 us as
    # reductions against 132, 159, 135 tiled; benchmarks/experiments/few_columns_long_k.py).
    # 0: any K. (Last, so that ProductLimits(0, 0, 0) keeps meaning no reductions.)
    reduction_k: int = 0
    columns_least: int = 4
    # Extents that vary in a shape class build, as (size, its stand-in) pairs (CostModel.varying's
    # rule): a stack of products counts its batch axes as their stand-ins, so every build of
    # the class plans alike (a stack of 2 would take another strategy than the stand-in's 1009
    # products). Static builds: none. (M, N and K keep their own: a static K of 3 would count
    # as a stand-in where the batch moved to 3.)
    varying: tuple = ()

    def extent(self, size: int) -> int:
        return counted_extent(size, self.varying)


def counted_extent(size: int, varying: tuple) -> int:
    """`size` as a plan counts it in a shape-class build: its stand-in where it is one of the
    `varying` (size, stand-in) pairs (CostModel.varying, ProductLimits.varying), else itself."""
    for value, stand_in in varying:
        if value == size:
            return stand_in
    return size


@dataclass(frozen=True)
class ProductPlan:
    strategy: str        # "tiled" (kept as matmul), "staged" (kept, marked), "outer"
    #                      (elementwise), "reduction" or "split"
    reason: str
    order: str = ""      # a reduction: the order of the terms' axes M, N, K ("mnk": K last)
    chunks: int = 0      # "split": the K chunks


LAYOUT_OPS = ("transpose", "reshape", "broadcast_to", "slice")


def plan(node: Node, limits: ProductLimits, strides=None, reduced: bool = False) -> ProductPlan:
    """The strategy of one matmul node ((..., M, K) @ (..., K, N), batch already broadcast);
    `reduced`: whether a reduction consumes its result (through elementwise ops)."""
    a, b = node.inputs
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch = counted = 1
    for size in node.shape[:-2]:
        batch, counted = batch * size, counted * limits.extent(size)
    if node.dtype.kind not in "fiu" or (node.dtype.kind == "f" and node.dtype.itemsize < 4):
        return ProductPlan("tiled", f"{node.dtype} products keep NumPy's matmul accumulation")
    shape = f"({m}x{k}) @ ({k}x{n})" + (f" x{batch}" if node.ndim > 2 else "")
    if k == 1:
        return ProductPlan("outer", f"product {shape}: K = 1, an elementwise (outer) product")
    side = limits.batch_side
    stacked = side and counted >= limits.batch_count and max(m, n, k) <= side
    staged = limits.staged and not reduced and node.dtype.kind == "f" and \
        a.dtype == b.dtype == node.dtype
    if staged and stacked and min(m, n) >= limits.staged_least:
        return ProductPlan("staged", f"product {shape}: {batch} products of sides at most {side}, "
                           f"a block a product (or a few), operands staged in shared memory")
    along_k = _fast_along_k(a, strides)
    # (x @ w read along x's rows, K past reduction_k: a tiled product at the end; K long enough
    # to split (split_k), unmeasured that way, stays a reduction)
    few = not (along_k and limits.reduction_k and k > limits.reduction_k and
               (not limits.split_k or k < limits.split_k) and
               limits.columns_least <= n <= limits.small_side < m)
    if limits.small_side and n <= limits.small_side and along_k and few:
        return ProductPlan("reduction", f"product {shape}: N = {n} <= {limits.small_side}, "
                           f"a reduction along each row of the left operand, read once", "mnk")
    if limits.small_side and n <= limits.small_side and few:
        return ProductPlan("reduction", f"product {shape}: N = {n} <= {limits.small_side} and the "
                           f"left operand stored by columns: a reduction down them", "kmn")
    if limits.small_side and limits.vector_left and m <= limits.small_side:
        return ProductPlan("reduction", f"product {shape}: M = {m} <= {limits.small_side}, a "
                           f"reduction down the right operand's columns, read once", "mkn")
    if staged and limits.small_k and k <= limits.small_k:
        return ProductPlan("staged", f"product {shape}: K = {k} <= {limits.small_k}, a block a "
                           f"tile of the result with all of K in shared memory")
    if limits.small_k and k <= limits.small_k:
        return ProductPlan("reduction", f"product {shape}: K = {k} <= {limits.small_k}, "
                           f"a short sum per output", "mkn")
    if stacked:
        return ProductPlan("reduction", f"product {shape}: {batch} products of sides at most "
                           f"{side}, a thread per output with K looped", "mkn")
    chunks = split_chunks(m * n * counted, k, limits)
    if chunks:
        return ProductPlan("split", f"product {shape}: {m * n * batch} results from K = {k}, "
                           f"split into {chunks} products of K = {k // chunks} summed after",
                           chunks=chunks)
    if not few:
        return ProductPlan("tiled", f"product {shape}: N = {n} columns over K = {k} (more than "
                           f"{limits.reduction_k}): a tiled product reads each row of the left "
                           f"operand once for all of them, where a thread an output re-reads it")
    return ProductPlan("tiled", f"product {shape}: a tiled matrix product")


def _fast_along_k(a: Node, strides) -> bool:
    """Whether the left operand's elements along K (its last axis) are adjacent in memory, as far
    as the layout ops between it and an input tell (a transposed matrix runs down M instead).
    Elementwise ops keep their full-shape operand's layout: `(rate * x.T) @ g` reads x.T."""
    swapped = False
    node = a
    while node.op in LAYOUT_OPS or node.kind == ELEMENTWISE:
        if node.kind == ELEMENTWISE:
            full = [source for source in node.inputs if source.shape == node.shape]
            if not full:
                break
            node = full[0]
            continue
        if node.op == "transpose":
            perm = node.attrs["perm"]
            if len(perm) >= 2 and perm[-1] == len(perm) - 2:
                swapped = not swapped
            elif perm[-1] != len(perm) - 1:
                return True
        elif node.op == "reshape" and node.shape[-2:] != node.inputs[0].shape[-2:]:
            break
        node = node.inputs[0]
    if node.op == "input" and strides is not None and node.ndim >= 2:
        own = strides(node)
        if own is not None and abs(own[-1]) > abs(own[-2]):
            swapped = not swapped
    return not swapped


def lower_products(graph: Graph, limits: ProductLimits, strides=None) -> Graph:
    """Rewrite the matmul nodes the planner sends to the reduction kernels.

    `strides(input_node)` gives an input's element strides (None when C-contiguous)."""
    if not any(node.op == "matmul" for node in graph.nodes):
        return graph
    rewriter = Rewriter(graph)
    users = graph.users() if limits.staged else {}
    for node in graph.nodes:
        inputs = rewriter.inputs_of(node)
        chosen = None
        # (attention's scores stay a product: fusion/attention.py puts it in the flash kernel)
        if node.op == "matmul" and not scores_product(node):
            chosen = plan(node, limits, strides, limits.staged and _reduced(node, users))
        if chosen is None or chosen.strategy == "tiled":
            rewriter.mapping[node.id] = rewriter.keep(node, inputs)
        elif chosen.strategy == "staged":
            attrs = {**node.attrs.as_dict(), "product": chosen.reason, "staged": True}
            rewriter.mapping[node.id] = Node(node.id, node.op, inputs, Attrs(attrs), node.shape,
                                             node.dtype, node.origin)
            rewriter.nodes.append(rewriter.mapping[node.id])
        else:
            rewriter.mapping[node.id] = _lowered(rewriter, node, inputs, chosen)
    return rewriter.finish()


def _reduced(node: Node, users: dict) -> bool:
    """Whether a reduction reads the node's value, directly or through elementwise ops and
    layouts (k-means' distances: a reduction of the product keeps it from ever being stored)."""
    pending, seen = [node], set()
    while pending:
        for user in users.get(pending.pop().id, ()):
            if user.kind == REDUCE:
                return True
            if user.kind in (ELEMENTWISE, LAYOUT) and user.id not in seen:
                seen.add(user.id)
                pending.append(user)
    return False


def _lowered(rewriter: Rewriter, node: Node, inputs: tuple, chosen: ProductPlan) -> Node:
    a, b = inputs
    batch = node.shape[:-2]
    (m, k), n = a.shape[-2:], b.shape[-1]
    if chosen.strategy == "split":
        return split_product(rewriter, node, inputs, chosen.chunks, chosen.reason)
    note = {"attention": node.attrs["attention"]} if node.attrs.get("attention") else {}
    if chosen.strategy == "outer":
        # NOTE: a sum of one term is that term, bit for bit, so no reduction is written.
        return rewriter.make(node, "multiply", (a, b), {"product": chosen.reason, **note})
    # The terms' axes in the plan's order, summed over K; M and N of size 1 are left out, so a
    # matrix-vector result needs no reshape of its own.
    sizes = {"m": m, "n": n, "k": k}
    kept = [label for label in chosen.order if label == "k" or sizes[label] != 1]
    terms = []
    for operand, labels in ((a, "mk"), (b, "kn")):
        present = [label for label in kept if label in labels]
        if len(present) == 2 and present != list(labels):
            swap = tuple(range(len(batch))) + (len(batch) + 1, len(batch))
            operand = rewriter.make(node, "transpose", (operand,), {"perm": swap})
        shape = batch + tuple(sizes[label] if label in labels else 1 for label in kept)
        if shape != operand.shape:
            operand = rewriter.make(node, "reshape", (operand,), {"shape": shape})
        terms.append(operand)
    product = rewriter.make(node, "multiply", tuple(terms))
    axis = len(batch) + kept.index("k")
    total = rewriter.make(node, "sum", (product,), {"axes": (axis,), "product": chosen.reason,
                                                    **note})
    if total.shape == node.shape:
        return total
    return rewriter.make(node, "reshape", (total,), {"shape": node.shape})

