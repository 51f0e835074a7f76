"""An fft group on the GPU: the array library's FFT (cuFFT underneath) in the launch list between
kernels: cupy.fft for CuPy arrays, torch.fft for torch tensors, and cupy.fft for numba's device
arrays (viewed as CuPy arrays, no copy) where CuPy is installed; on the caller's current stream
(the library's own, which the program's kernels launch on too). Both libraries keep NumPy 2's
dtypes (complex64 from float32 or complex64, float32 from irfft of complex64), NumPy's norms and
its n / s cropping and zero-padding.

Which library a signature's fft nodes take is decided before partitioning (`library_for_fft`,
for ir/fourier_plan.plan); where none can run them (numba's device arrays, or NumPy arrays, without
CuPy) they stay traced kernels. The generated host call (runtime/host.py) writes the step in between
its kernel launches (`FourierStep.inline`: the library's function bound once, its result the
array the next kernels read) for CuPy arrays and torch tensors; numba's device arrays take the
general path. Such a program is never a CUDA graph (program.py's _host_call says why).
"""
from __future__ import annotations

import importlib.util

from ....arrays import is_device_array
from ....ir.fourier import numpy_call


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def library_for_fft(leaves) -> tuple[str | None, str]:
    """(the library that runs this call's fft steps, or None; why None), from its arguments as
    arrays.library_for picks the program's library."""
    for leaf in leaves:
        module = type(leaf).__module__.split(".")[0]
        if module == "torch" and is_device_array(leaf):
            return "torch", ""
        if module == "cupy":
            return "cupy", ""
        if is_device_array(leaf):
            break
    if _installed("cupy"):
        return "cupy", ""
    return None, "numba device arrays and no CuPy to run cupy.fft on them"


def call_text(node, library: str) -> str:
    """The step's call in words: `cupy.fft.rfft(x, n=1024, axis=1, norm='backward')`."""
    function, keywords = _keywords(node.attrs, library)
    words = ", ".join(f"{key}={value!r}" for key, value in keywords.items())
    return f"{library}.fft.{function}(x, {words})"


def _keywords(attrs, library: str) -> tuple[str, dict]:
    """np.fft's function and keywords, in torch's names (dim for axis and axes) for torch."""
    function, keywords = numpy_call(attrs)
    if library == "torch":
        renamed = {"axis": "dim", "axes": "dim"}
        keywords = {renamed.get(key, key): value for key, value in keywords.items()}
    return function, keywords


class FourierKernel:
    """An fft group's place in the program's kernel list: no compiled code, its record only."""
    library = True
    origin = None
    overlaps = False

    def __init__(self, record, library: str):
        self.record = record
        self.group = record.group
        self.node = record.group.transform
        self.library_name = library


class FourierStep:
    """The transform by the call's library; its result is the library's new array (the buffer
    plan, runtime/buffers.py, gives it no memory: `outputs` is empty)."""
    library = True

    def __init__(self, kernel: FourierKernel):
        self.kernel = kernel
        self.node = self.result = kernel.node
        self.source = self.node.inputs[0]
        self.params = [(self.source.id, None)]
        self.outputs = []
        self.always = True
        self.owners = []
        self.function, self.keywords = numpy_call(self.node.attrs)

    def inline(self, library) -> tuple[str, dict] | None:
        """The step as one expression for the generated host call, on `{source}` (the input's
        array) with its functions as fields (`{rfft}`), and those functions; None where only
        the general path runs it (numba's device arrays, viewed as CuPy's there)."""
        if library.name not in ("cupy", "torch"):
            return None
        if self.source.size == 0:       # (an empty input zero-padded transforms to zeros)
            return f"{{zeros}}({tuple(self.node.shape)!r}, {{dtype}})", \
                {"zeros": library.zeros, "dtype": self.node.dtype}
        function, keywords = _keywords(self.node.attrs, library.name)
        words = ", ".join(f"{key}={value!r}" for key, value in keywords.items())
        call = f"{{{function}}}({{source}}, {words})"
        if library.name == "torch":
            return f"{call}.contiguous()", {function: getattr(library.torch.fft, function)}
        return f"{{ascontiguousarray}}({call})", {
            function: getattr(library.cupy.fft, function),
            "ascontiguousarray": library.cupy.ascontiguousarray}

    def launch(self, memory: dict, library, stream, launch) -> None:
        value = memory[self.source.id]
        if self.source.size == 0:       # (an empty input zero-padded transforms to zeros)
            memory[self.node.id] = library.zeros(self.node.shape, self.node.dtype)
            return
        # NOTE: along an axis other than the last, the libraries may return a transposed view;
        # the kernels after the step read C-ordered memory.
        if library.name == "torch":
            function, keywords = _keywords(self.node.attrs, "torch")
            result = getattr(library.torch.fft, function)(value, **keywords)
            memory[self.node.id] = result.contiguous()
            return
        if library.name == "cupy":
            cupy = library.cupy
        else:                           # numba's device arrays, viewed as CuPy's
            import cupy
            value = cupy.asarray(value)
        result = cupy.ascontiguousarray(getattr(cupy.fft, self.function)(value, **self.keywords))
        memory[self.node.id] = result if library.name == "cupy" else library.wrap(result)
