"""Random NumPy programs for property tests: each is a plain Python function over NumPy calls, so
the same function runs on NumPy arrays (the reference) and under autofuse's tracer."""
from __future__ import annotations

import warnings

import numpy as np
from hypothesis import strategies as st

def softmax(x):
    """The row softmax every backend's tests run (NumPy code, traced as is)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g, b):
    """Row layernorm with scale and shift."""
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


UNARY = ["exp", "tanh", "abs", "negative", "square", "sin", "log1p_abs", "sqrt_abs"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "where_gt"]
REDUCE = ["sum", "max", "min", "mean", "argmax"]
SCAN = ["cumsum", "cumprod", "maximum", "minimum"]


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
                                     "inplace", "scan"]))
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
        elif kind == "scan":
            name = draw(st.sampled_from(SCAN)) if len(sa) else "cumsum"
            axes = list(range(-len(sa), len(sa)))
            if name.startswith("cum") or len(sa) == 1:
                axes.append(None)
            axis = draw(st.sampled_from(axes))
            steps.append(("scan", name, a, axis))
            shapes.append(np.shape(np.cumsum(np.empty(sa), axis=axis)))
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
    if kind == "scan":
        _, name, a, axis = step
        if name in ("cumsum", "cumprod"):
            return getattr(np, name)(values[a], axis=axis)
        return getattr(np, name).accumulate(values[a], axis=axis)
    if kind == "matmul":
        return values[step[1]] @ values[step[2]]
    x = values[step[1]]
    y = x * 1.0          # a fresh float array of x's float dtype (float64 for integers)
    y[1:] += 1.5
    y[0] *= 2
    return y


# ---------------------------------------------------------------------------------------------
# The reliability fuzzer: random programs as Python source over mixed dtypes and odd shapes.
#
# A program is generated statement by statement; each candidate statement is first run by NumPy
# on probe arrays of the right shapes and dtypes, and kept only where NumPy accepts it, so every
# program is valid NumPy by construction. The same generator runs from hypothesis (with
# shrinking) and from a plain seed (the long run, `tests/fuzz_long.py`).

FUZZ_DTYPES = ["float64", "float32", "int64", "int32", "bool"]
FUZZ_UNARY = ["np.exp({a})", "np.tanh({a})", "np.abs({a})", "-{a}", "{a} * {a}", "np.sin({a})",
              "np.log1p(np.abs({a}))", "np.sqrt(np.abs({a}))", "np.sign({a})", "np.floor({a})",
              "np.log({a})", "1.0 / {a}", "np.isnan({a})", "{a} > 0", "{a}.astype(np.float32)",
              "{a}.astype(np.float64)", "np.where({a} > 0, {a}, 0)", "np.clip({a}, -1, 2)",
              "{a} * 2 + 1", "np.logical_not({a})"]
FUZZ_BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "np.maximum({a}, {b})",
               "np.minimum({a}, {b})", "np.where({a} > {b}, {a}, {b} * 0.5)", "{a} / {b}",
               "{a} > {b}", "{a} == {b}", "np.copysign({a}, {b})", "np.logical_and({a}, {b})",
               "np.where({a} > 0, {b}, {a})"]
FUZZ_REDUCE = ["sum", "max", "min", "mean", "prod", "argmax", "argmin", "any", "all"]
FUZZ_LAYOUT = ["{a}.T", "{a}[::-1]", "{a}[::2]", "{a}[None]", "{a}.reshape(-1)", "{a}[1:]",
               "{a}[..., :1]", "np.swapaxes({a}, 0, -1)", "{a}[:, None]",
               "np.concatenate([{a}, {a}])", "np.broadcast_to({a}, (2,) + {a}.shape)"]
# (maximum / minimum.accumulate have no gradient rule, and test_autodiff differentiates these
# programs: the hypothesis programs above draw them)
FUZZ_SCAN = ["np.cumsum({a}, axis={axis})", "np.cumprod({a}, axis={axis})",
             "{a}.cumsum({axis}) / 4", "np.logical_or.accumulate({a}, axis={axis})",
             "np.cumulative_sum({a}, axis={axis}, include_initial=True)"]
FUZZ_KINDS = ["unary", "binary", "binary", "reduce", "layout", "matmul", "copy_update",
              "argument_update", "scan"]
FUZZ_SORT = ["np.sort({a}, axis={axis})", "np.argsort({a}, axis={axis}, kind='stable')",
             "np.median({a}, axis={axis})", "np.quantile({a}, 0.3, axis={axis})",
             "np.percentile({a}, [25, 90], axis={axis}, method='nearest')",
             "np.nanmedian({a}, axis={axis})"]
# Sorts are drawn where asked (kinds=WITH_SORTS), so the golden snapshot's random programs keep
# the default draws; test_autodiff differentiates these too.
WITH_SORTS = FUZZ_KINDS + ["sort"]
# Gathers at indices computed in range of any axis (-1 or 0 from a comparison; an argmin along
# the axis)
FUZZ_GATHER = ["{a}[({b} > 0).astype(np.int64) - 1]", "{a}[..., ({b} > 0).astype(np.int32) - 1]",
               "np.take({a}, -({b} < 0).astype(np.int8), axis=0) * 2",
               "np.take({a}, ({b} > {b}).astype(np.uint8))",
               "np.take_along_axis({a}, np.argmin({a}, axis=-1, keepdims=True), axis=-1)",
               "{a} * 1; {t}[({b} > 0).astype(np.int64) - 1] += 1"]
# Gathers are drawn where asked (kinds=WITH_GATHERS), so the golden snapshot's random programs
# keep the default draws; test_autodiff differentiates these too.
WITH_GATHERS = FUZZ_KINDS + ["gather"]
FUZZ_KINDS_BEFORE_GATHERS = FUZZ_KINDS
# Complex intermediates from any value (NEP 50: a float32 operand gives complex64), drawn where
# asked (kinds=WITH_COMPLEX); later statements may compute on them (NumPy's probe keeps only what
# NumPy accepts, and autofuse refuses ordering them with an UnsupportedError)
FUZZ_COMPLEX = ["np.exp(1j * {a})", "({a} + 1j * {b}) * (1 - 2j)", "np.abs({a} * (0.5 + 1j))",
                "np.conj({a} + 2j).imag", "({a} - 1j).real * 2 + {b}", "np.angle({a} - 0.5j)",
                "np.sqrt({a} + 0j)", "({a} + 1j) / ({b} - 2j)", "np.sum({a} * 1j, axis={axis})",
                "np.abs(np.mean(np.exp(-1j * {a}), axis={axis}))", "np.real({a}) + np.imag({a})"]
WITH_COMPLEX = FUZZ_KINDS + ["complex", "complex"]
# Wide programs also read through row-shifted slices (the CUDA backend's row strips)
FUZZ_SHIFT = ["{a}[2:] - 2 * {a}[1:-1] + {a}[:-2]", "{a}[1:, 4:] * {a}[:-1, :-4]",
              "{a}[3:] + np.maximum({a}[:-3], {a}[1:-2])",
              "{a}.copy(); {t}[1:-1, 1:-1] = 0.25 * ({a}[:-2, 1:-1] + {a}[2:, 1:-1] + "
              "{a}[1:-1, :-2] + {a}[1:-1, 2:])",
              "{a} * 2; {t}[2:-1, 4:] = {a}[1:-2, 4:] - {a}[3:, :-4]"]


class FuzzProgram:
    """A generated program: its source, input shapes, dtypes and layouts; `fn` is the function."""

    def __init__(self, lines, outputs, shapes, dtypes, layouts):
        self.lines = list(lines)
        self.outputs = list(outputs)
        self.shapes = [tuple(s) for s in shapes]
        self.dtypes = list(dtypes)
        self.layouts = list(layouts)
        self.source = _source(len(self.shapes), self.lines, self.outputs)
        namespace = {"np": np}
        exec(compile(self.source, "<fuzz program>", "exec"), namespace)
        self.fn = namespace["program"]

    def __repr__(self):
        args = ", ".join(f"{d}{list(s)}{'' if l == 'C' else ' ' + l}"
                         for s, d, l in zip(self.shapes, self.dtypes, self.layouts))
        return f"FuzzProgram({args}):\n{self.source}"

    def inputs(self, seed: int = 0) -> list:
        """Fresh argument arrays: small values (ints in [-4, 5], floats in [-3, 3]) laid out as drawn."""
        rng = np.random.default_rng(seed)
        return [_fuzz_array(s, d, l, rng) for s, d, l in zip(self.shapes, self.dtypes, self.layouts)]


def _source(count, lines, outputs) -> str:
    args = ", ".join(f"v{i}" for i in range(count))
    body = [f"    {line}" for line in lines] or ["    pass"]
    returned = ", ".join(f"v{o}" for o in outputs)
    return f"def program({args}):\n" + "\n".join(body) + f"\n    return ({returned},)\n"


def _fuzz_array(shape, dtype, layout, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        values = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        values = rng.integers(-4, 6, size=shape).astype(dtype)
    else:
        values = rng.uniform(-3, 3, size=shape).astype(dtype)
    values = np.asarray(values, dtype)
    if layout == "F":
        return np.asfortranarray(values)
    if layout == "reversed" and values.ndim:
        return values[::-1].copy()[::-1]
    return values


def _probe(shape, dtype):
    return np.ones(shape, np.dtype(dtype))


class _Chooser:
    """The generator's source of choices: a hypothesis `draw` or a seeded random.Random."""

    def __init__(self, draw=None, rng=None):
        self.draw, self.rng = draw, rng

    def choice(self, options):
        options = list(options)
        if self.draw is not None:
            return self.draw(st.sampled_from(options))
        return options[self.rng.randrange(len(options))]

    def integer(self, low, high):
        if self.draw is not None:
            return self.draw(st.integers(low, high))
        return self.rng.randint(low, high)


