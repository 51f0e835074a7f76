"""The host side of a CUDA program, generated: one straight-line Python function per signature.

The general call path (CudaProgram.__call__) walks dictionaries of node ids, checks every input's
type and copies NumPy arrays in; none of that changes between calls of one signature. For the
common case (every array argument already on the device, no result that is an argument or a
constant) this module writes the call out once instead, like Inductor's generated wrapper: read
each argument's pointer, allocate each output and intermediate from the caller's library, write
the pointers into each kernel's pre-packed parameter block and launch it on the caller's stream.
Measured on an H200 (1024 floats, one kernel, CuPy): the general path 9.6 µs a call (cuda.core's
launch was 3.4 µs of it, cupy.empty 1.3 µs), this path 7.6 µs with cuda.core's launch.
A library step (an FFT by cupy.fft or torch.fft, runtime/library_fft.py; a long sort by CuPy or
torch, runtime/library_sort.py) is written in between the launches as one line: the library's
function, bound once per signature, called on its input; its result is the array the kernels
after it read (`v<node> = rfft_1(x0, n=1024, axis=1, norm='backward')`). Such a call is never
replayed as a CUDA graph (program.py's _host_call says why).
It allocates and reads the current stream through the library's own functions (arrays.py's
`allocate` and `current_stream`: for CuPy, no Python frame of autofuse's or CuPy's) and finds
that stream's CUstream with one dictionary lookup (runtime/driver.py's streams).

By default the same plan is replayed as a CUDA graph (runtime/graph.py: one cuGraphLaunch instead of
a cuLaunchKernel per kernel); this module's launches are what `jit(cuda_graph=False)` runs, what a
call moving 32 MiB or more a kernel runs by default (cuda.DIRECT_BYTES), and what runs where the
driver cannot build a graph. Kernels that wait for their prerequisite (Tuning.overlap) launch
here by cuLaunchKernelEx with programmatic stream serialization, so each starts while the
stream's kernel before it ends. plan(), preamble() and fill() serve both.

The text is kept (`CudaProgram.host_source`) so a user can read exactly what a call does.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

# How each library's array gives its device pointer, as an expression on the name `{}`.
POINTER = {"cupy": "{}.data.ptr", "torch": "{}.data_ptr()"}
# How each library's current stream (arrays.py's current_stream()) gives its raw handle, as an
# expression on `{}`; elsewhere it is the handle.
STREAM = {"cupy": "{}.ptr"}


def plannable(program, inputs) -> bool:
    """Whether calls of this signature can take the generated path: every array argument a device
    array of the program's library, every result computed (not an argument or constant, which
    the general path copies), and every kernel parameter and library step planned (plan())."""
    library = program.library
    for (node, array), value in zip(program.inputs, inputs):
        if array and (isinstance(value, np.ndarray)
                      or type(value).__module__.split(".")[0] != library.name):
            return False
    return not any(borrowed for _, borrowed in program.outputs) and \
        not isinstance(plan(program), str)


@dataclass
class Slot:
    """Where one kernel parameter's value comes from on each call."""
    kind: str                    # "argument" (pointer of input k), "scalar" (input k by value),
    source: object               # "result" (pointer of an array allocated per call, by node id),
    cast: object = None          # "static" (a fixed integer); scalar: the parameter's NumPy type


@dataclass
class NodePlan:
    step: int                    # index into program.steps
    slots: list = field(default_factory=list)

    @property
    def per_call(self) -> bool:
        return any(slot.kind != "static" for slot in self.slots)


@dataclass
class LibraryPlan:
    """A library step in the call: `v<node> = expression` on its input's array."""
    step: int                    # index into program.steps
    node: int                    # the node it computes: the library's new array, v<node>
    source: Slot                 # its input: "argument" k, "constant" node or "result" node
    expression: str              # the step's `inline()`: fields {source} and its functions'
    functions: dict              # field -> the library's function, bound once here


def inline(program, step):
    """A library step's (expression, functions) for the call; None for a kernel's launch (a
    sort step the library does not run for these arrays launches its own kernel)."""
    return step.inline(program.library) if getattr(step, "library", False) else None


