"""`python -m autofuse FILE FUNC --arg SHAPE:DTYPE ...` (also the `autofuse` console script).

Imports FILE, finds FUNC (a plain function or one already decorated with @autofuse.jit), makes
random inputs of the given shapes and dtypes, lowers it (runs nothing) and prints the fused
program, why each edge between kernels was not fused, and the bytes each kernel moves; or writes
the picture. Examples:

    python -m autofuse examples/softmax.py softmax --arg 64x128:float32
    python -m autofuse examples/mlp.py mlp --arg 64x32:float32 --arg 32x48:float32 \\
        --arg 48:float32 --arg 48x16:float32 --arg 16:float32 --picture mlp.svg
    python -m autofuse model.py step --arg 1024:float64 --arg 2.5 --static axis=0 --source

Argument specs (positional arguments of FUNC, in order):
    1024x512:float32   an array of that shape and dtype (standard normal values; ints in
                       [-10, 10); bools at random)
    :float32 / ():i8   a 0-d array
    2.5 / 3 / true     a Python scalar
--static name=value passes a keyword argument kept out of tracing (a Python literal, else the
string); a plain FUNC is jitted with those names static.

Exit status: 0 done; 2 a usage error (file, function, argument spec, or arguments that do not
fit FUNC); 1 autofuse failed to
trace, fuse or compile the function, or to write the picture (the message says why).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import re
import sys
import time

import numpy as np

PROG = "autofuse"
STAGES = ("traced", "simplified", "fused", "all")
_SHAPE = re.compile(r"^\s*(\(\s*\)|\d+(\s*[x,]\s*\d+)*)?\s*$")


class UsageError(Exception):
    """A bad command line: printed as one line, exit status 2."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Show what autofuse makes of a function: the fused program, why "
        "edges were not fused, the bytes moved, kernel sources, or a picture. Runs nothing.",
        epilog="Arrays: --arg 1024x512:float32 (also :float32 for 0-d); scalars: --arg 2.5. "
               "Exit status 2 for usage errors, 1 where autofuse fails.")
    p.add_argument("file", metavar="FILE", help="Python file defining the function")
    p.add_argument("function", metavar="FUNC", help="function name in FILE (plain or @autofuse.jit)")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC",
                   help="a positional argument: SHAPE:DTYPE (e.g. 1024x512:float32) or a scalar "
                        "(e.g. 2.5); repeat in order")
    p.add_argument("--static", action="append", default=[], metavar="NAME=VALUE",
                   help="a static keyword argument (a Python literal, else a string)")
    p.add_argument("--backend", choices=("cpu", "cuda", "numpy"), default="cpu",
                   help="backend to lower for (default cpu; cuda needs no GPU to show source/PTX)")
    p.add_argument("--stage", choices=STAGES, default="fused",
                   help="which program text to print (default fused)")
    p.add_argument("--source", action="store_true", help="print each kernel's generated source")
    p.add_argument("--ptx", action="store_true", help="print each kernel's PTX (cuda backend)")
    p.add_argument("--picture", metavar="PATH",
                   help="write the picture instead (.svg, .png, .pdf need Graphviz's dot; .dot "
                        "writes DOT text)")
    p.add_argument("--seed", type=int, default=0, help="random seed for the inputs (default 0)")
    return p


# -- arguments -----------------------------------------------------------------------------------

def parse_dtype(text: str, spec: str) -> np.dtype:
    try:
        return np.dtype(text.strip())
    except TypeError:
        raise UsageError(f"bad --arg {spec!r}: unknown dtype {text.strip()!r} "
                         f"(e.g. float32, float64, int32, int64, bool)") from None


def parse_shape(text: str, spec: str) -> tuple:
    if not _SHAPE.match(text):
        raise UsageError(f"bad --arg {spec!r}: shape {text!r} is not like 1024x512 (dims "
                         f"separated by x; empty or () for 0-d)")
    text = text.strip()
    if text in ("", "()"):
        return ()
    return tuple(int(d) for d in re.split(r"\s*[x,]\s*", text))


