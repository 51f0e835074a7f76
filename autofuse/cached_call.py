"""The call a cached signature runs on the jit's fast path, written out as straight-line Python.

running.run() assembles a call's results the general way: it loops over the trace's checks, the
arguments the function writes and the result specs, and flattens the result structure back. For
one signature all of that is fixed, so after a signature's first call this module writes it out
once, around the program's own generated call (`program.fast`): the Python-int range checks, the
aliasing check of written arguments, the program, its error flags, the writes into the
arguments and the result structure, each as a line of its own.

A call that fails a check before the program runs is handed to running.run(), which raises the error
with the user's line; a raised error flag raises as run() raises it. Measured on the 2-core
machine (in-place Adam step on 1,000 float32 values, minimum of 7 rounds): BENCHMARKS.md, CPU
per-call overhead.
"""
from __future__ import annotations

import itertools

import numpy as np
# NOTE: the C function itself: numpy._core.multiarray's is wrapped by __array_function__'s
# dispatcher, which doubles its cost (0.39 -> 0.67 µs a pair).
from numpy._core._multiarray_umath import may_share_memory

from .tree import LEAF


def write(entry, args, run) -> tuple[str, dict] | None:
    """(source of `call(args)`, its globals) for a flat positional call like `args` of `entry`,
    or None where run() must assemble each call (no generated program call, or an argument
    written in place that is not a NumPy array)."""
    program = entry.program
    fast = getattr(program, "fast", None)
    traced = getattr(entry, "traced", None)
    if fast is None or traced is None:
        return None
    if any(type(args[leaf]) is not np.ndarray for leaf, _ in traced.mutations):
        return None
    space = {"program": fast, "slow": lambda call_args: run(entry, list(call_args)),
             "may_share": may_share_memory, "copyto": np.copyto, "ndarray": np.ndarray}
    names = [f"a{index}" for index in range(len(args))]
    lines = ["def call(args):", f"    {', '.join(names)}{',' if len(names) == 1 else ''} = args"]
    lines += _checks_before(entry, args, names)
    inputs = ", ".join(names[leaf] for leaf in entry.input_leaves)
    lines.append(f"    outs = program([{inputs}])")
    for number, (output, error, message) in enumerate(traced.checks):
        space[f"fail{number}"] = _raiser(error, f"{entry.name}(): {message}")
        lines.append(f"    if outs[{output}]:")
        lines.append(f"        fail{number}()")
    for leaf, output in traced.mutations:
        lines.append(f"    copyto({names[leaf]}, outs[{output}], casting='unsafe')")
    arrays = [names[i] for i, arg in enumerate(args) if isinstance(arg, np.ndarray)]
    results = []
    for number, spec in enumerate(traced.outputs):
        results.append(_result(number, spec, names, arrays, lines, space))
    counter = itertools.count()
    lines.append(f"    return {_structure(traced.structure, results, counter, space)}")
    return "\n".join(lines) + "\n", space


def build(entry, args, run):
    """The generated call for `entry` on calls like `args`, or None (write() says when)."""
    written = write(entry, args, run)
    if written is None:
        return None
    text, space = written
    exec(compile(text, f"<autofuse cached call of {entry.name}>", "exec"), space)
    call = space["call"]
    call.source = text
    return call


def _checks_before(entry, args, names) -> list[str]:
    """Conditions that send a call to run() (which raises the error) before the program runs."""
    traced = entry.traced
    conditions = []
    for index, dtype in traced.weak_int_casts.items():
        info = np.iinfo(dtype)
        low, high = int(info.min), int(info.max)
        conditions.append(f"not {low} <= {names[index]} <= {high}")
    for index in traced.nonnegative:
        conditions.append(f"{names[index]} < 0")
    arrays = [i for i, arg in enumerate(args) if isinstance(arg, np.ndarray)]
    pairs = {tuple(sorted((written, index))) for written, _ in traced.mutations for index in arrays
             if index != written}
    for first, second in sorted(pairs):
        conditions.append(f"may_share({names[first]}, {names[second]})")
    if not conditions:
        return []
    return [f"    if {' or '.join(conditions)}:", "        return slow(args)"]


def _result(number: int, spec, names, arrays, lines, space) -> str:
    """The expression of one result leaf (lines that compute it are appended to `lines`)."""
    if spec[0] == "argument":
        return names[spec[1]]
    if spec[0] == "constant":
        space[f"c{number}"] = spec[1]
        return f"c{number}"
    _, output, kind = spec
    value = f"r{number}"
    lines.append(f"    {value} = outs[{output}]")
    # NOTE: a computed result is a new array even where the program hands back an argument
    # object (run()'s _not_an_argument); the programs' generated calls copy those already, so
    # this is a cheap identity test that never fires today.
    if arrays:
        same = " or ".join(f"{value} is {name}" for name in arrays)
        lines.append(f"    if {same}:")
        lines.append(f"        {value} = {value}.copy()")
    if kind == "scalar":
        lines.append(f"    if isinstance({value}, ndarray):")
        lines.append(f"        {value} = {value}[()]")
    elif kind in ("int", "float", "complex", "bool"):
        lines.append(f"    {value} = {kind}({value})")
    return value


def _structure(node, results: list, counter, space) -> str:
    """The expression that rebuilds the result structure (tree.unflatten, written out)."""
    if node is LEAF:
        return results[next(counter)]
    if node[0] == "tuple":
        items = [_structure(v, results, counter, space) for v in node[1]]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
    if node[0] == "list":
        return f"[{', '.join(_structure(v, results, counter, space) for v in node[1])}]"
    pairs = []
    for key, value in zip(node[1], node[2]):
        name = f"k{len(space)}"
        space[name] = key
        pairs.append(f"{name}: {_structure(value, results, counter, space)}")
    return "{" + ", ".join(pairs) + "}"


def _raiser(error, message: str):
    def fail():
        raise error(message)
    return fail
