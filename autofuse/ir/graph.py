"""The SSA graph: immutable nodes (op, inputs, attributes, shape, dtype) in topological order."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .infer import infer
from .ops import OPS


class Attrs(tuple):
    """Sorted (key, value) pairs: hashable attributes with dict-like access. Equal mappings of
    hashable values give one shared object (a traced loop makes the same attributes each step)."""

    def __new__(cls, mapping=None):
        if not mapping:
            return _EMPTY
        key = _key(mapping)
        found = None if key is None else _MADE.get(key)
        if found is None:
            items = sorted(mapping.items())
            found = super().__new__(cls, tuple((k, _freeze(value)) for k, value in items))
            if key is not None:
                if len(_MADE) >= _MADE_LIMIT:
                    _MADE.clear()
                _MADE[key] = found
        return found

    def __getitem__(self, key):
        if isinstance(key, str):
            for name, value in tuple.__iter__(self):
                if name == key:
                    return value
            raise KeyError(key)
        return tuple.__getitem__(self, key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def as_dict(self) -> dict:
        return dict(tuple.__iter__(self))


_MADE: dict = {}          # _key(mapping) -> its Attrs
_MADE_LIMIT = 4096
_EMPTY = tuple.__new__(Attrs, ())
_EXACT = (int, bool, str, type(None))


def _key(mapping) -> tuple | None:
    """A key telling mappings apart as Attrs would (types and all: 1, 1.0 and True are equal in
    Python, as are 0.0 and -0.0), or None for values it does not take (floats, arrays, dtypes)."""
    key = []
    for name, value in mapping.items():
        kind = type(value)
        if kind in _EXACT:
            key.append((name, kind, value))
        elif kind is tuple and all(type(item) is int for item in value):
            key.append((name, tuple, value))
        else:
            return None
    return tuple(key)


class Constant:
    """A NumPy array held by a `constant` node, compared and hashed by value."""

    def __init__(self, array: np.ndarray):
        self.array = np.array(array, copy=True)
        self.array.setflags(write=False)
        self._key = (self.array.dtype.str, self.array.shape, self.array.tobytes())

    def __eq__(self, other):
        return isinstance(other, Constant) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        if self.array.ndim == 0:
            return repr(self.array.item())
        return f"array<{self.array.dtype}{list(self.array.shape)}>"


def _freeze(value):
    if isinstance(value, np.ndarray):
        return Constant(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.dtype):
        return value
    return value


@dataclass(frozen=True, eq=False)
class Node:
    """One SSA value: the result of `op` on `inputs` (other nodes), with its shape and dtype."""
    id: int
    op: str
    inputs: tuple
    attrs: Attrs
    shape: tuple
    dtype: np.dtype
    origin: str | None = None        # "file:line" of the user code that made it

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def kind(self) -> str:
        return OPS[self.op].kind

    def key(self):
        """What common-subexpression elimination compares: op, inputs, attributes."""
        if self.op == "input":
            return ("input", self.id)
        return (self.op, tuple(n.id for n in self.inputs), self.attrs, self.shape, self.dtype.str)

    def __repr__(self):
        return f"v{self.id}:{self.op}"


class Graph:
    """A function in SSA form: its nodes in topological order, its inputs and its outputs."""

    def __init__(self, nodes: Iterable[Node], inputs: Iterable[Node], outputs: Iterable[Node],
                 name: str = "f"):
        self.nodes = tuple(nodes)
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.name = name

    def users(self) -> dict[int, list[Node]]:
        """Node id -> the nodes that read it (in order, one entry per reading node)."""
        users: dict[int, list[Node]] = {node.id: [] for node in self.nodes}
        for node in self.nodes:
            seen = set()
            for source in node.inputs:
                if source.id not in seen:
                    users[source.id].append(node)
                    seen.add(source.id)
        return users

    def verify(self, checked: set | None = None) -> None:
        """Check SSA order, op names, arities and the inferred shape/dtype of every node.

        `checked`: nodes already checked (nodes are immutable, so their shape and dtype stay
        right); their inference is skipped, and the nodes checked now are added to it."""
        defined = set()
        for node in self.nodes:
            if node.op not in OPS:
                raise AssertionError(f"{node}: unknown op {node.op!r}")
            arity = OPS[node.op].arity
            if arity is not None and len(node.inputs) != arity:
                raise AssertionError(f"{node}: {node.op} takes {arity} inputs, has {len(node.inputs)}")
            for source in node.inputs:
                if source.id not in defined:
                    raise AssertionError(f"{node} reads v{source.id} before it is defined")
            if node.op not in ("input", "constant") and (checked is None or node not in checked):
                shape, dtype = infer(node.op, node.inputs, node.attrs)
                if tuple(shape) != node.shape or np.dtype(dtype) != node.dtype:
                    raise AssertionError(
                        f"{node}: recorded {node.dtype}{list(node.shape)}, inferred {dtype}{list(shape)}")
            if node.id in defined:
                raise AssertionError(f"{node}: id defined twice")
            defined.add(node.id)
        if checked is not None:
            checked.update(self.nodes)
        for node in self.inputs:
            if node.op != "input":
                raise AssertionError(f"graph input {node} is not an input node")
        for node in self.outputs:
            if node.id not in defined:
                raise AssertionError(f"output {node} is not in the graph")


class Builder:
    """Makes nodes with inferred shape and dtype; the tracer and the passes build graphs with it."""

    def __init__(self, first_id: int = 0):
        self.nodes: list[Node] = []
        self._next = first_id

    def add(self, op: str, inputs=(), attrs=None, origin=None, shape=None, dtype=None) -> Node:
        attrs = attrs if type(attrs) is Attrs else Attrs(attrs)
        inputs = tuple(inputs)
        if shape is None or dtype is None:
            shape, dtype = infer(op, inputs, attrs)
        if not isinstance(dtype, np.dtype):
            dtype = np.dtype(dtype)
        node = Node(self._next, op, inputs, attrs, tuple(map(int, shape)), dtype, origin)
        self._next += 1
        self.nodes.append(node)
        return node
