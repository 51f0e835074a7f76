"""CUDA graph replay: a signature's kernels as one CUDA graph, launched with one driver call per
call (opt-in, `autofuse.jit(fn, cuda_graph=True)`, like torch.compile's mode="reduce-overhead").

A call of a several-kernel function otherwise pays one launch (about 3.4 µs on an H200) and one
allocation per kernel. Here the graph is built once per signature and each call changes only what
must change:

- the kernels are added to the graph explicitly (not by stream capture), chained in program order;
- every kernel parameter lives in an 8-byte slot of a NumPy array the driver reads when told:
  `cuGraphExecKernelNodeSetParams` copies the values, so launches already queued keep theirs;
- per call, only the slots of arguments and results change (results are new arrays, as without
  graphs); intermediates, constants and scratch are allocated once and owned by the graph (as
  torch's static graph memory pool is), and a kernel that touches no argument or result is never
  updated;
- CUDA orders every launch of one executable graph after the previous one, so two launches never
  share an intermediate at once, even from different streams; a lock makes set-then-launch atomic
  between threads.

The cost: the graph's intermediates stay allocated while the signature is cached (they are listed
in the generated call's text). Calls that cannot use a graph (NumPy arguments, which are copied
in; a result that is an argument; debug output) take the ordinary path with the same results.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..errors import BackendError
from . import cuda_driver
from .cuda_host import POINTER


@dataclass
class Slot:
    """Where one kernel parameter's value comes from on each call."""
    kind: str                    # "argument" (pointer of input k), "scalar" (input k by value),
    source: object               # "result" (pointer of a new result), "static" (fixed integer)
    cast: object = None          # scalar: the parameter's NumPy type


@dataclass
class NodePlan:
    step: int                    # index into program.steps
    slots: list = field(default_factory=list)

    @property
    def per_call(self) -> bool:
        return any(slot.kind != "static" for slot in self.slots)


def plan(program, static_memory) -> tuple[list, list] | str:
    """(node plans, results allocated per call) for `program`, or why it cannot be a graph.
    `static_memory(node, shape, dtype)` allocates an intermediate and returns its pointer."""
    results = {node for node, _ in program.outputs}
    inputs = {node: k for k, (node, _) in enumerate(program.inputs)}
    pointers = {node: program.library.pointer(value) for node, value in program.constants.items()}
    nodes, fresh = [], []
    for s, step in enumerate(program.steps):
        slots = []
        for node, cast in step.params:
            if node in inputs:
                slots.append(Slot("scalar" if cast is not None else "argument", inputs[node], cast))
            elif cast is not None:
                return f"{step.kernel.source.name} takes a computed value by value"
            elif node in results:
                slots.append(Slot("result", node))
            else:
                slots.append(Slot("static", pointers[node]))
        for node, shape, dtype in step.outputs:
            if node in results:
                fresh.append((node, shape, dtype))
                slots.append(Slot("result", node))
            else:
                pointers[node] = static_memory(node, shape, dtype)
                slots.append(Slot("static", pointers[node]))
        if step.kernel.source.scratch:
            slots += [Slot("static", value) for value in step.scratch_arguments(program.library)]
        if step.always:
            nodes.append(NodePlan(s, slots))
    return nodes, fresh


