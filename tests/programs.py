"""Random NumPy programs for property tests: each is a plain Python function over NumPy calls, so
the same function runs on NumPy arrays (the reference) and under autofuse's tracer."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

UNARY = ["exp", "tanh", "abs", "negative", "square", "sin", "log1p_abs", "sqrt_abs"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "where_gt"]
REDUCE = ["sum", "max", "min", "mean", "argmax"]


def _unary(name, x):
    if name == "log1p_abs":
        return np.log1p(np.abs(x))
    if name == "sqrt_abs":
        return np.sqrt(np.abs(x))
    return getattr(np, name)(x)


def _binary(name, x, y):
    if name == "where_gt":
        return np.where(x > y, x, y * 0.5)
    return getattr(np, name)(x, y)


def _shape_of(step_shapes, index):
    return step_shapes[index]


@st.composite
def programs(draw, max_steps=8, max_inputs=3):
    """(function, input shapes, dtype): a random DAG of elementwise, layout, reduction, matmul and
    in-place steps over inputs of small shapes, some of them 1 or 0."""
    dims = draw(st.lists(st.sampled_from([1, 2, 3, 5]), min_size=2, max_size=2))
    base = tuple(dims)
    inputs = draw(st.lists(st.sampled_from([base, base[1:], (1, base[1]), (base[0], 1), base[::-1]]),
                           min_size=1, max_size=max_inputs))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    shapes = list(inputs)
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "layout", "matmul",
                                     "inplace"]))
        a = draw(st.integers(0, len(shapes) - 1))
        sa = shapes[a]
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(UNARY)), a))
            shapes.append(sa)
        elif kind == "binary":
            partners = [i for i, s in enumerate(shapes) if _broadcasts(sa, s)]
            b = draw(st.sampled_from(partners))
            steps.append(("binary", draw(st.sampled_from(BINARY)), a, b))
            shapes.append(tuple(np.broadcast_shapes(sa, shapes[b])))
        elif kind == "reduce" and len(sa) >= 1 and 0 not in sa:
            axis = draw(st.sampled_from([None] + list(range(-len(sa), len(sa)))))
            name = draw(st.sampled_from(REDUCE))
            keep = draw(st.booleans()) and name != "argmax"
            steps.append(("reduce", name, a, axis, keep))
            result = np.empty(sa)
            result = getattr(np, name)(result, axis=axis, keepdims=keep) if name != "argmax" else \
                np.argmax(result, axis=axis)
            shapes.append(np.shape(result))
        elif kind == "layout" and len(sa) >= 1:
            op = draw(st.sampled_from(["T", "reverse", "step", "newaxis", "flat"]))
            steps.append(("layout", op, a))
            shapes.append(np.shape(_layout(op, np.empty(sa))))
        elif kind == "matmul" and len(sa) == 2:
            partners = [i for i, s in enumerate(shapes) if len(s) == 2 and s[0] == sa[1]]
            if not partners:
                continue
            b = draw(st.sampled_from(partners))
            steps.append(("matmul", a, b))
            shapes.append((sa[0], shapes[b][1]))
        elif kind == "inplace" and len(sa) >= 1 and sa[0] > 1:
            steps.append(("inplace", a))
            shapes.append(sa)
    outputs = sorted(set(draw(st.lists(st.integers(len(inputs), max(len(inputs), len(shapes) - 1)),
                                       min_size=1, max_size=3))))
    outputs = [o for o in outputs if o < len(shapes)] or [len(shapes) - 1]

    def program(*arrays):
        values = list(arrays)
        for step in steps:
            values.append(_run(step, values))
        return tuple(values[o] for o in outputs)

    program.steps = steps
    return program, inputs, dtype


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _layout(op, x):
    if op == "T":
        return x.T
    if op == "reverse":
        return x[::-1]
    if op == "step":
        return x[::2]
    if op == "newaxis":
        return x[None]
    return x.reshape(-1)


def _run(step, values):
    kind = step[0]
    if kind == "unary":
        return _unary(step[1], values[step[2]])
    if kind == "binary":
        return _binary(step[1], values[step[2]], values[step[3]])
    if kind == "reduce":
        _, name, a, axis, keep = step
        if name == "argmax":
            return np.argmax(values[a], axis=axis)
        return getattr(np, name)(values[a], axis=axis, keepdims=keep)
    if kind == "layout":
        return _layout(step[1], values[step[2]])
    if kind == "matmul":
        return values[step[1]] @ values[step[2]]
    x = values[step[1]]
    y = x * 1.0          # a fresh float array of x's float dtype (float64 for integers)
    y[1:] += 1.5
    y[0] *= 2
    return y
