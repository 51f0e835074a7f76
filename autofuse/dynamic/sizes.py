"""Sizes a trace watches: while a function is traced at stand-in sizes for its dynamic dimensions,
`x.shape` hands the user ints that record where the user's own code decides on them.

A dynamic dimension is traced at a stand-in value (builder.py); comparing traces at several
stand-ins shows where a size reaches the program. What a comparison cannot show is a decision the
stand-ins all take the same way (`if x.shape[0] > 100:`); so the user's code gets `Size` ints,
which note every comparison, truth test, int() and index use made by the user's own lines
(autofuse's and NumPy's own uses are seen by the comparison). A noted symbol stays static.
"""
from __future__ import annotations

import operator
import os
import sys

from ..errors import user_frame

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _by_user(depth: int = 2) -> bool:
    """Whether the innermost frame outside NumPy, `depth` frames above this one's caller, is the
    user's code (autofuse's own uses of a size are seen by comparing builds)."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if f"{os.sep}numpy{os.sep}" not in name:
            return not (os.path.abspath(name).startswith(_PACKAGE) or name.startswith("<autofuse"))
        frame = frame.f_back
    return False


class Watch:
    """The stand-in value of each symbol during one trace, and the user's decisions on them."""

    def __init__(self, values: dict, stand_ins: dict | None = None):
        self.symbols = {value: symbol for symbol, value in values.items()}   # value -> symbol
        self.decisions: dict = {}          # symbol -> the first reason it must stay static
        # value -> its symbol's base stand-in: the size the partition decides by (every build
        # of a class partitions as its stand-ins do; fusion/cost.py CostModel.varying)
        self.stand_ins = {value: (stand_ins or {}).get(symbol, value)
                          for value, symbol in self.symbols.items()}

    def tag(self, shape: tuple) -> tuple:
        """`shape` with each stand-in size as a Size carrying its symbol."""
        if not any(s in self.symbols for s in shape):
            return shape
        return tuple(Size(s, frozenset({self.symbols[s]}), self) if s in self.symbols else s
                     for s in shape)

    def length(self, size: int) -> int:
        """len() of an array: an exact int Python requires, so any use of it is a decision."""
        symbol = self.symbols.get(size)
        if symbol is not None and _by_user(3):        # (the caller is Tracer.__len__)
            self._note(frozenset({symbol}), "len() of the array")
        return size

    def _note(self, symbols, what: str) -> None:
        found = user_frame()
        line = f" at {os.path.basename(found[0])}:{found[1]}: {found[2]}" if found else ""
        for symbol in symbols:
            self.decisions.setdefault(symbol, f"{what}{line}")


def _arithmetic(name: str):
    op = getattr(operator, name)

    def method(self, other):
        symbols = self.symbols | getattr(other, "symbols", frozenset())
        if isinstance(other, int):
            return Size(op(int.__int__(self), int.__int__(other)), symbols, self.watch)
        return op(int.__int__(self), other)

    def reflected(self, other):
        if isinstance(other, int):
            return Size(op(int.__int__(other), int.__int__(self)), self.symbols, self.watch)
        return op(other, int.__int__(self))
    return method, reflected


def _decision(name: str, what: str):
    op = getattr(operator, name)

    def method(self, *others):
        if _by_user():
            symbols = self.symbols.union(*(getattr(o, "symbols", frozenset()) for o in others))
            self.watch._note(symbols, what)
        return op(int.__int__(self), *(int.__int__(o) if isinstance(o, int) else o for o in others))
    return method


class Size(int):
    """An int (a stand-in size) that notes the user's decisions on it and passes its symbols on
    through arithmetic."""

    def __new__(cls, value: int, symbols: frozenset, watch: Watch):
        size = super().__new__(cls, value)
        size.symbols = symbols
        size.watch = watch
        return size

    __add__, __radd__ = _arithmetic("add")
    __sub__, __rsub__ = _arithmetic("sub")
    __mul__, __rmul__ = _arithmetic("mul")
    __floordiv__, __rfloordiv__ = _arithmetic("floordiv")
    __mod__, __rmod__ = _arithmetic("mod")
    __eq__ = _decision("eq", "a comparison of the size")
    __ne__ = _decision("ne", "a comparison of the size")
    __lt__ = _decision("lt", "a comparison of the size")
    __le__ = _decision("le", "a comparison of the size")
    __gt__ = _decision("gt", "a comparison of the size")
    __ge__ = _decision("ge", "a comparison of the size")
    __bool__ = _decision("truth", "a truth test of the size")
    __int__ = _decision("index", "int() of the size")
    __index__ = _decision("index", "the size used as a Python int (range, index)")
    __hash__ = int.__hash__

    def __neg__(self):
        return Size(-int.__int__(self), self.symbols, self.watch)

    def __repr__(self):
        return repr(int.__int__(self))

    __str__ = __repr__
