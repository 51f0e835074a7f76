"""The host side of a CPU program, generated: one straight-line Python function per signature.

The general call (Program.__call__) keeps every value in a dictionary of node ids, looks up each
kernel argument's view, checks whether a step's outputs are empty and whether a result borrows an
argument; none of that changes between calls of one signature, whose shapes, dtypes and views are
fixed. After a signature's first call (which also loads each kernel's binary, dropping a
corrupted cache file: Step.first_call) this module writes the call out once, as the CUDA
backend's runtime/host.py does: read the arguments, allocate each output, call each compiled
function on the views it takes, return the results.

Measured on the 2-core CI machine (relu(x*y+1) on 100 float32 values, 20,000 calls): the general
path 15.5 µs a call, NumPy 4.4 µs; this path: BENCHMARKS.md (CPU per-call overhead).

The text is kept (`Program.host_source`) so a user can read exactly what a call does.
"""
from __future__ import annotations

import numpy as np

from ...ir.interpreter import evaluate_node
from . import blas


def write(program) -> tuple[str, dict] | None:
    """(source of `call(inputs)`, its globals), or None where a step must run as the general path
    runs it (a float16 group interpreted node by node)."""
    if any(not hasattr(step, "function") and not getattr(step, "library", False)
           for step in program.steps):
        return None
    names = {node_id: f"v{node_id}" for node_id in program.constants}
    space = {"ndarray": np.ndarray, "asarray": np.asarray, "empty_output": program.new_output,
             "ascontiguousarray": np.ascontiguousarray, "copy_of": _copy,
             "stored_output": program.stored_output}
    for node_id, value in program.constants.items():
        space[names[node_id]] = value
    lines = ["def call(inputs):"]
    inputs = [f"v{node_id}" for node_id in program.input_ids]
    if inputs:
        lines.append(f"    {', '.join(inputs)}{',' if len(inputs) == 1 else ''} = inputs")
    for node_id, dtype in zip(program.input_ids, program.input_dtypes):
        name = names[node_id] = f"v{node_id}"
        space[f"t{node_id}"] = dtype
        lines.append(f"    if type({name}) is not ndarray:")
        lines.append(f"        {name} = asarray({name}, t{node_id})")
    body = []
    if program.threads is not None:
        # (threads.py: numba's thread count for this call)
        space["size_threads"] = program.threads
        body.append("    size_threads()")
    for index, step in enumerate(program.steps):
        write_step = _library_step if getattr(step, "library", False) else _step
        body += write_step(index, step, names, space)
    borrowed = set(program.input_ids) | set(program.constants)
    results = [f"copy_of({names[i]})" if i in borrowed else names[i] for i in program.output_ids]
    # NOTE: one result: `call_one` returns it, `call` a list of it (a cached call of a single
    # array takes call_one: no list and no frame of its own to take the array out of one)
    single = len(results) == 1
    body.append(f"    return {results[0]}" if single else f"    return [{', '.join(results)}]")
    if program.uses_blas:
        # (blas.py: the BLAS library numba calls stays on one thread while the tiles run)
        space["blas_guard"] = blas.GUARD
        lines.append("    with blas_guard:")
        body = ["    " + line for line in body]
    if single:
        lines[0] = "def call_one(inputs):"
        body += ["", "", "def call(inputs):", "    return [call_one(inputs)]"]
    return "\n".join(lines + body) + "\n", space


def build(program):
    """(the generated call, its one-result form or None, its text), or (None, None, why not)."""
    written = write(program)
    if written is None:
        return None, None, "# a float16 group runs node by node: calls take the general path"
    text, space = written
    exec(compile(text, f"<autofuse cpu call of {program.name}>", "exec"), space)
    return space["call"], space.get("call_one"), text


def _step(index: int, step, names: dict, space: dict) -> list[str]:
    kernel = step.kernel
    lines = [f"    # {step.group.kind}_{step.group.id}: {kernel.strategy}"]
    # NOTE: the compiled code the step's first call ran, called straight: a signature's calls
    # pass arguments of the types that call's had (its key holds each array's shape, dtype,
    # strides and writability; outputs are new, views are the same views). A dispatcher's check
    # of each argument's type cost more than the kernel on small inputs (relu(x*y+z)*w on 1,000
    # float32: 1.4 of 6.0 us a call). An argument no longer aligned as the first one was runs
    # the same machine code, which loads unaligned elements as aligned ones (x86-64, AArch64).
    space[f"f{index}"] = getattr(step, "entry", None) or step.function    # (a Step's; see NOTE)
    arguments = []
    for k, value in enumerate(kernel.leading):       # lifted slice starts and scalars, as
        space[f"s{index}_{k}"] = value                # NumPy scalars of their types
        arguments.append(f"s{index}_{k}")
    arguments += [_argument(index, k, arg, names, space) for k, arg in enumerate(step.inputs)]
    empty = step.skip_empty and all(arg.node.size == 0 for arg in step.outputs)
    for arg in step.outputs:
        node = arg.node
        name = f"v{node.id}"
        space[f"t{node.id}"] = node.dtype
        allocated = node.shape if node.ndim else (1,)
        if arg.into is not None:                # (written in place: fusion/in_place.py)
            lines.append(f"    o{node.id} = {names[arg.into.id]}")
        elif arg.order:                         # (stored in its inputs' order)
            lines.append(f"    o{node.id} = stored_output({node.shape}, t{node.id}, {arg.order})")
        else:
            lines.append(f"    o{node.id} = empty_output({allocated}, t{node.id})")
        flat = "ravel(order='K')" if arg.order else "ravel()"
        arguments.append(f"o{node.id}.{flat}" if arg.view == "flat" else f"o{node.id}")
        names[node.id] = name
    if not empty:
        lines.append(f"    f{index}({', '.join(arguments)})")
    for arg in step.outputs:
        node = arg.node
        reshape = "" if node.ndim else ".reshape(())"
        lines.append(f"    v{node.id} = o{node.id}{reshape}")
    return lines


def _library_step(index: int, step, names: dict, space: dict) -> list[str]:
    """A library FFT between kernels (fourier.py): its function called on the stored input."""
    space[f"f{index}"] = step.function
    node = step.node
    names[node.id] = f"v{node.id}"
    return [f"    # {step.group.kind}_{step.group.id}: {step.text}",
            f"    v{node.id} = f{index}({names[step.source.id]})"]


def _argument(index: int, position: int, arg, names: dict, space: dict) -> str:
    if arg.view == "operand":
        source = arg.chain[0].inputs[0].id if arg.chain else arg.node.id
        if not arg.chain:
            return f"ascontiguousarray({names[source]})"
        helper = f"p{index}_{position}"
        space[helper] = _chain(arg.chain)
        return f"{helper}({names[source]})"
    name = names[arg.node.id]
    if arg.view == "flat":
        # NOTE: ravel(), not reshape(-1): the same view (or the same copy, where the layout has
        # none), in half the time (0.1 against 0.2 µs; a call passes one per array); in memory
        # order where the group runs so (arg.order: a Fortran array's view, not a copy)
        return f"{name}.ravel(order='K')" if arg.order else f"{name}.ravel()"
    if arg.view == "one":
        return f"{name}.reshape(1)"
    return name


def _chain(chain):
    """A matmul operand's layout ops, evaluated on the host as NumPy views."""
    def operand(value):
        for node in chain:
            value = evaluate_node(node, [value])
        return np.ascontiguousarray(value)
    return operand


def _copy(value):
    return np.array(value, copy=True)
