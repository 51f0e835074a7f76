"""A value read into a register where it is in bounds, zero elsewhere (the product kernels'
staging reads: emit/matmul.py, emit/staged_operands.py)."""
from __future__ import annotations


def read(r, target: str, zero: str, guards: list, value) -> None:
    """`target` = value() under the conditions `guards` (each in bounds), else `zero`; `value`
    renders the read inside its own scope (the renderer's memo keeps it there)."""
    if guards:
        r.emit(f"{target} = {zero}")
        r.emit(f"if {' and '.join(guards)}:")
        r.push()
    else:
        r.scopes.append({})
    r.emit(f"{target} = {value()}")
    if guards:
        r.pop()
    else:
        r.scopes.pop()
