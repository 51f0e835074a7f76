"""Which corpus programs have kernels staged in shared memory (emit/run_tiles.py's staged runs,
emit/short_tiles.py's short rows) at their large size: lowers each program for the CUDA backend
(no GPU needed), each in a child process with a time limit, and prints the staged kernels.

    python benchmarks/experiments/staged_strategies.py [--limit 120]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
import autofuse
from benchmarks.corpus import find
program = find(sys.argv[1])
arguments, static = program.arguments("large", program.dtypes[0])
low = autofuse.jit(program.function, static_argnames=program.static,
                   backend="cuda").lower(*arguments, **static)
print(json.dumps(sorted({k.strategy for k in low.kernels if "staged" in k.strategy})))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=120)
    options = parser.parse_args()
    sys.path.insert(0, ROOT)
    from benchmarks.corpus import all_programs
    for program in all_programs():
        try:
            done = subprocess.run([sys.executable, "-c", CHILD, program.name, ROOT],
                                  capture_output=True, text=True, timeout=options.limit)
            lines = done.stdout.strip().splitlines()
            found = json.loads(lines[-1]) if done.returncode == 0 and lines else \
                f"failed: {done.stderr.strip().splitlines()[-1:]}"
        except subprocess.TimeoutExpired:
            found = f"over {options.limit:.0f} s"
        if found:
            print(json.dumps({"program": program.name, "staged": found}), flush=True)


if __name__ == "__main__":
    main()
