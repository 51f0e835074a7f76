"""Why 'cumsum non-contiguous' (tests/scan_sim_cases.py) is wrong on a GPU and right in the
simulator: the same lines scanned from contiguous and strided views, each strategy."""
import sys

import numpy as np

sys.path.insert(0, "tests")
import autofuse  # noqa: E402
from autofuse.backends.cuda.tuning import Tuning  # noqa: E402

rng = np.random.default_rng(0)
base = rng.standard_normal((6, 300)).astype(np.float32)
views = {"contiguous": np.ascontiguousarray(base[::-2, ::2]), "[::-2, ::2]": base[::-2, ::2],
         "[:, ::2]": base[:, ::2], "[::-1]": base[::-1], "[::2]": base[::2], "T": base.T.copy().T}
for tuning_name, tuning in (("default", None), ("rows", Tuning(scan_lines_per_sm=0))):
    for name, x in views.items():
        for axis in (1, 0):
            fn = lambda a, axis=axis: np.cumsum(a, axis=axis)  # noqa: E731
            j = autofuse.jit(fn, backend="cuda", **({"tuning": tuning} if tuning else {}))
            got = np.asarray(j(x))
            want = fn(x)
            bad = ~np.isclose(got, want, rtol=1e-4, atol=1e-4)
            first = np.argwhere(bad)[:1].tolist()
            print(f"{tuning_name:8s} {name:12s} axis {axis} {str(x.shape):9s} "
                  f"{[k.strategy for k in j.lower(x).kernels]} wrong {int(bad.sum())} first {first}",
                  flush=True)
