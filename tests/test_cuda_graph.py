"""CUDA graph replay (autofuse/backends/cuda_graph.py) without a GPU: a stand-in driver keeps
each graph node's parameter bytes as the real one does (copied at node creation and at
cuGraphExecKernelNodeSetParams) and records them at each cuGraphLaunch. Each replay must run the
same kernels, in the same order, with the same arguments (by role: an argument's pointer, a result's,
a scalar's value, an intermediate's) as the general call path; on a GPU the results are checked
against NumPy in tests/test_cuda_gpu.py."""
import ctypes

import numpy as np
import pytest

import autofuse
from autofuse.errors import ArgumentError

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("the simulator runs its own program class", allow_module_level=True)

from autofuse.backends.cuda.runtime import graph as cuda_graph  # noqa: E402
from test_cuda_host import Array, program_for, recorded  # noqa: E402


class Params:
    """CUDA_KERNEL_NODE_PARAMS' fields, as plain attributes."""


class Driver:
    """The driver calls cuda_graph.py makes, over Python objects: nodes keep the parameter bytes
    they were last given; a launch records every node's (function, grid, parameters)."""

    CUDA_KERNEL_NODE_PARAMS = Params

    def __init__(self):
        self.nodes = []
        self.launches = []
        self.updates = 0

    @staticmethod
    def _read(params, count):
        addresses = (ctypes.c_uint64 * count).from_address(params.kernelParams)
        return tuple(ctypes.c_uint64.from_address(a).value for a in addresses)

    def cuGraphCreate(self, flags):
        return (0, "graph")

    def cuGraphAddKernelNode(self, graph, dependencies, count, params):
        assert list(dependencies) == ([len(self.nodes) - 1] if self.nodes else [])
        self.nodes.append([params, self._read(params, params.count)])
        return (0, len(self.nodes) - 1)

    def cuGraphInstantiate(self, graph, flags):
        return (0, "exec")

    def cuGraphExecKernelNodeSetParams(self, graph, node, params):
        assert graph == "exec"
        self.updates += 1
        self.nodes[node][1] = self._read(params, params.count)
        return (0,)

    def cuGraphLaunch(self, graph, stream):
        self.launches.append((stream, [(p.func, (p.gridDimX, p.gridDimY, p.gridDimZ), values)
                                       for p, values in self.nodes]))
        return (0,)

    def cuGraphExecDestroy(self, graph):
        return (0,)

    cuGraphDestroy = cuGraphExecDestroy


def _count_params(program):
    """Each kernel's parameter count, for the stand-in driver to read (the real one knows)."""
    counts = []
    for step in program.steps:
        scratch = len(step.scratch_arguments(program.library)) if step.kernel.source.scratch else 0
        counts.append(len(step.params) + len(step.outputs) + scratch)
    return counts


def graph_for(fn, *shapes, hold=False):
    program, inputs = program_for(fn, *shapes)
    for kernel in program.kernels:              # (program_for gave each a cuda_driver.Config)
        kernel.function = f"function:{kernel.source.name}"
    driver = Driver()
    counts = _count_params(program)
    original = Driver.cuGraphAddKernelNode

    def add(self, graph, dependencies, count, params, steps=iter([s for s in program.steps
                                                                    if s.always])):
        step = next(steps)
        params.count = counts[program.steps.index(step)]
        return original(self, graph, dependencies, count, params)
    driver.cuGraphAddKernelNode = add.__get__(driver)
    call, text = cuda_graph.build(program, driver, hold)
    return program, inputs, driver, call, text


def _roles(launch_args, results, inputs, program):
    """Launch arguments named by role, scalars decoded by the kernel parameter's type."""
    out = {r.pointer: f"result{k}" for k, r in enumerate(results) if isinstance(r, Array)}
    ins = {a.pointer: f"input{k}" for k, a in enumerate(inputs) if isinstance(a, Array)}
    fresh: dict = {}
    named = []
    steps = [s for s in program.steps if s.always]
    for step, args in zip(steps, launch_args):
        row = []
        for p, arg in enumerate(args):
            cast = step.params[p][1] if p < len(step.params) else None
            if cast is not None:
                raw = arg if isinstance(arg, int) else None
                value = (np.array([raw], np.uint64).view(np.dtype(cast))[0] if raw is not None
                         else cast(arg))
                row.append(("value", float(value)))
            elif arg in ins or arg in out:
                row.append(ins.get(arg) or out[arg])
            else:
                row.append(fresh.setdefault(int(arg), f"fresh{len(fresh)}"))
        named.append((step.kernel.source.name, tuple(row)))
    return named


