"""Random loop programs (tests/programs.py's generator learns loops): a few carried arrays copied
from the arguments, a Python `for` loop of a fixed trip count (1 to a few hundred) whose body
rebinds carried values, assigns into slices of them (shifted reads: stencils, prefix updates),
swaps them and carries a scalar, then returns them. Updates are contractive (averages, tanh,
clipping, wrapped integers) so hundreds of steps stay finite and within float tolerances.

`loop_programs()` is a hypothesis strategy and `seeded_loop_program(seed)` the same from a seed;
both give programs.FuzzProgram-like objects that programs.check_fuzz_program runs.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from programs import _Chooser, _fuzz_array

TRIPS = [1, 2, 3, 5, 8, 13, 40, 100, 300]
LOOP_DTYPES = ["float64", "float32", "int64"]
SHAPES = [(7,), (12,), (5, 6), (8, 4)]

# Whole-array updates of a carried value `{t}` from `{a}` and `{b}` (carried values or arguments).
FLOAT_UPDATES = [
    "{t} = 0.5 * ({a} + {b})",
    "{t} = np.tanh({a}) * 0.75 + 0.25 * {b}",
    "{t} = np.where({a} > {b}, {a} * 0.5, {b} * 0.25)",
    "{t} = np.minimum(np.maximum({a} - {b}, -2.0), 2.0)",
    "{t} = {a} * 0.9 + 0.1",
]
INT_UPDATES = [
    "{t} = ({a} + {b}) % 13",
    "{t} = np.where({a} > {b}, {a} - {b}, {b} % 7)",
    "{t} = ({a} * 3 + 1) % 11",
    "{t} = np.maximum({a}, {b}) % 9",
]
# Slice assignments into carried `{t}` (1-D and 2-D): the right side is read before the write.
FLOAT_SLICES = {
    1: ["{t}[1:] = 0.5 * ({a}[1:] + {b}[:-1])",
        "{t}[:-1] = {t}[1:] * 0.5 + {a}[:-1] * 0.5",
        "{t}[1:-1] = 0.25 * ({a}[:-2] + {a}[2:]) + 0.5 * {t}[1:-1]",
        "{t}[::2] = np.tanh({a}[::2])"],
    2: ["{t}[1:-1, 1:-1] = 0.25 * ({a}[:-2, 1:-1] + {a}[2:, 1:-1] + {a}[1:-1, :-2] + {a}[1:-1, 2:])",
        "{t}[1:, :] = 0.5 * ({t}[:-1, :] + {b}[1:, :])",
        "{t}[:, 1:] = np.where({a}[:, 1:] > 0, {a}[:, :-1] * 0.5, {b}[:, 1:] * 0.5)"],
}
# Assignments at the loop counter `i` (rows, columns or elements that move with the step; `{n}`,
# `{m}`: the first and last extents): steps that share one kernel taking the starts as arguments
# and, on the CPU, write their region in place (backends/sharing.py, fusion/in_place.py).
FLOAT_MOVING = {
    1: ["{t}[i % {n}] = {a}[(i + 1) % {n}] * 0.5 + {t}[(i + {n} - 1) % {n}] * 0.25",
        "{t}[i % {n}] += {b}[i % {n}] * 0.5 - {t}[i % {n}] * 0.5",
        "{t}[i % {n}:] = {t}[i % {n}:] * 0.5 + 0.25"],
    2: ["{t}[i % {n}] = 0.5 * {t}[(i + 1) % {n}] + {a}[i % {n}] * 0.25",
        "{t}[:, i % {m}] = np.tanh({a}[:, i % {m}]) + 0.1 * {t}[:, (i + 1) % {m}]",
        "{t}[i % {n}, 1:] = {t}[i % {n}, :-1] * 0.5 + {b}[i % {n}, 1:] * 0.25"],
}
INT_MOVING = {
    1: ["{t}[i % {n}] = ({a}[(i + 1) % {n}] + {t}[(i + {n} - 1) % {n}]) % 13"],
    2: ["{t}[i % {n}] = ({t}[(i + 1) % {n}] + {a}[i % {n}] + i) % 11",
        "{t}[:, i % {m}] += {b}[:, i % {m}] % 5"],
}
INT_SLICES = {
    1: ["{t}[1:] = ({a}[1:] + {b}[:-1]) % 13", "{t}[::2] = ({a}[::2] * 2) % 7"],
    2: ["{t}[1:-1, 1:-1] = ({a}[:-2, 1:-1] + {a}[2:, 1:-1] + {a}[1:-1, 2:]) % 13",
        "{t}[1:, :] = ({t}[:-1, :] + {b}[1:, :]) % 11"],
}


class LoopProgram:
    """A generated loop program: its source, and its arguments' shapes and dtypes."""

    def __init__(self, source: str, shapes: list, dtypes: list, trips: int, body: int):
        self.source = source
        self.shapes, self.dtypes = shapes, dtypes
        self.trips, self.body = trips, body
        namespace = {"np": np}
        exec(compile(source, "<loop program>", "exec"), namespace)
        self.fn = namespace["program"]

    def __repr__(self):
        args = ", ".join(f"{d}{list(s)}" for s, d in zip(self.shapes, self.dtypes))
        return f"LoopProgram({args}):\n{self.source}"

    def inputs(self, seed: int = 0) -> list:
        rng = np.random.default_rng(seed)
        return [_fuzz_array(s, d, "C", rng) for s, d in zip(self.shapes, self.dtypes)]


