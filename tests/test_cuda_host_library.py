"""Library steps in the generated host call (runtime/host.py, library_fft.py, library_sort.py)
without a GPU: with CuPy or torch stood in by NumPy (their arrays NumPy memory, their fft and
sort functions NumPy's, each call recorded), the generated call must run the same kernels and
library calls, in the same order, on the same arrays, as the general path, and return the same
results. What this cannot show: that the real libraries accept these calls (the GPU tests in
test_cuda_gpu_fft.py and test_cuda_gpu.py do), nor any kernel's values (no kernel runs here)."""
from types import SimpleNamespace

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("the simulator runs its own program class", allow_module_level=True)

import autofuse.backends.cuda as cuda_backend  # noqa: E402
from autofuse.backends.cuda.runtime import driver as cuda_driver  # noqa: E402
from autofuse.backends.cuda.runtime import host as cuda_host  # noqa: E402
from test_cuda_host import KernelRecorder, OverlapRecorder, Recorder  # noqa: E402

TRANSFORMS = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfftn", "irfftn", "fftn", "ifftn",
              "rfft2", "irfft2")


class DeviceArray:
    """A CuPy array or torch tensor stood in by NumPy memory: `.data.ptr` and `.data_ptr()` its
    address (CuPy's and torch's spellings), `.contiguous()` itself (torch's)."""

    def __init__(self, host):
        self.host = host
        self.data = SimpleNamespace(ptr=host.ctypes.data)
        self.shape, self.dtype, self.size = host.shape, host.dtype, host.size

    def data_ptr(self):
        return self.data.ptr

    def contiguous(self):
        return self


class StandIn:
    """arrays.py's CupyLibrary or TorchLibrary with NumPy underneath; `library.cupy` or
    `library.torch` is the module the steps call, each call kept in `events` as
    ("library", function, input address, keywords in NumPy's names, result address)."""

    def __init__(self, name: str, events: list):
        self.name = name
        self.events = events
        self.made = []                  # every array made stays alive: addresses stay unique
        axis = "dim" if name == "torch" else "axis"
        transforms = {f: self._transform(f, axis) for f in TRANSFORMS}
        module = SimpleNamespace(fft=SimpleNamespace(**transforms),
                                 ascontiguousarray=lambda a: a)
        if name == "torch":
            module.sort = self._torch_sort
        else:
            module.sort = self._sorter("sort", lambda a: np.sort(a, axis=-1))
            module.argsort = self._sorter("argsort",
                                          lambda a: np.argsort(a, axis=-1, kind="stable"))
        setattr(self, name, module)

    def _array(self, host):
        array = ARRAY_TYPES[self.name](np.ascontiguousarray(host))
        self.made.append(array)
        return array

    def _record(self, function, value, keywords, result):
        self.events.append(("library", function, value.data.ptr, keywords, result.data.ptr))
        return result

    def _transform(self, function, axis):
        def transform(value, **keywords):
            named = {("axis" if key == "dim" and function[-1] != "n" and function[-1] != "2"
                      else "axes" if key == "dim" else key): v for key, v in keywords.items()}
            assert axis == "dim" or "dim" not in keywords
            with np.errstate(all="ignore"):
                result = self._array(getattr(np.fft, function)(value.host, **named))
            return self._record(function, value, named, result)
        return transform

    def _sorter(self, function, compute):
        def sort(value, axis):
            assert axis == -1
            return self._record(function, value, {}, self._array(compute(value.host)))
        return sort

    def _torch_sort(self, value, dim, stable):
        assert dim == -1 and stable
        values = self._array(np.sort(value.host, axis=-1))
        order = self._array(np.argsort(value.host, axis=-1, kind="stable"))
        self._record("torch.sort", value, {}, values)
        return values, order

    def empty(self, shape, dtype):
        return self._array(np.empty(shape, dtype))

    allocate = empty

    def zeros(self, shape, dtype):
        return self._array(np.zeros(shape, dtype))

    def pointer(self, array):
        return array.data.ptr

    def stream(self):
        return 7

    def current_stream(self):
        return SimpleNamespace(ptr=7) if self.name == "cupy" else 7

    def from_host(self, array):
        return self._array(array)


# plannable(): the arguments are arrays of the program's library, by their type's module
ARRAY_TYPES = {name: type("DeviceArray", (DeviceArray,), {"__module__": f"{name}._stand_in"})
               for name in ("cupy", "torch")}


@pytest.fixture
def library_fft(monkeypatch):
    """Lowering plans cupy.fft steps as if CuPy were installed (none is, here)."""
    monkeypatch.setattr(cuda_backend, "library_for_fft", lambda leaves: ("cupy", ""))