# Wide programs: sizes where the CUDA backend takes its 16-byte vector paths (last axis a multiple
# of 4, over 1024 elements) and its vector matmul (K and N multiples of 4), with ragged partners.
WIDE_DIMS = ([40, 1, 3, 64, 0], [256, 1, 36, 132])


def _generate(choose: _Chooser, max_steps: int = 6, max_inputs: int = 3,
              wide: bool = False, kinds=None) -> FuzzProgram:
    rows, cols = WIDE_DIMS if wide else ([3, 1, 2, 4, 0], [4, 1, 3, 2])
    dims = (choose.choice(rows), choose.choice(cols))
    forms = [dims, dims[1:], (1, dims[1]), (dims[0], 1), dims[::-1], (), (2,) + dims]
    count = choose.integer(1, max_inputs)
    shapes = [choose.choice(forms) for _ in range(count)]
    dtypes = [choose.choice(FUZZ_DTYPES) for _ in range(count)]
    layouts = [choose.choice(["C", "C", "F", "reversed"]) if len(s) >= 2 else "C" for s in shapes]
    values = [_probe(s, d) for s, d in zip(shapes, dtypes)]
    lines = []
    for _ in range(choose.integer(1, max_steps)):
        drawn = kinds or FUZZ_KINDS
        line = _statement(choose, values, count, drawn + ["shift"] * 2 if wide else drawn)
        if line is None:
            continue
        trial = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
        namespace = {"np": np, **{f"v{i}": v for i, v in enumerate(trial)}}
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")      # the mean of a size-0 probe
                exec(line, namespace)
        except Exception:
            continue
        values = [namespace[f"v{i}"] for i in range(len(values))]
        values.append(np.asarray(namespace[f"v{len(values)}"]))
        lines.append(line)
    last = len(values) - 1
    picked = {choose.integer(0, last) for _ in range(choose.integer(1, 3))} | {last}
    return FuzzProgram(lines, sorted(picked), shapes, dtypes, layouts)


