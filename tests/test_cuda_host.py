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

from autofuse.backends.cuda.runtime import driver as cuda_driver  # noqa: E402
from autofuse.backends.cuda.runtime import host as cuda_host  # noqa: E402


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
    program.launch_overlapped = OverlapRecorder(program.launch_kernel)
    for kernel in program.kernels:
        kernel.overlaps = kernel.source.overlaps          # (as loading on an sm_90 GPU sets it)
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


class OverlapRecorder:
    """Stands in for cuLaunchKernelEx: checks the launch configuration asks for programmatic
    stream serialization, then records the launch as KernelRecorder does."""

    def __init__(self, kernels: KernelRecorder):
        self.kernels = kernels
        self.functions = []

    def __call__(self, native, kernel, address, extra):
        from cuda.bindings import driver
        attribute = native.attrs[0]
        assert native.numAttrs == 1 and attribute.id == \
            driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        assert attribute.value.programmaticStreamSerializationAllowed == 1
        self.functions.append(kernel)
        return self.kernels(kernel, native.gridDimX, native.gridDimY, native.gridDimZ,
                            native.blockDimX, native.blockDimY, native.blockDimZ,
                            native.sharedMemBytes, native.hStream, address, extra)


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
@pytest.mark.parametrize("overlap", [False, True], ids=["plain", "overlapped"])
def test_generated_call_launches_what_the_general_path_does(fn, shapes, overlap):
    program, inputs = program_for(fn, *shapes)
    assert cuda_host.plannable(program, inputs)
    fast, text = cuda_host.build(program, overlap)
    assert text.startswith("def call(inputs):")
    waiting = [kernel.overlaps for kernel in program.kernels]
    if overlap and waiting[0]:
        assert "launch_overlapped(overlapped0, kernel0, " in text
    else:
        assert "launch_kernel(kernel0, " in text
    assert text.count("launch_overlapped(") == (sum(waiting) if overlap else 0)
    program.launch_overlapped.functions = []
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
    assert program.launch_overlapped.functions == [
        kernel.function for kernel in program.kernels if overlap and kernel.overlaps]


def test_split_reductions_launch_plainly_beside_overlapped_kernels():
    program, inputs = program_for(lambda x: ((x * x).sum(), x[::2] * 3), (1 << 17,))
    assert [k.source.overlaps for k in program.kernels] == [False, True]
    _, text = cuda_host.build(program, True)
    assert "launch_kernel(kernel0, " in text and "launch_overlapped(overlapped1, kernel1, " in text


@pytest.mark.parametrize("mode, size, expected", [
    (None, 1 << 10, "graph"),
    (None, 1 << 23, "overlapped"),        # 32 MiB read + 32 MiB written
    (None, 1 << 22, "overlapped"),        # 16 + 16: Tuning.direct_bytes a kernel
    (None, (1 << 22) - 4, "graph"),
    (True, 1 << 23, "graph"),
    (False, 1 << 10, "overlapped"),
])
def test_large_calls_launch_directly_and_overlap(mode, size, expected, monkeypatch):
    """By default a call that moves Tuning.direct_bytes a kernel launches its kernels one by one, to
    overlap (a graph saves host time such a call hides); cuda_graph=True keeps the graph and
    cuda_graph=False launches one by one whatever the size."""
    from autofuse.backends.cuda.runtime import graph as cuda_graph
    from autofuse.backends.cuda.tuning import DEFAULT
    monkeypatch.setattr(cuda_graph, "build", lambda program, hold: (None, "graph"))
    program, inputs = program_for(lambda x: x * 2 + 1, (size,))
    program.graph_mode = mode
    call, text = program._host_call()
    if expected == "graph":
        assert text == "graph"
        return
    assert "launch_overlapped(overlapped0, kernel0, " in text
    assert text.startswith("# kernels launched one by one, each overlapping") == (mode is None)
    if mode is None:
        assert f"at least {DEFAULT.direct_bytes >> 20} MiB a kernel" in text
    program.launch_overlapped.functions = []
    generated, _ = recorded(program, call, inputs)
    assert len(generated) == 1
    assert program.launch_overlapped.functions == [program.kernels[0].function]


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


def test_misaligned_arguments_take_a_program_built_for_them():
    """Kernels assume the arguments aligned at the first call 16-byte aligned (one vector body,
    KernelSource.assumed); the generated call checks those arguments' pointers and hands a call
    where one is not to program.misaligned, whose program for it (variant_for, made once a
    pattern) has the checked two bodies where the kernels read that argument."""
    fn = lambda x, y: np.maximum(x * y + 1, 0)
    program, inputs = program_for(fn, (512, 64), (64,))
    assert program.aligned_inputs == [0, 1]
    handed = []
    program.misaligned = lambda call_inputs: handed.append(call_inputs) or ["handed"]
    fast, text = cuda_host.build(program)
    assert ("    a0 = pointer(x0)\n    a1 = pointer(x1)\n    if (a0 | a1) & 15:\n"
            "        return misaligned(inputs)") in text
    # (each pointer read once: the parameter blocks take the values the check read)
    assert "= a0\n" in text and "= a1\n" in text and "pointer(x0)" not in text.split("& 15")[1]
    generated, results = recorded(program, fast, inputs)
    assert len(generated) == len(program.kernels) and not handed
    shifted = Array((512 * 64 + 1,), np.float32)
    shifted.host = shifted.host[1:].reshape(512, 64)
    assert shifted.pointer % 16
    assert fast([shifted, inputs[1]]) == ["handed"] and handed == [[shifted, inputs[1]]]
    assert program.fast is None          # (the general path checks the same arguments)
    assert program([shifted, inputs[1]]) == ["handed"] and len(handed) == 2
    variant = type(program).variant_for(program, [shifted, inputs[1]])
    assert variant is type(program).variant_for(program, [shifted, inputs[1]])   # made once
    assert variant.aligned_inputs == []      # (the kernel reads both: it checks both itself)
    (kernel,) = variant.kernels
    assert "element by element" in kernel.text and kernel.source.assumed == []
    (assumed,) = program.kernels
    assert "element by element" not in assumed.text and assumed.source.assumed
