"""The state of one trace: the graph being built, the buffers behind arrays, and the user's frame."""
from __future__ import annotations

import functools
import os
import threading

import numpy as np

from ..errors import DTypeError, user_line, where
from ..ir.graph import Builder, Node
from .budget import MAX_OPS, too_many_ops

SUPPORTED_DTYPES = tuple(np.dtype(d) for d in
                         ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                          "uint64", "float16", "float32", "float64", "complex64", "complex128"))

_local = threading.local()


@functools.lru_cache(maxsize=1024)
def _basename(filename: str) -> str:
    return os.path.basename(filename)


def current() -> "TraceContext | None":
    """The trace running on this thread, if any."""
    return getattr(_local, "context", None)


class Buffer:
    """The current value of one array's memory: in-place updates replace `node` and bump `version`."""

    def __init__(self, node: Node, writeable: bool = True, strides=None):
        self.node = node
        self.version = 0
        self.writeable = writeable
        # element strides of the memory as NumPy would have them (decides view-or-copy on reshape)
        self.strides = strides

    def set(self, node: Node) -> None:
        self.node = node
        self.version += 1


class TraceContext:
    """Builds the graph for one call signature; entered with `with`."""

    def __init__(self, name: str, max_ops: int = MAX_OPS):
        self.name = name
        self.max_ops = max_ops                  # the bound on recorded operations (budget.py)
        self.builder = Builder()
        self.inputs: list[Node] = []
        self.argument_buffers: list[tuple[int, Buffer]] = []   # (flat arg index, buffer)
        self.weak_int_casts: dict[int, np.dtype] = {}          # flat arg index -> narrowest int cast
        self.specializable: set[int] = set()    # flat arg indices a retrace may take by value
        self.nonnegative: set[int] = set()      # Python int arguments used as integer exponents
        self.derived_from: str | None = None    # set while autodiff writes a node's gradient
        self.sizes = None                       # dynamic.sizes.Watch: stand-in sizes to watch
        self.checks: list = []                  # (0-d bool node, error class, message): the call
        #                                         raises the error where the node is True (checks.py)

    def __enter__(self):
        if current() is not None:
            raise RuntimeError("autofuse traces do not nest")
        _local.context = self
        return self

    def __exit__(self, *exc):
        _local.context = None
        return False

    def origin(self) -> str | None:
        if self.derived_from is not None:
            return self.derived_from
        found = user_line()
        if found is None:
            return None
        return f"{_basename(found[0])}:{found[1]}"

    def emit(self, op: str, inputs=(), attrs=None, shape=None, dtype=None) -> Node:
        if len(self.builder.nodes) >= self.max_ops:
            raise too_many_ops(self.name, self.max_ops, (n.origin for n in self.builder.nodes))
        return self.builder.add(op, inputs, attrs, origin=self.origin(), shape=shape, dtype=dtype)

    def constant(self, value, dtype=None, count: int | None = None) -> Node:
        """`count`: the whole number the value was made from where it counts elements of a
        dynamic size (a shape class's build, dynamic/sizes.py): the builds fit it as a form of the
        size, and a class kernel writes `dtype(form)` (Renderer.counts)."""
        array = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
        check_dtype(array.dtype, "a constant")
        return self.emit("constant", attrs={"value": array} if count is None else
                         {"value": array, "count": count})

    def input(self, shape, dtype, index: int, weak: bool) -> Node:
        node = self.emit("input", attrs={"index": index, "weak": weak}, shape=shape, dtype=dtype)
        self.inputs.append(node)
        return node


def check_dtype(dtype, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        supported = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise DTypeError(f"autofuse does not support dtype {dtype} ({what}); supported: {supported}{where()}")
    return dtype