def _generate(choose: _Chooser) -> LoopProgram:
    shape = choose.choice(SHAPES)
    dtype = choose.choice(LOOP_DTYPES)
    floating = dtype != "int64"
    arguments = choose.integer(1, 3)
    carried = choose.integer(1, 3)
    trips = choose.choice(TRIPS)
    lines = [f"c{k} = v{choose.integer(0, arguments - 1)}.copy()" for k in range(carried)]
    if floating:
        lines.append("s = 0.0")
    lines.append(f"for i in range({trips}):")
    updates = FLOAT_UPDATES if floating else INT_UPDATES
    slices = (FLOAT_SLICES if floating else INT_SLICES)[len(shape)]
    moving = (FLOAT_MOVING if floating else INT_MOVING)[len(shape)]
    names = [f"c{k}" for k in range(carried)] + [f"v{k}" for k in range(arguments)]
    body = choose.integer(1, 4)
    for _ in range(body):
        kind = choose.choice(["update", "slice", "slice", "moving", "swap", "scalar"])
        target = f"c{choose.integer(0, carried - 1)}"
        a, b = choose.choice(names), choose.choice(names)
        if kind == "update":
            lines.append("    " + choose.choice(updates).format(t=target, a=a, b=b))
        elif kind == "slice":
            lines.append("    " + choose.choice(slices).format(t=target, a=a, b=b))
        elif kind == "moving":
            lines.append("    " + choose.choice(moving).format(t=target, a=a, b=b, n=shape[0],
                                                                m=shape[-1]))
        elif kind == "swap" and carried > 1:
            lines.append("    c0, c1 = c1, c0")
        elif kind == "scalar" and floating:
            lines.append(f"    s = s * 0.5 + {a}.mean() * 0.25")
            lines.append(f"    {target} = {target} * 0.5 + s * 0.1")
        else:
            lines.append("    " + choose.choice(updates).format(t=target, a=a, b=b))
    returned = ", ".join(f"c{k}" for k in range(carried)) + (", s" if floating else "")
    args = ", ".join(f"v{k}" for k in range(arguments))
    source = f"def program({args}):\n" + "\n".join(f"    {line}" for line in lines) + \
        f"\n    return ({returned},)\n"
    return LoopProgram(source, [shape] * arguments, [dtype] * arguments, trips, body)


@st.composite
def loop_programs(draw):
    """A LoopProgram drawn by hypothesis."""
    return _generate(_Chooser(draw=draw))


def seeded_loop_program(seed: int) -> LoopProgram:
    """The loop program for `seed`: the same on every run and machine."""
    import random
    return _generate(_Chooser(rng=random.Random(seed)))
