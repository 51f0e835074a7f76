"""Run under NUMBA_ENABLE_CUDASIM=1 by test_autotune.py: a whole-column program at its bound
(Tuning.column_program_bytes the array's bytes) timed both ways at its first call, the choice
remembered on disk for a new jit of the same function, and the cases that must not be timed;
every answer against NumPy. Prints "name: ok" or "name: MISMATCH (why)" a case."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autofuse  # noqa: E402
from autofuse.backends.cuda.tuning import Tuning  # noqa: E402
from autofuse.backends.disk_cache import cache_dir  # noqa: E402
from simulated import prepare_simulator  # noqa: E402


def softmax0(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def scaled_in_place(x):
    x /= np.abs(x).sum(axis=0)
    return x


def main() -> int:
    prepare_simulator()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 6)).astype(np.float32)
    near = Tuning(column_program_bytes=x.nbytes)       # the program sits at the bound
    failures = 0

    def check(name, ok, why=""):
        nonlocal failures
        failures += not ok
        print(f"{name}: {'ok' if ok else 'MISMATCH (' + why + ')'}", flush=True)

    def reasons(jitted):
        return [k.reason for k in jitted.lower(x).kernels]

    timed = autofuse.jit(softmax0, backend="cuda", tuning=near)
    got = timed(x)
    records = list((cache_dir() / "autotune").glob("*.json"))
    text = reasons(timed)
    check("timed_at_the_first_call",
          np.allclose(got, softmax0(x), rtol=1e-5) and len(records) == 1
          and all("timed at this signature's first call" in r for r in text)
          and all("as planned" in r and "a kernel a level" in r for r in text), f"{text}")
    again = autofuse.jit(softmax0, backend="cuda", tuning=near)
    got = again(x)
    text = reasons(again)
    check("remembered_on_disk", np.allclose(got, softmax0(x), rtol=1e-5)
          and all("by an earlier process" in r for r in text), f"{text}")
    other = autofuse.jit(softmax0, backend="cuda",
                         tuning=near.replace(column_tile_threads=256))
    got = other(x)
    text = reasons(other)
    check("another_tuning_times_anew", np.allclose(got, softmax0(x), rtol=1e-5)
          and all("timed at this signature's first call" in r for r in text), f"{text}")
    untimed = autofuse.jit(softmax0, backend="cuda", tuning=near, autotune=False)
    got = untimed(x)
    check("turned_off", np.allclose(got, softmax0(x), rtol=1e-5)
          and not any("program:" in r for r in reasons(untimed)))
    far = autofuse.jit(softmax0, backend="cuda")        # 960 bytes against 16 MiB: not near
    got = far(x)
    check("far_from_the_bound", np.allclose(got, softmax0(x), rtol=1e-5)
          and not any("program:" in r for r in reasons(far)))
    written = autofuse.jit(scaled_in_place, backend="cuda", tuning=near)
    y, expected = x.copy(), x / np.abs(x).sum(axis=0)
    written(y)
    check("arguments_written_not_timed", np.allclose(y, expected, rtol=1e-5)
          and not any("program:" in r for r in reasons(written)))
    return failures


if __name__ == "__main__":
    sys.exit(main())
