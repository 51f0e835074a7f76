"""Layernorm over 16384x4096 float32 rows, hand-written numba.cuda kernel shapes beside autofuse and
torch.compile, in one process on the same data (a probe, not the generator):

  y = (x - mean) / sqrt(var + 1e-5) * gamma + beta,  var = mean((x - mean)**2), over the last axis

Shapes tried (each a plain @cuda.jit kernel over 1-D views of the arrays):
  held      autofuse's shape: a thread holds its 4096/TR floats of the row in registers (16-byte
            loads), block reductions of the sum, then of the squared deviations, then the row out.
  reread    nothing held: pass 1 reads x (16-byte vectors) and sums, pass 2 reads x again and sums
            squared deviations, pass 3 reads x again, gamma and beta (vectors) and writes (vectors).
  one-pass  (stats=shift / raw): one pass gives the pair (sum, sum of squares) in one reduction of a
            pair, then the output pass. `shift` sums x - x[row, 0] (robust), `raw` sums x itself
            (cancels catastrophically when |mean| >> std: see the err@100 column).
TR threads work on one row (TR=32: a warp a row, shuffles only, no barrier); block/TR rows a block;
`loop`: a grid of one wave of blocks looping over rows, else one row group a block.

    python benchmarks/experiments/layernorm_reread.py [--only 'a;b' [--exact]] [--rounds K]
        [--autofuse-items 8,8:2048] [--no-torch] [--ptx]

Method: every variant's output (poisoned with NaN first) is checked against a float64 NumPy
reference (rtol 1e-4, atol 1e-4 x max|ref|, as benchmarks/gpu.py); err@100 is the max error over
max|ref| on rows of mean 100, std 1 (the one-pass forms' risk). Timing: benchmarks/gpu.py's
time_calls (median of synchronized batches after warm-up), in interleaved rounds (--rounds), each
entry's ratio to torch.compile taken within a round, in one process.

Measured on an H200 (2026-11-21; copy 4.27 TB/s, floor 0.1256 ms; torch 2.11 Inductor picks
XBLOCK=1, R0_BLOCK=2048, 16 warps, 32 registers, L1+L2 evict_last loads on passes 1-2 and gamma/beta,
L1+L2 evict_first on pass 3, plain v4 stores): torch.compile 0.1297-0.1306 ms; autofuse 0.133
(repro here 0.1332); held256 rstd + vector gamma/beta 0.1320; held512 0.1310; reread512 with
Inductor's exact hints, two-pass 0.1319-0.1326; reread512 one-pass shifted sums with those hints
0.1291-0.1295 (0.994x torch.compile, 30 rounds: faster in 73%); held512 with x loaded
L1::no_allocate + L2 evict_first and stores L2 evict_first 0.1299-0.1302 (0.996x). Without the
cache hints the same one-pass kernel runs 0.1337. Warp-a-row and grid-looping forms: 1.1-2.2x.
"""
from __future__ import annotations

import argparse
import collections
import math
import os
import re
import sys
from dataclasses import dataclass, field

import numba
import numpy as np
from llvmlite import ir
from numba import cuda, types
from numba.core.extending import intrinsic

N = 4096
EPS = np.float32(1e-5)
INV_N = np.float32(1.0 / N)
ZERO = np.float32(0.0)
ONE = np.float32(1.0)
FULL = 0xffffffff
C32 = np.uint32(32)
ix = numba.uint32
nb_f32 = numba.float32
SIG = "void(float32[::1], float32[::1], float32[::1], float32[::1], uint32)"


# -- 16-byte global loads and stores through inline PTX -------------------------------------------
# Inline asm with side effects: LLVM may neither merge a pass's re-read with an earlier pass's load
# (which would turn a re-read kernel back into a held row) nor drop it.
def _address(context, builder, arrty, arr, idxty, idx):
    data = context.make_array(arrty)(context, builder, arr).data
    offset = context.cast(builder, idx, idxty, types.uint64)
    return builder.ptrtoint(builder.gep(data, [offset]), ir.IntType(64))


