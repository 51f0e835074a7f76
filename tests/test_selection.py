"""Selections without control flow (backends/selection.py): the op table spells np.where, NaN-aware
maximum and minimum, sign and boolean logic as `select(...)` and `&` / `|`, argmax and argmin take
their values by selects on CUDA, and slice-assignment conditions are eager conjunctions. The answers are
NumPy's (CPU here, the CUDA simulator in sim_cases.py) and the generated text has no conditional
expression where a select serves (the CPU's argmax keeps its branch: a predicted branch is
faster there)."""
import re

import numpy as np
import pytest

import autofuse

CONDITIONAL = re.compile(r"\bif\b[^:\n]*\belse\b")     # `a if c else b` inside an expression


def _draw(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((37, 19)).astype(np.float32)
    y = rng.standard_normal((37, 19)).astype(np.float32)
    x[0, :3] = np.nan
    y[1, :3] = np.nan
    x[2, :4] = y[2, :4]                      # ties
    x[3, 5] = 0.0
    i = rng.integers(-4, 5, (37, 19))
    return x, y, i, x > 0.25


PROGRAMS = {
    "where": lambda x, y, i, b: np.where(x > y, x, y * 2),
    "where_mixed_dtypes": lambda x, y, i, b: np.where(b, x, 1) + np.where(i > 0, i, 2.5),
    "where_bools": lambda x, y, i, b: np.where(i > 0, b, ~b),
    "maximum_minimum": lambda x, y, i, b: np.maximum(x, y) - np.minimum(y, 0.5),
    "fmax_fmin": lambda x, y, i, b: np.fmax(x, y) + np.fmin(y, x),
    "integer_maximum": lambda x, y, i, b: np.maximum(i, 0) * np.minimum(i, 2),
    "sign": lambda x, y, i, b: np.sign(x) + np.sign(i) + np.sign(i.astype(np.uint8)),
    "logic": lambda x, y, i, b: np.logical_and(x > 0, y > 0) | np.logical_or(i, b) ^ (b * (x < 1)),
    "boolean_arithmetic": lambda x, y, i, b: (b + (y > 0), b * (y > 0), np.maximum(b, y > 0),
                                              np.minimum(b, y > 0), np.square(b)),
    "any_all": lambda x, y, i, b: (np.any(b, axis=1), np.all(x > -3, axis=0), np.any(i > 3),
                                   np.all(b)),
    "argmax_argmin": lambda x, y, i, b: (np.argmax(x, axis=1), np.argmin(y, axis=0),
                                         np.argmax(i), np.argmin(np.abs(i), axis=1)),
    "max_reduction": lambda x, y, i, b: (np.max(x, axis=1), np.min(y, axis=0), np.nanmax(x)),
    "relu_softmax": lambda x, y, i, b: np.exp(np.maximum(x, 0) - np.max(np.maximum(x, 0),
                                                                         axis=1, keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_selections_give_numpys_answers_on_the_cpu(name):
    program = PROGRAMS[name]
    for seed in (1, 2):
        arguments = _draw(seed)
        got = autofuse.jit(program, backend="cpu")(*arguments)
        want = program(*arguments)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for a, b in zip(got, want):
            assert np.result_type(a) == np.result_type(b)
            if np.result_type(b).kind == "f":       # (exp: the CPU's own, within an ulp or two)
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=0)
            else:
                np.testing.assert_array_equal(a, b)


def _kernel_texts(program, backend):
    lowered = autofuse.jit(program, backend=backend).lower(*_draw(0))
    return [kernel.source for kernel in lowered.kernels]


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_elementwise_selections_are_written_without_control_flow(backend):
    def program(x, y, i, b):
        return (np.where(x > y, np.maximum(x, 0), np.sign(y)) + np.fmin(x, y),
                np.logical_and(b, i > 0) | np.logical_or(x > 1, y > 1))
    texts = _kernel_texts(program, backend)
    assert texts and all("select(" in text for text in texts)
    for text in texts:
        body = [line for line in text.splitlines() if "select(" in line or " & " in line]
        assert body and not any(CONDITIONAL.search(line) or re.search(r"\b(and|or)\b", line)
                                for line in body), "\n".join(body)


def test_argmax_takes_its_values_by_selects_on_cuda_and_by_a_branch_on_the_cpu():
    """CUDA: selects (no branch for numba's front end, the PTX branch-free); the CPU keeps a
    rarely taken branch, which its scalar loop predicts (selects chain each element's compare
    to the last: 1.6x slower there)."""
    program = lambda x, y, i, b: np.argmax(x, axis=1)  # noqa: E731
    cuda = _kernel_texts(program, "cuda")
    assert any("select(better" in text for text in cuda)
    assert not any(re.search(r"^\s*if .*!= .*:", text, re.M) for text in cuda)
    cpu = _kernel_texts(program, "cpu")
    assert not any("select(" in text for text in cpu)
    assert any(re.search(r"^\s*if .* or .*!= .*:", text, re.M) for text in cpu)


def test_slice_assignment_conditions_are_eager_conjunctions():
    def program(u):
        v = u.copy()
        v[1:-1, 2:-2] = 0.5 * (u[:-2, 2:-2] + u[2:, 2:-2])
        v[::2, ::3] = 1.0
        return v
    x = np.random.default_rng(3).standard_normal((12, 40)).astype(np.float32)
    np.testing.assert_array_equal(autofuse.jit(program, backend="cpu")(x), program(x))
    texts = _kernel_texts(lambda x, y, i, b: program(x), "cpu")
    conditions = [line for text in texts for line in text.splitlines()
                  if line.strip().startswith("if ") and "<=" in line]
    assert conditions and not any(re.search(r"\band\b|\d <= \w+ <", line) for line in conditions)


def test_select_unifies_its_operands_and_tests_any_condition():
    numba = pytest.importorskip("numba")
    from autofuse.backends.selection import select, select_python

    @numba.njit
    def chosen(c, a, b):
        return select(c, a, b)
    assert chosen(True, np.float32(1.5), 2.0) == 1.5 and isinstance(chosen(True, np.float32(1), 2.0), float)
    assert chosen(np.int64(0), 3, 4) == 4 and chosen(np.float64(np.nan), 3, 4) == 3
    assert chosen(False, np.int8(-1), np.int64(7)) == 7
    assert select_python(np.bool_(True), 1, 2) == 1 and select_python(0, 1, 2) == 2


def test_select_compiles_to_selp_in_sm90_ptx():
    pytest.importorskip("numba_cuda")
    from numba import config
    if config.ENABLE_CUDASIM:
        pytest.skip("PTX is not generated under the CUDA simulator")
    lowered = autofuse.jit(lambda x, y: np.where(x > y, x, y * 2) + np.maximum(x, 0),
                           backend="cuda").lower(*_draw(0)[:2])
    (kernel,) = lowered.kernels
    assert "select(" in kernel.source and "selp" in kernel.ptx
