"""How the flash attention kernel (emit/attention.py) stages its operands in shared memory: the
block's query rows once, each tile's keys and values, the block's threads taking consecutive
elements along the rows (coalesced reads), 16-byte loads where an operand is an aligned
C-contiguous float32 parameter (checked at run time: `aligned`), else element by element through
the renderer (any prologue, transpose, broadcast or cast). Rows past an operand's end read its
last row (clamped); values past the last key are 0 (a 0 probability times them must stay 0).
"""
from __future__ import annotations

import numpy as np

from ....arrays import contiguous
from ...index_text import broadcast_index


class Direct:
    """An operand read straight from a C-contiguous float32 parameter whose last axis is the
    staged tile's columns (q and v as they are; k through the transpose of its last two axes),
    through transposes of the last two axes and broadcasts of the batch."""

    def __init__(self, source, param, steps: list, transposed: bool, names: tuple):
        self.source, self.param, self.steps = source, param, steps
        self.transposed, self.names = transposed, names
        self.rows = None                  # tile row -> the operand's row (set by the stager)

    def offset(self, i: str, j: str) -> str:
        row = self.rows(i)
        index = self.names + ((j, row) if self.transposed else (row, j))
        for step in self.steps:
            if step == "swap":
                index = index[:-2] + (index[-1], index[-2])
            else:
                index = broadcast_index(step[0], step[1], index)
        shape = self.param.node.shape
        return self.source.offset(shape, contiguous(shape), index)


def _direct(source, node, transposed: bool, names: tuple, dtype=np.float32,
            lanes: int = 4) -> Direct | None:
    """The Direct reading of `node` where it is a C-contiguous parameter of `dtype` whose last
    axis is a multiple of `lanes` (one 16-byte load), else None."""
    steps, swapped = [], False
    while node.id not in source.names:
        inner = node.inputs[0] if node.inputs else None
        swap = tuple(range(node.ndim - 2)) + (node.ndim - 1, node.ndim - 2)
        if node.op == "transpose" and tuple(node.attrs["perm"]) == swap:
            steps.append("swap")
            swapped = not swapped
        elif node.op == "broadcast_to" and inner.ndim >= 2 and inner.shape[-2:] == node.shape[-2:]:
            steps.append((inner.shape, node.shape))
        else:
            return None
        node = inner
    param = source.names[node.id]
    if param.by_value or param.strides is not None or swapped != transposed or \
            node.dtype != dtype or node.shape[-1] % lanes:
        return None
    return Direct(source, param, steps, transposed, names)