def _statement(choose, values, count, kinds=FUZZ_KINDS) -> str | None:
    """One candidate statement defining v{len(values)} (NumPy may still refuse it)."""
    target = f"v{len(values)}"
    recent = list(range(max(0, len(values) - 3), len(values)))
    a = choose.choice(recent + list(range(len(values))))
    kind = choose.choice(kinds)
    if kind == "unary":
        return f"{target} = " + choose.choice(FUZZ_UNARY).format(a=f"v{a}")
    if kind in ("binary", "matmul"):
        partners = [i for i, v in enumerate(values) if _pairs(kind, values[a], v)]
        if not partners:
            return None
        b = choose.choice(partners)
        template = "{a} @ {b}" if kind == "matmul" else choose.choice(FUZZ_BINARY)
        return f"{target} = " + template.format(a=f"v{a}", b=f"v{b}")
    if kind == "reduce":
        ndim = values[a].ndim
        name = choose.choice(FUZZ_REDUCE)
        axis = choose.choice([None] + list(range(-ndim, ndim)))
        keep = "" if name.startswith("arg") else choose.choice(["", ", keepdims=True"])
        return f"{target} = np.{name}(v{a}, axis={axis}{keep})"
    if kind == "layout":
        return f"{target} = " + choose.choice(FUZZ_LAYOUT).format(a=f"v{a}")
    if kind == "sort":
        axis = choose.choice([None] + list(range(-values[a].ndim, values[a].ndim)))
        return f"{target} = " + choose.choice(FUZZ_SORT).format(a=f"v{a}", axis=axis)
    if kind == "scan":
        axis = choose.choice([None] + list(range(-values[a].ndim, values[a].ndim)))
        return f"{target} = " + choose.choice(FUZZ_SCAN).format(a=f"v{a}", axis=axis)
    if kind == "gather":
        b = choose.choice(range(len(values)))
        return f"{target} = " + choose.choice(FUZZ_GATHER).format(a=f"v{a}", b=f"v{b}", t=target)
    if kind == "complex":
        partners = [i for i, v in enumerate(values) if _broadcasts(values[a].shape, v.shape)]
        axis = choose.choice([None] + list(range(-values[a].ndim, values[a].ndim)))
        return f"{target} = " + choose.choice(FUZZ_COMPLEX).format(
            a=f"v{a}", b=f"v{choose.choice(partners)}", axis=axis)
    if kind == "shift":
        return f"{target} = " + choose.choice(FUZZ_SHIFT).format(a=f"v{a}", t=target)
    if kind == "copy_update":
        b = choose.choice(range(len(values)))
        op = choose.choice(["+=", "*=", "-="])
        return f"{target} = v{a}.copy(); {target}[1:] {op} v{b}[:1]; {target}[0] *= 2"
    if kind == "argument_update":
        arg = choose.integer(0, count - 1)
        b = choose.choice(range(len(values)))
        op = choose.choice(["+=", "*=", "[...] ="])
        update = f"v{arg}[...] = v{b}" if op == "[...] =" else f"v{arg} {op} v{b}"
        return f"{update}; {target} = v{arg}[:1] * 1"
    return None


