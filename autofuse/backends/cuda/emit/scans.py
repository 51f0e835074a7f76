"""Scan kernels: a scan group (fusion/scans.py) as one CUDA kernel, by one of three plans.

- "scan columns": a thread a line, walking it in order with the running value in a register.
  Taken where kept axes follow the scanned one and there are enough lines (adjacent threads
  read adjacent elements: coalesced), or for lines too short to share among threads.
- "scan rows": a block a line. The line is taken in rounds of block x items elements: a thread
  scans its `items` consecutive elements serially, the block scans the threads' totals (an
  inclusive scan a warp by shuffles, the warps' totals through shared memory scanned again by
  shuffles in every warp), each thread adds the prefix before it and the running total of the
  earlier rounds (the carry), and the outputs are stored.
- "scan look-back": lines longer than a round and too few to fill the GPU are cut into tiles of
  one round, a block a tile, in one pass with a decoupled look-back (Merrill and Garland, 2016):
  a block takes a ticket (so its predecessors have started), scans its tile, publishes the
  tile's total, and its first warp walks back over the predecessors 32 at a time, combining
  published totals until it meets a published inclusive prefix; then it publishes its own
  inclusive prefix and stores. Flags count launches (epochs) so the state needs no reset.

The combine is the op table's spelling (backends/scanning.py); every element is combined with
the value before it as `combine(earlier, later)`. Under the CUDA simulator, which has no
shuffles, a shuffle is spelled as a write to shared memory, a barrier and a read: the same
lanes combine the same values, so the simulator runs the kernels' logic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import scanning
from ..kernel import KernelSource

WARP = 32


@dataclass(frozen=True)
class Plan:
    strategy: str          # "scan columns", "scan rows", "scan look-back"
    reason: str
    axis: int
    length: int            # elements a line (the scanned extent)
    lines: int             # lines (the product of the other extents)
    block: int = 0         # threads a block (rows, look-back)
    items: int = 0         # elements a thread scans serially a round
    tiles: int = 0         # look-back: tiles a line

    @property
    def round(self) -> int:
        return self.block * self.items


def plan(group, tuning, device, simulator: bool) -> Plan:
    node = group.scan
    shape, axis = node.shape, node.attrs["axis"]
    length = shape[axis]
    lines = int(np.prod([s for d, s in enumerate(shape) if d != axis], dtype=np.int64))
    last = all(s == 1 for s in shape[axis + 1:])
    if not last and lines >= (64 if simulator else tuning.scan_column_lines):
        return Plan("scan columns", f"{lines} lines along axis {axis} with kept axes after it: "
                    f"a thread a line, adjacent threads on adjacent elements", axis, length, lines)
    if length <= tuning.scan_short:
        return Plan("scan columns", f"lines of {length} elements, too short to share: a thread "
                    f"a line", axis, length, lines)
    items = 2 if simulator else tuning.scan_items
    block = WARP
    while block < (WARP if simulator else tuning.scan_threads) and block * items < length:
        block *= 2
    enough = lines >= tuning.scan_lines_per_sm * device.sms
    if enough or length <= block * items:
        return Plan("scan rows", f"{lines} lines of {length}: a block a line, in rounds of "
                    f"{block} x {items} elements", axis, length, lines, block, items)
    tiles = -(-length // (block * items))
    return Plan("scan look-back", f"{lines} lines of {length}, too few to fill the GPU: each cut "
                f"into {tiles} tiles of {block * items}, a block a tile, one pass with a "
                f"decoupled look-back", axis, length, lines, block, items, tiles)


class Scans:
    """Methods of the kernel writer (writer.KernelWriter); see the module docstring."""

    def scan(self, plan: Plan) -> KernelSource:
        r = self.renderer
        node = self.group.scan
        shape, axis = node.shape, plan.axis
        self.scan_full = tuple(f"i{d}" for d in range(len(shape)))
        self.scan_kept = [d for d in range(len(shape)) if d != axis]
        if plan.strategy == "scan columns":
            r.emit(f"o = {self.ix('cuda.grid(1)')}")
            r.emit(f"while o < {plan.lines}:")
            r.push()
            self._outer_index(self.scan_kept, shape, "o")
            run = r.name("run")
            r.emit(f"{run} = {scanning.identity(r, node)}")
            r.emit(f"for i{axis} in range({plan.length}):")
            r.push()
            value = r.value(node.inputs[0], self.scan_full)
            r.emit(f"{run} = {scanning.combine(r, node, run, value)}")
            self._scan_outputs(node, run)
            r.pop()
            r.emit(f"o = {self.ix('o + cuda.gridsize(1)')}")
            r.pop()
            # NOTE: fewer lines than fill the GPU at full blocks go in blocks of 64, over more SMs
            threads = self.tuning.threads if plan.lines >= self.tuning.threads * self.device.sms \
                else 64
            blocks = max(1, min(-(-plan.lines // threads), 65535))
            return self.finish(plan.strategy, threads, (blocks, 1, 1))
        self._scan_shared(node, plan)
        if plan.strategy == "scan rows":
            r.emit(f"line = {self.ix('cuda.blockIdx.x')}")
            r.emit(f"while line < {plan.lines}:")
            r.push()
            self._outer_index(self.scan_kept, shape, "line")
            r.emit(f"carry = {scanning.identity(r, node)}")
            r.emit(f"for base in range(0, {plan.length}, {plan.round}):")
            r.push()
            total = self._scan_round(node, plan, "carry")
            r.emit(f"carry = {scanning.combine(r, node, 'carry', total)}")
            r.emit("cuda.syncthreads()")
            r.pop()
            r.emit(f"line = {self.ix('line + cuda.gridDim.x')}")
            r.pop()
            return self.finish(plan.strategy, plan.block, (max(1, min(plan.lines, 65535)), 1, 1))
        return self._look_back(node, plan, shape)

    # -- pieces ----------------------------------------------------------------------------------
    def _scan_outputs(self, node, value: str) -> None:
        """Store every output at this element, the scan's value there being `value`."""
        r = self.renderer
        full = self.scan_full
        r.special[node.id] = lambda index: (
            value if scanning.same_element(index, full, node.shape) else None)
        for param in self.outputs:
            self.store(param, full)
        del r.special[node.id]

    def _scan_shared(self, node, plan: Plan) -> None:
        r = self.renderer
        r.emit(f"t = {self.ix('cuda.threadIdx.x')}")
        r.emit("lane = t % 32")
        r.emit("warp = t // 32")
        r.emit(f"shw = cuda.shared.array({WARP}, {self.numba_type(node.dtype)})")
        if self.simulator:
            r.emit(f"shx = cuda.shared.array({plan.block}, {self.numba_type(node.dtype)})")

    def _word(self, node, x: str) -> str:
        """`x` as a value a shuffle moves (32 or 64 bits)."""
        held = self.renderer.held(node.dtype)
        return f"{self.renderer.ctor(np.int32)}({x})" if held.kind == "b" or held.itemsize < 4 else x

    def _unword(self, node, x: str) -> str:
        held = self.renderer.held(node.dtype)
        if held.kind == "b":
            return f"({x} != 0)"
        return f"{self.renderer.ctor(held)}({x})" if held.itemsize < 4 else x

    def _put(self, node, x: str) -> str:
        """A held value as the element type of a shared or local array (bools as bytes)."""
        return f"{self.renderer.ctor(np.uint8)}({x})" if node.dtype.kind == "b" else x

    def _get(self, node, x: str) -> str:
        return f"({x} != 0)" if node.dtype.kind == "b" else x

    def _shuffle(self, node, x: str, source: str, up: bool) -> str:
        """The value of `x` in lane `lane - source` (up; a lane below keeps its own) or in lane
        `source` of this warp."""
        r = self.renderer
        result = r.name("sh")
        if not self.simulator:
            call = "cuda.shfl_up_sync" if up else "cuda.shfl_sync"
            r.emit(f"{result} = {self._unword(node, f'{call}(0xffffffff, {self._word(node, x)}, {source})')}")
            return result
        r.emit(f"shx[t] = {self._put(node, x)}")
        r.emit("cuda.syncthreads()")
        if up:
            r.emit(f"{result} = {self._get(node, f'shx[t - {source}]')} if lane >= {source} else {x}")
        else:
            r.emit(f"{result} = {self._get(node, f'shx[warp * 32 + {source}]')}")
        r.emit("cuda.syncthreads()")
        return result

    def _warp_scan(self, node, x: str) -> None:
        """`x` becomes its inclusive scan over the lanes of the warp."""
        r = self.renderer
        for d in (1, 2, 4, 8, 16):
            other = self._shuffle(node, x, str(d), up=True)
            r.emit(f"if lane >= {d}:")
            r.push()
            r.emit(f"{x} = {scanning.combine(r, node, other, x)}")
            r.pop()

    def _block_scan(self, node, plan: Plan, x: str) -> tuple[str, str]:
        """(the combination of the threads' `x` before this thread, of all of them)."""
        r = self.renderer
        warps = plan.block // WARP
        self._warp_scan(node, x)
        r.emit("if lane == 31:")
        r.push()
        r.emit(f"shw[warp] = {self._put(node, x)}")
        r.pop()
        r.emit("cuda.syncthreads()")
        w = r.name("w")
        r.emit(f"{w} = {self._get(node, 'shw[lane]')} if lane < {warps} else "
               f"{scanning.identity(r, node)}")
        self._warp_scan(node, w)
        before = self._shuffle(node, w, "(warp + 31) % 32", up=False)
        r.emit("if warp == 0:")
        r.push()
        r.emit(f"{before} = {scanning.identity(r, node)}")
        r.pop()
        total = self._shuffle(node, w, str(warps - 1), up=False)
        inside = self._shuffle(node, x, "1", up=True)
        r.emit("if lane == 0:")
        r.push()
        r.emit(f"{inside} = {scanning.identity(r, node)}")
        r.pop()
        prefix = r.name("prefix")
        r.emit(f"{prefix} = {scanning.combine(r, node, before, inside)}")
        return prefix, total

    def _scan_round(self, node, plan: Plan, carry: str | None) -> str:
        """One round at `base`: each thread's items scanned, the block's scan, the outputs
        stored with `carry` (a name, computed before the stores) in front. Returns the name of
        the round's total."""
        r = self.renderer
        axis = plan.axis
        full = self.scan_full
        held = self.numba_type(node.dtype)
        r.emit(f"vals = cuda.local.array({plan.items}, {held})")
        run = r.name("run")
        r.emit(f"{run} = {scanning.identity(r, node)}")
        r.emit(f"for j in range({plan.items}):")
        r.push()
        r.emit(f"i{axis} = {self.ix(f'base + t * {plan.items} + j')}")
        r.emit(f"if i{axis} < {plan.length}:")
        r.push()
        value = r.value(node.inputs[0], full)
        r.emit(f"{run} = {scanning.combine(r, node, run, value)}")
        r.pop()
        r.emit(f"vals[j] = {self._put(node, run)}")
        r.pop()
        prefix, total = self._block_scan(node, plan, run)
        if carry is None:
            carry = self._look_back_prefix(node, plan, total)
        start = r.name("start")
        r.emit(f"{start} = {scanning.combine(r, node, carry, prefix)}")
        r.emit(f"for j in range({plan.items}):")
        r.push()
        r.emit(f"i{axis} = {self.ix(f'base + t * {plan.items} + j')}")
        r.emit(f"if i{axis} < {plan.length}:")
        r.push()
        scanned = r.name("scanned")
        r.emit(f"{scanned} = {scanning.combine(r, node, start, self._get(node, 'vals[j]'))}")
        self._scan_outputs(node, scanned)
        r.pop()
        r.pop()
        return total

    # -- look-back -----------------------------------------------------------------------------
    def _look_back(self, node, plan: Plan, shape) -> KernelSource:
        r = self.renderer
        count = plan.lines * plan.tiles
        word = _word_dtype(r.held(node.dtype))
        self.scratch += [("sync_ticket", 1, np.dtype(np.int64)), ("sync_flags", count, np.dtype(np.int64)),
                         ("sync_aggregates", count, word), ("sync_prefixes", count, word)]
        self.scan_word = word
        r.emit(f"ticket = cuda.shared.array(1, {self.numba_type(np.int64)})")
        r.emit(f"shp = cuda.shared.array(1, {self.numba_type(node.dtype)})")
        r.emit("if t == 0:")
        r.push()
        r.emit("ticket[0] = cuda.atomic.add(sync_ticket, 0, 1)")
        r.pop()
        r.emit("cuda.syncthreads()")
        r.emit(f"epoch = (ticket[0] // {count}) * 4 + 4")
        r.emit(f"tile = ticket[0] % {count}")
        r.emit(f"line = tile // {plan.tiles}")
        r.emit(f"part = tile % {plan.tiles}")
        self._outer_index(self.scan_kept, shape, "line")
        r.emit(f"base = part * {plan.round}")
        self._scan_round(node, plan, None)
        return self.finish(plan.strategy, plan.block, (count, 1, 1))

    def _look_back_prefix(self, node, plan: Plan, total: str) -> str:
        """The combination of the tiles of this line before this one (published state of
        predecessors), leaving this tile's inclusive prefix published. Returns its name."""
        r = self.renderer
        word = self.scan_word
        as_word = r.ctor(word)
        zero = r.constant(word.type(-0.0) if word.kind == "f" else word.type(0))
        r.emit("if t == 0:")
        r.push()
        r.emit("if part == 0:")
        r.push()
        r.emit(f"sync_prefixes[tile] = {as_word}({total})")
        r.emit("cuda.threadfence()")
        r.emit("cuda.atomic.max(sync_flags, tile, epoch + 2)")
        r.pop()
        r.emit("else:")
        r.push()
        r.emit(f"sync_aggregates[tile] = {as_word}({total})")
        r.emit("cuda.threadfence()")
        r.emit("cuda.atomic.max(sync_flags, tile, epoch + 1)")
        r.pop()
        r.pop()
        exclusive = r.name("exclusive")
        r.emit(f"{exclusive} = {scanning.identity(r, node)}")
        r.emit("if warp == 0 and part > 0:")
        r.push()
        r.emit("k = part - 1")
        r.emit("looking = True")
        r.emit("while looking:")
        r.push()
        r.emit("j = k - lane")
        r.emit("flag = epoch + 2")
        r.emit("if j >= 0:")
        r.push()
        r.emit(f"flag = cuda.atomic.add(sync_flags, line * {plan.tiles} + j, 0)")
        r.pop()
        r.emit("ready = 1 if flag > epoch else 0")
        self._warp_all(node, "ready", "min")
        r.emit("if ready != 0:")
        r.push()
        r.emit("found = lane if flag == epoch + 2 else 32")
        self._warp_all(node, "found", "min")
        r.emit("cuda.threadfence()")
        part_value = r.name("part")
        r.emit(f"{part_value} = {scanning.identity(r, node)}")
        r.emit("if j >= 0 and lane < found:")
        r.push()
        r.emit(f"{part_value} = {self._from_word(node, f'cuda.atomic.add(sync_aggregates, line * {plan.tiles} + j, {zero})')}")
        r.pop()
        r.emit("if j >= 0 and lane == found:")
        r.push()
        r.emit(f"{part_value} = {self._from_word(node, f'cuda.atomic.add(sync_prefixes, line * {plan.tiles} + j, {zero})')}")
        r.pop()
        self._warp_scan(node, part_value)
        window = self._shuffle(node, part_value, "31", up=False)
        r.emit(f"{exclusive} = {scanning.combine(r, node, exclusive, window)}")
        r.emit("looking = found == 32")
        r.emit("k -= 32")
        r.pop()
        r.pop()
        r.emit("if t == 0:")
        r.push()
        r.emit(f"sync_prefixes[tile] = {as_word}({scanning.combine(r, node, exclusive, total)})")
        r.emit("cuda.threadfence()")
        r.emit("cuda.atomic.max(sync_flags, tile, epoch + 2)")
        r.emit(f"shp[0] = {self._put(node, exclusive)}")
        r.pop()
        r.pop()
        r.emit("cuda.syncthreads()")
        r.emit("if part > 0:")
        r.push()
        r.emit(f"{exclusive} = {self._get(node, 'shp[0]')}")
        r.pop()
        return exclusive

    def _from_word(self, node, x: str) -> str:
        held = self.renderer.held(node.dtype)
        return f"({x} != 0)" if held.kind == "b" else f"{self.renderer.ctor(held)}({x})"

    def _warp_all(self, node, name: str, how: str) -> None:
        """`name` (an int32) becomes its minimum over the warp, in every lane."""
        r = self.renderer
        for d in (1, 2, 4, 8, 16):
            if self.simulator:
                r.emit(f"shi[t] = {name}")
                r.emit("cuda.syncthreads()")
                r.emit(f"other = shi[t - {d}] if lane >= {d} else {name}")
                r.emit("cuda.syncthreads()")
            else:
                r.emit(f"other = cuda.shfl_up_sync(0xffffffff, {name}, {d})")
            r.emit(f"{name} = {how}({name}, other)")
        if self.simulator:
            r.emit(f"shi[t] = {name}")
            r.emit("cuda.syncthreads()")
            r.emit(f"{name} = shi[warp * 32 + 31]")
            r.emit("cuda.syncthreads()")
            self._declare_sim_ints()
        else:
            r.emit(f"{name} = cuda.shfl_sync(0xffffffff, {name}, 31)")

    def _declare_sim_ints(self) -> None:
        r = self.renderer
        line = f"    shi = cuda.shared.array({WARP}, {self.numba_type(np.int32)})"
        if line not in r.lines:
            r.lines.insert(0, line)


def _word_dtype(held: np.dtype) -> np.dtype:
    """The dtype a look-back publishes values in: one the GPU's atomics read (32 or 64 bits)."""
    if held.kind == "b" or (held.kind == "i" and held.itemsize < 4):
        return np.dtype(np.int32)
    if held.kind == "u" and held.itemsize < 4:
        return np.dtype(np.uint32)
    return held
