"""autofuse: an operator-fusion JIT for NumPy-style Python.

>>> import numpy as np, autofuse
>>> @autofuse.jit
... def softmax(x):
...     e = np.exp(x - x.max(axis=-1, keepdims=True))
...     return e / e.sum(axis=-1, keepdims=True)
>>> softmax(np.ones((2, 4), np.float32)).dtype
dtype('float32')

Where each stage lives (stages.build runs them in this order for a new signature):
- trace: trace/ (tracer arrays record NumPy calls into an SSA graph, ir/graph.py; every op is a
  row of the op table, ir/ops.py); signature.py binds the arguments, arrays.py reads array kinds;
- simplify: ir/passes.py; the reference interpreter: ir/interpreter.py;
- partition into fusion groups: fusion/ (partition.py, legality.py with scans.py's rules, the
  cost model cost.py; sorting.py: what joins a sort);
- per group, a kernel (kernels.py: the records `f.lower(...).kernels` shows):
  CPU: backends/cpu/ (source.py writes one numba function a group, __init__.py compiles and runs
  it, host.py writes a signature's call; linking.py links a compiled kernel as a shared
  library, native.py loads and calls it in later processes without numba, with runtime.py's
  numba C runtime; binaries.py loads numba's cached binaries, threads.py sizes numba's threads
  to the free cores);
  CUDA: backends/cuda/ - a group's strategy is chosen in plan.py, its source written by
  writer.py with the emitters of emit/, compiled in compile.py (PTX, cubin, disk cache), and
  launched by runtime/ (program.py, with host.py's or graph.py's generated host call);
  NumPy reference: backends/reference.py;
- the call: jit.py (cache, fast path; cached_call.py writes a signature's result assembly out);
  inspecting: lowered.py, debug.py, picture.py, cli.py;
- shapes that vary: dynamic/ (a shape class compiles once: policy.py picks the dynamic
  dimensions, builder.py compares builds at stand-in sizes, the backends' dynamic.py compile
  kernels that take the sizes as arguments);
- gradients: autodiff/ (grad, value_and_grad, vjp: a joint program traced with each op's
  vector-Jacobian rule from the op table, then compiled like any other).

Compiled kernels are cached on disk, content-addressed, in $AUTOFUSE_CACHE_DIR (default
~/.cache/autofuse): `autofuse.cache_dir()` says where, `autofuse.clear_disk_cache()` empties it.

Debug output (stderr) at fixed levels: $AUTOFUSE_DEBUG or `with autofuse.debug(level):` -
1 compiles (and the first cache hit per signature), 2 kernel launches with times, 3 traced and
fused IR, 4 kernel source, 5 PTX. See autofuse/debug.py for the full table.
"""
from .errors import (AutofuseError, ArgumentError, BackendError, DTypeError, LinAlgError, NumPyValueError,
                     OutOfBoundsError, ShapeError, TraceError, UnsupportedError)
from .backends.disk_cache import cache_dir, clear_disk_cache
from .debug import debug, debug_level
from .jit import JitFunction, jit
from .autodiff import grad, value_and_grad, vjp
from .ir.fourier_plan import FourierLimits

__version__ = "0.1.0"

__all__ = ["jit", "JitFunction", "FourierLimits", "grad", "value_and_grad", "vjp", "AutofuseError", "ArgumentError", "BackendError", "DTypeError",
           "LinAlgError", "NumPyValueError", "OutOfBoundsError", "ShapeError", "TraceError", "UnsupportedError", "cache_dir", "clear_disk_cache", "debug", "debug_level"]
