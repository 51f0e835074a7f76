"""A product kernel's block of accumulators held in a local array, updated a K step by one
intrinsic call (intrinsics/register_block.py), as the general, compact, tiles and staged kernels
write it: written out as scalars, a thread's 8 x 8 block is 64 statements a K step, which numba's
front end took 2-4x as long over for the same PTX. Every index into the array is a constant, so
LLVM keeps it in registers."""
from __future__ import annotations

import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def applies(dtype, held) -> bool:
    """Whether accumulators of a product of `dtype`, held as `held`, go in the array: float32 and
    float64 products whose accumulators, slabs and result are all of that dtype (numba widens
    narrow ints and bools; complex needs its own arithmetic)."""
    return np.dtype(dtype) in FLOATS and np.dtype(held) == np.dtype(dtype)


def declare(r, rows: int, cols: int, numba_type: str, values: bool = True) -> list:
    """Declare the array `acc` of a rows x cols block (its intrinsics named in the module:
    `outer{rows}x{cols}v` over values already read where `values`, else `outer{rows}x{cols}`
    over two shared slabs); the names of its elements, acc[x][y]."""
    r.globals[f"fill{rows * cols}"] = ("block", "filled", rows * cols)
    if values:
        r.globals[f"outer{rows}x{cols}v"] = ("block", "outer_values", rows, cols)
    else:
        r.globals[f"outer{rows}x{cols}"] = ("block", "outer_product", rows, cols)
    r.emit(f"acc = cuda.local.array({rows * cols}, {numba_type})")
    return [[f"acc[{cols * x + y}]" for y in range(cols)] for x in range(rows)]


def fill(rows: int, cols: int, zero: str) -> str:
    """The statement setting every accumulator to `zero`."""
    return f"fill{rows * cols}(acc, {zero})"


def step(rows: int, cols: int) -> str:
    """One K step: acc[x][y] += a{x}_ * b{y}_ for the values a kernel read into a0_.., b0_.."""
    values = ", ".join([f"a{x}_" for x in range(rows)] + [f"b{y}_" for y in range(cols)])
    return f"outer{rows}x{cols}v(acc, {values})"
