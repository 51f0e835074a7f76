"""What Tuning.assume_aligned does to the corpus's CUDA kernels before they run: each program at
the corpus's large size (first dtype) lowered for the GPU (no GPU needed) with the default and
with assume_aligned=False; for each, its distinct kernels' lines and the seconds numba-cuda takes
to compile them to PTX in this process (numba warmed up first). The first call of a program on a
GPU is mostly this compile (BENCHMARKS.md, "First calls").

    python benchmarks/experiments/assume_aligned_ptx.py [NAME ...] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import autofuse  # noqa: E402
from autofuse.backends.cuda import compile as cuda_compile  # noqa: E402
from autofuse.backends.cuda.tuning import DEFAULT  # noqa: E402
from benchmarks.corpus import all_programs  # noqa: E402


def compiled(program, tuning) -> tuple[int, int, float]:
    """(distinct kernels, their lines, seconds to PTX) of `program` lowered with `tuning`."""
    args, static = program.arguments("large", program.dtypes[0])
    jitted = autofuse.jit(program.function, backend="cuda", tuning=tuning,
                          static_argnames=tuple(static))
    low = jitted.lower(*args, **static)
    texts = {}
    for kernel in low.kernels:
        provider = kernel.ptx_provider
        if provider is not None:
            source = provider.__self__
            texts.setdefault(source.text, source)
    start = time.perf_counter()
    for source in texts.values():
        cuda_compile._compile_ptx(source.source, source.text, cuda_compile.CC)
    return len(texts), sum(len(t.splitlines()) for t in texts), time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    programs = [p for p in all_programs() if not args.names or p.name in args.names]
    warm = next(p for p in all_programs() if p.name == programs[0].name)
    compiled(warm, DEFAULT.replace(threads=128))          # numba-cuda's own first compile
    rows = []
    for program in programs:
        try:
            one = compiled(program, DEFAULT)
            two = compiled(program, DEFAULT.replace(assume_aligned=False))
        except Exception as error:          # (a program the CUDA lowering refuses)
            print(f"{program.name}: {type(error).__name__}: {error}", flush=True)
            continue
        row = dict(program=program.name, kernels=one[0], lines=one[1], seconds=one[2],
                   checked_lines=two[1], checked_seconds=two[2])
        rows.append(row)
        print(f"{program.name:32s} {one[0]:3d} kernels  lines {two[1]:6d} -> {one[1]:6d}  "
              f"to PTX {two[2]:6.2f} -> {one[2]:6.2f} s", flush=True)
    total = lambda key: sum(r[key] for r in rows)
    print(f"all {len(rows)}: lines {total('checked_lines')} -> {total('lines')}, to PTX "
          f"{total('checked_seconds'):.1f} -> {total('seconds'):.1f} s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
