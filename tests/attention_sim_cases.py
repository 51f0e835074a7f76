"""Run under NUMBA_ENABLE_CUDASIM=1 by test_cuda_attention.py: the flash attention kernel
(emit/attention.py) executed by numba's simulator on attention_cases.py's programs at small odd
sizes, against NumPy in float64, with the simulator's small tiles (several tiles of rows and of
keys a case) and, for a few cases, the GPU's tiles. Prints "name: ok" or "name: WRONG ...".

    NUMBA_ENABLE_CUDASIM=1 python tests/attention_sim_cases.py [name-substring] [shard i/n]
"""
import os
from contextlib import nullcontext
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import autofuse  # noqa: E402
import autofuse.fusion.legality as legality  # noqa: E402
from autofuse.backends.cuda.tuning import DEFAULT  # noqa: E402
from attention_cases import CASES, HALF_CASES, arrays, causal_tril, close, heads_causal_residual, \
    mask_argument, plain, qkv, reference, two_causal_offsets, with_mask, mask_returned_too, \
    bias_read_elsewhere, output_reduced, with_bias  # noqa: E402
from simulated import in_shard  # noqa: E402

# the GPU's tiles (64 rows, 32 keys, 4 x 4 scores a thread, 128 threads) under the simulator
GPU_TILES = DEFAULT.replace(attention_sim=(DEFAULT.attention_rows, DEFAULT.attention_keys,
                                           DEFAULT.attention_rx, DEFAULT.attention_lanes))

# the tensor-core kernel with the GPU's tiles (4 warps, 64 keys) under the simulator
GPU_HALF_TILES = DEFAULT.replace(attention_mma_sim=DEFAULT.attention_mma_tile)

RUNS = [(name, fn, args, DEFAULT) for name, fn, args in CASES + HALF_CASES] + [
    ("gpu_tiles_head_64", plain, qkv((1,), 70, 45, 64), GPU_TILES),
    # (head 16: the kernel of head 64 but for fewer unrolled fragments; shard 0, away from
    # half_head_128; at head 32 it took 70 s of the simulator, the suite's slowest case, at 16
    # 37 s; the GPU runs these tiles at every head: test_cuda_gpu_attention.py)
    ("half_gpu_tiles_causal", causal_tril, qkv((1,), 70, 70, 16, dtype=np.float16),
     GPU_HALF_TILES),
    ("gpu_tiles_causal_residual", heads_causal_residual, qkv((1, 1), 67, 67, 32), GPU_TILES),
    ("gpu_tiles_unaligned", lambda q, k, v: plain(q[:, :, 1:], k[:, :, 1:], v[:, :, 1:]),
     arrays((1, 9, 65), (1, 40, 65), (1, 40, 65)), GPU_TILES),
    # two attentions of one product each (never merged), causal at two offsets (no kernel
    # shared between them: each skips its own tiles)
    ("two_causal_offsets", two_causal_offsets, qkv((1,), 20, 20, 16), DEFAULT),
    # values of attention's also read by other kernels (with_ runs: one kernel is attention's)
    ("with_mask_returned_too", mask_returned_too, qkv((2,), 16, 16, 16), DEFAULT),
    ("with_bias_read_elsewhere", bias_read_elsewhere, with_bias(*qkv((2,), 10, 12, 16)), DEFAULT),
    ("with_output_reduced", output_reduced, qkv((2,), 10, 12, 16), DEFAULT),
    # the kernel reading stored scores (the product kept out of it: apart())
    ("scores_apart_plain", plain, qkv((2,), 19, 13, 16), DEFAULT),
    ("scores_apart_causal", causal_tril, qkv((1,), 21, 21, 16), DEFAULT),
    ("scores_apart_mask", mask_argument, with_mask(*qkv((2,), 13, 15, 16)), DEFAULT),
]


class apart:
    """The scores' product refused by the attention group (as where the partitioner keeps it
    out), so that the kernel reads the stored scores: a path no program here takes otherwise."""

    def __enter__(self):
        self.rule = legality.attention_reason
        legality.attention_reason = lambda p, g, users, is_output: (
            "kept apart" if p.op == "matmul" else self.rule(p, g, users, is_output))

    def __exit__(self, *exc):
        legality.attention_reason = self.rule


def main() -> None:
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    shard = sys.argv[2] if len(sys.argv) > 2 else ""
    for index, (name, fn, args, tuning) in enumerate(RUNS):
        if only not in name or not in_shard(index, shard):
            continue
        jitted = autofuse.jit(fn, backend="cuda", tuning=tuning)
        scores_apart = name.startswith("scores_apart")
        with np.errstate(all="ignore"), (apart() if scores_apart else nullcontext()):
            got = jitted(*args)
            native = fn(*args)
            strategies = [k.strategy for k in jitted.lower(*args).kernels]
        want = reference(fn, args)
        flash = strategies[-1].find("scores read") > 0 if scores_apart else \
            any(s.startswith("flash attention") for s in strategies) if name.startswith("with_") \
            else all(s.startswith("flash attention") for s in strategies)
        if name.startswith("half") or name == "float16":     # (the tensor-core kernel)
            flash = flash and "on tensor cores" in strategies[-1]
        got, want, native = (x if isinstance(x, tuple) else (x,) for x in (got, want, native))
        right = all(close(g, w, args) and g.dtype == n.dtype
                    for g, w, n in zip(got, want, native))
        words = [] if flash else [f"strategies {strategies}"]
        if not right:
            error = np.nanmax(np.abs(np.asarray(got[0], np.float64) - want[0])) \
                if got[0].shape == want[0].shape else f"shape {got[0].shape}"
            words.append(f"error {error}, dtype {got[0].dtype} (NumPy {native[0].dtype})")
        print(f"{name}: {'ok' if flash and right else 'WRONG ' + '; '.join(words)}", flush=True)


if __name__ == "__main__":
    from simulated import prepare_simulator     # (simulated.py: switch interval, shared arrays)
    prepare_simulator()
    main()
