"""Why rows and row-tile class kernels run slower than their specialized twins on an H200
(issue 33: softmax rows float16 1.14, rmsnorm(-1) 8192x1000 1.145, softmax rows of 64-256
1.07-1.16): each case's specialized and class kernels, and edits of their generated text, each
compiled and linked as autofuse links (compile.py: the same launch bounds, the same fall-back where
ptxas spills), then launched alone from its cubin (cupy.RawModule) with the program's grid, block
and arrays and timed by CUDA events, the variants taking turns (tiles_bound_ab.alternating).
Printed a line a variant: registers, local bytes, the bound it was linked with, microseconds, the
instruction indices of its global loads in the SASS (cuobjdump, where the machine has it), and
whether it wrote the specialized program's answer.

    python benchmarks/experiments/rows_class_variants.py [--sass DIR] [--case NAME ...]

The edits (each applies only where its pattern is in the text; a variant that matches nothing is
skipped):
- "no row loop": `while row < N:` -> `if row < N:` (a block a row: valid where the grid has a
  block for every row, as at these sizes);
- "no tile loop": the same for the row tiles' `while tile ...:`;
- "unguarded stores": a row tile's `if o < n0:` store guard taken away (valid where the rows are
  a multiple of the tile, as here);
- "no clamp": a row tile's `oc = o if o < n0 else ...` clamp taken away (the same).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
sys.path.insert(0, here)

from tiles_bound_ab import alternating  # noqa: E402


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rmsnorm(x):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)


CASES = {
    "softmax f16 16384x4096": (softmax, (16384, 4096), np.float16),
    "rmsnorm f32 8192x1000": (rmsnorm, (8192, 1000), np.float32),
    "softmax f32 65536x128": (softmax, (65536, 128), np.float32),
    "softmax f32 32768x256": (softmax, (32768, 256), np.float32),
    "softmax f32 16384x4096": (softmax, (16384, 4096), np.float32),
    "softmax f32 131072x64": (softmax, (131072, 64), np.float32),
    "sum f32 335544x100": (lambda x: x.sum(-1), (335544, 100), np.float32),
    "softmax f32 335544x100": (softmax, (335544, 100), np.float32),
}

EDITS = {
    "counted row loop": (r"while row < ([^\n]*):",
                         r"for _ in range(ix((\1 + cuda.gridDim.x - 1 - row) // cuda.gridDim.x)):"),
    "row loop of 17 at most": (r"while (row < [^\n]*):\n(\s*)",
                               r"for _ in range(17):\n\2if not (\1):\n\2    break\n\2"),
    "no row loop": (r"while (row < [^\n]*):", r"if \1:"),
    "no tile loop": (r"while (tile[^\n]*):", r"if \1:"),
    "unguarded stores": (r"\n(\s*)if o < n0:\n", "\n\\1if True:\n"),
    "no clamp": (r"oc = o if o < n0 else [^\n]*", "oc = o"),
}


def vector_major(text: str) -> str:
    """A row's held items reduced across its vectors first (item j of the thread's 32: lane
    j // 4 of vector j % 4), so the first combines need every vector's load: for a thread of 4
    vectors of 8 (the float16 rows kernel) only; the text unchanged otherwise."""
    loop = re.compile(r"for j in range\(32\):\n(\s*)col = ix\(\(t \+ \(j // 8\) \* 128\) \* 8 \+ j % 8\)")
    if not loop.search(text):
        return text
    vectors, marker, elements = text.partition("else:    # a base address not 16-byte aligned")
    vectors = loop.sub(lambda m: f"for j in range(32):\n{m[1]}jj = (j % 4) * 8 + j // 4\n"
                                 f"{m[1]}col = ix((t + (jj // 8) * 128) * 8 + jj % 8)", vectors)
    return re.sub(r"\b(held_a0|kept\d+)\[j\]", r"\1[jj]", vectors) + marker + elements


def compiled_kernel(f, x):
    """The program's one kernel as compile.CompiledKernel (its text and KernelSource)."""
    kernels = f.lower(x).kernels
    assert len(kernels) == 1, [k.strategy for k in kernels]
    return kernels[0], kernels[0].ptx_provider.__self__


def linked(kernel, text: str, device: dict, forced=None) -> tuple:
    """(cubin bytes, entry, bound) for `text` compiled for `kernel`'s signature, linked as
    CompiledKernel.load links (launch bounds, and the fall-back where they make ptxas spill), or
    with a bound of `forced` blocks an SM (0: none)."""
    from autofuse.backends.cuda import compile as cc
    source = kernel.source
    cap = tuple(device["cc"])
    arch = f"sm_{cap[0]}{cap[1]}"
    ptx, entry = cc._compile_ptx(source, text, cap)
    ptx = cc.ptx_for(ptx, cap)
    blocks = source.min_blocks
    if forced is not None:
        bare = re.sub(r"^[ \t]*\.(maxntid|minnctapersm)[^\n]*\n", "", ptx, flags=re.MULTILINE)
        bounded = cc._ENTRY_BODY.sub(f")\n.maxntid {source.block}, 1, 1\n.minnctapersm {forced}\n{{",
                                     bare, count=1) if forced else bare
        return cc.link(bounded, arch), entry, forced
    if blocks and source.bound_if_needed:
        cubin, blocks = cc._least_bound(ptx, arch, entry, blocks, source.block,
                                        source.spill_bytes, device.get("registers_per_sm", 65536))
    elif blocks:
        cubin, blocks = cc._unless_spilling(cc.link(ptx, arch), ptx, arch, entry, blocks,
                                            source.spill_bytes)
    else:
        cubin = cc.link(ptx, arch)
    return cubin, entry, blocks


