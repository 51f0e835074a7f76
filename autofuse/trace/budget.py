"""The bound on a trace's size: a program that records more than `max_ops` operations stops with a
TraceError that names the loop doing it and what to change, instead of compiling for minutes.

Why a bound: Python loops are unrolled while tracing (so steps fuse across each other), and
every later stage (simplify, partition, kernel records, the launch list) is linear in the traced
operations but not free: about 0.1 ms an operation on a 2026 server core, so 100,000 operations
take about 10 s before any kernel compiles (the default bound, 200,000, about 20 s). A 10^5-step loop of 20 operations a step is 2 million:
minutes, and gigabytes of graph. Past the bound, the advice that works is to compile a block of
steps once and call it in a Python loop (one kernel per distinct step, one trace of the block).
"""
from __future__ import annotations

import ast
import collections
import inspect
import sys
import textwrap

from ..errors import TraceError, _inside

# jit(max_ops=...)'s default; the largest corpus loop program (lorenz_rk4, 1000 steps) traces 103,001
MAX_OPS = 200_000


def too_many_ops(name: str, limit: int, origins) -> TraceError:
    """The error for a trace of `name` that reached `limit` operations; `origins`: each recorded
    operation's "file:line" (None where unknown)."""
    counts = collections.Counter(origin for origin in origins if origin is not None)
    frame = _user_frame()
    loop = _enclosing_loop(frame) if frame is not None else None
    lines = [f"{name}(): the trace reached {limit:,} operations, the most autofuse compiles "
             f"(jit(max_ops=...)). Python loops are unrolled while tracing, one copy of the "
             f"body a step, and compiling takes time in proportion (about 0.1 ms an operation)."]
    if loop is not None:
        filename, line, text = loop
        lines.append(f"  the loop: {filename}:{line}: {text}")
    if counts:
        busiest, times = counts.most_common(1)[0]
        lines.append(f"  traced most often: {busiest} ({times:,} operations so far)")
    lines.append("  what to change: compile a block of steps once and call it in a Python loop, "
                 "e.g. `block = autofuse.jit(lambda u: step_n(u, 100))`, then "
                 "`for _ in range(steps // 100): u = block(u)` (its kernels compile once); or "
                 "trace fewer steps; or raise jit(max_ops=...) if a long compile is acceptable.")
    return TraceError("\n".join(lines))


def _user_frame():
    frame = sys._getframe(1)
    while frame is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _enclosing_loop(frame) -> tuple[str, int, str] | None:
    """(file, line, source text) of the innermost `for` or `while` statement around the line
    `frame` runs, in its function's source; None where the source cannot be read."""
    try:
        source, first = inspect.getsourcelines(frame.f_code)
        tree = ast.parse(textwrap.dedent("".join(source)))
    except (OSError, TypeError, SyntaxError):
        return None
    offset = first - 1
    line = frame.f_lineno - offset
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno > found.lineno:
                found = node
    if found is None:
        return None
    text = source[found.lineno - 1].strip() if found.lineno - 1 < len(source) else ""
    return frame.f_code.co_filename, found.lineno + offset, text
