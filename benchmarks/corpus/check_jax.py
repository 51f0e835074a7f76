"""Check every jax twin (loops_jax.py) against its NumPy program at small size, on whatever
device jax has; float64 twins run with jax_enable_x64.

    python -m benchmarks.corpus.check_jax
"""
from __future__ import annotations

import sys

import numpy as np


def main() -> int:
    import jax
    jax.config.update("jax_enable_x64", True)
    from . import loops_jax
    from .compare import compare
    from .loops import LOOPS
    mismatches = 0
    for program in LOOPS:
        for dtype in program.dtypes:
            arguments, static = program.arguments("small", dtype)
            want = program.function(*[a.copy() for a in arguments], **static)
            try:
                got = jax.tree_util.tree_map(np.asarray, loops_jax.run(program.name, arguments, static))
                result = compare(got, want)
            except Exception as error:    # a twin that fails is reported, the others still run
                result = {"correct": False, "max_error": None,
                          "note": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
            mismatches += not result["correct"]
            print(f"{program.name} {np.dtype(dtype).name}: "
                  f"{'ok' if result['correct'] else 'MISMATCH'} {result['max_error']} {result['note']}")
    print(f"{mismatches} mismatches (kmeans_where float32 is expected: NumPy promotes to float64)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
