"""Small dense factorizations unrolled at trace time: Gaussian elimination with partial pivoting
(LU, as LAPACK's getrf orders it) and the Cholesky-Banachiewicz recurrence, written entry by entry.

A matrix here is a list of rows of traced arrays, each entry holding that element for every
matrix of the stack (shape: the batch axes). Every step is then elementwise over the batch:
the pivot is chosen by comparisons and rows are swapped by np.where on the chosen row's number,
never by Python branching on values, so a whole solve is one elementwise program that fuses
into one kernel with what produces its operands and what consumes its result.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE
from .context import current
from .indexing import getitem
from .tracer import Tracer, fresh

# NOTE: the unrolled elimination records about 4/3 n^3 operations (a 4x4 solve ~100, 8x8 ~1000,
# 8x8 inverse ~1700) and a kernel holds about n^2 live values per thread. Measured on the CPU
# (batches of 10,000): 3x3 solve and inverse 7-11x faster than NumPy, first calls 2-3.5 s; an
# 8x8 solve 2x slower than NumPy, split by the 128-op kernel bound into many kernels, and its
# first call 30-60 s. Past 4 the compile grows faster than small systems gain from fusing.
MAX_N = 4


def entries(a: Tracer, transpose: bool = False) -> list[list[Tracer]]:
    """The rows of the stack `a` (..., n, m) as lists of its entries a[..., i, j] (each of the
    batch shape); with `transpose`, the rows of a's matrix transposes."""
    rows, cols = a.shape[-2:]
    memo: dict = {}
    picked = [[fresh(_pick(a.node, i, j, memo)) for j in range(cols)] for i in range(rows)]
    return [list(column) for column in zip(*picked)] if transpose else picked


# NOTE: how deep _pick follows elementwise producers (a bound on Python's recursion, far past
# what a matrix is built from).
_PICK_DEPTH = 64


def _pick(node: Node, i: int, j: int, memo: dict, depth: int = 0) -> Node:
    """Entry (i, j) of each matrix of `node` (its last two axes, broadcast as NumPy aligns
    them). Elementwise producers, broadcasts and matrix transposes are followed to their
    operands' entries: the entries then are elementwise programs over the batch of slices of
    what was loaded, rather than n^2 slices of one computed value, which the partitioner would
    store first (a value read through several index maps)."""
    shape = node.shape
    i = i if len(shape) >= 2 and shape[-2] != 1 else 0
    j = j if shape and shape[-1] != 1 else 0
    key = (node.id, i, j)
    if key in memo:
        return memo[key]
    if not shape:
        found = node
    elif depth < _PICK_DEPTH and (node.kind == ELEMENTWISE or node.op == "broadcast_to"):
        operands = [_pick(source, i, j, memo, depth + 1) for source in node.inputs]
        found = operands[0] if node.op == "broadcast_to" else current().emit(
            node.op, operands, node.attrs)
    elif node.op == "iota" and node.attrs["axis"] >= len(shape) - 2:     # np.eye's coordinates
        coordinate = (i, j)[node.attrs["axis"] - len(shape) + 2] if len(shape) >= 2 else j
        found = current().emit("broadcast_to", [current().constant(
            np.asarray(coordinate, node.dtype))], {"shape": shape[:-2]})
    elif depth < _PICK_DEPTH and node.op == "transpose" and _swaps_matrix_axes(node.attrs["perm"]):
        found = _pick(node.inputs[0], j, i, memo, depth + 1)
    else:
        key_ = (Ellipsis, i, j) if len(shape) >= 2 else (Ellipsis, j)
        found = getitem(fresh(node), key_).node
    memo[key] = found
    return found


def _swaps_matrix_axes(perm) -> bool:
    rank = len(perm)
    return rank >= 2 and tuple(perm) == tuple(range(rank - 2)) + (rank - 1, rank - 2)


