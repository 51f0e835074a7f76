"""The flash attention kernel: `softmax(s) @ v` with the scores s = f(q @ k^T) computed tile by
tile and never stored, as emit/attention_plan.py decides.

A block owns `rows` query rows of one batch entry. Their q values are staged in shared memory
once; then for each tile of keys (all of them, or those a causal mask leaves): the tile's k and
v values are staged, each thread computes the dot products of its rows with its keys, carries
them through the group's elementwise ops (the renderer: scale, casts, masks, biases, read at
the row and key; keys past the end are -inf), and updates each row's running max m and sum l
(online softmax: with the new max m', the accumulator and l are scaled by exp(m - m') and the
tile's probabilities exp(s - m') added, stored transposed in shared memory for the product with
v). The output, acc / l, goes through the epilogue and is written once. NaN propagates as in
NumPy (a NaN score makes its row NaN), and a row whose scores are all -inf is NaN (0 / 0).
Staged operands are read through their index maps (transposes, broadcasts, casts); rows and
keys past the ends read the last row or key (clamped) and are never used.
"""
from __future__ import annotations

import math

import numpy as np

from ....arrays import contiguous
from .attention_plan import Plan, roles
from .attention_staging import Staging


def write(source, plan: Plan):
    """The kernel, as `source` (a KernelWriter) renders kernels."""
    r = source.renderer
    found = roles(source.group)
    out, s = found.output, found.scores
    sq, sk = s.shape[-2:]
    batch = out.shape[:-2]
    names = batch_names(source, batch)
    count = math.prod(batch)
    tiles = -(-sq // plan.rows)
    acc = r.held(out.dtype)
    k = _Kernel(source, plan, found, names, acc)
    r.emit(f"t = {source.ix('cuda.threadIdx.x')}")
    r.emit(f"tx = t % {plan.lanes}")
    r.emit(f"ty = t // {plan.lanes}")
    block_coordinates(r, names, batch, tiles, plan.rows)
    k.declare()
    for x in range(plan.rx):
        r.emit(f"gi{x} = row0 + ty * {plan.rx} + {x}")
        r.emit(f"gc{x} = min(gi{x}, {sq - 1})")
        r.emit(f"m{x} = {k.minus_inf}")
        r.emit(f"l{x} = {k.zero}")
        r.emit(" = ".join(k.acc[x]) + f" = {k.zero}")
    if found.product is not None:
        k.staging.queries()
    if plan.causal is None:
        r.emit(f"kend = {sk}")
    else:
        r.emit(f"kend = max(0, min({sk}, row0 + {plan.rows + plan.causal}))")
    r.emit(f"for j0 in range(0, kend, {plan.keys}):")
    r.push()
    r.emit("cuda.syncthreads()")
    k.staging.keys()
    r.emit("cuda.syncthreads()")
    k.scores()
    k.softmax()
    r.emit("cuda.syncthreads()")
    k.product_with_values()
    r.pop()
    k.finish_rows()
    k.epilogue()
    strategy = (f"flash attention {plan.rows}x{plan.keys} tiles, {plan.rx}x{plan.cy} scores and "
                f"{plan.rx}x{plan.dy} outputs a thread"
                + ("" if found.product is not None else ", scores read")
                + (", causal tiles skipped" if plan.causal is not None else ""))
    # (kernels of float64 values keep their registers: bounded, they spill)
    blocks = source.tuning.attention_blocks if acc == np.float32 else 0
    written = source.finish(strategy, plan.threads, (tiles * count, 1, 1), blocks)
    return classed(source, written, plan.rows)


def classed(source, written, rows: int):
    """`written` with its grid's rule where it is a shape class's kernel (cuda/dynamic.py: the
    query tiles of every batch entry at a call's sizes)."""
    if source.dynamic:
        written.launch_rule = ("attention", rows)
    return written


def batch_names(source, batch: tuple) -> tuple:
    """The names of a block's batch coordinates: "0" along an axis of extent 1, except in a
    shape class's kernel (its extents are the call's: cuda/dynamic.py)."""
    return tuple("0" if extent == 1 and not source.dynamic else f"b{d}"
                 for d, extent in enumerate(batch))


def block_coordinates(r, names: tuple, batch: tuple, tiles: int, rows: int) -> None:
    """The block's batch entry (b0, b1 ... as `names` gives them) and first query row, row0."""
    r.emit("bid = cuda.blockIdx.x")
    # NOTE: a batch entry's row tiles are neighbours (its keys and values stay in L2 while
    # they run), the last first (under a causal mask they have the most keys)
    r.emit(f"rt = {tiles - 1} - bid % {tiles}")
    r.emit(f"rest = bid // {tiles}")
    for d in reversed(range(len(batch))):
        if names[d] != "0":
            r.emit(f"{names[d]} = rest % {batch[d]}")
            r.emit(f"rest = rest // {batch[d]}")
    r.emit(f"row0 = rt * {rows}")


def _one_line(r, start: int) -> None:
    """The statements emitted since line `start` joined into one line (one score or output
    element a line, so that a kernel's rx x cy copies stay readable), where all are simple
    statements at one indentation."""
    lines = r.lines[start:]
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())] if lines else ""
    if len(lines) > 1 and all(line.startswith(indent) and not line[len(indent)].isspace() and
                              not line.rstrip().endswith(":") for line in lines):
        r.lines[start:] = [indent + "; ".join(line.strip() for line in lines)]


