"""The renderer both code generators share: a group member's value at a symbolic index, as
Python statements numba compiles for the CPU and for CUDA.

Index maps (broadcast, transpose, reshape, slice, setslice, concatenate, gather, iota) become
index arithmetic (a gather's from the values of its indices); ops are spelled from the op table; constants become typed globals, so a float32
kernel holds no float64 arithmetic. Backends supply how a group input is loaded and how reduction
and matmul results are named.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, OPS, typed_constants
from ..ir.printer import is_inline_constant
from . import gathering, helpers
from .conditions import all_of, within
from .index_text import affine, broadcast_index, plus

_FIELD = re.compile(r"\{([A-Z_]+)\}")
HALF, SINGLE = np.dtype(np.float16), np.dtype(np.float32)


def short(dtype) -> str:
    dtype = np.dtype(dtype)
    return {"b": "b", "i": "i", "u": "u", "f": "f", "c": "c"}[dtype.kind] + str(dtype.itemsize * 8) \
        if dtype.kind != "b" else "bool"


class Renderer:
    """Emits statements computing members of one group; memoized per (node, index) and scope."""

    def __init__(self, group, load, target: str = "cpu"):
        self.group = group
        self.target = target
        self.load = load                   # (node, index tuple) -> expression
        self.lines: list[str] = []
        self.depth = 1
        self.scopes: list[dict] = [{}]
        self.special: dict = {}            # node id -> (index -> expression): reductions, matmul
        self.globals: dict = {}
        self.helpers: set = set()
        self.index = lambda expression: expression   # a backend may narrow index variables
        self.ones = True                   # False: size-1 axes keep their index (broadcast_index)
        self.counts = False                # True: constants that count elements of a size (a
        #                                    mean's divisor; attrs["count"], traced from a size)
        #                                    written as their count cast to their dtype, a size
        #                                    form in the text (a shape class, dynamic/forms.py)
        self.assumed: list | None = None   # set: slice assignments take their update branch and
        #                                    record the conditions that assumes
        # NOTE: CUDA kernels hold float16 values in float32 registers and round each float16
        # result to float16 as it is made, which is what NumPy's float16 loops do (they convert
        # to float, compute, and convert back): the same answers. Where `halves` is set, add,
        # subtract and multiply are float16 instructions that round once (intrinsics/half.py says why
        # that is the same answer) and the compiler keeps chains of them in halves.
        self.halves_in_singles = target == "cuda"
        self.round_halves = True           # False: an op's float16 result stays in float32
        self.halves = None                 # backend: how float16 values are widened, rounded and
        #                                    computed (intrinsics/half.py's Spelling); None: NumPy's casts
        self.fixed: set = set()            # index names that stay the same over the loop being
        #                                    rendered (a rows kernel's row)
        self.spellings: dict = {}          # backend: (op, computation kind) -> a template that
        #                                    replaces the op table's spelling there
        self.invariant_divide = None       # backend: (a, b, b's value or None) -> the quotient's
        #                                    name, for float32 divisions by a value that `fixed`
        #                                    says does not change; None keeps a / b
        self.deferred: list | None = None  # conditions the values being rendered rely on (the
        #                                    backend computes them again where one fails)
        self.lifted: dict = {}             # ("start", node id, axis) or ("value", node id,
        #                                    operand) -> the name of the kernel argument holding
        #                                    that slice start or scalar (backends/sharing.py)
        self._count = 0

    # -- statements and names ------------------------------------------------------------------
    def emit(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def name(self, prefix: str = "t") -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def push(self):
        self.scopes.append({})
        self.depth += 1

    def pop(self):
        self.scopes.pop()
        self.depth -= 1

    def _lookup(self, key):
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def held(self, dtype) -> np.dtype:
        """The dtype a kernel holds (and computes) values of `dtype` in."""
        dtype = np.dtype(dtype)
        return SINGLE if dtype == HALF and self.halves_in_singles else dtype

    def convert(self, dtype, expression: str, op_result: bool = False) -> str:
        """`expression` as a value of `dtype`, held as `held(dtype)`: a float16 value rounded,
        unless it is an op's result (not a cast) and round_halves is off."""
        dtype = np.dtype(dtype)
        if self.held(dtype) != dtype:
            if op_result and not self.round_halves:
                return expression
            if self.halves is not None:
                return self.halves.widen(self.halves.narrow(expression))
            return f"{self.ctor(SINGLE)}({self.ctor(HALF)}({expression}))"
        return f"{self.ctor(dtype)}({expression})"

    def constant(self, value) -> str:
        """A typed global holding `value` (a NumPy scalar keeps its dtype in numba; a float16
        one is held as float32, exactly)."""
        value = np.asarray(value)[()]
        dtype = np.dtype(type(value)) if not isinstance(value, np.generic) else value.dtype
        if self.held(dtype) != dtype:
            value, dtype = value.astype(self.held(dtype)), self.held(dtype)
        text = repr(value.item()).replace("-", "m").replace(".", "p").replace("+", "")
        name = f"c_{short(dtype)}_{re.sub(r'[^0-9A-Za-z_]', '_', text)}"
        self.globals[name] = value
        return name

    def ctor(self, dtype) -> str:
        """The name of a dtype's constructor (np.float32 ...) bound in the module."""
        dtype = np.dtype(dtype)
        name = f"as_{short(dtype)}"
        self.globals[name] = dtype.type if dtype.kind != "b" else np.bool_
        return name

    # -- values ----------------------------------------------------------------------------------
    def value(self, node: Node, index: tuple) -> str:
        if is_inline_constant(node):
            value = node.attrs["value"].array
            if self.counted(node) and self.held(value.dtype) == value.dtype:
                return f"{self.ctor(value.dtype)}({node.attrs['count']})"
            return self.constant(value)
        index = tuple(index)
        if node.id in self.special:
            found = self.special[node.id](index)
            if found is not None:            # None: not held at this index, compute it
                return found
        key = (node.id, index)
        found = self._lookup(key)
        if found is not None:
            return found
        if node.id in self.group.members:
            expression = self.compute(node, index)
        else:
            expression = self.load(node, index)
        if expression.isidentifier():
            self.scopes[-1][key] = expression
            return expression
        name = self.name()
        self.emit(f"{name} = {expression}")
        self.scopes[-1][key] = name
        return name

    def compute(self, node: Node, index: tuple) -> str:
        if node.kind == ELEMENTWISE:
            return self.elementwise(node, index)
        method = getattr(self, f"_{node.op}", None)
        if method is None:
            raise NotImplementedError(f"no rendering for {node.op} inside a {self.group.kind} group")
        return method(node, index)

    def elementwise(self, node: Node, index: tuple) -> str:
        args = [self.lifted.get(("value", node.id, k)) or
                self.value(source, broadcast_index(source.shape, node.shape, index, self.ones))
                for k, source in enumerate(node.inputs)]
        computation = node.inputs[-1].dtype if node.op == "where" else node.inputs[0].dtype
        if node.op == "divide" and self.invariant_divide is not None and \
                self.held(computation) == SINGLE and not self.unchanging(index) and \
                self.unchanging(broadcast_index(node.inputs[1].shape, node.shape, index,
                                                self.ones)):
            divisor = node.inputs[1]
            # (a class's count, a mean's divisor, is a size: its reciprocal is computed)
            value = divisor.attrs["value"].array if is_inline_constant(divisor) and \
                ("value", node.id, 1) not in self.lifted and not self.counted(divisor) else None
            quotient = self.invariant_divide(args[0], args[1], value)
            if quotient is not None:
                return self.convert(node.dtype, quotient, op_result=True) \
                    if self.held(node.dtype) != node.dtype else quotient
        return self.spell(node, computation, args)

    def counted(self, node: Node) -> bool:
        """Whether a constant is a class's count of elements, written as a form of its size."""
        return self.counts and node.attrs.get("count") is not None

    def unchanging(self, index: tuple) -> bool:
        """Whether every part of `index` stays the same over the loop being rendered."""
        return all(i.isdigit() or i in self.fixed for i in index)

    def spell(self, node: Node, computation: np.dtype, args: list) -> str:
        computation = self.held(computation)
        template = self._template(node.op, computation)
        fields = dict(typed_constants(computation))
        if node.op == "cast" and self.held(node.dtype) != node.dtype:
            return self.convert(node.dtype, f"{args[0]}.real" if computation.kind == "c" else args[0])
        if node.op == "cast":
            fields["CAST"] = node.dtype
            fields["ZERO_IN"] = computation.type(0)
            to_real = computation.kind == "c" and node.dtype.kind != "c"
            template = OPS["cast"].spelling("b" if node.dtype.kind == "b" else "c" if to_real else "*")
        expression = self._fill(template, fields, args, computation)
        wrap = node.dtype.kind in "iu" and node.op not in ("cast", "where")
        if self.held(node.dtype) != node.dtype and not OPS[node.op].exact_on_halves:
            if self.halves is not None and self.round_halves and \
                    all(source.dtype == HALF for source in node.inputs):
                native = self.halves.op(node.op, args)    # rounded once, the same answer
                if native is not None:
                    return native
            return self.convert(node.dtype, expression, op_result=True)
        return f"{self.ctor(node.dtype)}({expression})" if wrap else expression

    def apply(self, op: str, computation, args: list) -> str:
        """Elementwise op `op` of `args` (expressions held as `computation`'s held dtype), as
        `spell` writes it for a node, for code that has no node of it (accumulators.py)."""
        computation = self.held(computation)
        return self._fill(self._template(op, computation), typed_constants(computation), args,
                          computation)

    def _template(self, op: str, computation: np.dtype) -> str:
        return self.spellings.get((op, computation.kind)) or OPS[op].spelling(computation.kind)

    def _fill(self, template: str, fields: dict, args: list, computation: np.dtype) -> str:
        """`template` with its named constants bound (dtypes as constructors) and `args` in."""
        names = {}
        for field in set(_FIELD.findall(template)):
            value = fields[field]
            names[field] = self.ctor(value) if isinstance(value, np.dtype) else self.constant(value)
        return self._helpers(_FIELD.sub(lambda m: names[m.group(1)], template).format(*args),
                             computation)

    def _helpers(self, expression: str, dtype) -> str:
        def replace(match):
            name = match.group(1)
            alias = helpers.alias(name, dtype, self.target)
            if alias is not None:
                return f"{alias}("
            self.helpers.add((name, np.dtype(dtype).str))
            return f"{name}_{short(dtype)}("
        return helpers.CALL.sub(replace, expression)

    # -- index maps ------------------------------------------------------------------------------
    def _broadcast_to(self, node, index):
        source = node.inputs[0]
        return self.value(source, broadcast_index(source.shape, node.shape, index, self.ones))

    def _transpose(self, node, index):
        perm = node.attrs["perm"]
        source_index = [None] * len(perm)
        for k, axis in enumerate(perm):
            source_index[axis] = index[k]
        return self.value(node.inputs[0], tuple(source_index))

    def _reshape(self, node, index):
        source = node.inputs[0]
        return self.value(source, self.reshape_index(source.shape, node.shape, index))

    def reshape_index(self, in_shape, out_shape, index) -> tuple:
        if [s for s in in_shape if s != 1] == [s for s in out_shape if s != 1]:
            moving = iter(i for i, s in zip(index, out_shape) if s != 1)
            return tuple("0" if s == 1 else next(moving) for s in in_shape)
        flat = "0"
        for i, size in zip(index, out_shape):
            flat = i if flat == "0" else f"({flat}) * {size} + {i}"
        name = self.name("f")
        self.emit(f"{name} = {self.index(flat)}")
        result, stride = [], 1
        strides = []
        for size in reversed(in_shape):
            strides.append(stride)
            stride *= size
        for size, stride in zip(in_shape, reversed(strides)):
            part = name if stride == 1 else f"{name} // {stride}"
            result.append("0" if size == 1 else (part if stride * size == math.prod(in_shape)
                                                  else f"({part}) % {size}"))
        return tuple(result)

    def starts(self, node) -> tuple:
        """A slice's (or slice assignment's) starts: ints, or the names of lifted ones."""
        return tuple(self.lifted.get(("start", node.id, axis), start)
                     for axis, start in enumerate(node.attrs["start"]))

    def _slice(self, node, index):
        start, step = self.starts(node), node.attrs["step"]
        source_index = tuple(affine(a, s, i) for a, s, i in zip(start, step, index))
        return self.value(node.inputs[0], source_index)

    def _gather(self, node, index):
        return gathering.render(self, node, index)

    def _iota(self, node, index):
        return self.convert(node.dtype, index[node.attrs['axis']])

    def branch(self, condition: str, then, otherwise) -> str:
        """`then()` if condition else `otherwise()`, each rendered in its own scope."""
        result = self.name()
        self.emit(f"if {condition}:")
        self.push()
        self.emit(f"{result} = {then()}")
        self.pop()
        self.emit("else:")
        self.push()
        self.emit(f"{result} = {otherwise()}")
        self.pop()
        return result

    def _setslice(self, node, index):
        base, update = node.inputs
        conditions, inner = [], []
        for i, start, step, count, size in zip(index, self.starts(node), node.attrs["step"],
                                               update.shape, base.shape):
            if start == 0 and step == 1 and count == size:
                inner.append(i)
                continue
            offset = f"({i} - {start})" if start != 0 else i
            if step == 1:
                conditions.append(within(start, i, plus(start, count)))
                inner.append(offset)
            elif step > 0:
                conditions.append(f"{within(start, i, plus(start, step * (count - 1)), True)} & "
                                  f"({offset} % {step} == 0)")
                inner.append(f"{offset} // {step}")
            else:
                last = plus(start, step * (count - 1))
                conditions.append(f"{within(last, i, start, True)} & "
                                  f"(({start} - {i}) % {-step} == 0)")
                inner.append(f"({start} - {i}) // {-step}")
        if not conditions:
            return self.value(update, tuple(inner))
        if self.assumed is not None:
            self.assumed += conditions
            return self.value(update, tuple(inner))
        return self.branch(all_of(conditions),
                           lambda: self.value(update, tuple(inner)),
                           lambda: self.value(base, index))

    def _concatenate(self, node, index):
        axis = node.attrs["axis"]
        pieces, offset = [], 0
        for source in node.inputs:
            pieces.append((offset, source))
            offset += source.shape[axis]
        return self._piece(pieces, axis, index)

    def _piece(self, pieces, axis, index):
        offset, source = pieces[0]
        shifted = tuple(f"({i} - {offset})" if d == axis and offset else i
                        for d, i in enumerate(index))
        if len(pieces) == 1:
            return self.value(source, shifted)
        limit = offset + source.shape[axis]
        return self.branch(f"{index[axis]} < {limit}", lambda: self.value(source, shifted),
                           lambda: self._piece(pieces[1:], axis, index))