def loads(cubin_path: str) -> tuple:
    """(instruction count, indices of the global loads) in the cubin's SASS, or (0, ()) without
    cuobjdump; and the SASS text."""
    tool = "/usr/local/cuda/bin/cuobjdump"
    if not os.path.exists(tool):
        return 0, (), ""
    sass = subprocess.run([tool, "-sass", cubin_path], capture_output=True, text=True).stdout
    instructions = [line for line in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", line)]
    found = tuple(i for i, line in enumerate(instructions) if "LDG" in line)
    return len(instructions), found, sass


def run_case(name: str, sass_dir, folder: str) -> None:
    import cupy
    import autofuse
    from autofuse.backends.cuda.runtime import driver
    fn, shape, dtype = CASES[name]
    rng = np.random.default_rng(0)
    host = rng.standard_normal(shape).astype(dtype)
    x = cupy.asarray(host)
    special = autofuse.jit(fn, dynamic=False)
    shaped = autofuse.jit(fn)
    shaped(cupy.asarray(host[:-1]))           # the second size: a class
    want = special(x)
    shaped(x)
    device = driver.ensure_context()
    launches = {}
    for label, f in (("specialized", special), ("class", shaped)):
        record, kernel = compiled_kernel(f, x)
        variants = {"as generated": kernel.text}
        forced = {}
        for edit, (pattern, replacement) in EDITS.items():
            text, count = re.subn(pattern, replacement, kernel.text)
            if count:
                variants[edit] = text
        if vector_major(kernel.text) != kernel.text:
            variants["vector-major items"] = vector_major(kernel.text)
        if len(variants) > 2 and "tile" in kernel.text:
            every = kernel.text
            for pattern, replacement in EDITS.values():
                every = re.sub(pattern, replacement, every)
            variants["every edit"] = every
        if label == "class":
            # the row count capped where row x row length stays a 32-bit index (the class runs
            # only below INDEX_LIMIT): ptxas then knows the range the specialized kernel's
            # constant gives it
            limit = 2 ** 32 // int(np.prod(shape[1:]))
            variants["capped size"] = re.sub(r"(while [^\n]*)ix\(n0\):", rf"\1min(ix(n0), ix({limit})):",
                                             kernel.text)
            for blocks in (8, 6):
                variants[f"bound {blocks}"] = kernel.text
                forced[f"bound {blocks}"] = blocks
        if label == "class" and "n0" in kernel.text:
            variants["size as a constant"] = re.sub(r"\bix\(n0\)|\bn0\b(?!,|\))", str(shape[0]),
                                                   kernel.text)
        for variant, text in variants.items():
            cubin, entry, bound = linked(kernel, text, device, forced.get(variant))
            path = os.path.join(folder, f"{name} {len(launches)}.cubin".replace(" ", "_"))
            with open(path, "wb") as out:
                out.write(cubin)
            function = cupy.RawModule(path=path).get_function(entry)
            out = cupy.full_like(want, np.nan)
            arguments = (x, out) + ((np.int64(shape[0]),) if kernel.source.sizes else ())
            grid, block = record.launch["grid"], record.launch["block"]
            function(grid, (block,), arguments)
            right = bool(cupy.allclose(out, want, rtol=1e-2, atol=1e-3, equal_nan=False))
            facts = driver.cubin_resources(cubin, entry)
            count, found, text_sass = loads(path)
            if sass_dir and text_sass:
                stem = re.sub(r"\W+", "_", f"{name} {label} {variant}")
                with open(os.path.join(sass_dir, stem + ".sass"), "w") as dump:
                    dump.write(text_sass)
            key = f"{label:11s} {variant:18s}"
            launches[key] = (lambda function=function, grid=grid, block=block,
                             arguments=arguments: function(grid, (block,), arguments))
            print(f"  {key} registers {facts['registers']:3d} local {facts['local_bytes']:3d} "
                  f"bound {bound:2d} right {right} sass {count} loads at {list(found)[:12]}",
                  flush=True)
    times = alternating(launches, 5, 20)
    base = times[f"{'specialized':11s} {'as generated':18s}"]
    for key, us in times.items():
        print(f"{name:24s} {key} {us:8.2f} us {us / base:6.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sass", default=None)
    parser.add_argument("--case", nargs="*", default=list(CASES))
    args = parser.parse_args()
    os.environ.setdefault("AUTOFUSE_CACHE_DIR", tempfile.mkdtemp(prefix="rows-variants-"))
    folder = tempfile.mkdtemp(prefix="rows-variant-cubins-")
    for name in args.case:
        print(name, flush=True)
        run_case(name, args.sass, folder)


if __name__ == "__main__":
    main()