def parse_scalar(text: str, spec: str):
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise UsageError(f"bad --arg {spec!r}: expected SHAPE:DTYPE (e.g. 1024x512:float32) or a "
                     f"number (e.g. 2.5)")


def parse_arg(spec: str):
    """(shape, dtype) for an array spec, or the Python scalar."""
    if ":" in spec:
        shape, _, dtype = spec.rpartition(":")
        return parse_shape(shape, spec), parse_dtype(dtype, spec)
    return parse_scalar(spec, spec)


def parse_static(spec: str) -> tuple[str, object]:
    name, sep, value = spec.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise UsageError(f"bad --static {spec!r}: expected NAME=VALUE (e.g. axis=0)")
    try:
        return name, ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        return name, value


def random_input(shape: tuple, dtype: np.dtype, rng: np.random.Generator):
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -10
        return rng.integers(low, 10, size=shape).astype(dtype)
    if dtype.kind in "fc":
        return np.asarray(rng.standard_normal(shape)).astype(dtype)
    raise UsageError(f"dtype {dtype} is not supported by autofuse (use bool, ints or floats)")


# -- the function --------------------------------------------------------------------------------

def load_function(path: str, name: str):
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)           # the file's own imports (examples import _common)
    module_name = "autofuse_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:               # the user's module failed: say how, in one line
        raise UsageError(f"importing {path} failed: {type(error).__name__}: {error}") from None
    function = getattr(module, name, None)
    if function is None or not callable(function):
        from .jit import JitFunction
        found = sorted(k for k, v in vars(module).items() if not k.startswith("_") and
                       (isinstance(v, JitFunction) or (callable(v) and getattr(v, "__module__", None)
                                                       == module_name and not isinstance(v, type))))
        what = "no function" if function is None else "a non-callable"
        raise UsageError(f"{os.path.basename(path)} has {what} {name!r}"
                         + (f" (functions: {', '.join(found)})" if found else ""))
    return function


def jitted(function, static_names):
    """A JitFunction for `function` with `static_names` static (re-jitting a decorated one)."""
    from .errors import AutofuseError
    from .jit import JitFunction, jit
    if isinstance(function, JitFunction):
        if not set(static_names) - function._binder.static_names:
            return function
        static_names = set(static_names) | function._binder.static_names
        function = function.fn
    try:
        return jit(function, static_argnames=tuple(sorted(static_names)))
    except AutofuseError as error:
        raise UsageError(str(error).splitlines()[0]) from None
    except (TypeError, ValueError) as error:     # inspect.signature of a builtin, ...
        raise UsageError(f"cannot compile {getattr(function, '__name__', function)!r}: {error}") from None


# -- output --------------------------------------------------------------------------------------

