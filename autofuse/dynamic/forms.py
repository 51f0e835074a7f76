"""Affine size forms fitted from programs built at stand-in sizes.

A program is built once at base stand-in sizes and once more per symbol with that symbol moved
to another stand-in. Wherever the builds agree, a value is static; where an int differs it must
be `c + a0*n0 + a1*n1 ...` with integer coefficients (each symbol's coefficient is read from the
build where it alone moved). Anything else - a different structure, a coefficient that is not an
integer - is a Mismatch naming the symbol whose move caused it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")      # an int literal in generated code
_DIGITS = re.compile(r"\d+")                       # any number in a message ("(64x128)")


class Mismatch(Exception):
    """Builds at two stand-in sizes differ where a size form cannot say how: `symbol` stays
    static, for the reason `what`; `slower`: only because a kernel written for the sizes is
    faster (a class could be built: policy.py's bound on specialized sizes)."""

    def __init__(self, symbol: int, what: str, slower: bool = False):
        super().__init__(what)
        self.symbol = symbol
        self.what = what
        self.slower = slower


@dataclass(frozen=True)
class Plan:
    """The stand-in sizes of a build: `base` (symbol -> value), and per later build the one
    symbol moved and its value there."""
    base: tuple                 # ((symbol, value), ...)
    moves: tuple                # ((symbol, value), ...): build k + 1 moves moves[k]

    def sizes(self, k: int) -> dict:
        sizes = dict(self.base)
        if k > 0:
            symbol, value = self.moves[k - 1]
            sizes[symbol] = value
        return sizes


@dataclass(frozen=True)
class Form:
    """constant + sum(coefficient * n<symbol>)."""
    constant: int
    terms: tuple = ()           # ((symbol, coefficient), ...), coefficients nonzero

    def value(self, sizes: dict) -> int:
        return self.constant + sum(a * sizes[s] for s, a in self.terms)

    def text(self) -> str:
        parts = [(f"n{s}" if a == 1 else f"{a} * n{s}") for s, a in self.terms]
        if self.constant or not parts:
            parts.append(str(self.constant))
        text = " + ".join(parts).replace("+ -", "- ")
        return text if len(parts) == 1 and "*" not in text else f"({text})"


def fit(values: list, plan: Plan, where: str) -> Form | int:
    """The form through `values` (one per build of `plan`), or the int all of them are."""
    base = int(values[0])
    if all(int(v) == base for v in values):
        return base
    sizes = dict(plan.base)
    terms = []
    for k, (symbol, moved) in enumerate(plan.moves):
        step, rest = divmod(int(values[k + 1]) - base, moved - sizes[symbol])
        if rest:
            raise Mismatch(symbol, f"{where} is not an affine function of the size")
        if step:
            terms.append((symbol, step))
    constant = base - sum(a * sizes[s] for s, a in terms)
    return Form(constant, tuple(terms))


def unify(objects: list, plan: Plan, where: str = "a value"):
    """A pattern through `objects` (built by `plan`): equal parts kept, ints differing as Forms
    inside tuples; Mismatch where a moved build differs otherwise."""
    first = objects[0]
    if isinstance(first, int) and not isinstance(first, bool):
        for k, other in enumerate(objects[1:]):
            if not isinstance(other, int) or isinstance(other, bool):
                raise Mismatch(plan.moves[k][0], f"{where} changes kind with the size")
        return fit(objects, plan, where)
    if _counts(objects):
        return Count(type(first), first["value"].array.dtype,
                     fit([o["count"] for o in objects], plan, where))
    if isinstance(first, tuple) and not hasattr(first, "_fields"):
        for k, other in enumerate(objects[1:]):
            if type(other) is not type(first) or len(other) != len(first):
                raise Mismatch(plan.moves[k][0], f"{where} changes with the size")
        parts = tuple(unify([o[i] for o in objects], plan, where) for i in range(len(first)))
        return Parts(type(first), parts)
    if isinstance(first, str) and all(type(o) is str for o in objects) and \
            any(o != first for o in objects):
        return Text(objects, plan, where, code=False)   # (a planner's reason naming sizes)
    for k, other in enumerate(objects[1:]):
        if type(other) is not type(first) or not _same(other, first):
            raise Mismatch(plan.moves[k][0], f"{where} changes with the size")
    return first


def _counts(objects: list) -> bool:
    """Whether `objects` are the attributes of a constant that counts elements (attrs "count",
    trace/context.py), differing between the builds: its value is the count in its dtype at
    every size."""
    first = objects[0]
    if not hasattr(first, "as_dict") or first.get("count") is None or \
            all(o == first for o in objects[1:]):
        return False
    return all(hasattr(o, "as_dict") and set(o.as_dict()) == {"value", "count"} and
               o["value"].array.dtype == first["value"].array.dtype for o in objects)


@dataclass(frozen=True)
class Count:
    """The pattern of a constant's attributes where it counts elements: the count's size form,
    and its value that count in `dtype` (rounded as the trace rounds it)."""
    kind: type
    dtype: np.dtype
    form: object

    def value(self, sizes: dict):
        count = evaluate(self.form, sizes)
        return self.kind({"value": np.asarray(count, self.dtype), "count": count})


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


@dataclass(frozen=True)
class Parts:
    """The pattern of a tuple (or an ir.graph.Attrs): one pattern a part."""
    kind: type
    parts: tuple


def evaluate(pattern, sizes: dict):
    """The value a pattern takes at `sizes` (symbol -> int)."""
    if isinstance(pattern, (Form, Count)):
        return pattern.value(sizes)
    if isinstance(pattern, Text):
        return pattern.concrete(sizes)
    if isinstance(pattern, Parts):
        values = tuple(evaluate(p, sizes) for p in pattern.parts)
        if pattern.kind is tuple:
            return values
        if hasattr(pattern.kind, "as_dict"):          # ir.graph.Attrs: built from its pairs
            return pattern.kind(dict(values))
        return pattern.kind(values)
    return pattern


def symbols_of(pattern) -> set:
    if isinstance(pattern, Text):
        return set(pattern.symbols)
    if isinstance(pattern, Form):
        return {s for s, _ in pattern.terms}
    if isinstance(pattern, Count):
        return symbols_of(pattern.form)
    if isinstance(pattern, Parts):
        return set().union(*(symbols_of(p) for p in pattern.parts)) if pattern.parts else set()
    return set()


class Text:
    """Generated source through which sizes pass as names: the texts of the builds split at their
    int literals; literals that differ become forms, written in terms of n0, n1, ..."""

    def __init__(self, texts: list, plan: Plan, where: str, code: bool = True):
        self.numbers = _INT if code else _DIGITS
        pieces = [self.numbers.split(text) for text in texts]
        numbers = [[int(n) for n in self.numbers.findall(text)] for text in texts]
        for k, other in enumerate(pieces[1:]):
            if other != pieces[0]:
                raise Mismatch(plan.moves[k][0], f"{where}: {first_difference(texts[0], texts[k + 1])}")
        self.pieces = pieces[0]
        self.forms = [fit([n[i] for n in numbers], plan, f"{where}: a number in its text")
                      for i in range(len(numbers[0]))]
        self.symbols = sorted(set().union(*(symbols_of(f) for f in self.forms))) \
            if self.forms else []

    def concrete(self, sizes: dict) -> str:
        """The text these builds would have had at `sizes`."""
        return self._join(lambda form: str(evaluate(form, sizes)))

    def generic(self, raw: str | None = None) -> str:
        """The text with each size form written out; `raw`: the base build's text before it was
        made comparable (its literals in the same places), written instead."""
        pieces = self.pieces if raw is None else self.numbers.split(raw)
        if len(pieces) != len(self.pieces):
            raise ValueError("the raw text's numbers are not the compared text's")
        return self._join(lambda form: form.text() if isinstance(form, Form) else str(form),
                          pieces)

    def _join(self, write, pieces=None) -> str:
        pieces = self.pieces if pieces is None else pieces
        out = [pieces[0]]
        for form, piece in zip(self.forms, pieces[1:]):
            out += [write(form), piece]
        return "".join(out)


def first_difference(a: str, b: str) -> str:
    for line_a, line_b in zip(a.splitlines(), b.splitlines()):
        if _INT.sub("#", line_a) != _INT.sub("#", line_b):
            return f"`{line_a.strip()}` becomes `{line_b.strip()}`"
    for line_a, line_b in zip(a.splitlines(), b.splitlines()):
        if line_a != line_b:
            return f"`{line_a.strip()}` becomes `{line_b.strip()}`"
    return "its lines change with the size"