_LOADS: dict = {}


def _with_policy(qualifier: str, body: str) -> str:
    """`body` (with QUAL where the qualifier goes) as PTX; a qualifier 'Q|POLICY' also creates an
    L2 cache policy (createpolicy.fractional.L2::POLICY) for Q's .L2::cache_hint operand."""
    if "|" not in qualifier:
        return body.replace("QUAL", qualifier).replace(", POL", "")
    qual, policy = qualifier.split("|")
    return ("{ .reg .b64 pol_; createpolicy.fractional.L2::%s.b64 pol_, 1.0; %s }"
            % (policy, body.replace("QUAL", qual).replace("POL", "pol_")))


_LOADS: dict = {}
_STORES: dict = {}


def ld4(qualifier: str = ""):
    """An intrinsic (array, index) -> 4 floats: `ld.global<qualifier>.v4.f32` at &array[index]."""
    if qualifier in _LOADS:
        return _LOADS[qualifier]
    text = _with_policy(qualifier, "ld.globalQUAL.v4.f32 {$0, $1, $2, $3}, [$4], POL;")

    @intrinsic
    def load4(typingctx, arr, idx):
        if not (isinstance(arr, types.Array) and arr.dtype == types.float32
                and isinstance(idx, types.Integer)):
            return None
        result = types.UniTuple(types.float32, 4)

        def codegen(context, builder, sig, args):
            address = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            f32 = ir.FloatType()
            fty = ir.FunctionType(ir.LiteralStructType([f32] * 4), [ir.IntType(64)])
            out = builder.asm(fty, text, "=f,=f,=f,=f,l", [address], True)
            return context.make_tuple(builder, result,
                                      [builder.extract_value(out, k) for k in range(4)])
        return result(arr, idx), codegen
    _LOADS[qualifier] = load4
    return load4