def kernels_table(lowered) -> str:
    from .fusion.cost import mib
    fused = lowered.fused
    from .fusion.program import origins
    rows = [("kernel", "kind", "strategy", "ops", "fused", "unfused", "source lines")]
    for kernel in lowered.kernels:
        rows.append((kernel.name, kernel.kind, str(kernel.strategy or "-"),
                     str(len(kernel.ops)), mib(kernel.bytes_fused()), mib(kernel.bytes_unfused()),
                     _ranges(origins(kernel.group))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    s = fused.summary()
    lines.append(f"bytes moved: unfused {mib(s['bytes_unfused'])}, fused {mib(s['bytes_fused'])} "
                 f"({s['ratio']:.2f}x less)")
    return "\n".join(lines)


def _ranges(origins: list) -> str:
    """softmax.py:19, softmax.py:20, softmax.py:22 -> softmax.py:19-20,22."""
    by_file: dict = {}
    for origin in origins:
        name, _, number = origin.rpartition(":")
        by_file.setdefault(name, []).append(int(number) if number.isdigit() else number)
    parts = []
    for name, numbers in by_file.items():
        spans, run = [], []
        for n in numbers:
            if run and isinstance(n, int) and isinstance(run[-1], int) and n == run[-1] + 1:
                run.append(n)
            else:
                if run:
                    spans.append(run)
                run = [n]
        if run:
            spans.append(run)
        text = ",".join(str(s[0]) if len(s) == 1 else f"{s[0]}-{s[-1]}" for s in spans)
        parts.append(f"{name}:{text}")
    return "; ".join(parts) or "-"


def source_lines(lowered, path: str) -> str:
    """Each kernel with the text of the source lines it computes (lines of FILE only)."""
    import linecache
    from .fusion.program import origins
    base = os.path.basename(path)
    out = []
    for group in lowered.fused.groups:
        out.append(f"{group.kind}_{group.id}:")
        for origin in origins(group):
            name, _, number = origin.rpartition(":")
            text = linecache.getline(path, int(number)).strip() if name == base and \
                number.isdigit() else ""
            out.append(f"  {origin:<20} {text}".rstrip())
    return "\n".join(out)


def report(lowered, args, path: str, seconds: float) -> str:
    from .lowered import signature_text
    s = lowered.fused.summary()
    kinds = ", ".join(f"{k} {v}" for k, v in s["kinds"].items()) or "none"
    parts = [f"# {signature_text(lowered._entry)} on {lowered.backend}: {s['ops']} ops -> "
             f"{s['groups']} kernel{'s' if s['groups'] != 1 else ''} ({kinds}), built in "
             f"{seconds:.2f} s", lowered.as_text(args.stage)]
    if args.stage in ("traced", "simplified"):
        explanations = lowered.fused.explanations()
        parts.append("# not fused:" + ("" if explanations else " (nothing: every edge is fused)")
                     + "".join(f"\n#   {e}" for e in explanations))
    parts.append("# kernels (bytes each reads and writes, fused vs one kernel per op)\n"
                 + kernels_table(lowered))
    parts.append("# source lines per kernel\n" + source_lines(lowered, path))
    if args.source or args.ptx:
        for kernel in lowered.kernels:
            if args.source:
                parts.append(f"# source of {kernel.name}\n" + (
                    kernel.source or f"(none: {kernel.strategy or 'interpreted by NumPy'})"))
            if args.ptx:
                ptx = kernel.ptx
                parts.append(f"# ptx of {kernel.name}\n" + (
                    ptx if ptx is not None else f"(none: the {lowered.backend} backend makes no PTX)"))
    return "\n\n".join(parts)


def check_picture_path(path: str) -> None:
    from .picture import FORMATS
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if suffix not in FORMATS:
        raise UsageError(f"--picture {path!r}: the file must end in one of "
                         f"{', '.join('.' + f for f in FORMATS)}")


def run(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        values = [parse_arg(spec) for spec in args.arg]
        statics = dict(parse_static(spec) for spec in args.static)
        if args.picture:
            check_picture_path(args.picture)
        function = load_function(args.file, args.function)
        function = jitted(function, statics)
        rng = np.random.default_rng(args.seed)
        inputs = [random_input(v[0], v[1], rng) if isinstance(v, tuple) else v for v in values]
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    from .errors import ArgumentError, AutofuseError
    try:
        start = time.perf_counter()
        lowered = function.lower(*inputs, backend=args.backend, **statics)
        seconds = time.perf_counter() - start
        if args.picture:
            written = lowered.render(args.picture)
            print(f"wrote {written}")
            return 0
        print(report(lowered, args, args.file, seconds))
    except ArgumentError as error:           # the --arg / --static list does not fit FUNC
        print(f"{PROG}: error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    except AutofuseError as error:
        lines = str(error).splitlines()
        print(f"{PROG}: error: {type(error).__name__}: {lines[0] if lines else ''}", file=sys.stderr)
        for more in lines[1:]:
            print(f"{PROG}:   {more.strip()}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> None:
    sys.exit(run(argv))


if __name__ == "__main__":
    main()
