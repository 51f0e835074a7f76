"""Split-K: a matrix product with few results and a long K, as a stack of shorter products summed.

(M, K) @ (K, N) with M*N small and K long gives a tiled kernel one or two blocks, each summing K
terms in one chain: the GPU idles and float32 rounding grows with K (covariance of 2^20 rows by
64 columns: 112 ms and a normwise error of 4.9e-4 against NumPy's 1.9e-6). Written instead as

    a.reshape(..., M, S, K/S).transpose(..., S, M, K/S) @ b.reshape(..., S, K/S, N)  -> (..., S, M, N)
    .sum(axis=-3)

the S products fill the GPU, each chain is K/S long, and the sum of S partial results is a
reduction kernel that fuses the product's epilogue. Only layout ops and existing kernels: the
stacked product is the tiled kernel, the sum a column reduction.
"""
from __future__ import annotations


def split_chunks(outputs: int, k: int, limits) -> int:
    """How many K chunks a product with `outputs` results and depth `k` splits into: 0 for none.
    The chunk length is a divisor of K between `split_chunk` and 4x that (no remainder product)."""
    if not limits.split_k or k < limits.split_k or outputs > limits.split_outputs:
        return 0
    for length in range(limits.split_chunk, 4 * limits.split_chunk + 1):
        if k % length == 0 and k // length >= 2:
            return k // length
    return 0


def split_product(rewriter, node, inputs: tuple, chunks: int, reason: str):
    """The rewritten nodes of `node` = a @ b split into `chunks` products along K."""
    a, b = inputs
    batch = node.shape[:-2]
    (m, k), n = a.shape[-2:], b.shape[-1]
    length = k // chunks
    depth = len(batch)
    left = rewriter.make(node, "reshape", (a,), {"shape": batch + (m, chunks, length)})
    left = rewriter.make(node, "transpose", (left,), {
        "perm": tuple(range(depth)) + (depth + 1, depth, depth + 2)})
    right = rewriter.make(node, "reshape", (b,), {"shape": batch + (chunks, length, n)})
    partial = rewriter.make(node, "matmul", (left, right), {"product": reason})
    return rewriter.make(node, "sum", (partial,), {"axes": (depth,), "product": reason})
