"""Tensor cores from numba.cuda through llvmlite inline PTX: the first question of issue 35.

numba.cuda has no API for Hopper's tensor cores. This probe wraps `mma.sync` as numba intrinsics
(ir.InlineAsm, as autofuse's intrinsics/ already do for vector loads) and checks on the device:
1. correctness: one warp's tile product against NumPy, with each lane's fragment laid out as
   PTX's ISA manual gives it ("Matrix Fragments for mma.m8n8k4 with .f64", "... m16n8k16 with
   floating point type", "... m16n8k8 with .tf32"): float64 (DMMA m8n8k4), float16 with float32
   accumulation (m16n8k16), TF32 (m16n8k8, operands rounded by cvt.rna.tf32.f32);
2. throughput: every SM busy with independent MMA chains in registers (no memory traffic), in
   TFLOP/s, beside the CUDA cores' float32 and float64 FMA rate measured the same way.
If the rates come near the tensor cores' (H100 SXM: float64 67 TFLOP/s, float16 dense ~990 with
wgmma; mma.sync is known to reach well under wgmma's rate on Hopper), inline PTX from numba is
a viable path; else the issue's other route (CUDA C++ through NVRTC) is the one to measure.

    python benchmarks/experiments/mma_probe.py
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np
from numba import cuda, types
from numba.core.extending import intrinsic
from llvmlite import ir


def _asm(builder, result_types, argument_types, text, constraints, args):
    struct = ir.LiteralStructType(result_types)
    fn = ir.FunctionType(struct, argument_types)
    call = builder.call(ir.InlineAsm(fn, text, constraints, side_effect=True), args)
    return [builder.extract_value(call, k) for k in range(len(result_types))]


F64, F32, U32 = ir.DoubleType(), ir.FloatType(), ir.IntType(32)


@intrinsic
def mma_f64(typingctx, a, b, c0, c1):
    """D (2 values a lane) = A (1) x B (1) + C (2): mma.m8n8k4 row.col, float64."""
    sig = types.UniTuple(types.float64, 2)(types.float64, types.float64, types.float64,
                                           types.float64)

    def codegen(context, builder, signature, args):
        d = _asm(builder, [F64, F64], [F64] * 4,
                 "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {$0, $1}, {$2}, {$3}, {$4, $5};",
                 "=d,=d,d,d,d,d", args)
        return context.make_tuple(builder, signature.return_type, d)
    return sig, codegen


def _mma16(shape: str, kind: str, a_words: int):
    text = (f"mma.sync.aligned.{shape}.row.col.f32.{kind}.{kind}.f32 {{$0, $1, $2, $3}}, "
            + "{" + ", ".join(f"${4 + i}" for i in range(a_words)) + "}, "
            + "{" + ", ".join(f"${4 + a_words + i}" for i in range(2)) + "}, "
            + "{" + ", ".join(f"${6 + a_words + i}" for i in range(4)) + "};")
    constraints = ",".join(["=f"] * 4 + ["r"] * (a_words + 2) + ["f"] * 4)

    @intrinsic
    def mma(typingctx, a0, a1, a2, a3, b0, b1, c0, c1, c2, c3):
        sig = types.UniTuple(types.float32, 4)(*([types.uint32] * 6 + [types.float32] * 4))

        def codegen(context, builder, signature, args):
            d = _asm(builder, [F32] * 4, [U32] * 6 + [F32] * 4, text, constraints, args)
            return context.make_tuple(builder, signature.return_type, d)
        return sig, codegen
    return mma


mma_f16 = _mma16("m16n8k16", "f16", 4)
mma_tf32 = _mma16("m16n8k8", "tf32", 4)


# -- fragments (host side): which element of A, B, C each lane's registers hold ---------------------
def f64_fragments(a, b):
    lane = np.arange(32)
    group, tid = lane >> 2, lane % 4
    fa = a[group, tid]                     # A 8x4, row-major: a lane one element
    fb = b[tid, group]                     # B 4x8: row k = tid, column = group
    return fa, fb


def f64_result(d):
    """d[lane, 2] -> the 8x8 result."""
    out = np.zeros((8, 8))
    for lane in range(32):
        for i in range(2):
            out[lane >> 2, (lane % 4) * 2 + i] = d[lane, i]
    return out


def half_fragments(a, b, k_half: int):
    """A 16 x 2*k_half, B 2*k_half x 8 (float16 m16n8k16: k_half 8) as 32-bit words a lane:
    A four words (a0..a3 pairs), B two. TF32 (m16n8k8) words hold one element each: see tf32."""
    words_a = np.zeros((32, 4), np.uint32)
    words_b = np.zeros((32, 2), np.uint32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        pairs_a = [(g, t * 2), (g + 8, t * 2), (g, t * 2 + 8), (g + 8, t * 2 + 8)]
        for w, (r, c) in enumerate(pairs_a):
            words_a[lane, w] = np.array([a[r, c], a[r, c + 1]], np.float16).view(np.uint32)[0]
        pairs_b = [(t * 2, g), (t * 2 + 8, g)]
        for w, (r, c) in enumerate(pairs_b):
            words_b[lane, w] = np.array([b[r, c], b[r + 1, c]], np.float16).view(np.uint32)[0]
    return words_a, words_b


def tf32_fragments(a, b):
    """A 16x8, B 8x8 (m16n8k8 .tf32): A four words (rows g, g+8; columns t, t+4), B two (rows t,
    t+4; column g), each a float32 bit pattern (the instruction reads its TF32 bits)."""
    words_a = np.zeros((32, 4), np.uint32)
    words_b = np.zeros((32, 2), np.uint32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for w, (r, c) in enumerate([(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]):
            words_a[lane, w] = np.float32(a[r, c]).view(np.uint32)
        for w, (r, c) in enumerate([(t, g), (t + 4, g)]):
            words_b[lane, w] = np.float32(b[r, c]).view(np.uint32)
    return words_a, words_b


def c16_result(d):
    out = np.zeros((16, 8), np.float32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i, (r, c) in enumerate([(g, t * 2), (g, t * 2 + 1), (g + 8, t * 2), (g + 8, t * 2 + 1)]):
            out[r, c] = d[lane, i]
    return out


# -- kernels --------------------------------------------------------------------------------------
@cuda.jit
def tile_f64(fa, fb, out):
    lane = cuda.threadIdx.x
    d = mma_f64(fa[lane], fb[lane], 0.0, 0.0)
    out[lane, 0] = d[0]
    out[lane, 1] = d[1]


def _tile16(mma):
    @cuda.jit
    def tile(wa, wb, out):
        lane = cuda.threadIdx.x
        z = np.float32(0)
        d = mma(wa[lane, 0], wa[lane, 1], wa[lane, 2], wa[lane, 3], wb[lane, 0], wb[lane, 1],
                z, z, z, z)
        for i in range(4):
            out[lane, i] = d[i]
    return tile


tile_f16, tile_tf32 = _tile16(mma_f16), _tile16(mma_tf32)

CHAINS = 4


@cuda.jit
def rate_f64(steps, seed, out):
    a = seed[0] + cuda.threadIdx.x * 1e-9
    x0 = y0 = x1 = y1 = x2 = y2 = x3 = y3 = 0.0
    for _ in range(steps):
        x0, y0 = mma_f64(a, a, x0, y0)
        x1, y1 = mma_f64(a, a, x1, y1)
        x2, y2 = mma_f64(a, a, x2, y2)
        x3, y3 = mma_f64(a, a, x3, y3)
    out[cuda.grid(1)] = x0 + y0 + x1 + y1 + x2 + y2 + x3 + y3


def _rate16(mma):
    @cuda.jit
    def rate(steps, seed, out):
        w = seed[0] + np.uint32(cuda.threadIdx.x)
        p0 = p1 = p2 = p3 = q0 = q1 = q2 = q3 = np.float32(0)
        r0 = r1 = r2 = r3 = s0 = s1 = s2 = s3 = np.float32(0)
        for _ in range(steps):
            p0, p1, p2, p3 = mma(w, w, w, w, w, w, p0, p1, p2, p3)
            q0, q1, q2, q3 = mma(w, w, w, w, w, w, q0, q1, q2, q3)
            r0, r1, r2, r3 = mma(w, w, w, w, w, w, r0, r1, r2, r3)
            s0, s1, s2, s3 = mma(w, w, w, w, w, w, s0, s1, s2, s3)
        out[cuda.grid(1)] = p0 + p1 + p2 + p3 + q0 + q1 + q2 + q3 + r0 + r1 + r2 + r3 + s0 + s1 + s2 + s3
    return rate


rate_f16, rate_tf32 = _rate16(mma_f16), _rate16(mma_tf32)


@cuda.jit
def rate_fma(steps, seed, out):
    a = seed[0]
    x0 = x1 = x2 = x3 = x4 = x5 = x6 = x7 = a - a
    b = a * a
    for _ in range(steps):
        x0 = x0 * a + b
        x1 = x1 * a + b
        x2 = x2 * a + b
        x3 = x3 * a + b
        x4 = x4 * a + b
        x5 = x5 * a + b
        x6 = x6 * a + b
        x7 = x7 * a + b
    out[cuda.grid(1)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7


def timed(kernel, flops_per_step, seed, steps=4096, threads=256, blocks_per_sm=4):
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    blocks = sms * blocks_per_sm
    out = cuda.device_array(blocks * threads, np.float64 if seed.dtype == np.float64 else np.float32)
    seed_d = cuda.to_device(seed)
    kernel[blocks, threads](8, seed_d, out)
    cuda.synchronize()
    best = math.inf
    for _ in range(5):
        start, stop = cuda.event(), cuda.event()
        start.record()
        kernel[blocks, threads](steps, seed_d, out)
        stop.record()
        stop.synchronize()
        best = min(best, cuda.event_elapsed_time(start, stop) / 1000)
    warps = blocks * threads // 32
    return flops_per_step * steps * warps / best / 1e12


def main():
    rng = np.random.default_rng(0)
    report = {"device": cuda.get_current_device().name.decode()
              if isinstance(cuda.get_current_device().name, bytes) else cuda.get_current_device().name}
    a, b = rng.standard_normal((8, 4)), rng.standard_normal((4, 8))
    out = cuda.device_array((32, 2), np.float64)
    tile_f64[1, 32](*[cuda.to_device(x) for x in f64_fragments(a, b)], out)
    report["f64 max error"] = float(np.abs(f64_result(out.copy_to_host()) - a @ b).max())
    a16 = rng.standard_normal((16, 16)).astype(np.float16)
    b16 = rng.standard_normal((16, 8)).astype(np.float16)
    out = cuda.device_array((32, 4), np.float32)
    tile_f16[1, 32](*[cuda.to_device(x) for x in half_fragments(a16, b16, 8)], out)
    want = a16.astype(np.float32) @ b16.astype(np.float32)
    report["f16 max error"] = float(np.abs(c16_result(out.copy_to_host()) - want).max())
    at, bt = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
    tile_tf32[1, 32](*[cuda.to_device(x) for x in tf32_fragments(at, bt)], out)
    report["tf32 max relative error"] = float(np.abs(c16_result(out.copy_to_host()) - at @ bt).max()
                                              / np.abs(at @ bt).max())
    chains = CHAINS
    report["TFLOP/s mma f64 m8n8k4"] = timed(rate_f64, 2 * 8 * 8 * 4 * chains, np.array([1.0]))
    report["TFLOP/s mma f16 m16n8k16"] = timed(rate_f16, 2 * 16 * 8 * 16 * chains,
                                               np.array([0x3C003C00], np.uint32))
    report["TFLOP/s mma tf32 m16n8k8"] = timed(rate_tf32, 2 * 16 * 8 * 8 * chains,
                                               np.array([0x3F800000], np.uint32))
    for dtype in (np.float32, np.float64):
        report[f"TFLOP/s FMA {np.dtype(dtype).name}"] = timed(rate_fma, 2 * 8 * 32,
                                                              np.array([0.999], dtype))
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
