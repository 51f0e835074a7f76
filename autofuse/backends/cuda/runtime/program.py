"""A signature's kernels run on the GPU (CudaProgram: the caller's stream and memory pool, a
generated host call once loaded) or under numba's CUDA simulator (SimulatorProgram)."""

from __future__ import annotations

import copy
import threading

import numpy as np

from ....arrays import library_for
from ....ir import fourier
from ....debug import STATE as _DEBUG, host_call as _debug_host, run_steps as _debug_steps
from ....errors import BackendError
from ..compile import note_compiled, prepare_missing
from ..kernel import atomic_scratch, storage_dtype
from . import buffers as cuda_buffers
from . import driver as cuda_driver
from . import graph as cuda_graph
from . import host as cuda_host
from .library_fft import FourierStep
from .library_sort import LibrarySortStep, library_step

_lock = threading.Lock()


class CudaStep:
    """One launch: its argument plan is fixed per signature, so a call only reads pointers."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.scratch = None
        self.params = [(p.node.id, p.node.dtype.type if p.by_value else None)
                       for p in kernel.source.params]
        self.outputs = [(p.node.id, p.node.shape, p.node.dtype) for p in kernel.source.outputs]
        self.always = any(p.node.size for p in kernel.source.outputs)   # else nothing to write
        self.owners = [node for node, _, _ in self.outputs]   # whose memory each output takes
        # a slice assignment written in place: its one output takes its base's memory
        self.into = getattr(kernel, "into", None)

    def scratch_arguments(self, library) -> list:
        if self.scratch is None:
            arrays = [library.zeros((count,), dtype) for _, count, dtype in self.kernel.source.scratch]
            self.scratch = []
            for (name, count, dtype), array in zip(self.kernel.source.scratch, arrays):
                pointer = library.pointer(array)
                if atomic_scratch(name):
                    self.scratch += [0, 0, count, dtype.itemsize, pointer, count, dtype.itemsize]
                else:
                    self.scratch.append(pointer)
            self.scratch_arrays = arrays
        return self.scratch

    def launch(self, memory: dict, library, stream, launch) -> None:
        pointer = library.pointer
        args = [pointer(memory[node]) if cast is None else cast(memory[node])
                for node, cast in self.params]
        empty = library.empty
        for (node, shape, dtype), owner in zip(self.outputs, self.owners):
            out = memory[node] = empty(shape, dtype) if owner == node else memory[owner]
            args.append(pointer(out))
        args += [size.argument() for size in self.kernel.source.sizes]
        if self.kernel.source.scratch:
            args += self.scratch_arguments(library)
        if self.always:
            launch(stream, self.kernel.config, self.kernel.function, *args)


def _step(kernel):
    """A kernel's launch, or the array library's sort or FFT in its place."""
    if getattr(kernel, "library", False):
        return FourierStep(kernel)
    return LibrarySortStep(CudaStep(kernel)) if library_step(kernel) else CudaStep(kernel)


class CudaProgram:
    """Runs one signature's kernels on the GPU, on the caller's stream and memory pool."""

    def __init__(self, entry, kernels, tuning):
        self.name = entry.name
        self.function_key = entry.function_key     # (compile.note_compiled's)
        self.graph = entry.graph
        self.kernels = kernels
        self.steps = [_step(k) for k in kernels]
        self.compiled = [k for k in kernels if not getattr(k, "library", False)]
        self.outputs = [(n.id, n.op in ("input", "constant")) for n in self.graph.outputs]
        # intermediates share memory by liveness (runtime/buffers.py)
        self.buffers = cuda_buffers.shared_buffers(self.steps, {node for node, _ in self.outputs})
        for step in self.steps:
            step.owners = [self.buffers.get(node, node) for node, _, _ in step.outputs]
        self.loaded = False
        self.library = None
        self.constants = {}
        self.inputs = [(n.id, n.ndim > 0) for n in self.graph.inputs]
        self.fast = None              # the generated call (runtime/graph.py or runtime/host.py)
        self.host_source = None
        # cuda_graph: None (default) replays as a CUDA graph with intermediates allocated per
        # call; True, a graph that owns its intermediates; False, kernels launched one by one.
        self.graph_mode = entry.options.get("cuda_graph")
        self.graph_call = None        # cuda_graph.GraphCall, when replayed as a CUDA graph
        self.bytes_fused = entry.fused.bytes_fused()
        self.direct_bytes = tuning.direct_bytes
        # the arguments some kernel reads or writes as 16-byte vectors unchecked (KernelSource.
        # assumed: they were aligned at the signature's first call): positions in `inputs`; a
        # call where one is not runs the program built for it (misaligned())
        self.entry = entry
        position = {node: k for k, (node, _) in enumerate(self.inputs)}
        self.aligned_inputs = sorted({position[p.node.id] for k in self.compiled
                                      for p in k.source.params
                                      if p.name in k.source.assumed and p.node.id in position})
        self.variants: dict = {}      # misaligned input node ids -> the program built for them

    def ensure_loaded(self, leaves) -> None:
        with _lock:
            if self.loaded:
                return
            device = cuda_driver.ensure_context()
            prepare_missing(self.compiled, device)
            for kernel in self.compiled:
                kernel.load(device)
            note_compiled(self.function_key)
            self.library = library_for(leaves)
            self.constants = {n.id: self.library.from_host(np.ascontiguousarray(
                n.attrs["value"].array)) for n in self.graph.nodes if n.op == "constant" and n.ndim}
            self.launch = cuda_driver.launch
            self.launch_packed = cuda_driver.launch_packed
            self.launch_kernel = cuda_driver.driver().cuLaunchKernel
            self.launch_overlapped = cuda_driver.driver().cuLaunchKernelEx
            if cuda_host.plannable(self, leaves):
                self.fast, self.host_source = self._host_call()
            elif self.graph_mode:
                self.host_source = ("# no CUDA graph for this signature: every array argument must "
                                    f"be a {self.library.name} device array and every result "
                                    "computed; calls take the general path")
            self.loaded = True
            if _DEBUG.active and self.host_source:
                _debug_host(self.host_source)

    def _host_call(self) -> tuple:
        """(generated call, its text): a CUDA graph replay (runtime/graph.py) unless the user asked
        for separate launches (runtime/host.py), the call runs a library step (an FFT, a sort) or,
        by default, a call moves at least Tuning.direct_bytes a kernel; where the driver cannot
        build the graph and none was asked for, separate launches, with the reason at the top of
        the text. Separate launches of kernels that wait
        for their prerequisite (CompiledKernel.overlaps) overlap the kernel before them."""
        overlap = any(kernel.overlaps for kernel in self.compiled)
        if self.graph_mode is False:
            return cuda_host.build(self, overlap)
        calls = cuda_host.library_calls(self)
        if calls:
            # NOTE: no graph around a library step. Capturing cupy.fft or torch.fft needs its
            # cuFFT plan made before capture and its result memory from an allocator that
            # capture allows (CuPy's default pool is not; torch's needs a graph pool); neither
            # was shown safe on a GPU here, so the step runs as the library's own call.
            call, text = cuda_host.build(self, overlap)
            return call, (f"# kernels launched one by one, not as a CUDA graph: the call runs "
                          f"{self.library.name}'s {', '.join(calls)} between them (a library "
                          f"step is not captured)\n{text}")
        if self.graph_mode is None and self.bytes_fused >= self.direct_bytes * len(self.kernels):
            # NOTE: a graph saves host time (H200: 2.7 µs a call against 4.6 µs a kernel
            # launched), which a call this large hides behind its kernels' GPU time; launched
            # directly, a kernel that waits for its prerequisite starts while the kernel before
            # it ends (layernorm 16384x4096 0.1291 -> 0.1270 ms, pdl_probe.py at c43e8fd).
            call, text = cuda_host.build(self, overlap)
            how = "each overlapping the end of the one before it where it waits for it " \
                  "(programmatic stream serialization)" if overlap else "plainly"
            return call, (f"# kernels launched one by one, {how}, not as a CUDA graph: a call "
                          f"moves {self.bytes_fused / 2 ** 20:.0f} MiB, at least "
                          f"{self.direct_bytes >> 20} MiB a kernel\n{text}")
        try:
            return cuda_graph.build(self, hold=self.graph_mode is True)
        except BackendError as error:
            if self.graph_mode:
                raise
            call, text = cuda_host.build(self, overlap)
            return call, f"# no CUDA graph ({error}): kernels launched one by one\n{text}"

    def stream(self):
        """The caller's current stream (its library's), as a CUstream."""
        return cuda_driver.stream(self.library.stream())

    def misaligned(self, inputs):
        """Run a call some of whose arguments' base addresses are not multiples of 16 bytes,
        where this program's kernels assume them aligned: by the program built for those
        arguments (the same groups, those kernels with an element-by-element body for other
        addresses), made at the first such call and kept."""
        return self.variant_for(inputs)(inputs)

    def variant_for(self, inputs) -> "CudaProgram":
        """The program for calls whose checked arguments (aligned_inputs) are misaligned as
        `inputs`' are: the same groups, prepared with those inputs misaligned."""
        from .. import prepare
        from ....kernels import Kernel
        found = self._misaligned_in(inputs)
        with _lock:
            variant = self.variants.get(found)
            if variant is None:
                entry = copy.copy(self.entry)
                entry.misaligned = self.entry.misaligned | found
                entry.misaligned_on_device = getattr(self.entry, "misaligned_on_device",
                                                     frozenset()) | found
                entry.kernels = [Kernel(record.group) for record in self.entry.kernels]
                prepare(entry)
                variant = self.variants[found] = entry.program
        return variant

    def _misaligned_in(self, inputs) -> frozenset:
        """The checked arguments (aligned_inputs) of this call not 16-byte aligned, as input
        node ids (a NumPy argument reaches the device as a new, aligned copy)."""
        return frozenset(self.inputs[k][0] for k in self.aligned_inputs
                         if not isinstance(inputs[k], np.ndarray)
                         and self.library.pointer(inputs[k]) % 16)

    def __call__(self, inputs):
        if self.fast is not None and not _DEBUG.active:
            return self.fast(inputs)
        if not self.loaded:
            self.ensure_loaded(inputs)
        library = self.library
        if self.aligned_inputs and self._misaligned_in(inputs):
            return self.misaligned(inputs)
        memory = dict(self.constants)
        # NOTE: a call with no device array (NumPy arrays, scalars) gets NumPy results back.
        host = True
        for (node, array), value in zip(self.inputs, inputs):
            if isinstance(value, np.ndarray):
                if array:      # compact and C-ordered, as the kernels read it (stages.build)
                    value = library.from_host(np.ascontiguousarray(value))
            elif not isinstance(value, (int, float, bool, np.generic)):
                host = False
            memory[node] = value
        stream = self.stream()
        if _DEBUG.active:     # level >= 2 synchronizes after each launch to time it
            _debug_steps(self.steps, lambda step: step.launch(memory, library, stream, self.launch),
                         lambda: cuda_driver.synchronize(stream),
                         records={k.group.id: k.record for k in self.kernels})
        else:
            for step in self.steps:
                step.launch(memory, library, stream, self.launch)
        outputs = []
        for node, borrowed in self.outputs:
            value = memory[node]
            if borrowed and not isinstance(value, (int, float, bool, np.generic)):
                value = library.from_host(library.to_host(value))   # never alias an argument
            outputs.append(library.to_host(value) if host else value)
        return outputs

    def copy_into(self, target, value) -> None:
        self.library.copy_into(target, value)


