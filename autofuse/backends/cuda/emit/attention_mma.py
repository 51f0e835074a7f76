"""The flash attention kernel on tensor cores, for float16 q, k and v: `softmax(s) @ v` with the
scores s = f(q @ k^T) computed tile by tile in registers and never stored, as
emit/attention_mma_plan.py decides.

Precision: both products are `mma.sync` m16n8k16 with float16 operands and float32 sums. The
scores' product stays in float32 (NumPy would round it to float16 first: this is closer to the
float64 answer) and goes through the group's elementwise ops (scale, masks, biases; each op's
float16 result rounded as NumPy rounds it); the online softmax runs in float32 on the accumulator
registers, and its probabilities P are rounded to float16 as the A operand of P @ V (as flash
attention kernels do); the output is rounded to float16 once, after the division by the sum.

Each warp owns 16 query rows. Its lanes hold q's A fragments for the whole kernel (staged once
through shared memory); for each tile of keys (those a causal mask leaves), k is staged as
[key][D word] (the B fragments of q @ k^T) and v transposed as [column][key word] (those of
P @ V). The scores' accumulators, laid out as mma_shapes.py gives, are already P @ V's A
fragments once rounded and packed (mma_shapes.accumulators_as_a): no data moves between lanes. A
row's max and sum combine over the 4 lanes of its quad (warp shuffles; shared memory under the
simulator). NaN propagates as in NumPy, and a row whose scores are all -inf is NaN (0 / 0).
"""
from __future__ import annotations

import math

import numpy as np

from .attention import (_key, _one_line, batch_names, block_coordinates, classed,
                        store_output, stored_epilogue_only)
from .attention_mma_plan import SHAPE, MmaPlan
from .attention_mma_staging import Staging
from .attention_plan import roles
from ..intrinsics.mma_shapes import accumulators_as_a


