"""backends/cuda/index_folding.py: folded index expressions keep their value, and their leading
term keeps numba's signed 64-bit typing."""
import ast
import random

import pytest

from autofuse.backends.cuda.index_folding import fold

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
