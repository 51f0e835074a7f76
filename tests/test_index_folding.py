"""backends/cuda/index_folding.py: folded index expressions keep their value, and their leading
term keeps numba's signed 64-bit typing."""
import ast
import random

import pytest

from autofuse.backends.cuda.dynamic import same_kernel
from autofuse.backends.cuda.index_folding import canonical, fold

CASES = {
    "(1 + (i0 - 1)) * 1024 + (2 + (jv3 - 1))": "i0 * 1024 + jv3 + 1",
    "(i0 - 1) * 46 + (jv2 - 1)": "i0 * 46 + jv2 - 47",
    "(2 + (i0 - 1)) * 1024 + (1 + (j - 1))": "i0 * 1024 + j + 1024",
    "(i0 - 1) + (i1 - 1)": "i0 - 2 + i1",
    "(1 + i0) * 48 + (1 + i1)": "i0 * 48 + i1 + 49",
    "(i0 - 1) - (i1 + 1)": "i0 - 2 - i1",
}
KEPT = ["i0 + i1", "e // 48", "r0 * 48 + (j - 1)", "e - i0 * 48", "q % 4 + j", "-1 * f1 // 2",
        "j + 3", "(cuda.blockIdx.x * 32 + cuda.threadIdx.x) * 4", "i0 * i1 + (1 + (j - 1))",
        "(0 - i0) + (0 - i1)", "7"]


@pytest.mark.parametrize("expression, folded", CASES.items())
def test_stencil_indices_fold(expression, folded):
    assert fold(expression) == folded


@pytest.mark.parametrize("expression", KEPT)
def test_others_are_kept(expression):
    """Not affine over names, unsigned names added first, no positive term, or nothing saved."""
    assert fold(expression) == expression


def _random_affine(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(["i0", "i1", "j", "jv1", str(rng.randint(0, 9))])
    a, b = _random_affine(rng, depth - 1), _random_affine(rng, depth - 1)
    op = rng.choice(["+", "-", "+", "*"])
    if op == "*":
        b = str(rng.randint(1, 1100))
    return f"({a} {op} {b})"


def test_random_affine_expressions_keep_their_value():
    rng = random.Random(29)
    for _ in range(2000):
        expression = _random_affine(rng, 4)
        folded = fold(expression)
        assert len(ast.parse(folded, mode="eval").body._fields) > 0
        for _ in range(4):
            names = {n: rng.randint(0, 5000) for n in ("i0", "i1", "j", "jv1")}
            assert eval(folded, {}, names) == eval(expression, {}, names), (expression, folded)
        first = ast.parse(folded, mode="eval").body
        while isinstance(first, ast.BinOp) and isinstance(first.op, (ast.Add, ast.Sub)):
            first = first.left
        constant = isinstance(first, ast.Constant) or (
            isinstance(first, ast.UnaryOp) and isinstance(first.operand, ast.Constant))
        if folded != expression and not constant:
            # a folded expression leads with a multiple of a name or a name and a constant
            assert isinstance(first, (ast.BinOp, ast.Name)), folded


def test_canonical_spellings_keep_their_value_and_agree():
    """index_folding.canonical, for comparing texts only: one spelling of an affine expression
    whatever its order, unit coefficients and zero terms, with the expression's value."""
    rng = random.Random(31)
    for _ in range(1000):
        expression = _random_affine(rng, 4)
        spelled = canonical(expression)
        for _ in range(3):
            names = {n: rng.randint(0, 5000) for n in ("i0", "i1", "j", "jv1")}
            assert eval(spelled, {}, names) == eval(expression, {}, names), (expression, spelled)
    assert canonical("sr * 1 + sc") == canonical("sc + sr") == canonical("sr + sc * 1 + 0")
    assert canonical("sr * 0 + sc") == "sc" and canonical("cuda.threadIdx.x") == "cuda.threadIdx.x"


def test_a_class_kernel_at_a_size_is_the_built_one_up_to_its_index_spelling():
    """cuda dynamic.same_kernel: a transpose's `ix(sr * n0 + sc)` at size 1 is the built
    `ix(sr + sc)`, at size 0 the built `sc`; another arithmetic is not."""
    assert same_kernel("x = a0[ix(sr * 1 + sc)]", "x = a0[ix(sr + sc)]")
    assert same_kernel("v = vload4(a0, ix(sr * 0 + sc))\ny = a0[ix(sr * 0 + sc)]",
                       "v = vload4(a0, ix(sc))\ny = a0[sc]")
    assert not same_kernel("x = a0[ix(sr * 2 + sc)]", "x = a0[ix(sr + sc)]")
    assert not same_kernel("x = a0[ix(sr * 1 + sc)]", "x = a1[ix(sr + sc)]")
