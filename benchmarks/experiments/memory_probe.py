"""Memory-bound kernel structures, standalone (not the generator): how close can a numba.cuda kernel
over raw pointers get to the copy floor for

  (A) out = (x.T + y) * 2          8192x8192 float32: 3 arrays move (x, y read; out written)
  (B) v = u.copy(); v[1:-1,1:-1] = 0.25*(up + down + left + right)   8192x8192: 2 arrays move
  (C) a plain copy, the floor itself

Modes:
  python benchmarks/experiments/memory_probe.py --ptx     sm_90 PTX of every variant (no GPU needed):
                                                          instruction counts, asserts on them
  NUMBA_ENABLE_CUDASIM=1 python ... --sim                 every variant under the CUDA simulator
                                                          at small shapes against NumPy
  python benchmarks/experiments/memory_probe.py           on a GPU (cupy, cuda.core): full size,
                                                          checked against cupy, timed with events
Options: --only SUBSTRING (comma-separated) to run some variants; --n N for the GPU size.
On the project's GPU machines, install the carried wheels first (numba-cuda there fails to import
with the image's NumPy): pip install --target /tmp/site .whl/*.whl; PYTHONPATH=/tmp/site.

Measured on an H200 (copy floor 4.24 TB/s, two runs agreeing within 0.005 ms):
  transpose (floor 0.190 ms): t_base 0.262 (1.38x), t_base_full 0.252, t32 0.190 (1.00x),
    t64 / t64_v4 0.189 (0.99x); the grid-stride forms t32_gs / t64_v4_gs 0.215 (1.13x),
    t64_v4_pipe 0.201 (1.06x). What matters: y loaded before the barrier and one tile a block.
  stencil (floor 0.127 ms): s_base 0.191 (1.50x), s_base_full 0.240, s_flat_v4 0.151 (1.19x),
    s_smem 0.161, s_rows_S16b4 0.153, s_rows_v4_S16b4 0.143, s_rows_v4_S16b8 0.138 (1.09x),
    s_rows_v4_S8b8 0.132 (1.04x): 16-byte rows held in registers, all of a strip's loads at once.
  copy: copy_v4 (a vector a thread) 0.128 (1.01x), copy_v4_gs (grid-stride one wave) 1.11x.

Kernels take raw float32 pointers (types.CPointer(float32)), use 32-bit index math and are compiled
with numba.cuda.compile_ptx, as autofuse's generated kernels are; on the GPU they are linked and
launched through cuda.core (as autofuse does), on cupy's arrays' pointers. 16-byte loads/stores
(ld.global.v4.f32 / st.global.v4.f32) come from two small llvmlite intrinsics, ld4/st4; under the
simulator they are plain Python twins doing the same four element accesses (and checking alignment).
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np
from numba import config, cuda, types

SIM = bool(config.ENABLE_CUDASIM)
F32P = types.CPointer(types.float32)
nb_f32 = numba.float32
TWO = np.float32(2.0)
QUARTER = np.float32(0.25)
CC = (9, 0)

# -- 32-bit indices and 16-byte vector accesses ------------------------------------------------------
if SIM:
    def ix(value):
        """Simulator twin of numba.uint32: Python ints would hide a wrap-around, so check instead."""
        assert 0 <= value < (1 << 32), f"a 32-bit index left its range: {value}"
        return int(value)

    def ld4(ptr, i):
        """Simulator twin of the ld.global.v4.f32 intrinsic: elements i..i+3 (i a multiple of 4)."""
        assert i % 4 == 0, f"unaligned vector load at element {i}"
        return ptr[i], ptr[i + 1], ptr[i + 2], ptr[i + 3]

    def st4(ptr, i, a, b, c, d):
        """Simulator twin of the st.global.v4.f32 intrinsic."""
        assert i % 4 == 0, f"unaligned vector store at element {i}"
        ptr[i] = a
        ptr[i + 1] = b
        ptr[i + 2] = c
        ptr[i + 3] = d
else:
    from llvmlite import ir
    from numba.cuda.extending import intrinsic     # numba-cuda 0.30: the CUDA target's intrinsic

    ix = numba.uint32
    _V4 = ir.VectorType(ir.FloatType(), 4)

    def _vector_pointer(builder, pointer, index, index_type):
        """&pointer[index] as a global-space <4 x float>* (the address space makes it ld.global)."""
        wide = (builder.sext if index_type.signed else builder.zext)(index, ir.IntType(64))
        element = builder.gep(pointer, [wide])
        vector = builder.bitcast(element, ir.PointerType(_V4))
        return builder.addrspacecast(vector, ir.PointerType(_V4, 1))

    @intrinsic
    def ld4(typingctx, ptr, idx):
        """(ptr[idx], ..., ptr[idx+3]) as one 16-byte load; idx must be a multiple of 4."""
        if not (isinstance(ptr, types.CPointer) and ptr.dtype == types.float32
                and isinstance(idx, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            address = _vector_pointer(builder, args[0], args[1], sig.args[1])
            vector = builder.load(address, align=16)
            values = [builder.extract_element(vector, ir.Constant(ir.IntType(32), k))
                      for k in range(4)]
            return context.make_tuple(builder, sig.return_type, values)
        return types.UniTuple(types.float32, 4)(ptr, idx), codegen

    @intrinsic
    def st4(typingctx, ptr, idx, a, b, c, d):
        """ptr[idx:idx+4] = (a, b, c, d) as one 16-byte store; idx must be a multiple of 4."""
        if not (isinstance(ptr, types.CPointer) and ptr.dtype == types.float32
                and isinstance(idx, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            address = _vector_pointer(builder, args[0], args[1], sig.args[1])
            vector = ir.Constant(_V4, ir.Undefined)
            for k, (value, kind) in enumerate(zip(args[2:], sig.args[2:])):
                value = context.cast(builder, value, kind, types.float32)
                vector = builder.insert_element(vector, value, ir.Constant(ir.IntType(32), k))
            builder.store(vector, address, align=16)
            return context.get_dummy_value()
        return types.void(ptr, idx, a, b, c, d), codegen


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# == (A) out = (x.T + y) * 2; out, y: R x C; x: C x R; out[i, j] = (x[j, i] + y[i, j]) * 2 ==========
def make_t_base(R, C):
    """The generator's structure today: 32x32 tiles, 32x8 threads doing 4 rows, tile padded to 33;
    a grid-stride over tiles; x staged in shared memory, y read after the barrier (interleaved
    with the stores), two barriers a tile."""
    TC = cdiv(C, 32)
    NT = cdiv(R, 32) * TC
    EX = R % 32 == 0 and C % 32 == 0

    def t_base(x, y, o):
        t = ix(cuda.threadIdx.x)
        tx = ix(t % 32)
        ty = ix(t // 32)
        tile = cuda.shared.array((32, 33), nb_f32)
        blk = ix(cuda.blockIdx.x)
        while blk < NT:
            br = ix(blk // TC)
            bc = ix(blk - br * TC)
            for q in range(4):
                sr = ix(bc * 32 + ty + 8 * q)
                sc = ix(br * 32 + tx)
                if EX or (sr < C and sc < R):
                    tile[ty + 8 * q, tx] = x[ix(sr * R + sc)]
            cuda.syncthreads()
            for q in range(4):
                i0 = ix(br * 32 + ty + 8 * q)
                i1 = ix(bc * 32 + tx)
                if EX or (i0 < R and i1 < C):
                    o[ix(i0 * C + i1)] = (tile[tx, ty + 8 * q] + y[ix(i0 * C + i1)]) * TWO
            cuda.syncthreads()
            blk = ix(blk + cuda.gridDim.x)
    return t_base


def make_t32(R, C):
    """Classic: one 32x32 tile a block (2-D grid), 32x8 threads doing 4 rows, padded to 33; x and
    y both loaded (y straight into registers, in the output's coalesced order) before the one
    barrier, then 4 stores."""
    EX = R % 32 == 0 and C % 32 == 0

    def t32(x, y, o):
        t = ix(cuda.threadIdx.x)
        tx = ix(t % 32)
        ty = ix(t // 32)
        tile = cuda.shared.array(32 * 33, nb_f32)       # flat: 32-bit index math
        yv = cuda.local.array(4, nb_f32)
        bc = ix(cuda.blockIdx.x)
        br = ix(cuda.blockIdx.y)
        for q in range(4):
            sr = ix(bc * 32 + ty + 8 * q)
            sc = ix(br * 32 + tx)
            if EX or (sr < C and sc < R):
                tile[ix((ty + 8 * q) * 33 + tx)] = x[ix(sr * R + sc)]
            i0 = ix(br * 32 + ty + 8 * q)
            i1 = ix(bc * 32 + tx)
            if EX or (i0 < R and i1 < C):
                yv[q] = y[ix(i0 * C + i1)]
        cuda.syncthreads()
        for q in range(4):
            i0 = ix(br * 32 + ty + 8 * q)
            i1 = ix(bc * 32 + tx)
            if EX or (i0 < R and i1 < C):
                o[ix(i0 * C + i1)] = (tile[ix(tx * 33 + ty + 8 * q)] + yv[q]) * TWO
    return t32


def make_t32_gs(R, C):
    """t32 as a grid-stride over tiles (one resident wave of blocks), a double-buffered shared tile:
    one barrier a tile."""
    TC = cdiv(C, 32)
    NT = cdiv(R, 32) * TC
    EX = R % 32 == 0 and C % 32 == 0

    def t32_gs(x, y, o):
        t = ix(cuda.threadIdx.x)
        tx = ix(t % 32)
        ty = ix(t // 32)
        tile = cuda.shared.array(2 * 32 * 33, nb_f32)
        yv = cuda.local.array(4, nb_f32)
        buf = ix(0)
        blk = ix(cuda.blockIdx.x)
        while blk < NT:
            br = ix(blk // TC)
            bc = ix(blk - br * TC)
            for q in range(4):
                sr = ix(bc * 32 + ty + 8 * q)
                sc = ix(br * 32 + tx)
                if EX or (sr < C and sc < R):
                    tile[ix(buf * 1056 + (ty + 8 * q) * 33 + tx)] = x[ix(sr * R + sc)]
                i0 = ix(br * 32 + ty + 8 * q)
                i1 = ix(bc * 32 + tx)
                if EX or (i0 < R and i1 < C):
                    yv[q] = y[ix(i0 * C + i1)]
            cuda.syncthreads()
            for q in range(4):
                i0 = ix(br * 32 + ty + 8 * q)
                i1 = ix(bc * 32 + tx)
                if EX or (i0 < R and i1 < C):
                    o[ix(i0 * C + i1)] = (tile[ix(buf * 1056 + tx * 33 + ty + 8 * q)]
                                          + yv[q]) * TWO
            buf = ix(buf ^ 1)
            blk = ix(blk + cuda.gridDim.x)
    return t32_gs


def make_t32_pipe(R, C):
    """t32_gs with the next tile's x and y loads issued before this tile's shared reads and stores
    (software pipelining through registers): loads of tile n+1 overlap the stores of tile n."""
    TC = cdiv(C, 32)
    NT = cdiv(R, 32) * TC
    EX = R % 32 == 0 and C % 32 == 0

    def t32_pipe(x, y, o):
        t = ix(cuda.threadIdx.x)
        tx = ix(t % 32)
        ty = ix(t // 32)
        tile = cuda.shared.array(2 * 32 * 33, nb_f32)
        xn = cuda.local.array(4, nb_f32)
        yn = cuda.local.array(4, nb_f32)
        yc = cuda.local.array(4, nb_f32)
        step = ix(cuda.gridDim.x)
        buf = ix(0)
        cur = ix(NT)                       # the tile staged in tile[buf] and yc; NT: none yet
        nxt = ix(cuda.blockIdx.x)          # the tile whose loads are issued this iteration
        while cur < NT or nxt < NT:
            if nxt < NT:
                br = ix(nxt // TC)
                bc = ix(nxt - br * TC)
                for q in range(4):
                    sr = ix(bc * 32 + ty + 8 * q)
                    sc = ix(br * 32 + tx)
                    if EX or (sr < C and sc < R):
                        xn[q] = x[ix(sr * R + sc)]
                    i0 = ix(br * 32 + ty + 8 * q)
                    i1 = ix(bc * 32 + tx)
                    if EX or (i0 < R and i1 < C):
                        yn[q] = y[ix(i0 * C + i1)]
            if cur < NT:
                br = ix(cur // TC)
                bc = ix(cur - br * TC)
                for q in range(4):
                    i0 = ix(br * 32 + ty + 8 * q)
                    i1 = ix(bc * 32 + tx)
                    if EX or (i0 < R and i1 < C):
                        o[ix(i0 * C + i1)] = (tile[ix(buf * 1056 + tx * 33 + ty + 8 * q)]
                                              + yc[q]) * TWO
            nb = ix(buf ^ 1)               # free: its readers passed the previous barrier
            for q in range(4):
                tile[ix(nb * 1056 + (ty + 8 * q) * 33 + tx)] = xn[q]
                yc[q] = yn[q]
            cuda.syncthreads()
            buf = nb
            cur = nxt
            nxt = ix(nxt + step)
    return t32_pipe


def make_t64(R, C):
    """64x64 tiles, 32x8 threads doing 16 elements each (8 rows x 2 halves), scalar accesses,
    padded to 65; all 32 loads (16 of x, 16 of y) before the one barrier; one tile a block."""
    EX = R % 64 == 0 and C % 64 == 0

    def t64(x, y, o):
        t = ix(cuda.threadIdx.x)
        tx = ix(t % 32)
        ty = ix(t // 32)
        tile = cuda.shared.array(64 * 65, nb_f32)
        yv = cuda.local.array(16, nb_f32)
        j0 = ix(cuda.blockIdx.x * 64)
        i0 = ix(cuda.blockIdx.y * 64)
        for q in range(8):
            for h in range(2):
                xr = ix(j0 + ty + 8 * q)               # a row of x: an output column
                xc = ix(i0 + tx + 32 * h)
                if EX or (xr < C and xc < R):
                    tile[ix((ty + 8 * q) * 65 + tx + 32 * h)] = x[ix(xr * R + xc)]
                i = ix(i0 + ty + 8 * q)
                j = ix(j0 + tx + 32 * h)
                if EX or (i < R and j < C):
                    yv[2 * q + h] = y[ix(i * C + j)]
        cuda.syncthreads()
        for q in range(8):
            for h in range(2):
                i = ix(i0 + ty + 8 * q)
                j = ix(j0 + tx + 32 * h)
                if EX or (i < R and j < C):
                    o[ix(i * C + j)] = (tile[ix((tx + 32 * h) * 65 + ty + 8 * q)]
                                        + yv[2 * q + h]) * TWO
    return t64


# 64x64 tiles with 16-byte accesses: 256 threads, each a 4-float vector in 4 rows of the tile 16
# apart. A warp covers 8 vectors (128 contiguous bytes) x 4 consecutive rows, so with the tile
# padded to 65 both the shared stores tile[row][4cv+k] and the transposed reads tile[4cv+k][row]
# hit 32 distinct banks (bank = row + 4*(lane%8) + k + const).
def make_t64_v4(R, C):
    """64x64 tiles, 16-byte loads of x and y and 16-byte stores of out; x through shared memory
    (scalar shared accesses, conflict-free), y into registers; all loads before the one barrier;
    one tile a block. Needs R and C multiples of 4."""
    EX = R % 64 == 0 and C % 64 == 0

    def t64_v4(x, y, o):
        t = ix(cuda.threadIdx.x)
        w = ix(t // 32)
        lane = ix(t % 32)
        cv = ix(lane % 8 + 8 * (w % 2))        # the tile's vector column, 0..15
        rr = ix(lane // 8 + 4 * (w // 2))      # the tile's first row of this thread, 0..15
        tile = cuda.shared.array(64 * 65, nb_f32)
        yv = cuda.local.array((4, 4), nb_f32)
        j0 = ix(cuda.blockIdx.x * 64)
        i0 = ix(cuda.blockIdx.y * 64)
        for p in range(4):
            row = ix(rr + 16 * p)
            xr = ix(j0 + row)
            xc = ix(i0 + 4 * cv)
            if EX or (xr < C and xc < R):
                a, b, c, d = ld4(x, ix(xr * R + xc))
                tile[ix(row * 65 + 4 * cv)] = a
                tile[ix(row * 65 + 4 * cv + 1)] = b
                tile[ix(row * 65 + 4 * cv + 2)] = c
                tile[ix(row * 65 + 4 * cv + 3)] = d
            i = ix(i0 + row)
            j = ix(j0 + 4 * cv)
            if EX or (i < R and j < C):
                a, b, c, d = ld4(y, ix(i * C + j))
                yv[p, 0] = a
                yv[p, 1] = b
                yv[p, 2] = c
                yv[p, 3] = d
        cuda.syncthreads()
        for p in range(4):
            row = ix(rr + 16 * p)
            i = ix(i0 + row)
            j = ix(j0 + 4 * cv)
            if EX or (i < R and j < C):
                st4(o, ix(i * C + j),
                    (tile[ix((4 * cv) * 65 + row)] + yv[p, 0]) * TWO,
                    (tile[ix((4 * cv + 1) * 65 + row)] + yv[p, 1]) * TWO,
                    (tile[ix((4 * cv + 2) * 65 + row)] + yv[p, 2]) * TWO,
                    (tile[ix((4 * cv + 3) * 65 + row)] + yv[p, 3]) * TWO)
    return t64_v4


def make_t64_v4_gs(R, C):
    """t64_v4 as a grid-stride over tiles (one resident wave), double-buffered tile, one barrier a
    tile."""
    TC = cdiv(C, 64)
    NT = cdiv(R, 64) * TC
    EX = R % 64 == 0 and C % 64 == 0

    def t64_v4_gs(x, y, o):
        t = ix(cuda.threadIdx.x)
        w = ix(t // 32)
        lane = ix(t % 32)
        cv = ix(lane % 8 + 8 * (w % 2))
        rr = ix(lane // 8 + 4 * (w // 2))
        tile = cuda.shared.array(2 * 64 * 65, nb_f32)
        yv = cuda.local.array((4, 4), nb_f32)
        buf = ix(0)
        blk = ix(cuda.blockIdx.x)
        while blk < NT:
            br = ix(blk // TC)
            i0 = ix(br * 64)
            j0 = ix((blk - br * TC) * 64)
            for p in range(4):
                row = ix(rr + 16 * p)
                xr = ix(j0 + row)
                xc = ix(i0 + 4 * cv)
                if EX or (xr < C and xc < R):
                    a, b, c, d = ld4(x, ix(xr * R + xc))
                    tile[ix(buf * 4160 + row * 65 + 4 * cv)] = a
                    tile[ix(buf * 4160 + row * 65 + 4 * cv + 1)] = b
                    tile[ix(buf * 4160 + row * 65 + 4 * cv + 2)] = c
                    tile[ix(buf * 4160 + row * 65 + 4 * cv + 3)] = d
                i = ix(i0 + row)
                j = ix(j0 + 4 * cv)
                if EX or (i < R and j < C):
                    a, b, c, d = ld4(y, ix(i * C + j))
                    yv[p, 0] = a
                    yv[p, 1] = b
                    yv[p, 2] = c
                    yv[p, 3] = d
            cuda.syncthreads()
            for p in range(4):
                row = ix(rr + 16 * p)
                i = ix(i0 + row)
                j = ix(j0 + 4 * cv)
                if EX or (i < R and j < C):
                    st4(o, ix(i * C + j),
                        (tile[ix(buf * 4160 + (4 * cv) * 65 + row)] + yv[p, 0]) * TWO,
                        (tile[ix(buf * 4160 + (4 * cv + 1) * 65 + row)] + yv[p, 1]) * TWO,
                        (tile[ix(buf * 4160 + (4 * cv + 2) * 65 + row)] + yv[p, 2]) * TWO,
                        (tile[ix(buf * 4160 + (4 * cv + 3) * 65 + row)] + yv[p, 3]) * TWO)
            buf = ix(buf ^ 1)
            blk = ix(blk + cuda.gridDim.x)
    return t64_v4_gs


def make_t64_v4_pipe(R, C):
    """t64_v4_gs software-pipelined: the next tile's 8 vector loads (x and y) are issued before
    this tile's shared reads and vector stores, so a thread keeps 128 bytes of loads in flight
    while it stores."""
    TC = cdiv(C, 64)
    NT = cdiv(R, 64) * TC
    EX = R % 64 == 0 and C % 64 == 0

    def t64_v4_pipe(x, y, o):
        t = ix(cuda.threadIdx.x)
        w = ix(t // 32)
        lane = ix(t % 32)
        cv = ix(lane % 8 + 8 * (w % 2))
        rr = ix(lane // 8 + 4 * (w // 2))
        tile = cuda.shared.array(2 * 64 * 65, nb_f32)
        xn = cuda.local.array((4, 4), nb_f32)
        yn = cuda.local.array((4, 4), nb_f32)
        yc = cuda.local.array((4, 4), nb_f32)
        step = ix(cuda.gridDim.x)
        buf = ix(0)
        cur = ix(NT)                       # the tile staged in tile[buf] and yc; NT: none yet
        nxt = ix(cuda.blockIdx.x)          # the tile whose loads are issued this iteration
        while cur < NT or nxt < NT:
            if nxt < NT:
                br = ix(nxt // TC)
                i0 = ix(br * 64)
                j0 = ix((nxt - br * TC) * 64)
                for p in range(4):
                    row = ix(rr + 16 * p)
                    xr = ix(j0 + row)
                    xc = ix(i0 + 4 * cv)
                    if EX or (xr < C and xc < R):
                        a, b, c, d = ld4(x, ix(xr * R + xc))
                        xn[p, 0] = a
                        xn[p, 1] = b
                        xn[p, 2] = c
                        xn[p, 3] = d
                    i = ix(i0 + row)
                    j = ix(j0 + 4 * cv)
                    if EX or (i < R and j < C):
                        a, b, c, d = ld4(y, ix(i * C + j))
                        yn[p, 0] = a
                        yn[p, 1] = b
                        yn[p, 2] = c
                        yn[p, 3] = d
            if cur < NT:
                br = ix(cur // TC)
                i0 = ix(br * 64)
                j0 = ix((cur - br * TC) * 64)
                for p in range(4):
                    row = ix(rr + 16 * p)
                    i = ix(i0 + row)
                    j = ix(j0 + 4 * cv)
                    if EX or (i < R and j < C):
                        st4(o, ix(i * C + j),
                            (tile[ix(buf * 4160 + (4 * cv) * 65 + row)] + yc[p, 0]) * TWO,
                            (tile[ix(buf * 4160 + (4 * cv + 1) * 65 + row)] + yc[p, 1]) * TWO,
                            (tile[ix(buf * 4160 + (4 * cv + 2) * 65 + row)] + yc[p, 2]) * TWO,
                            (tile[ix(buf * 4160 + (4 * cv + 3) * 65 + row)] + yc[p, 3]) * TWO)
            nb = ix(buf ^ 1)
            for p in range(4):
                row = ix(rr + 16 * p)
                for k in range(4):
                    tile[ix(nb * 4160 + row * 65 + 4 * cv + k)] = xn[p, k]
                    yc[p, k] = yn[p, k]
            cuda.syncthreads()
            buf = nb
            cur = nxt
            nxt = ix(nxt + step)
    return t64_v4_pipe


# == (B) the 5-point stencil: v = u on the edges, 0.25*(((up + down) + left) + right) inside =====
def make_s_base(R, C):
    """The generator's structure today: a grid-stride loop, one element a thread a step, the flat
    index split into row and column, 5 scalar loads for an interior element."""
    N = R * C

    def s_base(u, v):
        e = ix(cuda.grid(1))
        step = ix(cuda.gridsize(1))
        while e < N:
            i0 = ix(e // C)
            i1 = ix(e - i0 * C)
            if (1 <= i0 < R - 1) and (1 <= i1 < C - 1):
                val = QUARTER * (((u[ix((i0 - 1) * C + i1)] + u[ix((i0 + 1) * C + i1)])
                                  + u[ix(i0 * C + i1 - 1)]) + u[ix(i0 * C + i1 + 1)])
            else:
                val = u[e]
            v[e] = val
            e = ix(e + step)
    return s_base


def make_s_rows(R, C, S, B):
    """Row-blocked: a thread owns one column of an S-row strip and walks down it, keeping the
    rows above, at and below in registers (each u element read once from L2/DRAM, the strip's
    2 halo rows aside); left and right neighbours are scalar loads of the row loaded one batch
    earlier (L1 hits). B rows a batch: all B batch loads issued before the batch's B stores."""
    NB2 = B + 2

    def s_rows(u, v):
        j = ix(cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
        r0 = ix(cuda.blockIdx.y * S)
        if j >= C:
            return
        rend = ix(min(r0 + S, R))
        col_in = j > 0 and j < C - 1
        w = cuda.local.array(NB2, nb_f32)        # w[b]: row r+b-1 of this column
        lf = cuda.local.array(B, nb_f32)
        rt = cuda.local.array(B, nb_f32)
        w[0] = u[ix((r0 - 1) * C + j)] if r0 > 0 else nb_f32(0)
        w[1] = u[ix(r0 * C + j)]
        r = r0
        while r < rend:
            for b in range(B):
                rr = ix(r + b)
                if rr < rend and rr + 1 < R:
                    w[b + 2] = u[ix((rr + 1) * C + j)]
                if rr < rend and col_in and rr > 0 and rr < R - 1:
                    lf[b] = u[ix(rr * C + j - 1)]
                    rt[b] = u[ix(rr * C + j + 1)]
            for b in range(B):
                rr = ix(r + b)
                if rr < rend:
                    if col_in and rr > 0 and rr < R - 1:
                        val = QUARTER * (((w[b] + w[b + 2]) + lf[b]) + rt[b])
                    else:
                        val = w[b + 1]
                    v[ix(rr * C + j)] = val
            w[0] = w[B]
            w[1] = w[B + 1]
            r = ix(r + B)
    return s_rows


def make_s_rows_v4(R, C, S, B):
    """s_rows with 16-byte loads and stores: a thread owns 4 columns of the strip (a warp 512
    contiguous bytes of a row); the columns just left and right of the 4 are scalar loads (L1
    hits: the row was loaded one batch earlier). Needs C a multiple of 4."""
    NB2 = B + 2

    def s_rows_v4(u, v):
        j = ix((cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * 4)
        r0 = ix(cuda.blockIdx.y * S)
        if j >= C:
            return
        rend = ix(min(r0 + S, R))
        w = cuda.local.array((NB2, 4), nb_f32)   # w[b]: row r+b-1 of these 4 columns
        lf = cuda.local.array(B, nb_f32)         # u[row, j-1]
        rt = cuda.local.array(B, nb_f32)         # u[row, j+4]
        out = cuda.local.array(4, nb_f32)
        if r0 > 0:
            a, b_, c, d = ld4(u, ix((r0 - 1) * C + j))
            w[0, 0] = a
            w[0, 1] = b_
            w[0, 2] = c
            w[0, 3] = d
        a, b_, c, d = ld4(u, ix(r0 * C + j))
        w[1, 0] = a
        w[1, 1] = b_
        w[1, 2] = c
        w[1, 3] = d
        r = r0
        while r < rend:
            for b in range(B):
                rr = ix(r + b)
                if rr < rend and rr + 1 < R:
                    a, b_, c, d = ld4(u, ix((rr + 1) * C + j))
                    w[b + 2, 0] = a
                    w[b + 2, 1] = b_
                    w[b + 2, 2] = c
                    w[b + 2, 3] = d
                if rr < rend and rr > 0 and rr < R - 1:
                    if j > 0:
                        lf[b] = u[ix(rr * C + j - 1)]
                    if j + 4 < C:
                        rt[b] = u[ix(rr * C + j + 4)]
            for b in range(B):
                rr = ix(r + b)
                if rr < rend:
                    row_in = rr > 0 and rr < R - 1
                    for k in range(4):
                        jk = ix(j + k)
                        if row_in and jk > 0 and jk < C - 1:
                            left = lf[b] if k == 0 else w[b + 1, k - 1]
                            right = rt[b] if k == 3 else w[b + 1, k + 1]
                            out[k] = QUARTER * (((w[b, k] + w[b + 2, k]) + left) + right)
                        else:
                            out[k] = w[b + 1, k]
                    st4(v, ix(rr * C + j), out[0], out[1], out[2], out[3])
            for k in range(4):
                w[0, k] = w[B, k]
                w[1, k] = w[B + 1, k]
            r = ix(r + B)
    return s_rows_v4


def make_s_smem(R, C):
    """Shared-memory tiles with halos: a 32-row x 64-column tile a block (64x4 threads, 8 rows
    each), the tile plus a one-element halo staged in shared memory (rows coalesced, the two halo
    columns scalar), one barrier, outputs from shared memory; one tile a block."""
    TH, TW = 32, 64

    def s_smem(u, v):
        t = ix(cuda.threadIdx.x)
        tx = ix(t % TW)
        ty = ix(t // TW)
        sh = cuda.shared.array(34 * 66, nb_f32)      # (TH + 2) x (TW + 2), flat
        j0 = ix(cuda.blockIdx.x * TW)
        i0 = ix(cuda.blockIdx.y * TH)
        jj = ix(j0 + tx)
        for q in range(8):
            ii = ix(i0 + ty + 4 * q)
            if ii < R and jj < C:
                sh[ix((ty + 4 * q + 1) * 66 + tx + 1)] = u[ix(ii * C + jj)]
        if ty == 0 and i0 > 0 and jj < C:
            sh[ix(tx + 1)] = u[ix((i0 - 1) * C + jj)]
        if ty == 1 and i0 + TH < R and jj < C:
            sh[ix((TH + 1) * 66 + tx + 1)] = u[ix((i0 + TH) * C + jj)]
        if ty == 2 and tx < TH and j0 > 0 and i0 + tx < R:
            sh[ix((tx + 1) * 66)] = u[ix((i0 + tx) * C + j0 - 1)]
        if ty == 3 and tx < TH and j0 + TW < C and i0 + tx < R:
            sh[ix((tx + 1) * 66 + TW + 1)] = u[ix((i0 + tx) * C + j0 + TW)]
        cuda.syncthreads()
        for q in range(8):
            ii = ix(i0 + ty + 4 * q)
            if ii < R and jj < C:
                s = ix((ty + 4 * q + 1) * 66 + tx + 1)      # this element in sh
                if ii > 0 and ii < R - 1 and jj > 0 and jj < C - 1:
                    val = QUARTER * (((sh[ix(s - 66)] + sh[ix(s + 66)]) + sh[ix(s - 1)])
                                     + sh[ix(s + 1)])
                else:
                    val = sh[s]
                v[ix(ii * C + jj)] = val
    return s_smem


def make_s_flat_v4(R, C):
    """A grid-stride loop over 4-element groups (what a pointwise compiler with vector loads does):
    16-byte loads of the group and of the groups above and below, scalar loads of its left and
    right neighbours, one 16-byte store. Rows above/below come from L1/L2, not DRAM, if the
    caches hold ~3 rows per resident wave. Needs C a multiple of 4."""
    NG = R * C // 4

    def s_flat_v4(u, v):
        g = ix(cuda.grid(1))
        step = ix(cuda.gridsize(1))
        while g < NG:
            e = ix(g * 4)
            i = ix(e // C)
            j = ix(e - i * C)
            c0, c1, c2, c3 = ld4(u, e)
            if i > 0 and i < R - 1:
                u0, u1, u2, u3 = ld4(u, ix(e - C))
                d0, d1, d2, d3 = ld4(u, ix(e + C))
                left = u[ix(e - 1)] if j > 0 else c0
                right = u[ix(e + 4)] if j + 4 < C else c3
                o0 = QUARTER * (((u0 + d0) + left) + c1) if j > 0 else c0
                o1 = QUARTER * (((u1 + d1) + c0) + c2)
                o2 = QUARTER * (((u2 + d2) + c1) + c3)
                o3 = QUARTER * (((u3 + d3) + c2) + right) if j + 4 < C else c3
                st4(v, e, o0, o1, o2, o3)
            else:
                st4(v, e, c0, c1, c2, c3)
            g = ix(g + step)
    return s_flat_v4


# == (C) copies =====================================================================================
def make_copy_v4(R, C):
    """One 16-byte vector a thread, no loop."""
    NG = R * C // 4

    def copy_v4(a, b):
        g = ix(cuda.grid(1))
        if g < NG:
            p, q, r, s = ld4(a, ix(g * 4))
            st4(b, ix(g * 4), p, q, r, s)
    return copy_v4


def make_copy_v4_gs(R, C):
    """A grid-stride loop (one resident wave), two 16-byte vectors a thread a step, both loads
    before either store."""
    NG = R * C // 4

    def copy_v4_gs(a, b):
        g = ix(cuda.grid(1))
        step = ix(cuda.gridsize(1))
        while g + step < NG:
            p, q, r, s = ld4(a, ix(g * 4))
            p2, q2, r2, s2 = ld4(a, ix((g + step) * 4))
            st4(b, ix(g * 4), p, q, r, s)
            st4(b, ix((g + step) * 4), p2, q2, r2, s2)
            g = ix(g + 2 * step)
        if g < NG:
            p, q, r, s = ld4(a, ix(g * 4))
            st4(b, ix(g * 4), p, q, r, s)
    return copy_v4_gs


# == the variants ===================================================================================
@dataclass
class Variant:
    name: str
    group: str                      # transpose | stencil | copy
    make: Callable                  # (R, C) -> the kernel's Python function
    grid: Callable                  # (R, C, resident) -> grid; resident: blocks of a grid-stride
    block: int = 256
    vector: bool = False            # expects ld.global.v4 and st.global.v4
    shared: bool = False            # expects ld.shared and bar.sync
    resident: str = ""              # "": one work item a block; "cap16": min(work, 16 x SMs) as
    #                                 autofuse launches; "wave": SMs x the kernel's occupancy
    needs: Callable = lambda R, C: None     # a reason when the shape is not supported, else None
    baseline: bool = False          # the generator's structure, kept as is
    note: str = ""


def _needs4(both: bool):
    def check(R, C):
        if C % 4 or (both and R % 4):
            return "rows and columns multiples of 4" if both else "columns a multiple of 4"
        return None
    return check


def _needs_size4(R, C):
    return "a size that is a multiple of 4" if (R * C) % 4 else None


def _one_wave(work: int, resident: int):
    return (max(1, min(work, resident)), 1, 1)


VARIANTS = [
    Variant("t_base", "transpose", make_t_base, shared=True, resident="cap16", baseline=True,
            grid=lambda R, C, n: _one_wave(cdiv(R, 32) * cdiv(C, 32), n),
            note="generator today: 32x32, y after barrier, grid-stride 16/SM"),
    Variant("t_base_full", "transpose", make_t_base, shared=True, baseline=True,
            grid=lambda R, C, n: (cdiv(R, 32) * cdiv(C, 32), 1, 1),
            note="t_base's kernel, a block per tile (no cap)"),
    Variant("t32", "transpose", make_t32, shared=True,
            grid=lambda R, C, n: (cdiv(C, 32), cdiv(R, 32), 1),
            note="32x32 classic, y before the barrier, a tile a block"),
    Variant("t32_gs", "transpose", make_t32_gs, shared=True, resident="wave",
            grid=lambda R, C, n: _one_wave(cdiv(R, 32) * cdiv(C, 32), n),
            note="t32, grid-stride one wave, double-buffered"),
    Variant("t32_pipe", "transpose", make_t32_pipe, shared=True, resident="wave",
            grid=lambda R, C, n: _one_wave(cdiv(R, 32) * cdiv(C, 32), n),
            note="t32_gs, next tile's loads in flight"),
    Variant("t64", "transpose", make_t64, shared=True,
            grid=lambda R, C, n: (cdiv(C, 64), cdiv(R, 64), 1),
            note="64x64 scalar, 32 loads before the barrier"),
    Variant("t64_v4", "transpose", make_t64_v4, vector=True, shared=True, needs=_needs4(True),
            grid=lambda R, C, n: (cdiv(C, 64), cdiv(R, 64), 1),
            note="64x64, 16-byte x/y loads and out stores"),
    Variant("t64_v4_gs", "transpose", make_t64_v4_gs, vector=True, shared=True, resident="wave",
            needs=_needs4(True), grid=lambda R, C, n: _one_wave(cdiv(R, 64) * cdiv(C, 64), n),
            note="t64_v4, grid-stride one wave, double-buffered"),
    Variant("t64_v4_pipe", "transpose", make_t64_v4_pipe, vector=True, shared=True,
            resident="wave", needs=_needs4(True),
            grid=lambda R, C, n: _one_wave(cdiv(R, 64) * cdiv(C, 64), n),
            note="t64_v4_gs, next tile's loads in flight"),
    Variant("s_base", "stencil", make_s_base, resident="cap16", baseline=True,
            grid=lambda R, C, n: _one_wave(min(cdiv(R * C, 256), 65535), n),
            note="generator today: grid-stride, 1 element/thread, 5 loads"),
    Variant("s_base_full", "stencil", make_s_base, baseline=True,
            grid=lambda R, C, n: (cdiv(R * C, 256), 1, 1),
            note="s_base's kernel, a block per 256 elements (no cap)"),
    *[Variant(f"s_rows_S{S}b{B}", "stencil", (lambda S, B: lambda R, C: make_s_rows(R, C, S, B))(S, B),
              grid=(lambda S: lambda R, C, n: (cdiv(C, 256), cdiv(R, S), 1))(S),
              note=f"column walk, {S}-row strips, {B}-row batches")
      for S, B in ((16, 4), (64, 4))],
    *[Variant(f"s_rows_v4_S{S}b{B}", "stencil",
              (lambda S, B: lambda R, C: make_s_rows_v4(R, C, S, B))(S, B), vector=True,
              needs=_needs4(False), grid=(lambda S: lambda R, C, n: (cdiv(C, 1024), cdiv(R, S), 1))(S),
              note=f"column walk x4 (16 B), {S}-row strips, {B}-row batches")
      for S, B in ((8, 8), (16, 4), (16, 8), (32, 8), (64, 4))],
    Variant("s_smem", "stencil", make_s_smem, shared=True,
            grid=lambda R, C, n: (cdiv(C, 64), cdiv(R, 32), 1),
            note="32x64 shared tile + halo, a tile a block"),
    Variant("s_flat_v4", "stencil", make_s_flat_v4, vector=True, resident="cap16",
            needs=_needs4(False), grid=lambda R, C, n: _one_wave(cdiv(R * C // 4, 256), n),
            note="grid-stride over 16 B groups, up/down/center v4"),
    Variant("s_flat_v4_full", "stencil", make_s_flat_v4, vector=True, needs=_needs4(False),
            grid=lambda R, C, n: (cdiv(R * C // 4, 256), 1, 1),
            note="s_flat_v4's kernel, a block per 256 groups (no cap)"),
    Variant("copy_v4", "copy", make_copy_v4, vector=True, needs=_needs_size4,
            grid=lambda R, C, n: (cdiv(R * C // 4, 256), 1, 1),
            note="a 16 B vector a thread"),
    Variant("copy_v4_gs", "copy", make_copy_v4_gs, vector=True, resident="wave",
            needs=_needs_size4,
            grid=lambda R, C, n: _one_wave(cdiv(R * C // 4, 256), n),
            note="grid-stride one wave, 2 vectors in flight"),
]


def selected(only: str | None) -> list[Variant]:
    if not only:
        return VARIANTS
    keys = [k.strip() for k in only.split(",") if k.strip()]
    return [v for v in VARIANTS if any(k in v.name for k in keys)]


def nargs(v: Variant) -> int:
    return 3 if v.group == "transpose" else 2


def moved_bytes(v: Variant, R: int, C: int) -> int:
    return (3 if v.group == "transpose" else 2) * R * C * 4


def reference(group: str, arrays, xp=np):
    """The workload itself, op by op, with NumPy or cupy."""
    if group == "transpose":
        x, y = arrays
        return (x.T + y) * 2
    if group == "stencil":
        (u,) = arrays
        out = u.copy()
        out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        return out
    (a,) = arrays
    return a.copy()


def input_shapes(group: str, R: int, C: int):
    return [(C, R), (R, C)] if group == "transpose" else [(R, C)]


# == --ptx ==========================================================================================
_ENTRY = re.compile(r"\.visible \.entry (\S+)\(")
_I64_MUL = re.compile(r"^(?:mul|mad)\.(?:lo|hi)\.[su]64$")
_I64_DIV = re.compile(r"^(?:div|rem)(?:\.\w+)?\.[su]64$")
_I32_DIV = re.compile(r"^(?:div|rem)(?:\.\w+)?\.[su]32$")


def count_ptx(ptx: str) -> dict:
    counts = dict.fromkeys(("ld.g", "ld.g.v4", "st.g", "st.g.v4", "ld.sh", "st.sh", "bar",
                            "local", "i64*", "i64/", "i32/", "mul.wide"), 0)
    for line in ptx.splitlines():
        line = line.strip()
        if not line or line.startswith(("//", ".", "{", "}", "$")) or line.endswith(":"):
            continue
        if line.startswith("@"):
            line = line.split(None, 1)[1] if " " in line else ""
        op = line.split(None, 1)[0].rstrip(";") if line else ""
        if op.startswith("ld.global"):
            counts["ld.g.v4" if ".v4." in op else "ld.g"] += 1
        elif op.startswith("st.global"):
            counts["st.g.v4" if ".v4." in op else "st.g"] += 1
        elif op.startswith("ld.shared"):
            counts["ld.sh"] += 1
        elif op.startswith("st.shared"):
            counts["st.sh"] += 1
        elif op.startswith(("bar.sync", "barrier.sync")):
            counts["bar"] += 1
        elif op.startswith(("ld.local", "st.local")):
            counts["local"] += 1
        elif op.startswith("mul.wide"):
            counts["mul.wide"] += 1
        if _I64_MUL.match(op):
            counts["i64*"] += 1
        if _I64_DIV.match(op):
            counts["i64/"] += 1
        if _I32_DIV.match(op):
            counts["i32/"] += 1
    return counts


def compile_variant(v: Variant, R: int, C: int, cc=CC) -> tuple[str, str]:
    ptx, _ = cuda.compile_ptx(v.make(R, C), (F32P,) * nargs(v), cc=cc)
    return ptx, _ENTRY.search(ptx).group(1)


def run_ptx(args) -> int:
    R = C = 8192
    keys = ("ld.g", "ld.g.v4", "st.g", "st.g.v4", "ld.sh", "st.sh", "bar", "local", "i64*",
            "i64/", "i32/", "mul.wide")
    print(f"sm_{CC[0]}{CC[1]} PTX at {R}x{C} float32, static instruction counts: ld.g/st.g scalar "
          f"and .v4 global, ld.sh/st.sh shared, bar barriers, local = ld/st.local, i64* = 64-bit "
          f"integer mul/mad (lo/hi), i64/ and i32/ = integer div/rem, mul.wide = 32x32->64 "
          f"(address) multiplies")
    print(f"{'variant':<17}" + "".join(f"{k:>9}" for k in keys))
    failures = []
    for v in selected(args.only):
        try:
            ptx, _ = compile_variant(v, R, C)
        except Exception as error:          # noqa: BLE001 - one line a failing variant
            failures.append(f"{v.name}: compile failed: {type(error).__name__}: "
                            f"{str(error).splitlines()[0][:200]}")
            print(f"{v.name:<17} COMPILE FAILED")
            continue
        n = count_ptx(ptx)
        print(f"{v.name:<17}" + "".join(f"{n[k]:>9}" for k in keys))
        problems = []
        if v.vector and not (n["ld.g.v4"] and n["st.g.v4"]):
            problems.append("expected ld.global.v4 and st.global.v4")
        if not v.vector and (n["ld.g.v4"] or n["st.g.v4"]):
            problems.append("unexpected vector global accesses")
        if v.shared and not (n["ld.sh"] and n["st.sh"] and n["bar"]):
            problems.append("expected shared loads/stores and a barrier")
        if not v.shared and (n["ld.sh"] or n["bar"]):
            problems.append("unexpected shared memory or barrier")
        if n["local"]:
            problems.append(f"{n['local']} local-memory accesses (a local array not in registers)")
        if n["i64/"] or n["i32/"]:
            problems.append(f"{n['i64/'] + n['i32/']} integer divides/remainders")
        failures += [f"{v.name}: {p}" for p in problems]
    print("i64*: numba types integer arithmetic as 64-bit and ix() truncates; LLVM narrows most of it "
          "but keeps a few\n      thread-invariant shared-memory offsets (x 65, 66, 260, 264) in 64 "
          "bits; none is a per-element divide")
    for f in failures:
        print("FAIL", f)
    print("PTX checks:", "FAILED" if failures else "all passed")
    return 1 if failures else 0


# == --sim ==========================================================================================
SIM_SHAPES = [(64, 64), (70, 45), (136, 200)]    # the last: several 64x64 tiles a block
SIM_FALLBACK = {"transpose": (72, 44), "stencil": (70, 44), "copy": (70, 44)}
SIM_RESIDENT = 3        # blocks of a grid-stride kernel under the simulator: several tiles each


def run_sim(args) -> int:
    if not SIM:
        print("--sim needs NUMBA_ENABLE_CUDASIM=1 in the environment")
        return 2
    rng = np.random.default_rng(0)
    failures = 0
    for v in selected(args.only):
        for R, C in SIM_SHAPES:
            grid = None
            reason = v.needs(R, C)
            label = f"{R}x{C}"
            if reason:
                fR, fC = SIM_FALLBACK[v.group]
                print(f"{v.name:<17} {label:>6}: unsupported (needs {reason}); "
                      f"running {fR}x{fC} instead")
                R, C, label = fR, fC, f"{fR}x{fC}"
            inputs = [rng.standard_normal(s).astype(np.float32) for s in input_shapes(v.group, R, C)]
            expected = reference(v.group, inputs)
            out = np.full((R, C), np.nan, np.float32)
            try:
                kernel = cuda.jit(v.make(R, C))
                grid = v.grid(R, C, SIM_RESIDENT)
                kernel[grid, v.block](*[a.ravel() for a in inputs], out.reshape(-1))
                if np.array_equal(out, expected):
                    status = "exact"
                else:
                    bad = np.argwhere(~(out == expected))
                    status = f"MISMATCH at {len(bad)} elements, first {tuple(bad[0])}"
                    failures += 1
            except Exception as error:      # noqa: BLE001
                status = f"ERROR {type(error).__name__}: {str(error).splitlines()[0][:160]}"
                failures += 1
            print(f"{v.name:<17} {label:>6}: grid {grid} "
                  f"block {v.block}: {status}")
    print("simulator checks:", f"{failures} FAILED" if failures else "all exact")
    return 1 if failures else 0


# == default: the GPU ===============================================================================
def run_gpu(args) -> int:
    import cupy
    from cuda.core import Device, LaunchConfig, Linker, LinkerOptions, ObjectCode, Stream, launch
    started = time.perf_counter()
    device = Device()
    device.set_current()
    cc = tuple(device.compute_capability)
    sms = device.properties.multiprocessor_count
    arch = f"sm_{cc[0]}{cc[1]}"
    R = C = args.n
    cstream = cupy.cuda.Stream(non_blocking=True)
    stream = Stream.from_handle(cstream.ptr)

    def time_ms(call, calls=20, repeats=5, warmup=3):
        for _ in range(warmup):
            call()
        samples = []
        for _ in range(repeats):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(cstream)
            for _ in range(calls):
                call()
            end.record(cstream)
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(start, end) / calls)
        return statistics.median(samples)

    with cstream:
        # the floor: cupy's device-to-device copy (cudaMemcpyAsync) of a 1 GiB buffer
        def copy_times():
            a = cupy.ones(1 << 28, cupy.float32)
            b = cupy.empty_like(a)
            memcpy = time_ms(lambda: b.data.copy_from_device_async(a.data, a.nbytes, cstream),
                             calls=10)
            return memcpy, time_ms(lambda: b.__setitem__(Ellipsis, a), calls=10)
        ms, ms_set = copy_times()                  # the 2 GiB are freed on return
        bandwidth = 2 * (1 << 30) / (ms / 1e3)
        print(f"{device.name} ({sms} SMs, {arch}); numba {numba.__version__}, cupy "
              f"{cupy.__version__}; {R}x{C} float32")
        print(f"copy floor: cudaMemcpy D2D 1 GiB {ms:.3f} ms = {bandwidth / 1e12:.3f} TB/s "
              f"(read+write); cupy b[...]=a 1 GiB {2 * (1 << 30) / ms_set / 1e9:.3f} TB/s")
        print(f"{'variant':<17}{'ms':>8}{'GB/s':>8}{'floor':>7}  {'regs':>4} {'blk/SM':>6} "
              f"{'grid':>13}  check / note")

        rng = cupy.random.default_rng(1)
        data = {}
        for group in ("transpose", "stencil", "copy"):
            inputs = [rng.standard_normal(s, dtype=cupy.float32)
                      for s in input_shapes(group, R, C)]
            data[group] = (inputs, reference(group, inputs, cupy), cupy.empty((R, C), cupy.float32))
        cupy.cuda.get_current_stream().synchronize()

        def line(name, ms, nbytes, extra):
            floor_ms = nbytes / bandwidth * 1e3
            print(f"{name:<17}{ms:>8.3f}{nbytes / ms / 1e6:>8.0f}{ms / floor_ms:>6.2f}x  {extra}")

        for v in selected(args.only):
            try:
                reason = v.needs(R, C)
                if reason:
                    print(f"{v.name:<17} skipped: needs {reason}")
                    continue
                ptx, entry = compile_variant(v, R, C, cc)
                linked = Linker(ObjectCode.from_ptx(ptx.encode()),
                                options=LinkerOptions(arch=arch)).link("cubin")
                kernel = ObjectCode.from_cubin(bytes(linked.code)).get_kernel(entry)
                regs = kernel.attributes.num_regs
                occupancy = kernel.occupancy.max_active_blocks_per_multiprocessor(v.block, 0)
                resident = {"cap16": 16 * sms, "wave": occupancy * sms}.get(v.resident, 0)
                grid = v.grid(R, C, resident)
                config = LaunchConfig(grid=grid, block=v.block)
                inputs, expected, out = data[v.group]
                pointers = [a.data.ptr for a in inputs] + [out.data.ptr]
                out.fill(cupy.nan)
                launch(stream, config, kernel, *pointers)
                cstream.synchronize()
                if bool(cupy.array_equal(out, expected)):
                    check = "exact"
                else:
                    err = float(cupy.max(cupy.abs(out - expected)))
                    check = f"max err {err:.2e}" + ("" if err <= 1e-6 else " WRONG")
                ms = time_ms(lambda: launch(stream, config, kernel, *pointers))
                line(v.name, ms, moved_bytes(v, R, C),
                     f"{regs:>4} {occupancy:>6} {str(grid):>13}  {check}; {v.note}")
            except Exception as error:          # noqa: BLE001 - one line a failing variant
                msg = str(error).splitlines()[0][:150] if str(error) else ""
                print(f"{v.name:<17} FAILED {type(error).__name__}: {msg}")

        if not args.only:
            for group, name in (("transpose", "cupy (x.T+y)*2"), ("stencil", "cupy stencil"),
                                ("copy", "cupy b[...]=a")):
                try:
                    inputs, expected, out = data[group]
                    if group == "copy":
                        ms = time_ms(lambda: out.__setitem__(Ellipsis, inputs[0]))
                    else:
                        ms = time_ms(lambda: reference(group, inputs, cupy))
                    line(name, ms, (3 if group == "transpose" else 2) * R * C * 4,
                         "op by op" if group != "copy" else "elementwise copy kernel")
                except Exception as error:      # noqa: BLE001
                    print(f"{name:<17} FAILED {type(error).__name__}: {str(error)[:150]}")
    print(f"total {time.perf_counter() - started:.1f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ptx", action="store_true", help="compile to sm_90 PTX and count")
    parser.add_argument("--sim", action="store_true", help="run under the CUDA simulator")
    parser.add_argument("--only", help="comma-separated substrings of variant names")
    parser.add_argument("--n", type=int, default=8192, help="GPU mode: the arrays' side")
    args = parser.parse_args()
    if args.ptx:
        return run_ptx(args)
    if args.sim:
        return run_sim(args)
    return run_gpu(args)


if __name__ == "__main__":
    sys.exit(main())
