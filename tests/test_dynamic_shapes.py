"""Shape classes (autofuse/dynamic/): sizes that vary compile once per class, kernels take the
sizes as arguments, and dimensions the function decides on stay static with the reason shown."""
from __future__ import annotations

import numpy as np
import pytest

import autofuse

RNG = np.random.default_rng(33)
SIZES = [0, 1] + list(range(2, 50))          # 50 batch sizes, 0 and 1 among them
W = RNG.standard_normal((48, 40))
BIAS = RNG.standard_normal(40)
GAIN = RNG.standard_normal(24)


def elementwise(x, y):
    return np.maximum(x * 2.0 + y, 0.0) - y


def steps(x, y):
    for _ in range(6):
        x = np.tanh(x * 0.9 + y)
        y = y * 0.5 - x
    return x + y


def row_norms(x):
    return np.sqrt((x * x).sum(axis=1))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g


def product(x, w, b):
    return np.maximum(x @ w + b, 0.0)


KINDS = {
    "elementwise": (elementwise, lambda n: (RNG.standard_normal((n, 24)), RNG.standard_normal(24))),
    "loop": (steps, lambda n: (RNG.standard_normal((n, 24)), RNG.standard_normal((n, 24)))),
    "reduction": (row_norms, lambda n: (RNG.standard_normal((n, 24)),)),
    "rows": (softmax, lambda n: (RNG.standard_normal((n, 24)).astype(np.float32),)),
    "layernorm": (layernorm, lambda n: (RNG.standard_normal((n, 24)), GAIN)),
    "product": (product, lambda n: (RNG.standard_normal((n, 48)), W, BIAS)),
}


def _check(fn, f, args, exact: bool):
    with np.errstate(all="ignore"):
        want = fn(*args)
    got = f(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        tolerance = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_fifty_batch_sizes_compile_at_most_twice(kind):
    fn, make = KINDS[kind]
    f = autofuse.jit(fn, backend="cpu")
    order = [SIZES[5]] + [s for s in SIZES if s != SIZES[5]]     # 0 and 1 after the class exists
    for n in order:
        _check(fn, f, make(n), exact=kind == "elementwise")
    info = f.cache_info()
    assert info.compiles <= 2, (kind, info)
    assert info.instances >= len(SIZES) - 3
    assert "# dynamic: n0 = x.shape[0]" in f.lower(*make(7)).as_text("fused")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_dynamic_false_specializes_every_shape(kind):
    fn, make = KINDS[kind]
    f = autofuse.jit(fn, backend="cpu", dynamic=False)
    for n in (3, 4, 5):
        _check(fn, f, make(n), exact=kind == "elementwise")
    assert f.cache_info().compiles == 3 and f.cache_info().instances == 0


def test_dynamic_true_compiles_once_from_the_first_call():
    f = autofuse.jit(row_norms, backend="cpu", dynamic=True)
    for n in (9, 4, 17, 2, 30):
        _check(row_norms, f, (RNG.standard_normal((n, 24)),), exact=False)
    assert f.cache_info().compiles == 1
    text = f.lower(RNG.standard_normal((6, 24))).as_text()
    assert "n0 = x.shape[0]" in text
    assert "# static: x.shape[1]" in text         # the reduced axis: its loop is unrolled by lanes


@pytest.mark.parametrize("shape", [(256, 64), (3, 5, 7)])
def test_sizes_multiplied_together_keep_one_static(shape):
    """A flat loop over n0 * n1 elements is no affine form of the sizes: every size moved at once
    shows it, and the last size stays static (a wrong answer otherwise)."""
    f = autofuse.jit(steps, backend="cpu", dynamic=True)
    for scale in (1, 2, 3):
        x = RNG.standard_normal((shape[0] * scale,) + shape[1:])
        y = RNG.standard_normal(x.shape)
        np.testing.assert_allclose(f(x, y), steps(x, y), rtol=1e-12, atol=1e-12)
    text = f.lower(x, y).as_text()
    assert "multiplied together" in text and "# dynamic: n0 = x.shape[0]" in text


def test_kernels_take_the_sizes_as_arguments():
    f = autofuse.jit(elementwise, backend="cpu", dynamic=True)
    x, y = RNG.standard_normal((5, 24)), RNG.standard_normal(24)
    source = f.lower(x, y).kernels[0].source
    # n0 = x.shape[1] = y.shape[0] (equal sizes share a symbol), n1 = x.shape[0]
    assert "(n0, n1, a0, a1, o0)" in source and "range(n1)" in source and "range(n0)" in source


def decides(x):
    if x.shape[0] > 4:
        return x * 2.0
    return x * 3.0


def counts(x):
    total = x[0]
    for i in range(1, x.shape[0]):
        total = total + x[i]
    return total


def sized(x):
    return x * 2.0, len(x)


@pytest.mark.parametrize("fn, reason", [(decides, "a comparison of the size"),
                                        (counts, "the number of values in the program"),
                                        (sized, "len() of the array")])
def test_a_size_the_function_decides_on_stays_static(fn, reason):
    f = autofuse.jit(fn, backend="cpu")
    for n in (2, 3, 4, 5, 6, 8):
        x = RNG.standard_normal((n, 3))
        got, want = f(x), fn(x)
        if isinstance(want, tuple):
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1] == want[1]
        else:
            np.testing.assert_array_equal(got, want)
    assert f.cache_info().instances == 0
    text = f.lower(RNG.standard_normal((7, 3))).as_text()
    assert "# static: x.shape[0]" in text and reason in text


