"""The tracer array: stands in for a NumPy array during tracing and records what is done to it.

A Tracer reads its value from a Buffer (the memory it lives in) through a chain of view steps
(slice, reshape, transpose, broadcast), so that in-place updates through any view are seen by
every other view of the same memory, exactly as NumPy's views behave.
"""
from __future__ import annotations

import math

import numpy as np

from ..arrays import contiguous
from ..errors import TraceError, ValueNeeded, describe, where
from ..ir.graph import Node
from .context import Buffer, current

_ANCHOR = np.zeros(1, dtype=np.int8)


def shadow_array(shape, strides) -> np.ndarray:
    """An int8 array with no memory of its own and these element strides: NumPy decides views on it."""
    return np.lib.stride_tricks.as_strided(_ANCHOR, shape=shape, strides=strides, writeable=False)


class Tracer:
    """A traced array (or, with `weak`, a traced Python scalar argument)."""

    __array_priority__ = 1000
    sequence = False    # a list or tuple argument: Python's semantics outside NumPy calls

    def __init__(self, buffer: Buffer, chain=(), node: Node | None = None, shadow=None,
                 weak=None, scalar=False):
        self._buffer = buffer
        self._chain = tuple(chain)
        self._node = node if node is not None else buffer.node
        self._version = buffer.version
        self._shadow = shadow
        self.weak = weak        # int/float/bool for a Python scalar argument (NEP 50 weak), else None
        self.scalar = scalar    # NumPy would give a scalar here (immutable, returned as np.generic)

    # -- value ---------------------------------------------------------------------------------
    @property
    def node(self) -> Node:
        """The SSA value this array holds now (re-read through the view chain after updates)."""
        buffer = self._buffer
        if self._version != buffer.version:
            node = buffer.node
            ctx = current()
            for op, attrs in self._chain:
                node = ctx.emit(op, [node], attrs)
            self._node, self._version = node, buffer.version
        return self._node

    @property
    def shape(self) -> tuple:
        sizes = getattr(current(), "sizes", None)
        return self._node.shape if sizes is None else sizes.tag(self._node.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._node.dtype

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        sizes = getattr(current(), "sizes", None)
        return self._node.size if sizes is None else math.prod(sizes.tag(self._node.shape))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._node.nbytes

    def shadow(self) -> np.ndarray:
        """A memory-less array with this view's strides (for NumPy's view-or-copy decisions)."""
        if self._shadow is None:
            strides = self._buffer.strides or contiguous(self.shape, empty_as_one=True)
            self._shadow = shadow_array(self.shape, strides)
        return self._shadow

    # -- views and in-place updates ------------------------------------------------------------
    def view(self, op: str, attrs: dict, shadow=None) -> "Tracer":
        """A view of the same memory through one more layout step."""
        node = current().emit(op, [self.node], attrs)
        return Tracer(self._buffer, self._chain + ((op, dict(attrs)),), node, shadow)

    def assign(self, new: Node, what: str) -> None:
        """Replace this array's contents by `new` (same shape and dtype), writing through views."""
        buffer = self._buffer
        if self.scalar or self.weak is not None:
            raise TraceError(f"{what}: cannot assign into a scalar{where()}")
        if not buffer.writeable or any(op == "broadcast_to" for op, _ in self._chain):
            raise TraceError(f"{what}: assignment destination is read-only "
                             f"({describe(self)}){where()}")
        ctx = current()
        levels = [buffer.node]
        for op, attrs in self._chain[:-1]:
            levels.append(ctx.emit(op, [levels[-1]], dict(attrs)))
        for (op, attrs), old in zip(reversed(self._chain), reversed(levels)):
            new = _write_back(ctx, op, dict(attrs), new, old)
        buffer.set(new)

    # -- errors for value-dependent Python ----------------------------------------------------
    def _concrete(self, what: str):
        """Raise for a use that needs this value: ValueNeeded where it comes only from Python
        scalar arguments (the jit retraces with them specialized by value), else TraceError."""
        arguments = specializable_arguments(self.node)
        if arguments:
            raise ValueNeeded(f"{what} needs the value of a Python scalar argument{where()}",
                              arguments)
        raise TraceError(
            f"{what} needs the value of a traced array ({describe(self)}), which is not known while "
            f"autofuse traces; use np.where for data-dependent choices, or pass the value as a static "
            f"argument (static_argnames=...){where()}")

    def python_use(self, what: str):
        """A list or tuple argument used as Python uses one (indexing, iteration, `+`, `*`,
        returned): retrace with it passed as itself (ValueNeeded)."""
        raise ValueNeeded(f"{what} needs the list or tuple argument itself{where()}",
                          specializable_arguments(self.node))

    def __bool__(self):
        self._concrete("bool() (an `if`, `while`, `and`, `or` or `not` on an array)")

    def __int__(self):
        self._concrete("int()")

    def __float__(self):
        self._concrete("float()")

    def __complex__(self):
        self._concrete("complex()")

    def __index__(self):
        self._concrete("using an array as an index or size")

    def item(self, *args):
        self._concrete(".item()")

    def tolist(self):
        self._concrete(".tolist()")

    def __array__(self, dtype=None, copy=None):
        self._concrete("converting to a NumPy array (np.asarray or a NumPy routine autofuse does "
                       "not trace)")

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        sizes = getattr(current(), "sizes", None)
        return self._node.shape[0] if sizes is None else sizes.length(self._node.shape[0])

    def __iter__(self):
        if self.sequence:
            self.python_use("iterating over a list or tuple argument")
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        kind = f"weak {self.weak.__name__}" if self.weak is not None else "array"
        return f"Tracer({kind} {self.dtype}{list(self.shape)})"

    __hash__ = None


def specializable_arguments(node: Node) -> frozenset:
    """The argument leaves `node` is computed from, when every one of them is a Python scalar
    (or NumPy scalar, or Python sequence) argument the trace may specialize by value; else empty."""
    ctx = current()
    found, seen, stack = set(), set(), [node]
    while stack:
        item = stack.pop()
        if item.id in seen:
            continue
        seen.add(item.id)
        if item.op == "input":
            index = item.attrs["index"]
            if index not in ctx.specializable:
                return frozenset()
            found.add(index)
        stack.extend(item.inputs)
    return frozenset(found)


def fresh(node: Node, weak=None, scalar=False, writeable=True) -> Tracer:
    """A new array (its own memory) holding `node`."""
    return Tracer(Buffer(node, writeable=writeable), node=node, weak=weak, scalar=scalar)


def _write_back(ctx, op: str, attrs: dict, new: Node, old: Node) -> Node:
    """The new value of a view's parent, given the view's new value."""
    if op == "slice":
        return ctx.emit("setslice", [old, new], {"start": attrs["start"], "step": attrs["step"]})
    if op == "reshape":
        return ctx.emit("reshape", [new], {"shape": old.shape})
    if op == "transpose":
        perm = attrs["perm"]
        inverse = tuple(int(i) for i in np.argsort(perm))
        return ctx.emit("transpose", [new], {"perm": inverse})
    raise AssertionError(f"no write-back through {op}")
