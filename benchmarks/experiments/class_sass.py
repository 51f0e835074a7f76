"""A class kernel's SASS against its specialized kernel's (issue 33): both PTX texts linked with
their launch bounds, `cuobjdump -res-usage` and `-sass` of each written to --out, and the opcode
counts that differ printed. The class varies what benchmarks/dynamic_shapes.py varies.

    python benchmarks/experiments/class_sass.py NAME [--out DIR]
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import autofuse  # noqa: E402
import autofuse.dynamic.classes as classes  # noqa: E402
import autofuse.dynamic.policy as policy  # noqa: E402
from autofuse.backends.cuda.compile import link  # noqa: E402

from class_loads_ptx import varying_first_axis  # noqa: E402
from reductions_sweep import points  # noqa: E402
from workloads import workloads  # noqa: E402

CUOBJDUMP = "/usr/local/cuda/bin/cuobjdump"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--out", default=tempfile.mkdtemp())
    args = parser.parse_args()
    load = next(w for w in list(workloads()) + list(points()) if w.name == args.name)
    host = [np.ascontiguousarray(a) for a in load.make(np.random.default_rng(0))]
    fn = load.fn(np)
    classes.candidates = policy.candidates = varying_first_axis(load, host)
    counts = {}
    for label, dynamic in (("specialized", False), ("class", True)):
        kernel = autofuse.jit(fn, backend="cuda", dynamic=dynamic).lower(*host).kernels[0]
        cubin = os.path.join(args.out, f"{label}.cubin")
        with open(cubin, "wb") as handle:
            handle.write(link(kernel.ptx, "sm_90"))
        with open(cubin.replace(".cubin", ".ptx"), "w") as handle:
            handle.write(kernel.ptx)
        sass = subprocess.run([CUOBJDUMP, "-sass", cubin], capture_output=True, text=True).stdout
        with open(cubin.replace(".cubin", ".sass"), "w") as handle:
            handle.write(sass)
        usage = subprocess.run([CUOBJDUMP, "-res-usage", cubin], capture_output=True, text=True)
        print(label, re.findall(r"REG:\d+.*", usage.stdout)[:1])
        counts[label] = collections.Counter(m.group(1) for m in re.finditer(
            r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\d\s+)?([A-Z][A-Z0-9_.]*)", sass))
    for op in sorted(set(counts["specialized"]) | set(counts["class"])):
        a, b = counts["specialized"][op], counts["class"][op]
        if a != b:
            print(f"  {op:16} specialized {a:4} class {b:4}")


if __name__ == "__main__":
    main()
