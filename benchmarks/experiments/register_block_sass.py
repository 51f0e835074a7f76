"""The covariance product kernel's SASS with and without the register block
(Tuning.register_block): the opcode histogram of each cubin (cuobjdump -sass), its registers, and
the main loop's length, to find why the block runs 36% slower warm with the same PTX mix.

    python benchmarks/experiments/register_block_sass.py [--out DIR]
"""
from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main() -> None:
    import numpy as np
    import autofuse
    from autofuse.backends.cuda.compile import link
    from autofuse.backends.cuda.tuning import DEFAULT
    from benchmarks.corpus import find
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else tempfile.mkdtemp()
    program = find("covariance")
    arguments, static = program.arguments("large", program.dtypes[0])
    for block in (False, True):
        low = autofuse.jit(program.function, backend="cuda", static_argnames=program.static,
                           tuning=DEFAULT.replace(register_block=block)).lower(*arguments, **static)
        for index, kernel in enumerate(low.kernels):
            if kernel.kind != "output":
                continue
            ptx = kernel.ptx
            cubin = os.path.join(out, f"covariance_block{int(block)}_{index}.cubin")
            with open(cubin, "wb") as handle:
                handle.write(link(ptx, "sm_90"))
            sass = subprocess.run(["/usr/local/cuda/bin/cuobjdump", "-sass", cubin],
                                  capture_output=True, text=True).stdout
            with open(cubin.replace(".cubin", ".sass"), "w") as handle:
                handle.write(sass)
            ops = collections.Counter(m.group(1) for m in
                                      re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\d\s+)?([A-Z][A-Z0-9_.]*)", sass))
            print(json.dumps({"register_block": block, "kernel": index,
                              "strategy": kernel.strategy, "sass_lines": sum(ops.values()),
                              "resources": re.findall(r"REG:\d+.*", subprocess.run(
                                  ["/usr/local/cuda/bin/cuobjdump", "-res-usage", cubin],
                                  capture_output=True, text=True).stdout)[:1],
                              "top": ops.most_common(24)}), flush=True)


if __name__ == "__main__":
    main()