def program_for(fn, name, *arguments):
    """The program `fn` lowers to for the CUDA backend, loaded against the stand-in `name`
    library (its kernels' launches recorded into the stand-in's events), and the arguments as
    the stand-in's arrays (a NumPy argument copied; a scalar passed as it is)."""
    entry = autofuse.jit(fn, backend="cuda").lower(*arguments)._entry
    program = entry.program
    events: list = []
    library = program.library = StandIn(name, events)
    program.constants = {n.id: library.from_host(n.attrs["value"].array)
                         for n in program.graph.nodes if n.op == "constant" and n.ndim}
    for kernel in program.kernels:
        if getattr(kernel, "library", False):
            kernel.function = None
            continue
        kernel.config = cuda_driver.Config(kernel.source.grid, kernel.source.block)
        kernel.function = kernel.source.name
        kernel.overlaps = kernel.source.overlaps          # (as loading on an sm_90 GPU sets it)
    program.loaded = True
    program.launch = Recorder()
    program.launch_kernel = KernelRecorder(program)
    program.launch.calls = program.launch_kernel.calls = events
    program.launch_packed = None           # (only a failed launch would call it)
    program.launch_overlapped = OverlapRecorder(program.launch_kernel)
    inputs = [library.from_host(a) if isinstance(a, np.ndarray) else a for a in arguments]
    return program, inputs


def run(program, call, inputs):
    """(the call's kernel launches and library calls by role, its results)."""
    events = program.library.events
    del events[:]
    results = call(inputs)
    ins = {a.data.ptr: f"input{k}" for k, a in enumerate(inputs) if isinstance(a, DeviceArray)}
    outs = {r.data.ptr: f"result{k}" for k, r in enumerate(results)}
    made = {event[4]: f"library{k}" for k, event in enumerate(e for e in events
                                                              if e[0] == "library")}
    fresh: dict = {}

    def role(value):
        if isinstance(value, (float, np.generic)):
            return ("value", float(value))
        for names in (ins, outs, made):
            if value in names:
                return names[value]
        return fresh.setdefault(value, f"fresh{len(fresh)}")
    named = []
    for event in events:
        if event[0] == "library":
            named.append((event[1], role(event[2]), event[3], role(event[4])))
        else:
            stream, config, kernel, args = event
            named.append((stream, config, kernel, tuple(role(a) for a in args)))
    return named, results


def same_as_general(program, inputs, overlap=False):
    """The generated call's text, after checking it does what the general path does."""
    assert cuda_host.plannable(program, inputs)
    fast, text = cuda_host.build(program, overlap)
    general, general_results = run(program, program.__call__, inputs)
    generated, generated_results = run(program, fast, inputs)
    assert generated == general
    assert [(r.shape, r.dtype) for r in generated_results] == \
        [(r.shape, r.dtype) for r in general_results]
    return text, general, generated_results


def rand(*shape, dtype=np.float32):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)


def convolve(a, weight, kernel):
    y = np.fft.irfft(np.fft.rfft(a * weight + 1) * np.fft.rfft(kernel), 1000)
    return np.tanh(y) * 0.5


@pytest.mark.parametrize("name", ["cupy", "torch"])
def test_a_lone_transform_is_the_library_call(name, library_fft):
    x = rand(64, 1000)
    program, inputs = program_for(np.fft.rfft, name, x)
    text, events, results = same_as_general(program, inputs)
    axis = "dim" if name == "torch" else "axis"
    assert f"v{program.steps[0].result.id} = " in text and "rfft_0(x0, n=1000, " in text
    assert f"{axis}=-1, norm='backward')" in text or f"{axis}=1, norm='backward')" in text
    assert "launch_kernel" not in text and "empty(" not in text
    assert [event[0] for event in events] == ["rfft"] and events[0][1] == "input0"
    assert events[0][3] == "result0"            # the library's array is the result, as it is
    np.testing.assert_array_equal(results[0].host, np.fft.rfft(x))


@pytest.mark.parametrize("name", ["cupy", "torch"])
@pytest.mark.parametrize("overlap", [False, True], ids=["plain", "overlapped"])
def test_library_steps_between_kernels(name, overlap, library_fft):
    """irfft(rfft(x * w + 1) * rfft(k)), tanh after: each transform reads what the kernel before
    it wrote and the kernel after it reads the transform's array; a kernel right after a library
    step launches plainly."""
    program, inputs = program_for(convolve, name, rand(48, 1000), rand(1000), rand(1000))
    text, events, _ = same_as_general(program, inputs, overlap)
    kinds = [event[0] if isinstance(event[0], str) else "kernel" for event in events]
    assert kinds.count("kernel") == 3 and sorted(k for k in kinds if k != "kernel") == \
        ["irfft", "rfft", "rfft"], kinds
    for before, after in zip(events, events[1:]):
        if before[0] in ("rfft", "irfft") and not isinstance(after[0], str):    # a kernel next
            assert before[3] in after[3], (before, after)
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if "launch_overlapped(" in line:
            assert "irfft_" not in lines[n - 2] and "rfft_" not in lines[n - 2], lines[n - 2]


