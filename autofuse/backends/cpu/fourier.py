"""An fft group on the CPU: the transform by a library FFT on the host arrays, a step between the
program's kernels (its input stored by the kernel before it, its result read by the one after).

The library is scipy.fft where SciPy is installed (it is: numba's np.dot calls SciPy's BLAS,
blas.py), else NumPy's np.fft. Both are pocketfft, with NumPy's dtypes (complex64 from float32,
float32 from irfft of complex64), but SciPy's runs several rows at once in SIMD lanes and takes
threads (`workers`): measured on the 2-core machine, loaded, 4096 rows of 1024 float32 through
rfft took 33.8 ms in NumPy, 6.5 ms in SciPy on one thread and 3.6 ms on two; complex128 fft of
1024x1024, 5.7, 5.7 and 3.0 ms. SciPy's import (about 0.2 s) is paid at the first transform.
"""
from __future__ import annotations

import functools
import importlib.util

from ...ir.fourier import numpy_call
from .runtime import thread_count


def library() -> str:
    """The library FFT steps call here: "scipy" where SciPy is installed, else "numpy"."""
    return "scipy" if importlib.util.find_spec("scipy") is not None else "numpy"


def call_text(node, name: str, workers: int) -> str:
    """The step's call in words: `scipy.fft.rfft(x, n=1024, axis=1, norm='backward', workers=2)`."""
    function, keywords = numpy_call(node.attrs)
    if name == "scipy":
        keywords["workers"] = workers
    words = ", ".join(f"{key}={value!r}" for key, value in keywords.items())
    return f"{name}.fft.{function}(x, {words})"


class FourierStep:
    """Runs one fft group: its input from memory, the library's transform of it into memory."""
    library = True

    def __init__(self, group, name: str, workers: int = 0):
        self.group = group
        self.node = group.transform
        self.source = self.node.inputs[0]
        self.name = name
        self.workers = workers or thread_count()
        self.text = call_text(self.node, name, self.workers)
        self._function = None

    @property
    def function(self):
        """The library's function with the node's arguments bound (imported at the first call)."""
        if self._function is None:
            function, keywords = numpy_call(self.node.attrs)
            if self.name == "scipy":
                import scipy.fft as module
                keywords["workers"] = self.workers
            else:
                import numpy.fft as module
            self._function = functools.partial(getattr(module, function), **keywords)
        return self._function

    def run(self, memory: dict) -> None:
        memory[self.node.id] = self.function(memory[self.source.id])
