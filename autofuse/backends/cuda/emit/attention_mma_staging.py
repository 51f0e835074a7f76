"""How the tensor-core attention kernel (emit/attention_mma.py) brings q, k and v on chip: q's
rows once, each key tile's k as [key][D word] (q @ k^T's B fragments) and v transposed as
[column][key word] (P @ V's), in 32-bit words of two float16 values; 16-byte loads where an
operand is an aligned, C-contiguous float16 argument (checked at run time), else element by
element through the renderer's index maps (transposes, broadcasts, slices)."""
from __future__ import annotations

import numpy as np

from .attention_mma_plan import SHAPE
from .attention_staging import _direct


class Staging:
    """The staging half of attention_mma._Kernel (its attributes: r, plan, source, found, names)."""

    def check_alignment(self) -> None:
        """Which of q, k and v are read 16 bytes (8 halves) at a time where `aligned` (every
        such parameter 16-byte aligned, checked at run time): C-contiguous float16 parameters,
        q and k where D is a multiple of 16, v where Dv is a multiple of 8."""
        r, p, found = self.r, self.plan, self.found
        q, k = found.product.inputs
        wanted = [(found.values, False, p.width % SHAPE.n == 0)]
        wanted += [(q, False, p.head % SHAPE.k == 0), (k, True, p.head % SHAPE.k == 0)]
        self.direct = {}
        for node, transposed, fits in wanted:
            direct = _direct(self.source, node, transposed, self.names, np.float16, 8) \
                if fits else None
            if direct is not None:
                self.direct[node.id] = direct
        if self.direct:
            for name in ("address", "vload8", "sstore4"):
                r.globals[name] = ("vector", name)
            params = sorted({d.param.name for d in self.direct.values()})
            r.emit(f"aligned = ({' | '.join(f'address({n})' for n in params)}) % 16 == 0")

    def rows(self) -> None:
        """The lane's rows, their running max and sum, and the output accumulators."""
        r, sq = self.r, self.found.scores.shape[-2]
        for h, offset in enumerate(self.offsets):
            r.emit(f"gi{h} = row0 + wr + lg + {offset}")
            r.emit(f"gc{h} = min(gi{h}, {sq - 1})")
            r.emit(f"m{h} = {self.minus_inf}")
            r.emit(f"l{h} = {self.zero}")
        for registers in self.acc:
            r.emit(" = ".join(registers) + f" = {self.zero}")

    # -- staging ------------------------------------------------------------------------------
    def _stage(self, shared: str, lines: int, words: int, stride: int, pair) -> None:
        """shared[i * stride + w] = the packed pair `pair(i, w)` (two float16 values) for i <
        lines, w < words, consecutive threads taking consecutive words of a line."""
        r, ix, threads = self.r, self.source.ix, self.plan.threads
        total = lines * words
        r.emit(f"for n in range({-(-total // threads)}):")
        r.push()
        r.emit(f"e = {ix(f'{threads} * n + t')}")
        if total % threads:
            r.emit(f"if e < {total}:")
            r.push()
        r.emit(f"ei = {ix(f'e // {words}')}")
        r.emit(f"ew = {ix(f'e - ei * {words}')}")
        low, high = pair("ei", "ew")
        r.emit(f"{shared}[{ix(f'ei * {stride} + ew')}] = pack_halves({low}, {high})")
        if total % threads:
            r.pop()
        r.pop()

    def _loop(self, total: int, body) -> None:
        """for chunk e = t + n * threads < total: body() (e in scope)."""
        r, ix, threads = self.r, self.source.ix, self.plan.threads
        r.emit(f"for n in range({-(-total // threads)}):")
        r.push()
        r.emit(f"e = {ix(f'{threads} * n + t')}")
        if total % threads:
            r.emit(f"if e < {total}:")
            r.push()
        body()
        if total % threads:
            r.pop()
        r.pop()

    def _stage_head_vectors(self, shared: str, lines: int, direct, rows) -> None:
        """A q or k tile as 8 halves a thread and chunk: one 16-byte load, one 16-byte store."""
        r, p, ix = self.r, self.plan, self.source.ix
        across = p.steps * SHAPE.words // 4
        direct.rows = rows

        def body():
            r.emit(f"ei = {ix(f'e // {across}')}")
            r.emit(f"ew = {ix(f'(e - ei * {across}) * 4')}")
            r.emit(f"ed = {ix('2 * ew')}")
            halves = [f"h{u}" for u in range(8)]
            r.emit(f"{', '.join(halves)} = vload8({direct.param.name}, {direct.offset('ei', 'ed')})")
            words = ", ".join(f"pack_halves(h{2 * u}, h{2 * u + 1})" for u in range(4))
            r.emit(f"sstore4({shared}, {ix(f'ei * {p.stride_q} + ew')}, {words})")
        self._loop(lines * across, body)

    def _either(self, node, vectors, elements) -> None:
        """vectors(direct) where `node` is read directly and `aligned`, else elements()."""
        direct = self.direct.get(node.id)
        if direct is None:
            elements()
            return
        r = self.r
        r.emit("if aligned:")
        r.push()
        vectors(direct)
        r.pop()
        r.emit("else:")
        r.push()
        elements()
        r.pop()

    def _along_head(self, node, line: str, index) -> tuple:
        """The two float16 values of word `ew` of a q or k line (0 past D)."""
        r, head = self.r, self.plan.head
        values = []
        for half in range(SHAPE.pack):
            r.emit(f"d{half} = min(2 * ew + {half}, {head - 1})")
            value = r.value(node, self.names + index(line, f"d{half}"))
            if head % SHAPE.k:
                value = f"{value} if 2 * ew + {half} < {head} else {self.zero}"
            r.emit(f"h{half} = {value}")
            values.append(f"h{half}")
        return tuple(values)

    def queries(self) -> None:
        """q's A fragments, staged once through shared memory into the lane's registers."""
        r, p, ix = self.r, self.plan, self.source.ix
        q = self.found.product.inputs[0]
        sq = self.found.scores.shape[-2]

        def pair(i, w):
            r.emit(f"qi = {ix(f'min(row0 + {i}, {sq - 1})')}")
            return self._along_head(q, "qi", lambda row, d: (row, d))
        self._either(q, lambda direct: self._stage_head_vectors(
            "sk", p.rows, direct, lambda i: ix(f"min(row0 + {i}, {sq - 1})")),
            lambda: self._stage("sk", p.rows, p.steps * SHAPE.words, p.stride_q, pair))
        r.emit("cuda.syncthreads()")
        r.emit(f"qb = {ix(f'(wr + lg) * {p.stride_q} + lq')}")
        for step in range(p.steps):
            r.emit("; ".join(f"qf{step}_{i} = sk[qb + {dr * p.stride_q + step * SHAPE.words + dk}]"
                             for i, (dr, dk) in enumerate(SHAPE.a)))

    def stage_keys(self) -> None:
        r, p, ix = self.r, self.plan, self.source.ix
        keys = self.found.product.inputs[1]
        sk = self.found.scores.shape[-1]

        def pair(i, w):
            r.emit(f"ki = {ix(f'min(j0 + {i}, {sk - 1})')}")
            return self._along_head(keys, "ki", lambda key, d: (d, key))
        self._either(keys, lambda direct: self._stage_head_vectors(
            "sk", p.keys, direct, lambda i: ix(f"min(j0 + {i}, {sk - 1})")),
            lambda: self._stage("sk", p.keys, p.steps * SHAPE.words, p.stride_q, pair))

    def stage_values(self) -> None:
        """v transposed: word w of column c packs keys 2w and 2w + 1 (0 past the last key and
        past Dv: a 0 probability times them must stay 0)."""
        r, p, ix = self.r, self.plan, self.source.ix
        v = self.found.values
        sk = v.shape[-2]

        def pair(c, w):
            r.emit(f"vj = min({c}, {p.width - 1})")
            values = []
            for half in range(SHAPE.pack):
                r.emit(f"vi{half} = {ix(f'min(j0 + 2 * {w} + {half}, {sk - 1})')}")
                value = r.value(v, self.names + (f"vi{half}", "vj"))
                inside = [f"j0 + 2 * {w} + {half} < {sk}"] if sk % p.keys else []
                inside += [f"{c} < {p.width}"] if p.width % SHAPE.n else []
                if inside:
                    value = f"{value} if {' and '.join(inside)} else {self.zero}"
                r.emit(f"h{half} = {value}")
                values.append(f"h{half}")
            return tuple(values)
        self._either(v, self._stage_value_vectors,
                     lambda: self._stage("sv", p.tiles * SHAPE.n, p.keys // SHAPE.pack,
                                         p.stride_v, pair))

    def _stage_value_vectors(self, direct) -> None:
        """v's tile as chunks of 2 keys x 8 columns: two 16-byte loads, 8 words stored (the
        chunks of consecutive threads are consecutive key pairs of one column chunk, so that a
        warp's stores fall in distinct banks)."""
        r, p, ix = self.r, self.plan, self.source.ix
        sk = self.found.values.shape[-2]
        pairs = p.keys // SHAPE.pack
        direct.rows = lambda i: ix(f"min(j0 + {i}, {sk - 1})")

        def body():
            r.emit(f"ec = {ix(f'e // {pairs}')}")
            r.emit(f"ew = {ix(f'e - ec * {pairs}')}")
            r.emit(f"ed = {ix('ec * 8')}")
            for half in range(SHAPE.pack):
                r.emit(f"er{half} = {ix(f'2 * ew + {half}')}")
                names = [f"h{half}_{u}" for u in range(8)]
                r.emit(f"{', '.join(names)} = vload8({direct.param.name}, "
                       f"{direct.offset(f'er{half}', 'ed')})")
                if sk % p.keys:
                    r.emit(f"keep = j0 + er{half} < {sk}")
                    r.emit("; ".join(f"{n} = {n} if keep else {self.zero}" for n in names))
            for u in range(8):
                r.emit(f"sv[{ix(f'(ed + {u}) * {p.stride_v} + ew')}] = "
                       f"pack_halves(h0_{u}, h1_{u})")
        self._loop(pairs * (p.width // SHAPE.n), body)

    # -- one tile -----------------------------------------------------------------------------
