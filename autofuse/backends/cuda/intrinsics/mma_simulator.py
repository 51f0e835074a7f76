"""The tensor-core intrinsics (mma.py) as Python for numba's CUDA simulator, so the simulator
tests the GEMM kernels' fragment layouts, staging and epilogues.

`mma.sync` is one warp's operation: each lane gives its registers and gets its share of D. The
simulator runs a block's threads as Python threads, so a lane posts its registers, waits at a
block-wide barrier (every thread of a tensor-core kernel's block calls the same mma sequence),
reads its warp's 32 postings, computes its D registers from them, and waits again before the
postings can be overwritten. TF32 and float16 operands are 32-bit words, as on the device.
`ldmatrix` posts each lane's row the same way; `cp.async` copies at once (its waits are no-ops).
"""
from __future__ import annotations

import threading

import numpy as np

from .mma_shapes import SHAPES


def _float(word) -> np.float32:
    return np.array([word], np.uint32).view(np.float32)[0]


def _halves(word) -> tuple:
    low, high = np.array([word], np.uint32).view(np.float16)
    return np.float32(low), np.float32(high)


def _warp_registers(mine: tuple) -> list:
    """Every lane's registers of this thread's warp, by lane."""
    thread = threading.current_thread()
    postings = thread._manager.__dict__.setdefault("autofuse_mma", {})
    postings[thread.thread_id] = mine
    thread.syncthreads()
    warp = thread.thread_id - thread.thread_id % 32
    registers = [postings[warp + lane] for lane in range(32)]
    thread.syncthreads()
    return registers


def _mma(shape):
    def value(word, low: bool):
        if shape.word == "f64":
            return np.float64(word)
        if shape.pack == 2:
            return _halves(word)[0 if low else 1]
        return _float(word)

    def run(a, b, c):
        lanes = _warp_registers((tuple(a), tuple(b)))
        wide = np.float64 if shape.accumulator == "f64" else np.float32
        left = np.zeros((shape.m, shape.k), np.float64)
        right = np.zeros((shape.k, shape.n), np.float64)
        for lane, (fa, fb) in enumerate(lanes):
            g, t = lane // 4, lane % 4
            for word, (dr, dk) in zip(fa, shape.a):
                for p in range(shape.pack):
                    left[g + dr, (t + dk) * shape.pack + p] = value(word, p == 0)
            for word, dk in zip(fb, shape.b):
                for p in range(shape.pack):
                    right[(t + dk) * shape.pack + p, g] = value(word, p == 0)
        lane = threading.current_thread().thread_id % 32
        g, t = lane // 4, lane % 4
        product = left @ right
        return tuple(wide(c[i] + product[g + dr, 2 * t + dc]) for i, (dr, dc) in enumerate(shape.c))
    run.__name__ = shape.name
    return run


def _tf32(x) -> np.uint32:
    """x rounded to TF32 (10 fraction bits) to nearest, ties away from zero (cvt.rna)."""
    bits = int(np.array([x], np.float32).view(np.uint32)[0])
    if (bits & 0x7F800000) != 0x7F800000:        # not inf or NaN
        bits = (bits + 0x1000) & 0xFFFFE000
    return np.uint32(bits)


def _ldmatrix(trans: bool):
    def run(array, word):
        rows = _warp_registers(int(word))
        flat = array.reshape(-1)
        lane = threading.current_thread().thread_id % 32
        g, t = lane // 4, lane % 4
        out = []
        for q in range(4):
            if not trans:
                out.append(np.uint32(flat[rows[8 * q + g] + t]))
                continue
            halves = [flat[rows[8 * q + 2 * t + p]:rows[8 * q + 2 * t + p] + 4].view(np.uint16)[g]
                      for p in range(2)]
            out.append(np.array(halves, np.uint16).view(np.uint32)[0])
        return tuple(out)
    return run


def _cp_async16(array, word, pointer, element, nbytes):
    assert word % 4 == 0 and 0 <= nbytes <= 16, (word, nbytes)
    count = int(nbytes) // pointer.itemsize
    data = np.zeros(16, np.uint8)
    data[:count * pointer.itemsize] = np.ascontiguousarray(
        pointer[element:element + count]).view(np.uint8)
    array.reshape(-1)[word:word + 4] = data.view(np.uint32)


def functions() -> dict:
    made = {name: _mma(shape) for name, shape in SHAPES.items()}
    made.update(ldmatrix4=_ldmatrix(False), ldmatrix4t=_ldmatrix(True), cp_async16=_cp_async16,
                cp_async_commit=lambda: None)
    made.update({f"cp_async_wait{n}": (lambda: None) for n in range(7)})

    def pack_halves(low, high):
        return np.array([low, high], np.float16).view(np.uint32)[0]

    def tf32(x):
        return _tf32(x)

    def tf32_split(x):
        high = _tf32(x)
        return high, _tf32(np.float32(x) - _float(high))
    made.update(pack_halves=pack_halves, tf32=tf32, tf32_split=tf32_split)
    return made
