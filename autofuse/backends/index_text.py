"""Index expressions as kernel text: an operand's index under broadcasting, and sums and affine
maps of names and numbers folded where the numbers allow."""
from __future__ import annotations


def broadcast_index(in_shape: tuple, out_shape: tuple, index: tuple,
                    ones: bool = True) -> tuple:
    """The index of an operand of shape `in_shape` read at `index` of a result of `out_shape`.

    `ones` False: a size-1 axis not broadcast (the result's is 1 too) keeps its index name, which
    is 0 there: the text is then the same as at any other size (a shape class, dynamic/)."""
    offset = len(out_shape) - len(in_shape)
    return tuple("0" if size == 1 and (ones or out_shape[offset + d] != 1) else index[offset + d]
                 for d, size in enumerate(in_shape))


def _atom(expression: str) -> bool:
    """Whether `expression` binds as one operand: a name, or one parenthesized whole."""
    if expression.isidentifier():
        return True
    if not expression.startswith("("):
        return False
    depth = 0
    for position, char in enumerate(expression):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return position == len(expression) - 1
    return False


def affine(start: int | str, step: int, i: str) -> str:
    """start + step * i, folded where the numbers allow; `start` may be a name (a kernel
    argument: backends/sharing.py)."""
    if i.isdigit() and not isinstance(start, str):
        return str(start + step * int(i))
    if i.isdigit():
        return start if step * int(i) == 0 else f"({start} + {step * int(i)})"
    # NOTE: `i` may be an expression (a reshape's "f1 // 2"): -1 * f1 // 2 is (-f1) // 2.
    term = i if step == 1 else f"{step} * {i}" if _atom(i) else f"{step} * ({i})"
    if start == 0:
        return term if step == 1 else f"({term})"
    return f"({start} + {term})"


def plus(start: int | str, amount: int) -> str:
    """start + amount as text, `start` a number or a name."""
    if not isinstance(start, str):
        return str(start + amount)
    return start if amount == 0 else f"{start} + {amount}" if amount > 0 else f"{start} - {-amount}"
