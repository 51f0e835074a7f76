"""A reduction's passes over a row on the CPU (methods of the source writer, source.CpuSource):
one pass a reduction, the values later passes need again kept in a row buffer, the innermost
loop in independent lanes that LLVM vectorizes (sums, products, extremes and arg-reductions),
any/all stopping at their answer."""
from __future__ import annotations

import numpy as np

from ...ir.graph import Node
from ...ir.ops import ELEMENTWISE, OPS, typed_constants
from ...ir.printer import is_inline_constant
from .kernel import LANE_BYTES, LANED, LANES, SHORT_LANES


def _accumulator(node: Node) -> np.dtype:
    """float32 sums and products accumulate in float64 on the CPU (cheap there, and exact-er),
    but for a matrix product's sum (ir/products.py), which accumulates in float32 as BLAS's sgemv
    and NumPy's matmul do: a row's 64 lanes each sum K/64 terms, at twice float64's vector width
    (1024^2 matrix-vector product: 204 -> see the commit)."""
    if node.op == "sum" and node.attrs.get("product") and node.dtype == np.float32:
        return node.dtype
    if node.op in ("sum", "prod") and node.dtype == np.float32:
        return np.dtype(np.float64)
    if node.op in ("argmax", "argmin"):     # the running extreme value, not its index
        return node.inputs[0].dtype
    return node.dtype


def _column_accumulator(node: Node) -> np.dtype:
    """Down columns float32 sums accumulate in float32, as NumPy's own axis-0 sums do (row after
    row into a row of accumulators): a float64 row of 4096 accumulators is the whole L1 and halves
    the vector width (4096 x 4096 float32 summed over axis 0 on one core: 8.4 ms in float64,
    3.9 ms in float32, NumPy 3.3 ms). Blocks of rows merged at the end keep the error at or under
    NumPy's."""
    if node.op in ("sum", "prod") and node.dtype == np.float32:
        return node.dtype
    return _accumulator(node)


def _lanes(lane_bytes: int, budget: int) -> int:
    """Lanes of a row loop: the most (a power of two, LANES at most, SHORT_LANES at least) whose
    buffers, `lane_bytes` a lane together, stay in `budget` bytes, so that LLVM keeps them in
    registers across the loop."""
    width = LANES
    while width > SHORT_LANES and width * lane_bytes > budget:
        width //= 2
    return width


