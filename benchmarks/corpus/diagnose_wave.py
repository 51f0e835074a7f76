"""Diagnosis (one GPU run): wave_2d's first CUDA call hit cudaErrorIllegalAddress at the large
size. Runs it in one configuration per process: `default`, `no_sharing` (runtime/buffers.py's plan
off), `no_graph` (cuda_graph=False), at size `small` or `large`; prints whether it matches NumPy.

    python -m benchmarks.corpus.diagnose_wave CONFIG SIZE
"""
from __future__ import annotations

import sys



def main(config: str, size: str) -> int:
    import cupy
    import autofuse
    from autofuse.backends.cuda.runtime import buffers
    from . import find
    from .compare import compare
    if config == "no_sharing":
        buffers.shared_buffers = lambda steps, results: {}
    program = find("wave_2d")
    arguments, static = program.arguments(size, "float32")
    want = program.function(*[a.copy() for a in arguments], **static)
    function = autofuse.jit(program.function, static_argnames=program.static, backend="cuda",
                            cuda_graph=False if config == "no_graph" else None)
    try:
        for _ in range(2):          # the general path, then the generated call
            got = function(*[cupy.asarray(a) for a in arguments], **static)
            cupy.cuda.Device().synchronize()
            print(config, size, [a.shape for a in arguments], compare(cupy.asnumpy(got), want, "float32"))
        print((function.lower(*[cupy.asarray(a) for a in arguments], **static)._entry.program.host_source or "")[:1500])
    except Exception as error:
        print(config, size, "FAILED", type(error).__name__, str(error)[:200])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