def st4(qualifier: str = ""):
    """An intrinsic array[index:index + 4] = (v0, v1, v2, v3): one st.global<qualifier>.v4.f32."""
    if qualifier in _STORES:
        return _STORES[qualifier]
    text = _with_policy(qualifier, "st.globalQUAL.v4.f32 [$0], {$1, $2, $3, $4}, POL;")

    @intrinsic
    def store4(typingctx, arr, idx, v0, v1, v2, v3):
        if not (isinstance(arr, types.Array) and isinstance(idx, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            address = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            values = [context.cast(builder, v, t, types.float32)
                      for v, t in zip(args[2:], sig.args[2:])]
            f32 = ir.FloatType()
            fty = ir.FunctionType(ir.VoidType(), [ir.IntType(64)] + [f32] * 4)
            builder.asm(fty, text, "l,f,f,f,f", [address] + values, True)
            return context.get_dummy_value()
        return types.void(arr, idx, v0, v1, v2, v3), codegen
    _STORES[qualifier] = store4
    return store4


# -- variants (block reductions written inline: warp shuffles, then shared memory across warps) ------------------------------------------------------------------------------------
@dataclass
class Spec:
    name: str
    block: int = 256              # threads a block
    tr: int = 0                   # threads a row (0: the block)
    held: bool = False            # the row in registers (else re-read from memory each pass)
    stats: str = "two"            # two: mean, then squared deviations; shift/raw: one pair pass
    div: bool = False             # (x - m) / sqrt(v + eps) per element (autofuse) vs x rstd
    gb_vec: bool = True           # gamma/beta as 16-byte vectors (else element by element)
    hints: tuple = ("", "", "")   # the three passes' x-load qualifiers (held: the first only)
    gb_hint: str = ""             # gamma/beta load qualifier
    st_hint: str = ""             # output store qualifier
    loop: bool = False            # one wave of blocks looping over rows
    bounds: int = 0               # launch bounds: blocks an SM (0: none)
    waves: int = 1                # loop: blocks = waves x SMs x resident blocks an SM
    note: str = ""
    rows_per_block: int = field(init=False)

    def __post_init__(self):
        self.tr = self.tr or self.block
        self.rows_per_block = self.block // self.tr


def make_kernel(spec: Spec, ptx_only: bool = False):
    B, TR = spec.block, spec.tr
    G = B // TR
    WR = TR // 32                 # warps a row
    V = N // (4 * TR)             # vectors a thread a pass
    HELD = spec.held
    HN = 4 * V if HELD else 4
    TWO = spec.stats == "two"
    SHIFT = spec.stats == "shift"
    DIV = spec.div
    GBV = spec.gb_vec
    LD1, LD2, LD3 = (ld4(q) for q in spec.hints)
    LDG = ld4(spec.gb_hint)
    ST = st4(spec.st_hint)
    assert N % (4 * TR) == 0 and B % TR == 0 and TR % 32 == 0

    def kernel(x, g, b, o, R):
        t = ix(cuda.threadIdx.x)
        tr = ix(t % TR)
        w = ix(t // 32)
        lane = ix(t % 32)
        gl = ix(ix((w // WR) * WR) + lane)   # lane-th warp of this thread's row
        sh = cuda.shared.array(128, nb_f32)
        h = cuda.local.array(HN, nb_f32)
        row = ix(cuda.blockIdx.x * G + t // TR)
        step = ix(cuda.gridDim.x * G)
        it = ix(0)
        while row < R:
            base = ix(row * N)
            if TWO:
                s = ZERO
                for k in range(V):
                    a0, a1, a2, a3 = LD1(x, ix(base + (tr + k * TR) * 4))
                    if HELD:
                        h[4 * k] = a0
                        h[4 * k + 1] = a1
                        h[4 * k + 2] = a2
                        h[4 * k + 3] = a3
                    s += (a0 + a1) + (a2 + a3)
                s += cuda.shfl_xor_sync(FULL, s, 16)
                s += cuda.shfl_xor_sync(FULL, s, 8)
                s += cuda.shfl_xor_sync(FULL, s, 4)
                s += cuda.shfl_xor_sync(FULL, s, 2)
                s += cuda.shfl_xor_sync(FULL, s, 1)
                if WR > 1:
                    if lane == 0:
                        sh[w] = s
                    cuda.syncthreads()
                    if lane < WR:
                        s = sh[gl]
                    else:
                        s = ZERO
                    s += cuda.shfl_xor_sync(FULL, s, 16)
                    s += cuda.shfl_xor_sync(FULL, s, 8)
                    s += cuda.shfl_xor_sync(FULL, s, 4)
                    s += cuda.shfl_xor_sync(FULL, s, 2)
                    s += cuda.shfl_xor_sync(FULL, s, 1)
                m = s * INV_N
                q = ZERO
                for k in range(V):
                    if HELD:
                        a0 = h[4 * k]
                        a1 = h[4 * k + 1]
                        a2 = h[4 * k + 2]
                        a3 = h[4 * k + 3]
                    else:
                        a0, a1, a2, a3 = LD2(x, ix(base + (tr + k * TR) * 4))
                    d0 = a0 - m
                    d1 = a1 - m
                    d2 = a2 - m
                    d3 = a3 - m
                    q += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3)
                q += cuda.shfl_xor_sync(FULL, q, 16)
                q += cuda.shfl_xor_sync(FULL, q, 8)
                q += cuda.shfl_xor_sync(FULL, q, 4)
                q += cuda.shfl_xor_sync(FULL, q, 2)
                q += cuda.shfl_xor_sync(FULL, q, 1)
                if WR > 1:
                    if lane == 0:
                        sh[ix(w + C32)] = q
                    cuda.syncthreads()
                    if lane < WR:
                        q = sh[ix(gl + C32)]
                    else:
                        q = ZERO
                    q += cuda.shfl_xor_sync(FULL, q, 16)
                    q += cuda.shfl_xor_sync(FULL, q, 8)
                    q += cuda.shfl_xor_sync(FULL, q, 4)
                    q += cuda.shfl_xor_sync(FULL, q, 2)
                    q += cuda.shfl_xor_sync(FULL, q, 1)
                var = q * INV_N
            else:
                off = ix((it & 1) * 64)          # two buffers: one barrier a row
                k0 = x[base] if SHIFT else ZERO
                s = ZERO
                q = ZERO
                for k in range(V):
                    a0, a1, a2, a3 = LD1(x, ix(base + (tr + k * TR) * 4))
                    if HELD:
                        h[4 * k] = a0
                        h[4 * k + 1] = a1
                        h[4 * k + 2] = a2
                        h[4 * k + 3] = a3
                    d0 = a0 - k0
                    d1 = a1 - k0
                    d2 = a2 - k0
                    d3 = a3 - k0
                    s += (d0 + d1) + (d2 + d3)
                    q += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3)
                s += cuda.shfl_xor_sync(FULL, s, 16)
                s += cuda.shfl_xor_sync(FULL, s, 8)
                s += cuda.shfl_xor_sync(FULL, s, 4)
                s += cuda.shfl_xor_sync(FULL, s, 2)
                s += cuda.shfl_xor_sync(FULL, s, 1)
                q += cuda.shfl_xor_sync(FULL, q, 16)
                q += cuda.shfl_xor_sync(FULL, q, 8)
                q += cuda.shfl_xor_sync(FULL, q, 4)
                q += cuda.shfl_xor_sync(FULL, q, 2)
                q += cuda.shfl_xor_sync(FULL, q, 1)
                if WR > 1:
                    if lane == 0:
                        sh[ix(off + w)] = s
                        sh[ix(ix(off + w) + C32)] = q
                    cuda.syncthreads()
                    if lane < WR:
                        s = sh[ix(off + gl)]
                        q = sh[ix(ix(off + gl) + C32)]
                    else:
                        s = ZERO
                        q = ZERO
                    s += cuda.shfl_xor_sync(FULL, s, 16)
                    s += cuda.shfl_xor_sync(FULL, s, 8)
                    s += cuda.shfl_xor_sync(FULL, s, 4)
                    s += cuda.shfl_xor_sync(FULL, s, 2)
                    s += cuda.shfl_xor_sync(FULL, s, 1)
                    q += cuda.shfl_xor_sync(FULL, q, 16)
                    q += cuda.shfl_xor_sync(FULL, q, 8)
                    q += cuda.shfl_xor_sync(FULL, q, 4)
                    q += cuda.shfl_xor_sync(FULL, q, 2)
                    q += cuda.shfl_xor_sync(FULL, q, 1)
                ms = s * INV_N
                m = k0 + ms
                var = max(q * INV_N - ms * ms, ZERO)
            den = math.sqrt(var + EPS)
            rstd = ONE / den
            for k in range(V):
                col = ix((tr + k * TR) * 4)
                c = ix(base + col)
                if HELD:
                    a0 = h[4 * k]
                    a1 = h[4 * k + 1]
                    a2 = h[4 * k + 2]
                    a3 = h[4 * k + 3]
                else:
                    a0, a1, a2, a3 = LD3(x, c)
                if GBV:
                    g0, g1, g2, g3 = LDG(g, col)
                    b0, b1, b2, b3 = LDG(b, col)
                else:
                    g0 = g[col]
                    g1 = g[ix(col + 1)]
                    g2 = g[ix(col + 2)]
                    g3 = g[ix(col + 3)]
                    b0 = b[col]
                    b1 = b[ix(col + 1)]
                    b2 = b[ix(col + 2)]
                    b3 = b[ix(col + 3)]
                if DIV:
                    y0 = (a0 - m) / den * g0 + b0
                    y1 = (a1 - m) / den * g1 + b1
                    y2 = (a2 - m) / den * g2 + b2
                    y3 = (a3 - m) / den * g3 + b3
                else:
                    y0 = (a0 - m) * rstd * g0 + b0
                    y1 = (a1 - m) * rstd * g1 + b1
                    y2 = (a2 - m) * rstd * g2 + b2
                    y3 = (a3 - m) * rstd * g3 + b3
                ST(o, c, y0, y1, y2, y3)
            row = ix(row + step)
            it = ix(it + 1)

    bounds = (B, spec.bounds) if spec.bounds else None
    if ptx_only:
        return cuda.compile_ptx(kernel, SIG, cc=(9, 0), launch_bounds=bounds)[0]
    return cuda.jit(SIG, launch_bounds=bounds)(kernel)


NC, EL, EF = ".nc", ".L1::evict_last", ".L1::evict_first"
# L1 and L2 eviction priorities (an L2 cache policy made by createpolicy)
EL2 = ".L1::evict_last.L2::cache_hint|evict_last"
EF2 = ".L1::evict_first.L2::cache_hint|evict_first"
XF2 = ".L1::no_allocate.L2::cache_hint|evict_first"    # read once: no L1 line, L2 evict first
SF2 = ".L2::cache_hint|evict_first"                      # stores


def variants() -> list[Spec]:
    v = [
        Spec("held256 repro (autofuse)", held=True, stats="two", div=True, gb_vec=False,
             hints=(NC, "", ""), bounds=5, note="autofuse's shape"),
        Spec("held256 repro, no bounds", held=True, div=True, gb_vec=False, hints=(NC, "", "")),
        Spec("held256 rstd vec-gb b5", held=True, hints=(NC, "", ""), bounds=5),
        Spec("held256 rstd vec-gb", held=True, hints=(NC, "", "")),
        Spec("held256 rstd vec-gb b6", held=True, hints=(NC, "", ""), bounds=6),
        Spec("held256 rstd vec-gb b8", held=True, hints=(NC, "", ""), bounds=8),
        Spec("held256 one-pass shift", held=True, stats="shift", hints=(NC, "", "")),
        Spec("held512 (8/thread)", block=512, held=True, hints=(NC, "", "")),
        Spec("held1024 (4/thread)", block=1024, held=True, hints=(NC, "", "")),
        Spec("held512 one-pass shift", block=512, held=True, stats="shift", hints=(NC, "", "")),
        Spec("held512 div scalar-gb", block=512, held=True, div=True, gb_vec=False,
             hints=(NC, "", "")),
    ]
    for B in (128, 256, 512, 1024):
        v.append(Spec(f"reread{B}", block=B))
    for B in (256, 512, 1024):
        v.append(Spec(f"reread{B} loop", block=B, loop=True))
    for B in (256, 512, 1024):
        v.append(Spec(f"reread{B} evict hints", block=B, hints=(EL, EL, EF)))
    v.append(Spec("reread512 evict hints, gb evict_last", block=512, hints=(EL, EL, EF),
                  gb_hint=EL))
    v.append(Spec("reread512 one-pass shift EL/EF", block=512, stats="shift", hints=(EL, "", EF)))
    v.append(Spec("reread512 L1+L2 hints", block=512, hints=(EL2, EL2, EF2), gb_hint=EL2))
    v.append(Spec("reread512 L1+L2 hints, st evict_first", block=512, hints=(EL2, EL2, EF2),
                  gb_hint=EL2, st_hint=SF2))
    v.append(Spec("reread512 one-pass shift L1+L2 hints", block=512, stats="shift",
                  hints=(EL2, "", EF2), gb_hint=EL2))
    v.append(Spec("held512 x L2 evict_first", block=512, held=True, hints=(XF2, "", "")))
    v.append(Spec("held256 x L2 evict_first", held=True, hints=(XF2, "", "")))
    v.append(Spec("held512 x L2 evict_first, st evict_first", block=512, held=True,
                  hints=(XF2, "", ""), st_hint=SF2))
    v.append(Spec("held512 st evict_first", block=512, held=True, hints=(NC, "", ""), st_hint=SF2))
    v.append(Spec("held256 x+st L2 evict_first", held=True, hints=(XF2, "", ""), st_hint=SF2))
    v.append(Spec("held256 repro + x+st L2 evict_first", held=True, div=True, gb_vec=False,
                  hints=(XF2, "", ""), st_hint=SF2, bounds=5))
    v.append(Spec("reread512 one-pass shift L1+L2 hints, st ef", block=512, stats="shift",
                  hints=(EL2, "", EF2), gb_hint=EL2, st_hint=SF2))
    v.append(Spec("held512 one-pass shift x+st L2 ef", block=512, held=True, stats="shift",
                  hints=(XF2, "", ""), st_hint=SF2))
    v.append(Spec("reread256 full-occ bounds", block=256, bounds=8))
    v.append(Spec("reread512 full-occ bounds", block=512, bounds=4))
    for B in (256, 512, 1024):
        v.append(Spec(f"reread{B} one-pass shift", block=B, stats="shift"))
    v.append(Spec("reread512 one-pass raw", block=512, stats="raw"))
    v.append(Spec("reread512 one-pass shift hints", block=512, stats="shift", hints=(EL, EF, EF)))
    v.append(Spec("reread 2 rows/blk (512,256)", block=512, tr=256))
    v.append(Spec("reread 4 rows/blk (512,128)", block=512, tr=128))
    v.append(Spec("reread 2 rows/blk (256,128)", block=256, tr=128))
    v.append(Spec("reread 4 rows/blk (256,64)", block=256, tr=64))
    v.append(Spec("reread256 one-pass shift hints", block=256, stats="shift", hints=(EL, EF, EF)))
    v.append(Spec("warp/row reread (256,32)", block=256, tr=32))
    v.append(Spec("warp/row reread (128,32)", block=128, tr=32))
    v.append(Spec("warp/row one-pass shift", block=256, tr=32, stats="shift"))
    v.append(Spec("warp/row reread loop", block=256, tr=32, loop=True))
    v.append(Spec("warp/row evict hints", block=256, tr=32, hints=(EL, EL, EF)))
    return v


def occupancy(regs: int, block: int) -> int:
    """Resident blocks an SM on Hopper from registers and threads (shared memory is tiny here)."""
    warps = block // 32
    per_warp = -(-regs * 32 // 256) * 256
    return max(0, min((65536 // per_warp) // warps, 2048 // block, 32))


def reference(x, g, b):
    x = x.astype(np.float64)
    m = x.mean(-1, keepdims=True)
    d = x - m
    v = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(v + 1e-5) * g.astype(np.float64) + b.astype(np.float64)


def check(out, ref, xp):
    """(passes, max |out - ref| / max |ref|) with `ref` a float32 rounding of the float64 reference,
    on the device (`xp` cupy): rtol 1e-4, atol 1e-4 x max|ref|; a NaN (an unwritten, poisoned
    element) fails."""
    top = float(xp.abs(ref).max())
    diff = xp.abs(out - ref)
    ok = bool((diff <= 1e-4 * max(1.0, top) + 1e-4 * xp.abs(ref)).all())
    err = float(diff.max()) / top
    return ok, err


def ptx_counts(only: str) -> None:
    """Each variant's sm_90 PTX: vector loads and stores, barriers, shuffles, divisions."""
    pattern = re.compile(r"\b(ld\.global[.\w:]*v4\.f32|ld\.global[.\w:]*\.f32|st\.global[.\w]*|"
                         r"bar\.sync|shfl\.sync[.\w]*|div\.rn\.f32|\.f64)\b")
    for spec in variants():
        if only and not any(o in spec.name for o in only.split(";")):
            continue
        text = make_kernel(spec, ptx_only=True)
        counts = collections.Counter(pattern.findall(text))
        print(f"{spec.name:34s} " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--only", default="")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-autofuse", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--exact", action="store_true", help="--only names whole variant names")
    parser.add_argument("--autofuse-items", default="",
                        help="also autofuse with cuda_source.ROW_ITEMS[:ROW_THREADS_PER_SM] set, "
                             "e.g. 8,8:2048")
    parser.add_argument("--ptx", action="store_true", help="PTX instruction counts only (no GPU)")
    args = parser.parse_args()
    if args.ptx:
        return ptx_counts(args.only)

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    import cupy
    import gpu
    from workloads import layernorm, layernorm_torch

    R = args.rows
    rng = np.random.default_rng(7)
    host_x = rng.standard_normal((R, N), dtype=np.float32)
    host_g = rng.standard_normal(N, dtype=np.float32)
    host_b = rng.standard_normal(N, dtype=np.float32)
    ref = cupy.asarray(reference(host_x, host_g, host_b).astype(np.float32))
    RS = 1024                                     # rows of mean 100, std 1: the one-pass risk
    host_xs = (rng.standard_normal((RS, N), dtype=np.float32) + np.float32(100.0))
    ref_s = cupy.asarray(reference(host_xs, host_g, host_b).astype(np.float32))

    sync = lambda _: cupy.cuda.Device().synchronize()       # noqa: E731
    bandwidth = gpu.copy_bandwidth()
    floor_bytes = 2 * host_x.nbytes + host_g.nbytes + host_b.nbytes
    floor_ms = floor_bytes / bandwidth * 1000
    print(f"copy bandwidth {bandwidth / 1e12:.3f} TB/s, floor {floor_ms:.4f} ms "
          f"({floor_bytes / 1e6:.1f} MB)", flush=True)

    xc, gc, bc = cupy.asarray(host_x), cupy.asarray(host_g), cupy.asarray(host_b)
    oc = cupy.empty_like(xc)
    xsc, osc = cupy.asarray(host_xs), cupy.empty_like(cupy.asarray(host_xs))
    xd, gd, bd, od = (cuda.as_cuda_array(a.reshape(-1)) for a in (xc, gc, bc, oc))
    xsd, osd = cuda.as_cuda_array(xsc.reshape(-1)), cuda.as_cuda_array(osc.reshape(-1))
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT

    rows = []          # (name, callable, regs, local bytes, blocks/SM, grid, ok, err, err@100, note)
    if not args.no_autofuse:
        import autofuse
        fn = autofuse.jit(layernorm(np), backend="cuda")
        out = fn(xc, gc, bc)
        sync(None)
        ok, err = check(out, ref, cupy)
        _, err_s = check(fn(xsc, gc, bc), ref_s, cupy)
        kernel = fn.lower(xc, gc, bc).kernels[0]
        regs = kernel.launch.get("registers", -1)
        rows.append(["autofuse (jit, cuda)", lambda: fn(xc, gc, bc), regs,
                     kernel.launch.get("local_bytes", -1), occupancy(regs, kernel.launch["block"])
                     if regs > 0 else -1, kernel.launch["grid"][0], ok, err, err_s,
                     f"{kernel.strategy}, block {kernel.launch['block']}"])
        import autofuse.backends.cuda_source as source
        defaults = (source.ROW_ITEMS, source.ROW_THREADS_PER_SM)
        for item in [i for i in args.autofuse_items.split(",") if i]:
            items, _, per_sm = item.partition(":")
            source.ROW_ITEMS = int(items)
            source.ROW_THREADS_PER_SM = int(per_sm) if per_sm else defaults[1]
            fn_k = autofuse.jit(layernorm(np), backend="cuda")
            out = fn_k(xc, gc, bc)
            sync(None)
            ok, err = check(out, ref, cupy)
            _, err_s = check(fn_k(xsc, gc, bc), ref_s, cupy)
            kernel = fn_k.lower(xc, gc, bc).kernels[0]
            regs = kernel.launch.get("registers", -1)
            rows.append([f"autofuse ROW_ITEMS={item}", (lambda fn_k=fn_k: fn_k(xc, gc, bc)), regs,
                         kernel.launch.get("local_bytes", -1),
                         occupancy(regs, kernel.launch["block"]) if regs > 0 else -1,
                         kernel.launch["grid"][0], ok, err, err_s,
                         f"{kernel.strategy}, block {kernel.launch['block']}"])
            source.ROW_ITEMS, source.ROW_THREADS_PER_SM = defaults
    if not args.no_torch:
        import torch
        tx, tg, tb = (torch.from_dlpack(a) for a in (xc, gc, bc))
        txs = torch.from_dlpack(xsc)
        compiled = torch.compile(lambda x, g, b: layernorm_torch(torch, x, g, b))
        out = compiled(tx, tg, tb)
        torch.cuda.synchronize()
        ok, err = check(cupy.from_dlpack(out), ref, cupy)
        other = torch.compile(lambda x, g, b: layernorm_torch(torch, x, g, b))  # own graph
        _, err_s = check(cupy.from_dlpack(other(txs, tg, tb)), ref_s, cupy)
        rows.append(["torch.compile", lambda: compiled(tx, tg, tb), -1, -1, -1, -1, ok, err,
                     err_s, f"torch {torch.__version__}"])

    only = [s for s in args.only.split(";") if s]
    for spec in variants():
        if only and not any(o == spec.name if args.exact else o in spec.name for o in only):
            continue
        try:
            kern = make_kernel(spec)
            regs = kern.get_regs_per_thread()
            local = kern.get_local_mem_per_thread()
        except Exception as error:     # a variant that fails to build is reported, not hidden
            print(f"{spec.name}: build failed: {type(error).__name__}: {error}"[:300], flush=True)
            continue
        occ = occupancy(regs, spec.block)
        groups = R // spec.rows_per_block
        grid = min(groups, spec.waves * sms * occ) if spec.loop else groups
        launch = kern[grid, spec.block]
        oc.fill(np.nan)
        launch(xd, gd, bd, od, np.uint32(R))
        sync(None)
        ok, err = check(oc, ref, cupy)
        osc.fill(np.nan)
        grid_s = min(RS // spec.rows_per_block, grid)
        kern[grid_s, spec.block](xsd, gd, bd, osd, np.uint32(RS))
        sync(None)
        _, err_s = check(osc, ref_s, cupy)
        rows.append([spec.name, (lambda launch=launch: launch(xd, gd, bd, od, np.uint32(R))),
                     regs, local, occ, grid, ok, err, err_s, spec.note])
        print(f"built {spec.name}: regs {regs}, local {local}, {occ} blocks/SM, grid {grid}, "
              f"ok {ok}, err {err:.2e}, err@100 {err_s:.2e}", flush=True)

    # interleaved rounds: every entry once a round, the order rotated (and reversed every other
    # round) so that a slow drift of the clocks falls on all entries alike
    times = {r[0]: [] for r in rows}
    live = [r for r in rows if r[6]]
    for k in range(args.rounds):
        shift = (k * len(live)) // max(1, args.rounds)
        order = live[shift:] + live[:shift]
        for r in (order if k % 2 == 0 else order[::-1]):
            times[r[0]].append(gpu.time_calls(r[1], sync, calls=args.calls, repeats=5, warmup=3))
    tc = times.get("torch.compile") or [float("nan")] * args.rounds
    if os.environ.get("OUT"):
        import json
        with open(os.path.join(os.environ["OUT"], "layernorm_reread_times.json"), "w") as f:
            json.dump({"floor_ms": floor_ms, "times": times}, f, indent=1)
    print()
    print(f"{args.rounds} rounds of {args.calls} calls x 5 repeats; ms: median over rounds (min, max);"
          f" x tc: median over rounds of the ratio to torch.compile in the same round")
    print(f"{'variant':38s} {'ms':>7s} {'min':>7s} {'max':>7s} {'x floor':>7s} {'x tc':>6s} {'regs':>4s} "
          f"{'lmem':>4s} {'blk/SM':>6s} {'grid':>6s} {'ok':>3s} {'err':>8s} {'err@100':>8s}")
    for r in rows:
        name, _, regs, local, occ, grid, ok, err, err_s, note = r
        t = times[name] or [float("nan")]
        ms = float(np.median(t))
        ratio = float(np.median([a / b for a, b in zip(t, tc)]))
        print(f"{name:38s} {ms:7.4f} {min(t):7.4f} {max(t):7.4f} {ms / floor_ms:7.3f} {ratio:6.3f} "
              f"{regs:4d} {local:4d} {occ:6d} {grid:6d} {'yes' if ok else 'NO':>3s} {err:8.1e} "
              f"{err_s:8.1e}  {note}")


if __name__ == "__main__":
    main()