class SimulatorProgram:
    """The same kernels under numba's CUDA simulator, on NumPy arrays (CI checks their logic)."""

    def __init__(self, entry, kernels):
        self.graph = entry.graph
        self.kernels = kernels
        self.functions = []
        for kernel in kernels:
            if getattr(kernel, "library", False):     # (an FFT: NumPy's, on NumPy arrays)
                self.functions.append(None)
                continue
            namespace: dict = {}
            exec(compile(kernel.text, f"<autofuse {kernel.source.name}>", "exec"), namespace)
            self.functions.append(namespace[kernel.source.name])

    def __call__(self, inputs):
        memory = {n.id: n.attrs["value"].array for n in self.graph.nodes if n.op == "constant"}
        for node, value in zip(self.graph.inputs, inputs):
            memory[node.id] = value
        for kernel, function in zip(self.kernels, self.functions):
            if function is None:
                node = kernel.node
                memory[node.id] = fourier.evaluate(memory[node.inputs[0].id], node.attrs)
                continue
            source = kernel.source
            args = []
            for param in source.params:
                value = memory[param.node.id]
                if param.by_value:
                    args.append(param.node.dtype.type(value))
                else:
                    args.append(_flat(value, param.node.dtype))
            outs = [np.full(max(1, p.node.size), _poison(p.node.dtype), storage_dtype(p.node.dtype))
                    for p in source.outputs]
            into = getattr(kernel, "into", None)
            if into is not None:           # (written in place: its base's memory, read above)
                outs = [args[[p.node.id for p in source.params].index(into)]]
            args += outs
            args += [size.argument() for size in source.sizes]
            args += [np.zeros(count, dtype) for _, count, dtype in source.scratch]
            if any(p.node.size for p in source.outputs):
                function[source.grid, source.block](*args)
            for param, out in zip(source.outputs, outs):
                memory[param.node.id] = out[:param.node.size].view(
                    param.node.dtype if param.node.dtype.kind != "b" else np.bool_).reshape(
                    param.node.shape)
        return [np.array(memory[n.id], copy=True) for n in self.graph.outputs]


def _flat(value, dtype) -> np.ndarray:
    array = np.ascontiguousarray(value, dtype=dtype).reshape(-1)
    if not array.flags.writeable:     # a graph constant: the simulator copies arguments back
        array = array.copy()
    return array.view(np.uint8) if array.dtype.kind == "b" else array


def _poison(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return 7
    return np.iinfo(dtype).max