@dataclass
class Factored:
    """U of P A = L U (upper triangle, rows as lists from the diagonal on), the right-hand side
    rows transformed alike (L^-1 P B), whether an odd number of rows were swapped, and whether
    some pivot was exactly zero (LAPACK's info > 0: the matrix is singular)."""
    upper: list
    right: list
    odd: Tracer | bool
    singular: Tracer | bool


def factor(a: list, right: list) -> Factored:
    """Eliminate below the diagonal of the n x n matrix `a`, column by column: the row with the
    largest magnitude in the column (the first such, as LAPACK's i*amax) becomes the pivot row,
    swapped with the current row, and multiples of it are subtracted from the rows below; the
    rows of `right` (n rows of any width, possibly empty) follow the same swaps and updates."""
    n = len(a)
    rows = [list(a[i]) + list(right[i]) for i in range(n)]
    upper, transformed = [], []
    odd, singular = False, False
    for k in range(n):
        chosen = _pivot_row(rows, k)
        pivot_row = list(rows[0])
        for offset in range(1, len(rows)):
            take = chosen == k + offset
            pivot_row = [np.where(take, mine, first) for mine, first in zip(rows[offset], pivot_row)]
            rows[offset] = [np.where(take, first, mine) for first, mine in zip(rows[0], rows[offset])]
        if len(rows) > 1:
            odd = odd ^ (chosen != k)
        pivot = pivot_row[0]
        zero = pivot == 0
        singular = singular | zero
        # NOTE: a zero pivot means the whole column below is zero (it is the largest magnitude):
        # dividing by 1 instead leaves zero multipliers, as LAPACK skips the scaling there, so
        # the later pivots (and det, slogdet) stay finite rather than NaN.
        reciprocal = 1 / np.where(zero, 1, pivot)
        remaining = []
        for row in rows[1:]:
            multiplier = row[0] * reciprocal
            remaining.append([x - multiplier * p for x, p in zip(row[1:], pivot_row[1:])])
        upper.append(pivot_row[:n - k])
        transformed.append(pivot_row[n - k:])
        rows = remaining
    return Factored(upper, transformed, odd, singular)


def _pivot_row(rows: list, k: int):
    """The number of the row (k + its place in `rows`) whose first entry has the largest
    magnitude, the first of equal ones; a Python int where there is one row to choose from."""
    chosen, largest = k, abs(rows[0][0])
    for offset in range(1, len(rows)):
        magnitude = abs(rows[offset][0])
        better = magnitude > largest
        chosen = np.where(better, k + offset, chosen)
        if offset + 1 < len(rows):
            largest = np.where(better, magnitude, largest)
    return chosen


def back_substitute(upper: list, right: list) -> list:
    """X with U X = Y for the upper triangle `upper` (rows from the diagonal on) and the rows of
    Y, solved from the last row up."""
    n = len(upper)
    solution = [None] * n
    for k in reversed(range(n)):
        reciprocal = 1 / upper[k][0]
        values = []
        for c, y in enumerate(right[k]):
            for j in range(k + 1, n):
                y = y - upper[k][j - k] * solution[j][c]
            values.append(y * reciprocal)
        solution[k] = values
    return solution


def cholesky_lower(a: list) -> tuple[list, Tracer | bool]:
    """L with L L^T = A from the lower triangle of the symmetric n x n `a`, row by row
    (Cholesky-Banachiewicz), and whether some diagonal value to be rooted was not positive
    (LAPACK's potrf info > 0, NaN included: the matrix is not positive definite). Entries above
    the diagonal are None."""
    n = len(a)
    lower = [[None] * n for _ in range(n)]
    reciprocals = [None] * n
    failed = False
    for i in range(n):
        for j in range(i + 1):
            value = a[i][j]
            for k in range(j):
                value = value - lower[i][k] * lower[j][k]
            if i == j:
                failed = failed | ~(value > 0)
                lower[i][i] = np.sqrt(value)
                reciprocals[i] = 1 / lower[i][i]
            else:
                lower[i][j] = value * reciprocals[j]
    return lower, failed