CASES = [
    (lambda x, y: np.maximum(x * y + 1, 0), ((64, 8), (8,))),
    (lambda x, s: (np.exp(x - x.max(-1, keepdims=True)) * s).sum(-1), ((16, 40), 2.5)),
    (lambda x, w, b: np.maximum(x @ w + b, 0).T + 1, ((32, 16), (16, 24), (24,))),
    (lambda x: ((x * x).sum(), x.argmax(), x[::2] * 3), ((1 << 17,),)),
    (lambda x: np.concatenate([x, np.arange(4, dtype=np.float32)]) * 2, ((5,),)),
    (lambda x, w: (np.tanh(x @ w) @ w.T).sum(0), ((40, 24), (24, 24))),
    (lambda x: np.tanh(x).T.T @ np.exp(x.T), ((24, 24),)),
]
IDS = ["broadcast", "scalar_argument", "matmul_then_loop", "split_and_slice", "constant",
       "intermediates", "intermediate_only_inputs"]


@pytest.mark.parametrize("hold", [False, True], ids=["per_call_memory", "graph_memory"])
@pytest.mark.parametrize("fn, shapes", CASES, ids=IDS)
def test_replay_launches_what_the_general_path_does(fn, shapes, hold):
    program, inputs, driver, call, text = graph_for(fn, *shapes, hold=hold)
    assert text.startswith("def call(inputs):") and "launch_graph(graph, stream)" in text
    general, general_results = recorded(program, program.__call__, inputs)
    for _ in range(2):                       # a second replay reuses the graph and its memory
        results = call(inputs)
        stream, nodes = driver.launches[-1]
        assert int(stream) == 7
        assert [(f, grid) for f, grid, _ in nodes] == [
            (f"function:{s.kernel.source.name}", s.kernel.config.grid)
            for s in program.steps if s.always]
        assert _roles([values for _, _, values in nodes], results, inputs, program) == \
            _roles([args for _, _, _, args in general], general_results, inputs, program)
        assert [r.host.shape for r in results] == [r.host.shape for r in general_results]


def test_each_call_gets_new_results_and_reads_new_arguments():
    program, inputs, driver, call, _ = graph_for(lambda x, y: np.tanh(x) * y, (64,), (64,))
    first = call(inputs)
    other = [Array((64,), np.float32), Array((64,), np.float32)]
    second = call(other)
    assert first[0].pointer != second[0].pointer
    (_, _, before), = driver.launches[0][1]
    (_, _, after), = driver.launches[1][1]
    assert before[:2] == (inputs[0].pointer, inputs[1].pointer) and before[2] == first[0].pointer
    assert after[:2] == (other[0].pointer, other[1].pointer) and after[2] == second[0].pointer


def _three_kernels(x, w):
    # tanh(x @ w), then a.T @ a, then a column sum of exp: the middle kernel reads and writes
    # only intermediates.
    a = np.tanh(x @ w)
    return np.exp(a.T @ a).sum(0)


def test_kernels_that_touch_no_argument_or_result_are_never_updated():
    # With cuda_graph=True the graph owns the intermediates, so only the first and last kernel
    # change per call.
    program, inputs, driver, call, text = graph_for(_three_kernels, (40, 24), (24, 24), hold=True)
    launched = sum(1 for s in program.steps if s.always)
    call(inputs)
    call(inputs)
    per_call = text.count("set_params(graph")
    assert launched >= 3 and per_call < launched
    assert driver.updates == 2 * per_call
    assert "held by the graph" in text and "fixed when the graph was built" in text


@pytest.mark.parametrize("hold", [False, True])
def test_intermediates_are_allocated_per_call_unless_the_graph_holds_them(hold):
    program, inputs, driver, call, text = graph_for(_three_kernels, (40, 24), (24, 24), hold=hold)
    allocated = []
    empty = call.__globals__["empty"]
    call.__globals__["empty"] = lambda shape, dtype: allocated.append(shape) or empty(shape, dtype)
    call(inputs)
    produced = [shape for s in program.steps for _, shape, _ in s.outputs]
    results = [n.shape for n in program.graph.outputs]
    assert len(produced) >= 3 and allocated == (results if hold else produced)
    assert ("held by the graph" in text) == hold
    launched = sum(1 for s in program.steps if s.always)
    assert (text.count("set_params(graph") < launched) == hold