def write(source, plan: MmaPlan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    found = roles(source.group)
    out, s = found.output, found.scores
    sq, sk = s.shape[-2:]
    batch = out.shape[:-2]
    names = batch_names(source, batch)
    tiles = -(-sq // plan.rows)
    k = _Kernel(source, plan, found, names)
    r.emit(f"t = {source.ix('cuda.threadIdx.x')}")
    r.emit("lane = t % 32")
    r.emit("lg = lane // 4")
    r.emit("lq = lane % 4")
    r.emit(f"wr = (t // 32) * {SHAPE.m}")
    block_coordinates(r, names, batch, tiles, plan.rows)
    k.declare()
    k.check_alignment()
    k.rows()
    k.queries()
    if plan.causal is None:
        r.emit(f"kend = {sk}")
    else:
        r.emit(f"kend = max(0, min({sk}, row0 + {plan.rows + plan.causal}))")
    r.emit(f"for j0 in range(0, kend, {plan.keys}):")
    r.push()
    r.emit("cuda.syncthreads()")
    k.stage_keys()
    k.stage_values()
    r.emit("cuda.syncthreads()")
    k.scores()
    k.softmax()
    k.product_with_values()
    r.pop()
    k.epilogue()
    strategy = (f"flash attention on tensor cores (mma.sync m16n8k16, float16 operands, float32 "
                f"sums), {plan.rows}x{plan.keys} tiles, {plan.warps} warps of 16 rows"
                + (", causal tiles skipped" if plan.causal is not None else ""))
    grid = (tiles * math.prod(batch), 1, 1)
    return classed(source, source.finish(strategy, plan.threads, grid), plan.rows)


def _tree(op: str, values: list) -> str:
    """op(op(a, b), op(c, d)) ... over `values`, two at a time."""
    while len(values) > 1:
        pairs = [f"{op}({a}, {b})" for a, b in zip(values[::2], values[1::2])]
        values = pairs + ([values[-1]] if len(values) % 2 else [])
    return values[0]


class _Kernel(Staging):
    """The parts of one tensor-core attention kernel, emitted in order by `write`."""

    def __init__(self, source, plan: MmaPlan, found, names: tuple):
        self.source, self.plan, self.found, self.names = source, plan, found, names
        r = self.r = source.renderer
        for name in (SHAPE.name, "pack_halves"):
            r.globals[name] = ("mma", name)
        self.zero = r.constant(np.float32(0))
        self.one = r.constant(np.float32(1))
        self.nan = r.constant(np.float32(np.nan))
        self.minus_inf = r.constant(np.float32(-np.inf))
        self.log2e = r.constant(np.float32(np.log2(np.e)))
        # the rows (offsets from lg) a lane's accumulators lie in, and which registers each holds
        self.offsets = sorted({dr for dr, _ in SHAPE.c})
        self.in_row = [[i for i, (dr, _) in enumerate(SHAPE.c) if dr == offset]
                       for offset in self.offsets]
        self.key_tiles = plan.keys // SHAPE.n
        self.acc = [[f"o{n}_{i}" for i in range(len(SHAPE.c))] for n in range(plan.tiles)]

    def declare(self) -> None:
        r, p, source = self.r, self.plan, self.source
        word = source.numba_type(np.uint32)
        align = "" if source.simulator else ", alignment=16"
        r.emit(f"sk = cuda.shared.array({max(p.rows, p.keys) * p.stride_q}, {word}{align})")
        r.emit(f"sv = cuda.shared.array({p.tiles * SHAPE.n * p.stride_v}, {word}{align})")
        if source.simulator:
            r.emit(f"sx = cuda.shared.array({p.threads}, {source.numba_type(np.float32)})")

    def scores(self) -> None:
        """s{n}_{i}: q @ k^T of key tile n on tensor cores; w{n}_{i}: the scores, through the
        group's ops (-inf past the last key)."""
        r, p, found = self.r, self.plan, self.found
        sk = found.scores.shape[-1]
        product = found.product
        for n in range(self.key_tiles):
            r.emit(" = ".join(f"s{n}_{i}" for i in range(len(SHAPE.c))) + f" = {self.zero}")
        r.emit(f"kb = {self.source.ix(f'lg * {p.stride_q} + lq')}")
        for step in range(p.steps):
            for n in range(self.key_tiles):
                base = n * SHAPE.n * p.stride_q + step * SHAPE.words
                words = [f"kf{i}" for i in range(len(SHAPE.b))]
                r.emit("; ".join(f"{w} = sk[kb + {base + dk}]" for w, dk in zip(words, SHAPE.b)))
                self._mma([f"qf{step}_{i}" for i in range(len(SHAPE.a))], words,
                          [f"s{n}_{i}" for i in range(len(SHAPE.c))])
        columns = sorted({dc for _, dc in SHAPE.c})
        for n in range(self.key_tiles):
            r.emit("; ".join(f"gj{n}_{dc} = j0 + {n * SHAPE.n + dc} + 2 * lq" for dc in columns))
            r.emit("; ".join(f"gk{n}_{dc} = min(gj{n}_{dc}, {sk - 1})" for dc in columns))
        held = {}
        for n in range(self.key_tiles):
            for i, (dr, dc) in enumerate(SHAPE.c):
                row = f"gc{self.offsets.index(dr)}"
                held[_key((row, f"gk{n}_{dc}"), product.shape)] = f"s{n}_{i}"
        r.special[product.id] = lambda index: held.get(_key(index[-2:], product.shape))
        for n in range(self.key_tiles):
            for i, (dr, dc) in enumerate(SHAPE.c):
                start = len(r.lines)
                row = f"gc{self.offsets.index(dr)}"
                value = r.value(found.scores, self.names + (row, f"gk{n}_{dc}"))
                if sk % p.keys:
                    value = f"{value} if gj{n}_{dc} < {sk} else {self.minus_inf}"
                r.emit(f"w{n}_{i} = {value}")
                _one_line(r, start)

    def _mma(self, a: list, b: list, c: list) -> None:
        self.r.emit(f"{', '.join(c)}, = {SHAPE.name}(({', '.join(a)},), ({', '.join(b)},), "
                    f"({', '.join(c)},))")

    def softmax(self) -> None:
        """Each row's running max and sum brought up to this tile, the accumulators rescaled, and
        w{n}_{i} replaced by the tile's probabilities exp(s - max)."""
        r = self.r
        # NOTE: the maxima need not see NaN: a NaN score's term exp(NaN - m) is NaN, and so
        # are its row's sum and output, as in NumPy
        for h, registers in enumerate(self.in_row):
            scores = [f"w{n}_{i}" for n in range(self.key_tiles) for i in registers]
            r.emit(f"mt = {_tree('max', scores)}")
            self._across_quad("mt", "max({0}, {1})")
            r.emit(f"mn = max(m{h}, mt)")
            # NOTE: a row with no key yet (all -inf) subtracts 0: its terms are exp(-inf) = 0
            r.emit(f"mb = ({self.zero} if mn == {self.minus_inf} else mn) * {self.log2e}")
            r.emit(f"al = math.exp2(m{h} * {self.log2e} - mb)")
            for name in scores:
                r.emit(f"{name} = math.exp2({name} * {self.log2e} - mb)")
            r.emit(f"l{h} = l{h} * al + {' + '.join(scores)}")
            r.emit("; ".join(f"{acc[i]} *= al" for acc in self.acc for i in registers))
            r.emit(f"m{h} = mn")

    def product_with_values(self) -> None:
        """acc += P @ V: the probabilities packed as A fragments, v's B fragments from sv."""
        r, p = self.r, self.plan
        as_a = accumulators_as_a(SHAPE)
        per_step = SHAPE.k // SHAPE.n
        r.emit(f"vb = {self.source.ix(f'lg * {p.stride_v} + lq')}")
        for step in range(p.keys // SHAPE.k):
            fragment = [f"pf{i}" for i in range(len(as_a))]
            r.emit("; ".join(
                f"{name} = pack_halves({', '.join(f'w{step * per_step + tile}_{c}' for tile, c in elements)})"
                for name, elements in zip(fragment, as_a)))
            for n in range(p.tiles):
                base = n * SHAPE.n * p.stride_v + step * SHAPE.words
                words = [f"vf{i}" for i in range(len(SHAPE.b))]
                r.emit("; ".join(f"{w} = sv[vb + {base + dk}]" for w, dk in zip(words, SHAPE.b)))
                self._mma(fragment, words, self.acc[n])

    def _across_quad(self, name: str, combine: str) -> None:
        """`name` combined over the 4 lanes holding a row (lanes 4g .. 4g + 3): warp shuffles
        (the simulator has none: through shared memory there)."""
        r = self.r
        if not self.source.simulator:
            for lane in (1, 2):
                r.emit(f"other = cuda.shfl_xor_sync(0xffffffff, {name}, {lane})")
                r.emit(f"{name} = {combine.format(name, 'other')}")
            return
        r.emit("cuda.syncthreads()")
        r.emit(f"sx[t] = {name}")
        r.emit("cuda.syncthreads()")
        r.emit(f"{name} = sx[t - lq]")
        for lane in range(1, 4):
            r.emit(f"{name} = {combine.format(name, f'sx[t - lq + {lane}]')}")

    # -- the output ---------------------------------------------------------------------------
    def epilogue(self) -> None:
        r, p, found, source = self.r, self.plan, self.found, self.source
        out = found.output
        sq = found.scores.shape[-2]
        stored_epilogue_only(source, out)
        for h in range(len(self.offsets)):
            r.emit(f"lt = l{h}")
            self._across_quad("lt", "({0} + {1})")
            # NOTE: NaN where every score of the row is -inf (NumPy: 0 / 0) or one is NaN
            r.emit(f"inv{h} = {self.one} / lt if lt > {self.zero} else {self.nan}")
        held = {}
        r.special[out.id] = lambda index: held.get(_key(index[-2:], out.shape))
        guarded = p.width % SHAPE.n != 0
        for h, registers in enumerate(self.in_row):
            r.emit(f"if gi{h} < {sq}:")
            r.push()
            for n in range(p.tiles):
                for i in registers:
                    column = f"col{n}_{SHAPE.c[i][1]}"
                    r.emit(f"{column} = {n * SHAPE.n + SHAPE.c[i][1]} + 2 * lq")
                    if guarded:
                        r.emit(f"if {column} < {p.width}:")
                        r.push()
                    store_output(source, self.names, f"gi{h}", column, f"y{n}_{i}",
                                 r.convert(out.dtype, f"{self.acc[n][i]} * inv{h}"), out, held)
                    if guarded:
                        r.pop()
            r.pop()
