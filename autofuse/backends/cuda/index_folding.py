"""Index expressions with their constants folded: `(1 + (i0 - 1)) * 1024 + (2 + (j - 1))` is
`i0 * 1024 + j + 1`.

A kernel's index expressions are index maps composed as text (a slice's offset around a slice
assignment's region around a shifted read), so a stencil kernel's reads carry three or four
additions a coordinate that cancel. numba types and lowers each of them (a strip kernel of
heat_2d: 217 of its 366 binary operations were in index expressions), which is most of a
kernel's compile time, not NVVM's. The fold is exact: an affine expression over integer names
keeps its value, and the kernel's index cast (KernelBase.ix) truncates the same value.

numba's integer typing is why the terms come out in a set order: an unsigned 32-bit index name
plus another is unsigned 64-bit, and unsigned 64-bit with a signed 64-bit constant is a float.
The folded expression begins with a term whose type is signed 64-bit wherever the original's
was: a multiple of a name (`i0 * 1024`: a signed literal), or a name with the constant added
(`i0 - 1 + j`); it is left as it was where neither can lead (names added without a constant,
or no positive term), or where folding saves nothing.
"""
from __future__ import annotations

import ast

_CONSTANT = ""


def fold(expression: str) -> str:
    """`expression` with its affine part's constants folded, or unchanged."""
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return expression
    terms = _linear(tree)
    if terms is None:
        return expression
    folded = _render(terms)
    if folded is None or _operations(folded) >= _operations(expression):
        return expression
    return folded


def canonical(expression: str) -> str:
    """An affine `expression` in one spelling for comparing texts (terms by name, coefficients
    written out, zero terms dropped: `sr * 1 + sc`, `sc + sr` and `sr + sc * 1 + 0` alike), or
    unchanged where it is not affine. Never written into a kernel: the types of its terms are
    the original's concern (fold)."""
    try:
        terms = _linear(ast.parse(expression, mode="eval").body)
    except SyntaxError:
        return expression
    if terms is None:
        return expression
    named = sorted((name, c) for name, c in terms.items() if c and name != _CONSTANT)
    constant = terms.get(_CONSTANT, 0)
    if len(named) == 1 and named[0][1] == 1 and not constant:
        return named[0][0]
    parts = [f"{name} * {c}" for name, c in named] + ([str(constant)] if constant or not named
                                                      else [])
    return " + ".join(parts)


def _linear(node) -> dict | None:
    """{atom text: integer coefficient, "": constant} of an affine expression, or None where it
    is not one (then nothing is folded)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {_CONSTANT: node.value}
    if isinstance(node, ast.Name):
        return {node.id: 1}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _linear(node.operand)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _linear(node.left), _linear(node.right)
        if left is None or right is None:
            return None
        sign = 1 if isinstance(node.op, ast.Add) else -1
        for key, value in right.items():
            left[key] = left.get(key, 0) + sign * value
        return left
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _linear(node.left), _linear(node.right)
        if left is None or right is None:
            return None
        for scale, other in ((left, right), (right, left)):
            if set(scale) == {_CONSTANT}:
                return {k: v * scale[_CONSTANT] for k, v in other.items()}
        return None
    return None


def _render(terms: dict) -> str | None:
    constant = terms.pop(_CONSTANT, 0)
    names = [(name, c) for name, c in terms.items() if c != 0]
    positive = [(name, c) for name, c in names if c > 0]
    if not names:
        return str(constant)
    if not positive:
        return None
    leading = next(((name, c) for name, c in positive if c != 1), None)
    if leading is None and constant == 0 and len(names) > 1:
        return None                     # unsigned names added first: keep the original's types
    if leading is None:
        leading = positive[0]
    name, c = leading
    text = name if c == 1 else f"{name} * {c}"
    if c == 1 and constant:
        text += f" + {constant}" if constant > 0 else f" - {-constant}"
        constant = 0
    for other, k in names:
        if other == name:
            continue
        term = other if abs(k) == 1 else f"{other} * {abs(k)}"
        text += f" + {term}" if k > 0 else f" - {term}"
    if constant:
        text += f" + {constant}" if constant > 0 else f" - {-constant}"
    return text


def _operations(expression: str) -> int:
    return sum(isinstance(n, (ast.BinOp, ast.UnaryOp))
               for n in ast.walk(ast.parse(expression, mode="eval")))