def test_a_thread_without_a_context_gets_it_made_current_and_the_call_replayed(monkeypatch):
    from autofuse.backends.cuda.runtime import driver as cuda_driver
    made = []
    monkeypatch.setattr(cuda_driver, "set_context", lambda: made.append(1))
    # the driver refuses every call until the context is made current
    original = Driver.cuGraphExecKernelNodeSetParams
    monkeypatch.setattr(Driver, "cuGraphExecKernelNodeSetParams",
                        lambda *args: original(*args) if made else (cuda_driver.INVALID_CONTEXT,))
    program, inputs, driver, call, _ = graph_for(lambda x: np.tanh(x) * 2, (64,))
    results = call(inputs)
    assert made == [1] and len(driver.launches) == 1          # launched once, not twice
    (_, _, values), = driver.launches[0][1]
    assert values == (inputs[0].pointer, results[0].pointer)


def test_scalar_arguments_are_written_in_their_parameter_type():
    program, inputs, driver, call, _ = graph_for(lambda x, s: x * s, (8,), 2.5)
    call([inputs[0], 0.1])
    (_, _, values), = driver.launches[-1][1]
    (slot, cast), = [(p, cast) for p, (_, cast) in enumerate(program.steps[0].params) if cast]
    assert np.array([values[slot]], np.uint64).view(cast)[0] == cast(0.1)
    call([inputs[0], -3.0])
    (_, _, values), = driver.launches[-1][1]
    assert np.array([values[slot]], np.uint64).view(cast)[0] == -3.0


def test_cuda_graph_option_is_checked_and_kept():
    with pytest.raises(ArgumentError, match=r"cuda_graph(.|\n)*at .*test_cuda_graph\.py:\d+"):
        autofuse.jit(lambda x: x, cuda_graph="yes")
    for value in (None, False):
        lowered = autofuse.jit(lambda x: x * 2, backend="cuda", cuda_graph=value).lower(
            np.ones(4, np.float32))
        assert lowered._entry.options["cuda_graph"] is value
    f = autofuse.jit(lambda x: x * 2, backend="cuda", cuda_graph=True)
    lowered = f.lower(np.ones(4, np.float32))
    assert lowered._entry.options == {"cuda_graph": True, "float16": "numpy", "tuning": None,
                                      "max_ops": autofuse.trace.budget.MAX_OPS,
                                      "matmul_precision": "float32", "fft_limits": None}
    assert lowered.host_source is None                 # generated at the first call on a GPU


def test_the_cpu_backend_ignores_the_option():
    f = autofuse.jit(lambda x: x * 2 + 1, backend="cpu", cuda_graph=True)
    np.testing.assert_array_equal(f(np.arange(4.0)), np.arange(4.0) * 2 + 1)


def test_a_failed_replay_is_a_backend_error_naming_the_function_and_line(monkeypatch):
    monkeypatch.setattr(Driver, "cuGraphLaunch", lambda self, graph, stream: (1,))
    program, inputs, driver, call, _ = graph_for(lambda x: np.tanh(x) * 2, (64,))
    with pytest.raises(autofuse.BackendError,
                       match=r"(?s)<lambda>\(\): CUDA graph replay: cuGraphLaunch failed \(.*\)"
                             r".*test_cuda_graph"):
        call(inputs)


@pytest.mark.parametrize("mode", [None, True, False])
def test_where_no_graph_can_be_built_the_default_launches_kernels_one_by_one(monkeypatch, mode):
    """A driver that cannot build the graph: the default falls back to separate launches and
    says why at the top of the host call's text; cuda_graph=True (asked for) raises;
    cuda_graph=False never builds one."""
    from test_cuda_host import program_for
    program, inputs = program_for(lambda x: np.tanh(x) * 2, (64,))
    program.graph_mode = mode

    def refuse(program, driver=None, hold=False):
        raise autofuse.BackendError("CUDA driver call cuGraphInstantiate failed: CUDA_ERROR_X")
    monkeypatch.setattr(cuda_graph, "build", refuse)
    if mode is True:
        with pytest.raises(autofuse.BackendError, match="cuGraphInstantiate"):
            program._host_call()
        return
    call, text = program._host_call()
    assert text.startswith("# no CUDA graph (CUDA driver call cuGraphInstantiate") == \
        (mode is None)
    assert "launch_overlapped(overlapped0, kernel0" in text      # (the kernel waits: cuda_host)
    results = call(inputs)
    (_, _, _, args), = program.launch_kernel.calls
    assert args[0] == inputs[0].pointer and args[1] == results[0].pointer