def _computed_from(group, node, source) -> bool:
    """Whether `node` reads `source`, itself or through members of `group`."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if current.id == source.id:
            return True
        if current.id not in seen and current.id in group.members:
            seen.add(current.id)
            stack.extend(current.inputs)
    return False


def _key(index: tuple, shape: tuple) -> tuple:
    """A row and column index as the renderer writes it for a value of `shape`: "0" along an
    axis of extent 1 (index_text.broadcast_index)."""
    return tuple("0" if extent == 1 else i for i, extent in zip(index, shape[-2:]))


class _Kernel:
    """The parts of one attention kernel, emitted in order by `write`."""

    def __init__(self, source, plan: Plan, found, names: tuple, acc: np.dtype):
        self.source, self.plan, self.found, self.names = source, plan, found, names
        r = self.r = source.renderer
        self.acc_dtype = acc
        self.nb = source.numba_type(found.output.dtype)
        self.zero = r.constant(acc.type(0))
        self.one = r.constant(acc.type(1))
        self.nan = r.constant(acc.type(np.nan))
        self.minus_inf = r.constant(acc.type(-np.inf))
        self.acc = [[f"c{x}_{y}" for y in range(plan.dy)] for x in range(plan.rx)]
        self.align = "" if source.simulator else ", alignment=16"
        for name in ("sload4", "sstore4"):
            r.globals[name] = ("vector", name)
        self.staging = Staging(source, plan, found, names, self.zero)

    # -- shared memory --------------------------------------------------------------
    def declare(self) -> None:
        r, p = self.r, self.plan
        if self.found.product is not None:
            nb = self.source.numba_type(self.found.product.dtype)
            r.emit(f"sq = cuda.shared.array({p.rows * p.stride_q}, {nb}{self.align})")
            r.emit(f"sk = cuda.shared.array({p.keys * p.stride_q}, {nb}{self.align})")
        r.emit(f"sv = cuda.shared.array({p.keys * p.stride_v}, {self.nb}{self.align})")
        r.emit(f"sp = cuda.shared.array({p.keys * p.stride_p}, {self.nb}{self.align})")
        if self.source.simulator:
            r.emit(f"sx = cuda.shared.array({p.threads}, {self.nb})")
        self.staging.check_alignment()

    # -- one tile -----------------------------------------------------------------------------
    def scores(self) -> None:
        """w{x}_{c}: the scores of the thread's rows and keys (-inf past the last key)."""
        r, p, found = self.r, self.plan, self.found
        sk = found.scores.shape[-1]
        product = found.product
        for c in range(p.cy):
            r.emit(f"gj{c} = j0 + {c * p.lanes} + tx")
            r.emit(f"gk{c} = min(gj{c}, {sk - 1})")
        held = {}
        if product is not None:
            dot = r.held(product.dtype)
            zero = r.constant(dot.type(0))
            for x in range(p.rx):
                r.emit(" = ".join(f"s{x}_{c}" for c in range(p.cy)) + f" = {zero}")
            self._dots()
            for x in range(p.rx):
                for c in range(p.cy):
                    value = f"s{x}_{c}"
                    if dot != product.dtype:          # (a float16 product is rounded)
                        value = r.convert(product.dtype, value)
                    held[_key((f"gc{x}", f"gk{c}"), product.shape)] = value
            r.special[product.id] = lambda index: held.get(_key(index[-2:], product.shape))
        for x in range(p.rx):
            for c in range(p.cy):
                start = len(r.lines)
                value = r.value(found.scores, self.names + (f"gc{x}", f"gk{c}"))
                if sk % p.keys:
                    value = f"{value} if gj{c} < {sk} else {self.minus_inf}"
                r.emit(f"w{x}_{c} = {value}")
                _one_line(r, start)

    def _dots(self) -> None:
        """s{x}_{c} += q[row x] . k[key c] over the head dimension, from shared memory: one
        moving base a side, a row's or key's place a constant offset from it."""
        r, p, ix = self.r, self.plan, self.source.ix
        r.emit(f"qa = {ix(f'ty * {p.rx * p.stride_q}')}")
        r.emit(f"ka = {ix(f'tx * {p.stride_q}')}")
        step = p.qchunk
        unroll = 2 if p.head % (2 * step) == 0 else 1
        r.emit(f"for d in range({p.head // (step * unroll)}):")
        r.push()
        for half in range(unroll):
            for side, count, base, apart in (("q", p.rx, "qa", p.stride_q),
                                             ("k", p.cy, "ka", p.lanes * p.stride_q)):
                for i in range(count):
                    offset = i * apart + half * step
                    at = f"{base} + {offset}" if offset else base
                    if step == 4:
                        names = ", ".join(f"{side}{i}_{u}" for u in range(4))
                        r.emit(f"{names} = sload4(s{side}, {at})")
                    else:
                        r.emit(f"{side}{i}_0 = s{side}[{at}]")
            for x in range(p.rx):
                r.emit("; ".join(f"s{x}_{c} += q{x}_{u} * k{c}_{u}"
                                 for c in range(p.cy) for u in range(step)))
        r.emit(f"qa += {step * unroll}")
        r.emit(f"ka += {step * unroll}")
        r.pop()

    def softmax(self) -> None:
        """Each row's running max and sum brought up to this tile; the accumulator rescaled;
        the tile's probabilities stored transposed (sp[key][row])."""
        r, p = self.r, self.plan
        # NOTE: the maxima need not see NaN: a NaN score's term exp(NaN - m) is NaN, and so
        # are its row's sum and output, as in NumPy
        for x in range(p.rx):
            r.emit(f"mt = max({', '.join(f'w{x}_{c}' for c in range(p.cy))})"
                   if p.cy > 1 else f"mt = w{x}_0")
            self._across_lanes("mt", "max({0}, {1})")
            r.emit(f"mn = max(m{x}, mt)")
            # NOTE: a row with no key yet (all -inf) subtracts 0: its terms are exp(-inf) = 0
            r.emit(f"mu = {self.zero} if mn == {self.minus_inf} else mn")
            r.emit(f"al = {self._exp(f'm{x}')}")
            for c in range(p.cy):
                r.emit(f"p{x}_{c} = {self._exp(f'w{x}_{c}')}")
            r.emit(f"l{x} = l{x} * al + " + " + ".join(f"p{x}_{c}" for c in range(p.cy)))
            r.emit("; ".join(f"{name} *= al" for name in self.acc[x]))
            r.emit(f"m{x} = mn")
        for c in range(p.cy):
            base = self.source.ix(f"({c * p.lanes} + tx) * {p.stride_p} + ty * {p.rx}")
            if p.rx % 4 == 0:
                for x in range(0, p.rx, 4):
                    values = ", ".join(f"p{x + u}_{c}" for u in range(4))
                    r.emit(f"sstore4(sp, {base} + {x}, {values})")
            else:
                for x in range(p.rx):
                    r.emit(f"sp[{base} + {x}] = p{x}_{c}")

    def product_with_values(self) -> None:
        """acc += P @ V over the tile's keys, from shared memory, `unroll` keys a step."""
        r, p, ix = self.r, self.plan, self.source.ix
        unroll = max(u for u in (1, 2, 4) if p.keys % u == 0)
        r.emit(f"pb = {ix(f'ty * {p.rx}')}")
        r.emit(f"vb = {ix(f'tx * {p.vchunk}')}")
        r.emit(f"for j in range({p.keys // unroll}):")
        r.push()
        for u in range(unroll):
            pb, vb = f"pb + {u * p.stride_p}", f"vb + {u * p.stride_v}"
            if p.rx % 4 == 0:
                for x in range(0, p.rx, 4):
                    names = ", ".join(f"pp{x + w}" for w in range(4))
                    r.emit(f"{names} = sload4(sp, {pb} + {x})")
            else:
                for x in range(p.rx):
                    r.emit(f"pp{x} = sp[{pb} + {x}]")
            for chunk in range(p.dy // p.vchunk):
                at = f"{vb} + {chunk * p.lanes * p.vchunk}"
                names = [f"vv{chunk * p.vchunk + w}" for w in range(p.vchunk)]
                if p.vchunk == 4:
                    r.emit(f"{', '.join(names)} = sload4(sv, {at})")
                else:
                    r.emit(f"{names[0]} = sv[{at}]")
            for x in range(p.rx):
                r.emit("; ".join(f"{self.acc[x][y]} += pp{x} * vv{y}" for y in range(p.dy)))
        r.emit(f"pb += {unroll * p.stride_p}")
        r.emit(f"vb += {unroll * p.stride_v}")
        r.pop()

    def _exp(self, value: str) -> str:
        """exp(value - mu): in float32 as 2^(value log2(e) - mu log2(e)), one FMA and ex2 (the
        exponent's rounding, |x| 2^-24 relative, keeps the terms within float32's error of
        NumPy's; libdevice's expf takes 8 more instructions); other dtypes math.exp."""
        if self.acc_dtype != np.float32:
            return f"math.exp({value} - mu)"
        log2e = self.r.constant(np.float32(np.log2(np.e)))
        return f"math.exp2({value} * {log2e} - mu * {log2e})"

    def _across_lanes(self, name: str, combine: str) -> None:
        """`name` combined over the row group's lanes: warp shuffles (the simulator has none:
        through shared memory there)."""
        r, p = self.r, self.plan
        if not self.source.simulator:
            lane = p.lanes // 2
            while lane:
                r.emit(f"other = cuda.shfl_xor_sync(0xffffffff, {name}, {lane})")
                r.emit(f"{name} = {combine.format(name, 'other')}")
                lane //= 2
            return
        r.emit("cuda.syncthreads()")
        r.emit(f"sx[t] = {name}")
        r.emit("cuda.syncthreads()")
        r.emit(f"{name} = sx[ty * {p.lanes}]")
        for lane in range(1, p.lanes):
            r.emit(f"{name} = {combine.format(name, f'sx[ty * {p.lanes} + {lane}]')}")

    # -- the output -----------------------------------------------------------------------------
    def finish_rows(self) -> None:
        r, p = self.r, self.plan
        for x in range(p.rx):
            r.emit(f"lt = l{x}")
            self._across_lanes("lt", "({0} + {1})")
            # NOTE: 0 where every score of the row is -inf (NumPy: 0 / 0); NaN where one is NaN
            r.emit(f"inv{x} = {self.one} / lt if lt > {self.zero} else {self.nan}")

    def epilogue(self) -> None:
        r, p, found, source = self.r, self.plan, self.found, self.source
        out = found.output
        sq = found.scores.shape[-2]
        stored_epilogue_only(source, out)
        columns = []
        for chunk in range(p.dy // p.vchunk):
            for u in range(p.vchunk):
                r.emit(f"col{len(columns)} = ({chunk * p.lanes} + tx) * {p.vchunk} + {u}")
                columns.append(f"col{len(columns)}")
        held = {}
        r.special[out.id] = lambda index: held.get(_key(index[-2:], out.shape))
        for x in range(p.rx):
            r.emit(f"if gi{x} < {sq}:")
            r.push()
            for y, column in enumerate(columns):
                guarded = p.stride_v != p.width
                if guarded:
                    r.emit(f"if {column} < {p.width}:")
                    r.push()
                value = f"{self.acc[x][y]} * inv{x}"
                if self.acc_dtype != out.dtype:       # (a float16 result is rounded)
                    value = r.convert(out.dtype, value)
                store_output(source, self.names, f"gi{x}", column, f"o{x}_{y}", value, out,
                             held)
                if guarded:
                    r.pop()
            r.pop()


def store_output(source, names: tuple, row: str, column: str, name: str, value: str, out,
                 held: dict) -> None:
    """One output element: `name = value` (the row's result at `column`), held for the
    epilogue's reads of `out` there, and every stored value of the group written, on one line."""
    r = source.renderer
    start = len(r.lines)
    r.emit(f"{name} = {value}")
    held[_key((row, column), out.shape)] = name
    index = names + (row, column)
    for param in source.outputs:
        stored = source.stored(param.node, r.value(param.node, index))
        flat = source.offset(param.node.shape, contiguous(param.node.shape), index)
        r.emit(f"{param.name}[{flat}] = {stored}")
    _one_line(r, start)


def stored_epilogue_only(source, out) -> None:
    """Refuse a kernel that would store anything but `out`'s epilogue (values of its shape
    computed from it): fusion/attention.py and legality._matmul_into let nothing else in, and
    anything else would be written wrong."""
    for param in source.outputs:
        if param.node.shape != out.shape or not _computed_from(source.group, param.node, out):
            raise NotImplementedError(f"the attention kernel cannot store {param.node.op} "
                                      f"{param.node.shape}: only its output's epilogue")