def reversed_rows(x):
    return x[::-1] * 2.0 + x[1:].sum(axis=0)


def stacked(x, y):
    return np.concatenate([x, y * 2.0]).reshape(-1, 2) + 1.0


def flattened(x):
    return x.reshape(x.shape[0], -1) * 2.0 + np.zeros((x.shape[0], 1))


@pytest.mark.parametrize("fn, make", [
    (reversed_rows, lambda n: (RNG.standard_normal((n, 4)),)),
    (stacked, lambda n: (RNG.standard_normal((n, 4)), RNG.standard_normal((n, 4)))),
    (flattened, lambda n: (RNG.standard_normal((n, 2, 3)),)),
])
def test_sizes_in_slices_reshapes_and_creation_become_forms(fn, make):
    f = autofuse.jit(fn, backend="cpu")
    for n in (4, 5, 2, 3, 9, 17, 1):
        _check(fn, f, make(n), exact=False)
    assert f.cache_info().compiles <= 3
    assert f.cache_info().instances >= 4


def heat_steps(u):
    for _ in range(3):
        v = u.copy()
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] +
                                              u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
        u = v
    return u


def test_a_program_other_at_sizes_2_and_3_is_a_class_from_4():
    """A stencil's interior u[1:-1] is empty at 2 rows and one row at 3: the class is checked at
    4 and 5 and runs every size from 4; sizes 0-3 compile on their own, the text says why."""
    f = autofuse.jit(heat_steps, backend="cpu")
    for n in [20] + list(range(30)) + [301]:
        _check(heat_steps, f, (RNG.standard_normal((n, 9)),), exact=False)
    assert f.cache_info().compiles == 6 and f.cache_info().instances >= 26, f.cache_info()
    text = f.lower(RNG.standard_normal((7, 9))).as_text("fused")
    assert "# n0: sizes 2 to 3 compile on their own: at size 2" in text, text


def scale_in_place(x, y):
    x *= 2.0
    return (x + y).sum(axis=1)


