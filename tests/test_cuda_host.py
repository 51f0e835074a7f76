"""The generated host call (autofuse/backends/cuda_host.py) without a GPU: with a recording
`launch` and a NumPy-backed stand-in for the caller's array library, it must launch the same
kernels, in the same order, with the same arguments (pointers of the same arrays, the same scalar
values) as the general call path, and return results in the same places."""
import ctypes

import numpy as np
import pytest

import autofuse

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("the simulator runs its own program class", allow_module_level=True)

from autofuse.backends import cuda_driver, cuda_host  # noqa: E402


class Array:
    """A device array stand-in: NumPy memory, its own type (so it is not a host array)."""

    def __init__(self, shape, dtype):
        self.host = np.empty(shape, dtype)

    @property
    def pointer(self):
        return self.host.ctypes.data


class Library:
    name = __name__.split(".")[0]      # the module Array comes from

    def empty(self, shape, dtype):
        return Array(shape, dtype)

    zeros = allocate = empty

    def pointer(self, array):
        return array.pointer

    def stream(self):
        return 7

    current_stream = stream

    def from_host(self, array):
        out = Array(array.shape, array.dtype)
        out.host[...] = array
        return out


def program_for(fn, *shapes):
    host = [np.ones(s, np.float32) if isinstance(s, tuple) else s for s in shapes]
    entry = autofuse.jit(fn, backend="cuda").lower(*host)._entry
    program = entry.program
    program.library = Library()
    program.constants = {n.id: program.library.from_host(n.attrs["value"].array)
                         for n in program.graph.nodes if n.op == "constant" and n.ndim}
    for kernel in program.kernels:
        kernel.config = cuda_driver.Config(kernel.source.grid, kernel.source.block)
        kernel.function = kernel.source.name
    program.loaded = True
    program.launch = Recorder()
    program.launch_kernel = KernelRecorder(program)
    program.launch_packed = None           # (only a failed launch would call it)
    inputs = [Array(s, np.float32) if isinstance(s, tuple) else s for s in shapes]
    return program, inputs


class Recorder:
    """Stands in for cuda.core's launch: keeps what each launch was given."""

    def __init__(self):
        self.calls = []

    def __call__(self, stream, config, kernel, *args):
        self.calls.append((stream, config, kernel, args))


class KernelRecorder:
    """Stands in for the driver's cuLaunchKernel: reads each launch's parameter block back from
    memory as arguments (pointers as ints, scalars by the kernel parameter's type)."""

    def __init__(self, program):
        self.program = program
        self.calls = []

    def __call__(self, kernel, gx, gy, gz, bx, by, bz, shared, stream, address, extra):
        step = next(s for s in self.program.steps if s.kernel.function == kernel)
        count = len(step.params) + len(step.outputs) + len(
            step.scratch_arguments(self.program.library) if step.kernel.source.scratch else [])
        slots = (ctypes.c_uint64 * count).from_address(address)
        args = []
        for index in range(count):
            cast = step.params[index][1] if index < len(step.params) else None
            raw = np.array([ctypes.c_uint64.from_address(slots[index]).value], np.uint64)
            args.append(raw.view(cast)[0] if cast is not None else int(raw[0]))
        assert (gx, gy, gz, bx, by, bz, shared) == step.kernel.config.args
        self.calls.append((stream, step.kernel.config, kernel, tuple(args)))
        return (0,)


def recorded(program, call, inputs):
    program.launch.calls = []
    program.launch_kernel.calls = []
    results = call(inputs)
    return program.launch.calls + program.launch_kernel.calls, results


