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

import numpy as np

from ..errors import BackendError, where
from . import cuda_driver, cuda_host


class GraphCall:
    """The executable graph of one signature and the generated function that replays it."""

    def __init__(self, program, driver=None):
        if driver is None:
            from cuda.bindings import driver
        self.driver = driver
        self.program = program
        self.memory = {}                           # node -> intermediate owned by the graph
        self.held = []                             # ... described, for the generated text
        planned = cuda_host.plan(program, self._allocate)
        assert not isinstance(planned, str), planned      # cuda_host.plannable() checked it
        self.nodes, self.fresh = planned
        self.packed = [cuda_driver.Packed(len(node.slots)) for node in self.nodes]
        self.namespace: dict = {}
        # NOTE: filling the parameter blocks sets their fixed slots, which the graph's nodes copy
        # when they are added; the lines that rewrite the per-call slots are kept for the call.
        self.fills = [cuda_host.fill(program, node, n, packed, self.namespace)
                      for n, (node, packed) in enumerate(zip(self.nodes, self.packed))]
        self.params = []
        self.handles = []
        self.graph = self.exec = None
        self._build()
        self.call, self.text = self._generate()

    def _allocate(self, node, shape, dtype) -> int:
        array = self.memory[node] = self.program.library.empty(shape, dtype)
        self.held.append(f"v{node} {tuple(shape)} {np.dtype(dtype)}")
        return self.program.library.pointer(array)

    def _build(self) -> None:
        driver = self.driver
        check = cuda_driver.check
        self.graph = check(driver.cuGraphCreate(0), "cuGraphCreate")
        previous = []
        for node, packed in zip(self.nodes, self.packed):
            kernel = self.program.steps[node.step].kernel
            params = driver.CUDA_KERNEL_NODE_PARAMS()
            params.func = kernel.function
            params.gridDimX, params.gridDimY, params.gridDimZ = kernel.config.grid
            params.blockDimX, params.blockDimY, params.blockDimZ = kernel.config.block
            params.sharedMemBytes = 0
            params.kernelParams = packed.address
            handle = check(driver.cuGraphAddKernelNode(self.graph, previous, len(previous),
                                                       params), "cuGraphAddKernelNode")
            previous = [handle]
            self.params.append(params)
            self.handles.append(handle)
        self.exec = check(driver.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")

    def _generate(self):
        """The per-call function as Python source (kept for reading) and the function."""
        program = self.program
        driver = self.driver
        namespace = dict(self.namespace, set_params=driver.cuGraphExecKernelNodeSetParams,
                         launch_graph=driver.cuGraphLaunch, graph=self.exec, failed=self._failed)
        lines = cuda_host.preamble(program, self.fresh, namespace)
        for n, (node, fill) in enumerate(zip(self.nodes, self.fills)):
            kernel = program.steps[node.step].kernel.source.name
            if not node.per_call:
                lines.append(f"        # {kernel}: every parameter fixed when the graph was built")
                continue
            lines += fill
            namespace[f"node{n}"] = self.handles[n]
            namespace[f"params{n}"] = self.params[n]
            lines.append(f"        if set_params(graph, node{n}, params{n})[0]:    # {kernel}")
            lines.append("            failed('cuGraphExecKernelNodeSetParams')")
        if self.nodes:
            lines.append("        if launch_graph(graph, stream)[0]:")
            lines.append("            failed('cuGraphLaunch')")
        else:
            lines.append("        pass    # every result is empty: nothing to launch")
        lines.append(cuda_host.results_line(program))
        if self.held:
            lines.append("# held by the graph: " + ", ".join(self.held))
        text = "\n".join(lines) + "\n"
        exec(compile(text, "<autofuse graph call>", "exec"), namespace)
        return namespace["call"], text

    def _failed(self, what: str):
        raise BackendError(f"{self.program.name}(): CUDA graph replay: {what} failed{where()}")

    def __del__(self):
        driver = getattr(self, "driver", None)
        try:
            if self.exec is not None:
                driver.cuGraphExecDestroy(self.exec)
            if self.graph is not None:
                driver.cuGraphDestroy(self.graph)
        except Exception:        # interpreter shutdown: the driver may already be gone
            pass


def build(program, driver=None) -> tuple:
    """(call function, its source) replaying `program` as one CUDA graph (`driver`: cuda.bindings'
    driver module, or a stand-in for tests)."""
    graph = GraphCall(program, driver)
    program.graph_call = graph
    return graph.call, graph.text
