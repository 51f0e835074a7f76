"""Conditions of generated code written to be evaluated eagerly: `&` between parenthesized
terms, never `and` or a chained comparison, each of which is a branch, so one more basic block,
to numba's front end (whose cost grows faster than the blocks: backends/selection.py)."""
from __future__ import annotations


def all_of(conditions) -> str:
    """The conjunction of `conditions`, each in parentheses. Each must be safe to evaluate where
    the others fail (no guarded load or division inside)."""
    return " & ".join(f"({c})" for c in conditions)


def within(low, i: str, high, closed: bool = False) -> str:
    """`low <= i < high` (or `<= high`) as one eager condition."""
    return f"({low} <= {i}) & ({i} {'<=' if closed else '<'} {high})"