@pytest.mark.parametrize("fn, shapes", [
    (lambda x, y: np.maximum(x * y + 1, 0), ((64, 8), (8,))),
    (lambda x, s: (np.exp(x - x.max(-1, keepdims=True)) * s).sum(-1), ((16, 40), 2.5)),
    (lambda x, w, b: np.maximum(x @ w + b, 0).T + 1, ((32, 16), (16, 24), (24,))),
    (lambda x: ((x * x).sum(), x.argmax(), x[::2] * 3), ((1 << 17,),)),
    (lambda x: np.concatenate([x, np.arange(4, dtype=np.float32)]) * 2, ((5,),)),
], ids=["broadcast", "scalar_argument", "matmul_then_loop", "split_and_slice", "constant"])
def test_generated_call_launches_what_the_general_path_does(fn, shapes):
    program, inputs = program_for(fn, *shapes)
    assert cuda_host.plannable(program, inputs)
    fast, text = cuda_host.build(program)
    assert text.startswith("def call(inputs):") and "launch_kernel(kernel0, " in text
    general, general_results = recorded(program, program.__call__, inputs)
    generated, generated_results = recorded(program, fast, inputs)
    assert len(general) == len(generated) == len(program.kernels)
    # Outputs are fresh per call, so compare arguments by role: an argument's pointer or value,
    # else which result (by position) it is.
    def roles(launches, results):
        out = {r.pointer: f"result{k}" for k, r in enumerate(results) if isinstance(r, Array)}
        ins = {a.pointer: f"input{k}" for k, a in enumerate(inputs) if isinstance(a, Array)}
        fresh: dict = {}
        named = []
        for stream, cfg, kernel, args in launches:
            row = []
            for arg in args:
                if arg in ins or arg in out:
                    row.append(ins.get(arg) or out[arg])
                elif isinstance(arg, float) or isinstance(arg, np.generic):
                    row.append(("value", float(arg)))
                else:
                    row.append(fresh.setdefault(arg, f"fresh{len(fresh)}"))
            named.append((stream, cfg, kernel, tuple(row)))
        return named
    assert roles(generated, generated_results) == roles(general, general_results)
    assert [r.host.shape for r in generated_results] == [r.host.shape for r in general_results]


def test_numpy_arguments_and_returned_arguments_take_the_general_path():
    program, inputs = program_for(lambda x: (x * 2, x.copy()), (4,))
    assert not cuda_host.plannable(program, inputs)          # the copy is x itself: the general path copies
    program, _ = program_for(lambda x: x * 2, (4,))
    assert not cuda_host.plannable(program, [np.ones(4, np.float32)])


@pytest.mark.parametrize("fn, shape", [
    (lambda x: x, (4,)),                         # the result is the argument: no kernel at all
    (lambda x: (x * 2, x[:0] + 1), (0, 3)),      # every output empty: nothing to launch
], ids=["no_kernel", "empty_outputs"])
def test_a_call_with_nothing_to_launch_is_valid_python(fn, shape):
    # (the GPU fuzz run found the generated `with lock:` left without a body)
    program, inputs = program_for(fn, shape)
    _, text = cuda_host.build(program)
    assert "pass    # nothing to launch" in text
    generated, results = recorded(program, cuda_host.build(program)[0], inputs)
    assert generated == []


def test_the_stream_is_one_lookup_by_handle_built_once(monkeypatch):
    built = []

    class Driver:
        @staticmethod
        def CUstream(handle):
            built.append(handle)
            return ("CUstream", handle)

    monkeypatch.setattr(cuda_driver, "driver", lambda: Driver)
    monkeypatch.setattr(cuda_driver, "streams", cuda_driver.Streams())
    streams = cuda_driver.streams
    assert streams[5] == streams[5] == ("CUstream", 5) and streams[0] == ("CUstream", 0)
    assert cuda_driver.stream(5) == ("CUstream", 5)
    assert built == [5, 0]
    program, _ = program_for(lambda x: x * 2, (4,))
    _, text = cuda_host.build(program)
    assert "    stream = streams[current_stream()]\n" in text
    program.library.name = "cupy"            # CuPy's current_stream() is a Stream object
    _, text = cuda_host.build(program)
    assert "    stream = streams[current_stream().ptr]\n" in text