def _pairs(kind, x, y) -> bool:
    if kind == "matmul":
        return x.ndim >= 1 and y.ndim >= 1 and x.shape[-1] == y.shape[-2 if y.ndim >= 2 else 0]
    return _broadcasts(x.shape, y.shape)


@st.composite
def fuzz_programs(draw, max_steps=6, max_inputs=3, kinds=None):
    """A FuzzProgram: a random DAG (several consumers, several outputs) of elementwise ops,
    broadcasts, layout changes, reductions over random axes, matmuls and in-place updates over
    bool/int32/int64/float32/float64 inputs of shapes with 1s, 0-d and size 0."""
    return _generate(_Chooser(draw=draw), max_steps, max_inputs, kinds=kinds)


def seeded_program(seed: int, max_steps=6, max_inputs=3, wide: bool = False,
                   kinds=None) -> FuzzProgram:
    """The program for `seed`: the same on every run and machine (the long run's programs);
    `kinds`: the statement kinds drawn (FUZZ_KINDS, or WITH_SORTS)."""
    import random
    return _generate(_Chooser(rng=random.Random(seed)), max_steps, max_inputs, wide, kinds)


def fuzz_tolerance(dtype, expected) -> tuple[float, float]:
    """(rtol, atol) fit for `dtype`: exact for ints and bools; a few ulps of the largest finite
    value for floats (reductions and fused chains round in a different order than NumPy)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return 0.0, 0.0
    finite = np.abs(expected[np.isfinite(expected)]) if np.ndim(expected) else \
        np.abs(np.asarray([expected])[np.isfinite([expected])])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    rtol = {np.dtype(np.float16): 4e-3, np.dtype(np.float32): 2e-4,
            np.dtype(np.complex64): 2e-4}.get(dtype, 1e-9)
    return rtol, rtol * scale


def assert_fuzz_same(got, want, what: str, inside=None) -> None:
    """`got` is NumPy's `want`: same kind (array or scalar), shape, dtype; values within
    fuzz_tolerance (of `inside`, the least precise float the program computes in on the way,
    where that is coarser than the result's: the CPU backend accumulates float32 sums and
    products in float64, and a float16 sum may land one float16 apart); NaN and inf at the same
    places, with the same signs."""
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray), \
        f"{what}: {type(got).__name__} where NumPy gives {type(want).__name__}"
    got_a, want_a = np.asarray(got), np.asarray(want)
    assert got_a.shape == want_a.shape, f"{what}: shape {got_a.shape} != {want_a.shape}"
    assert got_a.dtype == want_a.dtype, f"{what}: dtype {got_a.dtype} != {want_a.dtype}"
    if want_a.dtype.kind in "biu":
        np.testing.assert_array_equal(got_a, want_a, err_msg=what)
        return
    np.testing.assert_array_equal(np.isnan(got_a), np.isnan(want_a), err_msg=f"{what}: NaNs")
    np.testing.assert_array_equal(np.isinf(got_a) * np.sign(got_a), np.isinf(want_a) * np.sign(want_a),
                                  err_msg=f"{what}: infs")
    coarser = inside is not None and np.finfo(inside).eps > np.finfo(want_a.dtype).eps
    rtol, atol = fuzz_tolerance(inside if coarser else want_a.dtype, want_a)
    np.testing.assert_allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _least_precise_float(jitted, args):
    """The least precise float dtype among the traced values of `jitted` (already called with
    `args`, so this reads its cached trace; float16 arrives from a float ufunc of bools), or
    None where it computes no floats."""
    floats = {node.dtype for node in jitted.lower(*args).traced.nodes if node.dtype.kind in "fc"}
    return max(floats, key=lambda d: np.finfo(d).eps) if floats else None


def check_fuzz_program(program: FuzzProgram, backend: str = "cpu", seed: int = 0) -> str:
    """Run `program` by NumPy, by autofuse's reference interpreter and by `backend`; raise
    AssertionError on any difference in results or in the arguments after the call. Returns
    "ok", or "unsupported: ..." where autofuse refused the program with an AutofuseError; any
    other exception propagates (a crash is a failure too)."""
    import autofuse
    arrays = program.inputs(seed)
    inside = None               # the least precise float inside, from the interpreter's trace
    with np.errstate(all="ignore", invalid="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = program.fn(*[a.copy(order="K") for a in arrays])
    if any("encountered in cast" in str(w.message) for w in caught):
        # NOTE: NumPy leaves a float -> int cast of NaN, inf or an out-of-range value to the
        # platform (x86 gives INT_MIN, ARM and CUDA saturate, NaN -> 0): no answer to compare.
        return "undefined: a float -> int cast of NaN, inf or an out-of-range value"
    outcomes = {}
    for name in ("numpy", backend):
        args = [a.copy(order="K") for a in arrays]
        jitted = autofuse.jit(program.fn, backend=name)
        try:
            with np.errstate(all="ignore"):
                result = jitted(*args)
        except autofuse.AutofuseError as error:
            outcomes[name] = f"unsupported: {type(error).__name__}: {str(error).splitlines()[0]}"
            continue
        outcomes[name] = "ok"
        if name == "numpy":
            inside = _least_precise_float(jitted, args)
        assert isinstance(result, tuple) and len(result) == len(expected)
        for index, (got, want) in enumerate(zip(result, expected)):
            assert_fuzz_same(got, want, f"backend={name} output {index}", inside)
        numpy_args = [a.copy(order="K") for a in arrays]
        with np.errstate(all="ignore"):
            program.fn(*numpy_args)
        for index, (got, want) in enumerate(zip(args, numpy_args)):
            assert_fuzz_same(got, want, f"backend={name} argument {index} after the call",
                             inside)
    # NOTE: a backend may refuse what the interpreter runs as long as it says so with an
    # AutofuseError; only a wrong answer fails.
    refused = [outcome for outcome in outcomes.values() if outcome != "ok"]
    return refused[0] if refused else "ok"