def test_writes_to_arguments_and_equal_sizes_sharing_a_symbol():
    f = autofuse.jit(scale_in_place, backend="cpu")
    for n in (3, 4, 6, 11):
        x, y = RNG.standard_normal((n, 5)), RNG.standard_normal((n, 5))
        x_copy = x.copy()
        want = scale_in_place(x_copy, y)
        np.testing.assert_allclose(f(x, y), want, rtol=1e-12)
        np.testing.assert_array_equal(x, x_copy)
    assert f.cache_info().compiles == 2
    # sizes that differ are another class: y broadcast along x
    x, y = RNG.standard_normal((6, 5)), RNG.standard_normal((1, 5))
    np.testing.assert_allclose(f(x.copy(), y), scale_in_place(x.copy(), y), rtol=1e-12)


def test_non_contiguous_and_negative_stride_arguments_stay_right():
    f = autofuse.jit(elementwise, backend="cpu")
    for n in (4, 6, 9):
        base = RNG.standard_normal((2 * n, 24))
        for x in (base[::2], base[::-1][:n], np.asfortranarray(base[:n])):
            y = RNG.standard_normal(24)
            np.testing.assert_array_equal(f(x, y), elementwise(x, y))


def test_the_fast_path_serves_each_size_after_its_first_call():
    f = autofuse.jit(softmax, backend="cpu")
    xs = [RNG.standard_normal((n, 24)).astype(np.float32) for n in (5, 6, 7)]
    for x in xs + xs:
        _check(softmax, f, (x,), exact=False)
    assert f.cache_info().compiles == 2 and f.cache_info().hits >= 3


def test_dynamic_takes_only_none_true_or_false():
    with pytest.raises(autofuse.ArgumentError, match="dynamic"):
        autofuse.jit(softmax, dynamic="yes")


@pytest.mark.parametrize("chunk", range(4))
def test_random_programs_through_their_class_program(chunk):
    """The fuzzer's programs (tests/programs.py) with every dimension dynamic: each runs through a
    class program built at stand-in sizes (or stays static where a size decides), against NumPy,
    results and arguments written in place alike."""
    import warnings
    from programs import assert_fuzz_same, seeded_program
    through_class = 0
    for seed in range(chunk, 48, 4):
        program = seeded_program(seed)
        arrays = program.inputs(seed)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = program.fn(*[a.copy(order="K") for a in arrays])
            expected_args = [a.copy(order="K") for a in arrays]
            program.fn(*expected_args)
            f = autofuse.jit(program.fn, backend="cpu", dynamic=True)
            args = [a.copy(order="K") for a in arrays]
            try:
                got = f(*args)
            except autofuse.AutofuseError:
                continue
        for index, (value, expected) in enumerate(zip(got, want)):
            assert_fuzz_same(value, expected, f"seed {seed} output {index}", None)
        for index, (value, expected) in enumerate(zip(args, expected_args)):
            assert_fuzz_same(value, expected, f"seed {seed} argument {index}", None)
        through_class += f.cache_info().instances > 0
    assert through_class >= 3


def test_a_size_kept_static_only_as_faster_becomes_a_class_after_a_few_sizes():
    """policy.py: a dimension the builder kept static only because its kernels written for each
    size are faster (a backend's Slower refusal) is specialized for SPECIALIZED sizes, then
    offered to a class again; one kept static for any other reason never is."""
    from autofuse.dynamic.policy import SPECIALIZED, Policy
    policy = Policy(None)
    structure = "two arrays"

    def places(n):
        return policy.places(structure, [np.empty((n, 4)), np.empty((n + 1, 4))], set())

    assert places(3) == [] and places(4) == [(0, 0), (1, 0)]
    policy.keep_static(structure, {(0, 0): "faster for its sizes", (1, 0): "decided on"},
                       slower={(0, 0)})
    for n in range(5, 3 + SPECIALIZED):
        assert places(n) == [], n
    assert places(3 + SPECIALIZED) == [(0, 0)]          # (the fifth size of x.shape[0])
    assert policy.insists(structure, (0, 0)) and not policy.insists(structure, (1, 0))