def plan(program, static_memory=None) -> tuple[list, list] | str:
    """(a NodePlan per launch and a LibraryPlan per library step, in program order; arrays
    allocated per call as (node, shape, dtype)) for `program`,
    or why its calls cannot be planned. Arguments, results and constants have their pointers;
    intermediates are allocated per call, or once by `static_memory(node, shape, dtype)` (which
    returns the pointer) where given (a CUDA graph owns its intermediates); an intermediate that
    takes a dead one's memory (program.buffers, runtime/buffers.py) is allocated neither way."""
    results = {node for node, _ in program.outputs}
    inputs = {node: k for k, (node, _) in enumerate(program.inputs)}
    pointers = {node: program.library.pointer(value) for node, value in program.constants.items()}
    buffers = program.buffers
    nodes, fresh = [], []
    for s, step in enumerate(program.steps):
        call = inline(program, step)
        if call is not None:
            source = buffers.get(step.source.id, step.source.id)
            where = Slot("argument", inputs[source]) if source in inputs else \
                Slot("constant" if source in program.constants else "result", source)
            nodes.append(LibraryPlan(s, step.result.id, where, *call))
            continue
        if getattr(step.kernel, "library", False):    # an FFT with no library call to write
            return f"{step.kernel.library_name}.fft on {program.library.name} arrays"
        slots = []
        for node, cast in step.params:
            node = buffers.get(node, node)           # intermediates share memory by liveness
            if node in inputs:
                slots.append(Slot("scalar" if cast is not None else "argument", inputs[node], cast))
            elif cast is not None:
                return f"{step.kernel.source.name} takes a computed value by value"
            elif node in pointers:
                slots.append(Slot("static", pointers[node]))
            else:
                slots.append(Slot("result", node))
        for node, shape, dtype in step.outputs:
            owner = buffers.get(node, node)          # intermediates share memory by liveness
            if owner != node:
                slots.append(Slot("static", pointers[owner]) if owner in pointers
                             else Slot("result", owner))
            elif node in results or static_memory is None:
                fresh.append((node, shape, dtype))
                slots.append(Slot("result", node))
            else:
                pointers[node] = static_memory(node, shape, dtype)
                slots.append(Slot("static", pointers[node]))
        # sizes and strides of a kernel general over them: fixed for the signature
        slots += [Slot("static", size.argument()) for size in step.kernel.source.sizes]
        if step.kernel.source.scratch:    # the split reduction's partials and counter: fixed
            slots += [Slot("static", value) for value in step.scratch_arguments(program.library)]
        if step.always:                   # else every output is empty: nothing to launch
            nodes.append(NodePlan(s, slots))
    return nodes, fresh


def preamble(program, fresh, namespace) -> list[str]:
    """The call's first lines: unpack the arguments (x0, x1, ...), allocate what each call needs
    (v<node>), find the caller's stream, take the lock."""
    from . import driver as cuda_driver
    library = program.library
    namespace.update({"empty": library.allocate, "pointer": library.pointer,
                      "current_stream": library.current_stream, "streams": cuda_driver.streams,
                      "lock": threading.Lock()})
    handle = STREAM.get(library.name, "{}").format("current_stream()")
    arguments = [f"x{k}" for k in range(len(program.inputs))]
    lines = ["def call(inputs):",
             f"    {', '.join(arguments)}{',' if len(arguments) == 1 else ''} = inputs"
             if arguments else "    pass"]
    checked = getattr(program, "aligned_inputs", ())
    if checked:
        # NOTE: kernels read these as 16-byte vectors unchecked (they were aligned at the
        # signature's first call); a call where one is not runs the program built for it
        # (each pointer read once: fill() writes a{k} into the parameter blocks)
        pointer = POINTER.get(library.name, "pointer({})")
        namespace["misaligned"] = program.misaligned
        lines += [f"    a{k} = {pointer.format(f'x{k}')}" for k in checked]
        either = " | ".join(f"a{k}" for k in checked)
        lines += [f"    if ({either}) & 15:", "        return misaligned(inputs)"]
    for node, shape, dtype in fresh:
        namespace[f"dtype{node}"] = dtype
        lines.append(f"    v{node} = empty({tuple(shape)!r}, dtype{node})")
    return lines + [f"    stream = streams[{handle}]", "    with lock:"]


def fill(program, node: NodePlan, n: int, packed, namespace) -> list[str]:
    """Set `packed`'s fixed slots now; the lines that write its per-call ones (as p<n>[i])."""
    pointer = POINTER.get(program.library.name, "pointer({})")
    read = set(getattr(program, "aligned_inputs", ()))     # (pointers preamble() read: a<k>)
    # NOTE: written through a memoryview of the slots: a store costs about two thirds of NumPy's.
    namespace[f"p{n}"] = memoryview(packed.values)
    lines = []
    for i, slot in enumerate(node.slots):
        if slot.kind == "static":
            packed.set(i, slot.source)
        elif slot.kind == "scalar":
            namespace[f"s{n}_{i}"] = packed.view(i, slot.cast)
            namespace[f"as{n}_{i}"] = slot.cast
            lines.append(f"        s{n}_{i}[0] = as{n}_{i}(x{slot.source})")
        elif slot.kind == "argument" and slot.source in read:
            lines.append(f"        p{n}[{i}] = a{slot.source}")
        else:
            name = f"x{slot.source}" if slot.kind == "argument" else f"v{slot.source}"
            lines.append(f"        p{n}[{i}] = {pointer.format(name)}")
    return lines