class RowPasses:
    def _row_values(self, root: Node) -> set:
        """Members computed at the row index when `root` is: elementwise nodes reached without
        crossing a reduction or an index map."""
        found, stack = set(), [root]
        while stack:
            n = stack.pop()
            if n.id in found or n.id not in self.group.members or n.kind != ELEMENTWISE:
                continue
            if n.id in self.renderer.special or is_inline_constant(n):
                continue
            found.add(n.id)
            stack.extend(n.inputs)
        return found

    def kept(self, reductions, row_outputs, axes, shape) -> dict:
        """Expensive row values a phase computes that a later phase or the row store needs again
        (softmax's exp(x - max)): {phase position: [nodes]}. The phase stores them in a row
        buffer; later passes load them instead of computing them again."""
        sets = [self._row_values(node.inputs[0]) for node in reductions]
        later = [set() for _ in reductions]
        tail = set()
        for arg in row_outputs:
            tail |= self._row_values(arg.node)
        for p in range(len(reductions) - 1, -1, -1):
            later[p] = tail | (later[p + 1] | sets[p + 1] if p + 1 < len(reductions) else set())
        keep, taken = {}, set()
        for p, values in enumerate(sets):
            chosen = [self.group.members[i] for i in sorted(values & later[p] - taken)
                      if OPS[self.group.members[i].op].transcendental]
            taken |= {n.id for n in chosen}
            if chosen:
                keep[p] = chosen
        return keep

    def phase(self, node: Node, axes, shape, full, keep=()) -> None:
        """One pass over the reduced axes accumulating `node`; its result named for later use.
        Values in `keep` are stored to a row buffer as computed and read from it afterwards."""
        r = self.renderer
        buffers = []
        for value_node in keep:
            buffer = self.scratch("row", shape[axes[0]], value_node.dtype)
            buffers.append((value_node, buffer))
        acc_type = _accumulator(node)
        acc, idx, result = r.name("acc"), r.name("k"), r.name("red")
        self.init(node, acc, idx, acc_type)
        if axes:
            opened = self.loops([f"r{a}" for a in axes[:-1]], [shape[a] for a in axes[:-1]], False)
            self.innermost([(node, acc, idx, acc_type)], axes[-1], shape[axes[-1]], full,
                           f"r{axes[0]}", buffers)
            self.close(opened)
        else:
            self.combine(node, acc, idx, r.value(node.inputs[0], full), acc_type, "0")
        for value_node, buffer in buffers:
            self._read_from(value_node, buffer, axes[0], full)
        final = idx if node.op in ("argmax", "argmin") else acc
        r.emit(f"{result} = {r.ctor(node.dtype)}({final})")
        r.special[node.id] = lambda index, result=result: result

    def _read_from(self, node: Node, buffer: str, axis: int, full: tuple) -> None:
        r = self.renderer
        # (the place of the reduced axis's index among the values' index: its own axis, or
        # another where the space is walked in memory order, memory_space)
        at = full.index(f"r{axis}")

        def read(index):
            if all(a == b for d, (a, b) in enumerate(zip(index, full)) if d != at):
                return f"{buffer}[{index[at]}]"
            del r.special[node.id]
            try:
                return r.value(node, index)
            finally:
                r.special[node.id] = read
        r.special[node.id] = read

    def innermost(self, items, axis: int, size: int, full: tuple, position: str,
                  buffers=()) -> None:
        """The loop over the innermost reduced axis accumulating each (node, acc, idx, acc_type).

        Without fastmath LLVM keeps a floating-point reduction in source order: one add per
        add-latency. Sums, products, max and min therefore run independent accumulators, lanes, in a
        small buffer on the stack (element k of each block of lanes goes to lane k; the loop over
        the lanes is what LLVM vectorizes, the loop over the blocks not unrolled in full: lanes.py;
        as many lanes as stay in registers, `_lanes`), then fold the lanes into the accumulator in
        lane order and finish the tail serially. 64 lanes in a buffer against 8 scalar lanes, one
        core, 4096 x 1024 float32: x.max(1) 2.29 -> 0.96 ms, x.sum(1) 1.47 -> 0.98 ms (NumPy 0.96,
        1.19): LLVM left the 8 scalar max lanes unvectorized. argmax/argmin keep a lane's best value
        and its index, updated by selects, and fold the lanes by value, the lower index on ties (so
        the first occurrence wins, as in NumPy; a NaN the first NaN); 4096 x 4096 float32
        x.argmax(1): 77 ms serial, NumPy 2.2 ms (BENCHMARKS.md). any/all stay serial."""
        r = self.renderer
        name = f"r{axis}"
        arg = ("argmax", "argmin")
        # NOTE: values through a math routine (exp, log) take registers of their own: half the
        # lanes' bytes (softmax 4096x1024 float32, one thread: 19.5 ms at 32 float64 lanes in
        # its exp pass, 16.6 at 16)
        cone = set().union(*(self._row_values(n.inputs[0]) for n, *_ in items))
        heavy = any(OPS[self.group.members[i].op].transcendental for i in cone)
        kinds = []      # an item's lanes' dtype, and an arg-reduction's indices' (else None)
        for node, _, _, acc_type in items:
            if node.op in arg:
                value = r.held(node.inputs[0].dtype)
                # (indices as wide as the values, where the row allows: one vector width)
                narrow = value.itemsize <= 4 and size < 1 << 31
                kinds.append((value, np.dtype(np.int32 if narrow else np.int64)))
            else:
                kinds.append((r.held(acc_type), None))
        lane_bytes = sum(value.itemsize + (0 if where is None else where.itemsize)
                         for value, where in kinds)
        width = _lanes(lane_bytes, LANE_BYTES // 2 if heavy else LANE_BYTES)
        width = width if size >= 2 * width else SHORT_LANES     # short rows: fewer lanes to fold
        laned = size >= 2 * width and all(
            n.op in LANED or (n.op in arg and position == name) for n, *_ in items)
        if not laned:
            self.serial(items, buffers, name, "0", size, full, position)
            return
        body = size - size % width
        block, lane = r.name("rb"), r.name("q")
        lanes = []
        for (node, acc, idx, acc_type), (held, indices) in zip(items, kinds):
            if node.op in arg:
                value_type = node.inputs[0].dtype
                start = r.constant(typed_constants(value_type)[
                    "LOWEST" if node.op == "argmax" else "HIGHEST"])
                buffer = self.scratch("lanes", width, held, stack=True)
                where = self.scratch("where", width, indices, stack=True)
                r.emit(f"for {lane} in range({width}):")
                r.emit(f"    {buffer}[{lane}] = {start}")
                r.emit(f"    {where}[{lane}] = 0")
                lanes.append((buffer, where))
                continue
            start = r.constant(typed_constants(acc_type)[OPS[node.op].init.strip("{}")])
            buffer = self.scratch("lanes", width, held, stack=True)
            r.emit(f"for {lane} in range({width}):")
            r.emit(f"    {buffer}[{lane}] = {start}")
            lanes.append((buffer, None))
        # NOTE: the row bound of sums and products opaque where their values are light: LLVM
        # unrolls a loop over a constant number of blocks in full (layernorm 1024x1024 float32:
        # 13.6 s of compile, 2.3 s opaque, and 0.51 -> 0.30 ms a call; x.sum(-1) and
        # (x * x).sum(-1) over 4096x1024: 1.18 -> 0.69 and 1.95 -> 0.99 ms). Extremes and a
        # value through a math routine run faster to the constant (x.max(-1) 0.73 ms, opaque
        # 1.80; argmax 2.68, 4.00; softmax's exp and sum 7.0, 8.0); both on 2 cores, in turns.
        summed = all(n.op in ("sum", "prod") for n, *_ in items)
        bound = f"opaque({body})" if summed and not heavy else body
        r.emit(f"for {block} in range(0, {bound}, {width}):")
        r.push()
        r.emit(f"for {lane} in range({width}):")
        r.push()
        index = tuple(f"({block} + {lane})" if i == name else i for i in full)
        for (node, _, idx, acc_type), (buffer, where) in zip(items, lanes):
            value = r.value(node.inputs[0], index)
            if where is None:
                self.combine(node, f"{buffer}[{lane}]", idx, value, acc_type, "")
                continue
            # (| and &, not or and and: no branch in the loop LLVM vectorizes)
            better, held = r.name("better"), f"{buffer}[{lane}]"
            op = ">" if node.op == "argmax" else "<"
            r.emit(f"{better} = ({value} {op} {held}) | (({value} != {value}) & ({held} == {held}))")
            r.emit(f"{where}[{lane}] = ({block} + {lane}) if {better} else {where}[{lane}]")
            r.emit(f"{buffer}[{lane}] = {value} if {better} else {buffer}[{lane}]")
        for value_node, row in buffers:
            r.emit(f"{row}[{index[full.index(name)]}] = {r.value(value_node, index)}")
        r.pop()
        r.pop()
        for (node, acc, idx, acc_type), (buffer, where) in zip(items, lanes):
            r.emit(f"for {lane} in range({width}):")
            if where is not None:
                r.push()
                self.accumulators.merge(node, acc, idx, f"{buffer}[{lane}]", f"{where}[{lane}]")
                r.pop()
                continue
            r.emit(f"    {acc} = " + self.accumulators.combined(node, f"{buffer}[{lane}]", acc,
                                                                  acc_type))
        if body < size:
            self.serial(items, buffers, name, str(body), size, full, position)

    def serial(self, items, buffers, name, start, stop, full, position) -> None:
        """One accumulator per reduction over `name` in [start, stop), in order."""
        r = self.renderer
        r.emit(f"for {name} in range({start}, {stop}):")
        r.push()
        for node, acc, idx, acc_type in items:
            self.combine(node, acc, idx, r.value(node.inputs[0], full), acc_type, position)
        for value_node, buffer in buffers:
            r.emit(f"{buffer}[{name}] = {r.value(value_node, full)}")
        # any (all) is decided at its first true (false) value: the row's rest is not read
        # (NumPy stops there too; b.any(1) over 2048^2 random bools: 1.09 ms against 0.10)
        if len(items) == 1 and not buffers and items[0][0].op in ("any", "all"):
            node, acc = items[0][:2]
            r.emit(f"if {'' if node.op == 'any' else 'not '}{acc}:")
            r.emit("    break")
        r.pop()