class GraphCall:
    """The executable graph of one signature and the generated function that replays it."""

    def __init__(self, program, driver=None):
        if driver is None:
            from cuda.bindings import driver
        self.driver = driver
        self.program = program
        self.memory = {}                           # node -> intermediate owned by the graph
        self.held = []                             # ... described, for the generated text
        planned = plan(program, self._allocate)
        if isinstance(planned, str):
            raise BackendError(f"no CUDA graph for this signature: {planned}")
        self.nodes, self.fresh = planned
        self.slots = []                            # per node: (values, addresses) arrays
        self.params = []
        self.handles = []
        self.graph = self.exec = None
        self._build()
        self.lock = threading.Lock()             # set-parameters-then-launch, atomically
        self.call, self.text = self._generate()

    def _allocate(self, node, shape, dtype) -> int:
        array = self.memory[node] = self.program.library.empty(shape, dtype)
        self.held.append(f"v{node} {tuple(shape)} {np.dtype(dtype)}")
        return self.program.library.pointer(array)

    def _check(self, result, what: str):
        error = result[0]
        if int(error) != 0:
            raise BackendError(f"CUDA graph: {what} failed ({error!r})")
        return result[1] if len(result) > 1 else None

    def _build(self) -> None:
        driver = self.driver
        self.graph = self._check(driver.cuGraphCreate(0), "cuGraphCreate")
        previous = []
        for node in self.nodes:
            kernel = self.program.steps[node.step].kernel
            values = np.zeros(max(1, len(node.slots)), np.uint64)
            addresses = np.array([values.ctypes.data + 8 * i for i in range(len(values))], np.uint64)
            for i, slot in enumerate(node.slots):
                if slot.kind == "static":
                    values[i] = slot.source
            params = driver.CUDA_KERNEL_NODE_PARAMS()
            params.func = kernel.function
            params.gridDimX, params.gridDimY, params.gridDimZ = _dims(kernel.config.grid)
            params.blockDimX, params.blockDimY, params.blockDimZ = _dims(kernel.config.block)
            params.sharedMemBytes = 0
            params.kernelParams = int(addresses.ctypes.data)
            handle = self._check(driver.cuGraphAddKernelNode(self.graph, previous, len(previous),
                                                             params), "cuGraphAddKernelNode")
            previous = [handle]
            self.slots.append((values, addresses))
            self.params.append(params)
            self.handles.append(handle)
        self.exec = self._check(driver.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")

    def _generate(self):
        """The per-call function as Python source (kept for reading) and the function."""
        program = self.program
        library = program.library
        pointer = POINTER.get(library.name, "pointer({})")
        names = {node: f"x{k}" for k, (node, _) in enumerate(program.inputs)}
        driver = self.driver
        namespace = {"empty": library.empty, "pointer": library.pointer, "lock": self.lock,
                     "set_params": driver.cuGraphExecKernelNodeSetParams,
                     "launch_graph": driver.cuGraphLaunch, "graph": self.exec,
                     "current_stream": library.stream, "stream_of": cuda_driver.stream,
                     "failed": self._failed}
        arguments = [f"x{k}" for k in range(len(program.inputs))]
        lines = ["def call(inputs):",
                 f"    {', '.join(arguments)}{',' if len(arguments) == 1 else ''} = inputs"
                 if arguments else "    pass"]
        for node, shape, dtype in self.fresh:
            names[node] = f"v{node}"
            namespace[f"dtype{node}"] = dtype
            lines.append(f"    v{node} = empty({tuple(shape)!r}, dtype{node})")
        lines += ["    stream = stream_of(current_stream())",
                  "    with lock:"]
        for n, node in enumerate(self.nodes):
            kernel = program.steps[node.step].kernel.source.name
            if not node.per_call:
                lines.append(f"        # {kernel}: every parameter fixed when the graph was built")
                continue
            values, _ = self.slots[n]
            namespace[f"slots{n}"] = values
            for i, slot in enumerate(node.slots):
                if slot.kind == "argument":
                    lines.append(f"        slots{n}[{i}] = {pointer.format('x' + str(slot.source))}")
                elif slot.kind == "result":
                    lines.append(f"        slots{n}[{i}] = {pointer.format(names[slot.source])}")
                elif slot.kind == "scalar":
                    view = values[i:i + 1].view(np.dtype(slot.cast))
                    namespace[f"scalar{n}_{i}"] = view
                    namespace[f"as{n}_{i}"] = slot.cast
                    lines.append(f"        scalar{n}_{i}[0] = as{n}_{i}(x{slot.source})")
            namespace[f"node{n}"] = self.handles[n]
            namespace[f"params{n}"] = self.params[n]
            lines.append(f"        if set_params(graph, node{n}, params{n})[0]:    # {kernel}")
            lines.append(f"            failed('cuGraphExecKernelNodeSetParams')")
        if self.nodes:
            lines.append("        if launch_graph(graph, stream)[0]:")
            lines.append("            failed('cuGraphLaunch')")
        else:
            lines.append("        pass    # every result is empty: nothing to launch")
        lines.append(f"    return [{', '.join(names[node] for node, _ in program.outputs)}]")
        if self.held:
            lines.append("# held by the graph: " + ", ".join(self.held))
        text = "\n".join(lines) + "\n"
        exec(compile(text, "<autofuse graph call>", "exec"), namespace)
        return namespace["call"], text

    def _failed(self, what: str):
        raise BackendError(f"CUDA graph replay: {what} failed")

    def __del__(self):
        driver = getattr(self, "driver", None)
        try:
            if self.exec is not None:
                driver.cuGraphExecDestroy(self.exec)
            if self.graph is not None:
                driver.cuGraphDestroy(self.graph)
        except Exception:        # interpreter shutdown: the driver may already be gone
            pass


def _dims(value) -> tuple:
    dims = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    return tuple(dims) + (1,) * (3 - len(dims))


def build(program, driver=None) -> tuple:
    """(call function, its source) replaying `program` as one CUDA graph (`driver`: cuda.bindings'
    driver module, or a stand-in for tests)."""
    graph = GraphCall(program, driver)
    program.graph_call = graph
    return graph.call, graph.text