def library_lines(program, call: LibraryPlan, n: int, namespace) -> list[str]:
    """The line that runs a library step: its functions bound once as `<field>_<n>`."""
    names = {}
    for key, function in call.functions.items():
        names[key] = f"{key}_{n}"
        namespace[names[key]] = function
    source = call.source
    if source.kind == "argument":
        name = f"x{source.source}"
    elif source.kind == "constant":
        name = f"c{source.source}"
        namespace[name] = program.constants[source.source]
    else:
        name = f"v{source.source}"
    return [f"        v{call.node} = {call.expression.format(source=name, **names)}"]


def results_line(program) -> str:
    inputs = {node: k for k, (node, _) in enumerate(program.inputs)}
    return "    return [" + ", ".join(f"x{inputs[node]}" if node in inputs else f"v{node}"
                                      for node, _ in program.outputs) + "]"


def host_source(program, overlap: bool = False) -> tuple[str, dict]:
    """The call function's source and the namespace it runs in (kernels, configs, parameter
    blocks, constants, library functions). Each kernel's parameters are packed once
    (runtime/driver.py's Packed): a call writes only the pointers and scalars that change, under
    a lock (the blocks are shared). Library steps run in between, in program order, on the
    same stream (the library's current one).
    With `overlap`, kernels that wait for their prerequisite (CudaKernel.overlaps) launch with
    programmatic stream serialization (cuLaunchKernelEx, a launch configuration built once):
    each may start while the stream's kernel before it ends; one right after a library step
    launches plainly (its prerequisite is the library's work, not a kernel of ours)."""
    from . import driver as cuda_driver
    nodes, fresh = plan(program)
    namespace = {"launch_kernel": program.launch_kernel, "relaunch": program.launch_packed}
    lines = preamble(program, fresh, namespace)
    after_library = False
    for n, node in enumerate(nodes):
        if isinstance(node, LibraryPlan):
            lines += library_lines(program, node, n, namespace)
            after_library = True
            continue
        kernel = program.steps[node.step].kernel
        packed = namespace[f"packed{n}"] = cuda_driver.Packed(len(node.slots))
        lines += fill(program, node, n, packed, namespace)
        namespace[f"config{n}"] = kernel.config
        namespace[f"kernel{n}"] = kernel.function
        # NOTE: cuLaunchKernel called here with the configuration and the parameter block's
        # address as literals: no Python frame between the call and the driver; a failure
        # (a thread with no current context, say) goes through cuda_driver.launch_packed.
        launch_args = ", ".join(str(v) for v in kernel.config.args)
        if overlap and kernel.overlaps and not after_library:
            namespace["launch_overlapped"] = program.launch_overlapped
            namespace[f"overlapped{n}"] = cuda_driver.overlapped(kernel.config)
            lines.append(f"        overlapped{n}.hStream = stream")
            lines.append(f"        if launch_overlapped(overlapped{n}, kernel{n}, {packed.address}, "
                         f"0)[0]:    # {kernel.source.name}")
        else:
            lines.append(f"        if launch_kernel(kernel{n}, {launch_args}, stream, "
                         f"{packed.address}, 0)[0]:    # {kernel.source.name}")
        lines.append(f"            relaunch(stream, config{n}, kernel{n}, packed{n})")
        after_library = False
    if not nodes:
        lines.append("        pass    # nothing to launch (every result empty, or an argument)")
    lines.append(results_line(program))
    return "\n".join(lines) + "\n", namespace


def library_calls(program) -> list[str]:
    """The library steps the generated call writes in, each by its function's field (`rfft`,
    `sort`), in program order: what keeps the call from a CUDA graph."""
    calls = [inline(program, step) for step in program.steps]
    return [next(iter(call[1])) for call in calls if call is not None]


def build(program, overlap: bool = False) -> tuple:
    """(call function, its source) for `program`, already loaded on the device."""
    text, namespace = host_source(program, overlap)
    exec(compile(text, "<autofuse host call>", "exec"), namespace)
    return namespace["call"], text
