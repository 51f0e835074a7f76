"""CUDA graph replay: a signature's kernels as one CUDA graph, launched with one driver call per
call. It is how a cached CUDA call runs by default, whenever cuda_host.plannable() allows a
generated host call; `autofuse.jit(fn, cuda_graph=False)` launches the kernels one by one instead.

Why by default: on an H200 host, cuLaunchKernel took 4.6 µs of a call where updating a graph
node's parameters and launching the graph took 2.7 µs (cuGraphExecKernelNodeSetParams 0.6 µs,
cuGraphLaunch 2.1 µs), one kernel, CuPy arguments; every benchmark workload's GPU time was the
same either way (BENCHMARKS.md). A call of several kernels saves a launch per kernel.

The graph is built once per signature and each call changes only what must change:

- the kernels are added to the graph explicitly (not by stream capture), chained in program order;
- every kernel parameter lives in an 8-byte slot of a NumPy array the driver reads when told:
  `cuGraphExecKernelNodeSetParams` copies the values, so launches already queued keep theirs;
- per call, only the slots of arguments and results change (results are new arrays, as without
  graphs), and those of intermediates, which are allocated per call from the caller's pool like
  results; a kernel that touches none of them is never updated;
- `cuda_graph=True` (like torch.compile's mode="reduce-overhead") makes the graph own its
  intermediates instead: allocated once, no allocation or update for them per call, at the cost of
  keeping them allocated while the signature is cached (they are listed in the generated text);
- CUDA orders every launch of one executable graph after the previous one, so calls of one
  signature never run at once, even from different streams (pass cuda_graph=False to let them
  overlap); a lock makes set-then-launch atomic between threads.

Calls that cannot use a generated call (NumPy arguments, which are copied in; a result that is
an argument; debug output) take the ordinary path with the same results.
"""
from __future__ import annotations

import numpy as np

from ....errors import BackendError, where
from . import driver as cuda_driver
from . import host as cuda_host


class GraphCall:
    """The executable graph of one signature and the generated function that replays it."""

    def __init__(self, program, driver=None, hold=False):
        if driver is None:
            from cuda.bindings import driver
        self.driver = driver
        self.program = program
        self.memory = {}                           # node -> intermediate owned by the graph
        self.held = []                             # ... described, for the generated text
        planned = cuda_host.plan(program, self._allocate if hold else None)
        assert not isinstance(planned, str), planned      # cuda_host.plannable() checked it
        self.nodes, self.fresh = planned
        # (program._host_call sends a call with library steps to host.py's launches instead)
        assert not any(isinstance(node, cuda_host.LibraryPlan) for node in self.nodes), \
            "a library step in a CUDA graph"
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
                         launch_graph=driver.cuGraphLaunch, graph=self.exec, replay=self._replay)
        lines = cuda_host.preamble(program, self.fresh, namespace)
        # NOTE: one condition, short-circuited: the first driver call that fails skips the rest,
        # and _replay() does them all again, checked (after making the context current, where
        # that was what failed), so nothing is launched twice.
        calls = []
        for n, (node, fill) in enumerate(zip(self.nodes, self.fills)):
            kernel = program.steps[node.step].kernel.source.name
            if not node.per_call:
                lines.append(f"        # {kernel}: every parameter fixed when the graph was built")
                continue
            lines += fill
            namespace[f"node{n}"] = self.handles[n]
            namespace[f"params{n}"] = self.params[n]
            calls.append(f"set_params(graph, node{n}, params{n})[0]    # {kernel}")
        if self.nodes:
            calls.append("launch_graph(graph, stream)[0]")
            lines.append("        if (" + "\n                or ".join(calls) + "):")
            lines.append("            replay(stream)")
        else:
            lines.append("        pass    # every result is empty: nothing to launch")
        lines.append(cuda_host.results_line(program))
        if self.held:
            lines.append("# held by the graph: " + ", ".join(self.held))
        text = "\n".join(lines) + "\n"
        exec(compile(text, "<autofuse graph call>", "exec"), namespace)
        return namespace["call"], text

    def _replay(self, stream, retry=True) -> None:
        """The generated call's driver calls again, each checked: a BackendError names the one
        that fails. A thread that never used the GPU has no current context (the generated call
        found CUDA_ERROR_INVALID_CONTEXT): made current, then tried once more."""
        driver = self.driver
        steps = [(driver.cuGraphExecKernelNodeSetParams, (self.exec, handle, params),
                  "cuGraphExecKernelNodeSetParams")
                 for node, handle, params in zip(self.nodes, self.handles, self.params)
                 if node.per_call]
        steps.append((driver.cuGraphLaunch, (self.exec, stream), "cuGraphLaunch"))
        for function, args, what in steps:
            error = int(function(*args)[0])
            if error == cuda_driver.INVALID_CONTEXT and retry:
                cuda_driver.set_context()
                return self._replay(stream, retry=False)
            if error:
                raise BackendError(f"{self.program.name}(): CUDA graph replay: {what} failed "
                                   f"({cuda_driver.error_text(error)}){where()}")

    def __del__(self):
        driver = getattr(self, "driver", None)
        try:
            if self.exec is not None:
                driver.cuGraphExecDestroy(self.exec)
            if self.graph is not None:
                driver.cuGraphDestroy(self.graph)
        except Exception:        # interpreter shutdown: the driver may already be gone
            pass


def build(program, driver=None, hold=False) -> tuple:
    """(call function, its source) replaying `program` as one CUDA graph (`driver`: cuda.bindings'
    driver module, or a stand-in for tests); `hold`: the graph owns the intermediates."""
    graph = GraphCall(program, driver, hold)
    program.graph_call = graph
    return graph.call, graph.text