def test_a_call_with_library_steps_is_no_cuda_graph(library_fft, monkeypatch):
    from autofuse.backends.cuda.runtime import graph as cuda_graph

    def refuse(*args, **keywords):
        raise AssertionError("a library step in a CUDA graph")
    monkeypatch.setattr(cuda_graph, "build", refuse)
    for mode in (None, True):
        program, inputs = program_for(convolve, "cupy", rand(48, 1000), rand(1000), rand(1000))
        program.graph_mode = mode
        call, text = program._host_call()
        assert text.startswith("# kernels launched one by one, not as a CUDA graph: the call runs "
                               "cupy's rfft, rfft, irfft between them"), text.splitlines()[0]
        assert [e for e in run(program, call, inputs)[0]] == \
            run(program, program.__call__, inputs)[0]


def test_several_results_library_ones_among_them(library_fft):
    def spectra(a):
        spectrum = np.fft.fft(a, axis=0)           # (along the first axis: made contiguous)
        return spectrum, np.abs(spectrum).sum(), np.fft.ifft(spectrum * 2, axis=0)
    x = rand(64, 40, dtype=np.complex64)
    program, inputs = program_for(spectra, "cupy", x)
    text, _, results = same_as_general(program, inputs)
    assert "ascontiguousarray_0(fft_0(x0, n=64, axis=0, norm='backward'))" in text
    np.testing.assert_array_equal(results[0].host, np.fft.fft(x, axis=0))
    assert len(results) == 3 and results[0] is not results[2]


@pytest.mark.parametrize("name", ["cupy", "torch"])
def test_an_empty_transform_is_zeros_without_the_library(name, library_fft):
    program, inputs = program_for(lambda a: np.fft.rfft(a, n=64) * 2, name, rand(0, 64))
    text, events, results = same_as_general(program, inputs)
    assert "zeros_0((0, 33), dtype_0)" in text and "fft_" not in text
    assert not any(event[0] == "rfft" for event in events)


def test_numba_arrays_keep_the_general_path(library_fft):
    program, inputs = program_for(np.fft.rfft, "cupy", rand(64, 1000))
    program.library.name = "numba"
    assert not cuda_host.plannable(program, inputs)
    assert cuda_host.plan(program) == "cupy.fft on numba arrays"


@pytest.mark.parametrize("name", ["cupy", "torch"])
def test_long_sorts_are_library_calls_between_kernels(name):
    """A lone long argsort after a kernel and a sort that a median's kernel reads (the median's
    sort: library_sort.py's case)."""
    x = rand(3, 5000)
    fn = lambda a: (np.argsort(a * 2, axis=-1), np.median(a, axis=-1))    # noqa: E731
    program, inputs = program_for(fn, name, x)
    text, events, results = same_as_general(program, inputs)
    assert text.count("sort_") == 2 and "launch_graph" not in text
    assert ("dim=-1, stable=True)[1]" in text) == (name == "torch")
    if name == "cupy":
        np.testing.assert_array_equal(results[0].host.shape, (3, 5000))
    sorts = [event for event in events if isinstance(event[0], str)]
    assert len(sorts) == 2 and sorts[1][1] == "input0"


def test_a_sort_torch_does_not_run_launches_its_kernel():
    """torch sorts no uint16: the step's own kernel, launched like any other."""
    x = (rand(2, 5000) * 1000).astype(np.uint16)
    program, inputs = program_for(lambda a: np.sort(a), "torch", x)
    text, events, _ = same_as_general(program, inputs)
    assert "sort_0(" not in text and "launch_kernel(kernel0" in text
    assert len(events) == 1 and events[0][2] == "sort_0"


def test_a_written_argument_gets_the_library_result(library_fft):
    """The program's result for a written argument is the library's array; run() copies it in
    (the call itself writes nothing)."""
    def smooth(a):
        a[...] = np.fft.irfft(np.fft.rfft(a) * 0.5, 1000)
        return a.sum()
    program, inputs = program_for(smooth, "cupy", rand(4, 1000))
    text, events, results = same_as_general(program, inputs)
    assert len(results) == 2 and "irfft_" in text