class Staging:
    """The staging code of one kernel, emitted by `queries()` (once) and `keys()` (a tile)."""

    def __init__(self, source, plan, found, names: tuple, zero: str):
        self.source, self.plan, self.found, self.names = source, plan, found, names
        self.r, self.zero = source.renderer, zero
        operands = [(found.values, False, plan.stride_v == plan.width)]
        if found.product is not None:
            operands += [(found.product.inputs[0], False, True),
                         (found.product.inputs[1], True, True)]
        self.direct = {}
        for node, transposed, whole in operands:
            direct = _direct(source, node, transposed, names) if whole else None
            if direct is not None:
                self.direct[node.id] = direct

    def check_alignment(self) -> None:
        """`aligned`: whether every parameter read 16 bytes at a time is 16-byte aligned."""
        if self.direct:
            for name in ("address", "vload4"):
                self.r.globals[name] = ("vector", name)
            params = sorted({d.param.name for d in self.direct.values()})
            self.r.emit(f"aligned = ({' | '.join(f'address({n})' for n in params)}) % 16 == 0")

    def _stage(self, shared: str, rows: int, width: int, stride: int, value, direct=None,
               inside=None) -> None:
        """shared[i * stride + j] = value(i, j) (through the renderer) for i < rows, j < width,
        the block's threads taking consecutive elements along the rows (coalesced reads); where
        `direct` (a Direct) reads a float32 parameter and the parameters are 16-byte aligned,
        4 elements at a time, `inside(i)` (where given) zeroing rows past the operand's end."""
        r = self.r
        if direct is None:
            self._chunks(shared, rows, width, stride, 1, lambda i, j: value(i, j))
            return
        r.emit("if aligned:")
        r.push()

        def vector(i, j):
            names = [f"va{u}" for u in range(4)]
            r.emit(f"{', '.join(names)} = vload4({direct.param.name}, {direct.offset(i, j)})")
            if inside is not None:
                r.emit(f"keep = {inside(i)}")
                names = [f"{name} if keep else {self.zero}" for name in names]
            return names
        self._chunks(shared, rows, width, stride, 4, vector)
        r.pop()
        r.emit("else:")
        r.push()
        self._chunks(shared, rows, width, stride, 1, lambda i, j: value(i, j))
        r.pop()

    def _chunks(self, shared: str, rows: int, width: int, stride: int, unit: int, value) -> None:
        """The staging loop: chunk e = t + n * threads of `unit` elements is row e // (width /
        unit), column (e % (width / unit)) * unit; `value(i, j)` gives its `unit` values."""
        r, threads = self.r, self.plan.threads
        across = width // unit
        total = rows * across
        ix = self.source.ix
        r.emit(f"for n in range({-(-total // threads)}):")
        r.push()
        r.emit(f"e = {ix(f'{threads} * n + t')}")
        if total % threads:
            r.emit(f"if e < {total}:")
            r.push()
        r.emit(f"ei = {ix(f'e // {across}')}")
        r.emit(f"ej = {ix(f'(e - ei * {across}) * {unit}')}")
        at = ix(f"ei * {stride} + ej")
        values = value("ei", "ej")
        if unit == 4:
            r.emit(f"sstore4({shared}, {at}, {', '.join(values)})")
        else:
            r.emit(f"{shared}[{at}] = {values}")
        if total % threads:
            r.pop()
        r.pop()

    def queries(self) -> None:
        product, p, r = self.found.product, self.plan, self.r
        q = product.inputs[0]
        sq = self.found.scores.shape[-2]
        direct = self.direct.get(q.id)

        def value(i, j):
            r.emit(f"qi = {self.source.ix(f'min(row0 + {i}, {sq - 1})')}")
            return r.value(q, self.names + ("qi", j))
        if direct is not None:
            direct.rows = lambda i: self.source.ix(f"min(row0 + {i}, {sq - 1})")
        self._stage("sq", p.rows, p.head, p.stride_q, value, direct)

    def keys(self) -> None:
        r, p, found = self.r, self.plan, self.found
        sk = found.scores.shape[-1]
        clamp = lambda i: self.source.ix(f"min(j0 + {i}, {sk - 1})")    # noqa: E731
        if found.product is not None:
            keys = found.product.inputs[1]
            direct = self.direct.get(keys.id)

            def key(i, j):
                r.emit(f"ki = {clamp(i)}")
                return r.value(keys, self.names + (j, "ki"))
            if direct is not None:
                direct.rows = clamp
            self._stage("sk", p.keys, p.head, p.stride_q, key, direct)

        def value(i, j):
            r.emit(f"vi = {clamp(i)}")
            r.emit(f"vj = min({j}, {p.width - 1})")
            loaded = r.value(found.values, self.names + ("vi", "vj"))
            inside = [f"j0 + {i} < {sk}"] if sk % p.keys else []
            inside += [f"{j} < {p.width}"] if p.stride_v != p.width else []
            if not inside:
                return loaded
            return f"{loaded} if {' and '.join(inside)} else {self.zero}"
        direct = self.direct.get(found.values.id) if p.stride_v == p.width else None
        if direct is not None:
            direct.rows = clamp
        self._stage("sv", p.keys, p.stride_v, p.stride_v, value, direct,
                    (lambda i: f"j0 + {i} < {sk}") if sk % p.keys else None)
