"""Why x.T @ g float64, (524288, 64).T @ (524288, 10), runs 1.18x slower as a shape class than
specialized on an H200 (issue 33; the products sweep's one point outside 5%), as
rows_class_variants.py asks it of the rows kernels: the specialized and class two-stage kernels,
edits of their generated text and texts generated with other tunings, each compiled and linked as
autofuse links them (compile.py: launch bounds, the fall-back where ptxas spills), launched alone
from its cubin (cupy.RawModule) with the program's grid and block, its partials buffer and its
counter (a numba array: 7 parameters), timed by CUDA events in turns (tiles_bound_ab.alternating).
A line a variant: registers, local bytes, the bound linked with, whether it wrote the specialized
program's answer; then microseconds and the ratio to the specialized kernel as generated.

    python benchmarks/experiments/xtg_class_variants.py [--dtype float64] [--cubins DIR]

Variants of the class text (the first run, results/xtg_class_variants_h200.txt, had the kernel
compute its chunk from n0; it takes it as an argument since):
- "nch as a constant": the chunks the grid has written as the number (525);
- "selected merges", "counted last loop": the last block's loop over the partials with its
  loads unguarded (a clamped index, the merge kept where b < nch), or counted to nch;
- "steps N": generated with Tuning(class_run_steps=N);
- "bound N": linked with a bound of N blocks an SM (0: none).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)

from rows_class_variants import linked, loads  # noqa: E402
from tiles_bound_ab import alternating  # noqa: E402

ROWS, COLUMNS, OUTPUTS = 524288, 64, 10


def product(x, g):
    return x.T @ g


def kernel_of(f, x, g):
    kernels = f.lower(x, g).kernels
    assert len(kernels) == 1, [k.strategy for k in kernels]
    return kernels[0], kernels[0].ptx_provider.__self__


def launched(cupy, compiled, record, cubin_path, entry, x, g, want):
    """A call launching `cubin_path`'s `entry` as the program launches `record`; whether it wrote
    `want`."""
    source = compiled.source
    function = cupy.RawModule(path=cubin_path).get_function(entry)
    out = cupy.full_like(want, np.nan)
    from autofuse.backends.cuda.emit.two_stage_plan import chunking
    arguments = [x, g, out] + [np.int64(chunking(ROWS, s.most, s.least, s.height)[0])
                               if s.name == "chunk" else np.int64(ROWS) for s in source.sizes]
    keep = []
    for name, count, dtype in source.scratch:
        buffer = cupy.zeros(count, dtype)
        keep.append(buffer)
        if name == "counter":    # a numba array: meminfo, parent, nitems, itemsize, data, shape, strides
            item = np.dtype(dtype).itemsize
            arguments += [np.uint64(0), np.uint64(0), np.int64(count), np.int64(item), buffer,
                          np.int64(count), np.int64(item)]
        else:
            arguments.append(buffer)
    grid, block = record.launch["grid"], record.launch["block"]

    def call():
        function(grid, (block,), tuple(arguments))
    call()
    right = bool(cupy.allclose(out, want, rtol=1e-9, atol=1e-9))
    return call, right, keep


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--cubins", default=None, help="write every variant's cubin here")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp(prefix="xtg-variants-"))
    folder = args.cubins or tempfile.mkdtemp(prefix="xtg-variant-cubins-")
    import cupy
    import autofuse
    from autofuse.backends.cuda.runtime import driver
    from autofuse.backends.cuda.tuning import Tuning
    rng = np.random.default_rng(0)
    x = cupy.asarray(rng.standard_normal((ROWS, COLUMNS)).astype(args.dtype))
    g = cupy.asarray(rng.standard_normal((ROWS, OUTPUTS)).astype(args.dtype))
    special = autofuse.jit(product, dynamic=False)
    want = special(x, g)
    device = driver.ensure_context()
    programs = {"specialized": (special, {})}
    for steps in (1, 2, 4, 8):
        shaped = autofuse.jit(product, tuning=Tuning(class_run_steps=steps))
        shaped(x[:-1], g[:-1])              # the second size: a class
        assert bool(cupy.allclose(shaped(x, g), want)), "the class reads wrong"
        programs[f"class steps {steps}"] = (shaped, {})
    texts = {}
    for label, (f, _) in programs.items():
        record, compiled = kernel_of(f, x, g)
        print(f"{label:18s} {record.strategy} {record.launch}", flush=True)
        texts[label] = (record, compiled, compiled.text, None)
        if label == "class steps 4":
            text = compiled.text
            texts["class nch as a constant"] = (record, compiled, re.sub(
                r"nch = [^\n]*", "nch = ix(525)", text, count=1), None)
            merge = re.compile(r"\n(\s*)if b < nch:\n(\s*)for j in range\((\d+)\):\n(\s*)"
                               r"(acc\w*)\[j\] = \5\[j\] \+ (part0\[[^\n]*)\bb \* ([^\n]*)\n")
            assert merge.search(text), "the last block's loop is not as expected"
            texts["class selected merges"] = (record, compiled, merge.sub(
                lambda m: f"\n{m[1]}bc = b if b < nch else ix(0)\n{m[1]}for j in range({m[3]}):\n"
                          f"{m[4]}v = {m[6]}bc * {m[7]}\n{m[4]}if b < nch:\n"
                          f"{m[4]}    {m[5]}[j] = {m[5]}[j] + v\n", text), None)
            counted = re.sub(r"for u in range\(\d+\):", "for u in range((nch - h + 7) // 8):", text)
            texts["class counted last loop"] = (record, compiled,
                                                counted.replace("if b < nch:", "if True:"), None)
            for blocks in (3,):
                texts[f"class bound {blocks}"] = (record, compiled, text, blocks)
        if label == "specialized":
            for blocks in (3,):
                texts[f"specialized bound {blocks}"] = (record, compiled, compiled.text, blocks)
    calls = {}
    for n, (label, (record, compiled, text, forced)) in enumerate(texts.items()):
        cubin, entry, bound = linked(compiled, text, device, forced)
        stem = re.sub(r"\W+", "_", label)
        path = os.path.join(folder, f"xtg_{n:02d}_{stem}.cubin")
        with open(path, "wb") as out:
            out.write(cubin)
        facts = driver.cubin_resources(cubin, entry)
        call, right, _ = launched(cupy, compiled, record, path, entry, x, g, want)
        calls[label] = call
        count, found, _ = loads(path)
        print(f"  {label:26s} registers {facts['registers']:3d} local {facts['local_bytes']:3d} "
              f"bound {bound or 0:2d} right {right} sass {count} loads {len(found)}", flush=True)
    times = alternating(calls, args.rounds, 20)
    base = times["specialized"]
    for label, us in times.items():
        print(f"{label:26s} {us:8.2f} us {us / base:6.3f}", flush=True)


if __name__ == "__main__":
    main()
