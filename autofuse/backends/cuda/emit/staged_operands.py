"""How the staged product kernel (emit/staged.py) moves one operand's tile into shared memory:
A as [k][m] rows of tm + pad_a elements, B as [k][n] rows of tn + pad_b after A's. Consecutive
threads read consecutive elements along the operand's unit-stride axis; elements past M, N or K
are zeros. Held (Plan.held): a thread's share read into registers, `fetch`, and written to
shared memory later, `store` (the next item's reads issued before this item's FMAs); else one
loop that reads and writes an element at a time."""
from __future__ import annotations

from . import guarded
from .staged_plan import Plan


class Operand:
    """One operand's staging; `which` is "a" or "b"; `region`: where the item's shared tiles
    begin (the name of an offset, or "" for 0). `t` is the thread's number within its item."""

    def __init__(self, source, plan: Plan, which: str, region: str = ""):
        self.source, self.plan, self.which, self.region = source, plan, which, region
        node = source.group.matmul
        self.node = node.inputs[0 if which == "a" else 1]
        m, n = node.shape[-2:]
        self.k = node.inputs[0].shape[-1]
        depth = plan.depth
        if which == "a":
            self.tile, self.extent, fast_k = plan.tm, m, plan.a_along_k
            self.row, self.base, self.start = plan.tm + plan.pad_a, 0, "row0"
        else:
            self.tile, self.extent, fast_k = plan.tn, n, not plan.b_along_n
            self.row, self.base, self.start = plan.tn + plan.pad_b, plan.base_b, "col0"
            if plan.keep_b:                  # (once a block, after every item's region)
                self.base, self.region = plan.kept_at, ""
        self.across = depth if fast_k else self.tile
        self.fast_k = fast_k
        self.total = depth * self.tile
        self.rounds = -(-self.total // plan.each)

    # -- a round's place in the tile ---------------------------------------------------------------
    def _place(self, j: int) -> tuple:
        """(sq, sk, guard) of round j's element, as expressions over the thread's first (`q0`,
        `k0s`, declared by `declare`) where every round shifts by a constant, else over t."""
        name, threads = self.which, self.plan.each
        guard = None
        if (j + 1) * threads > self.total:
            guard = f"t < {self.total - j * threads}"
        if threads % self.across == 0:
            shift = j * threads // self.across
            outer = f"{name}o0 + {shift}" if shift else f"{name}o0"
            inner = f"{name}i0"
        else:
            e = f"(t + {j * threads})" if j else "t"
            outer = self.source.ix(f"{e} // {self.across}")
            inner = self.source.ix(f"{e} % {self.across}")
        sq, sk = (outer, inner) if self.fast_k else (inner, outer)
        return sq, sk, guard

    def declare(self) -> None:
        """The thread's first element's place in the tile (before the item loop)."""
        r, name = self.source.renderer, self.which
        r.emit(f"{name}o0 = {self.source.ix(f't // {self.across}')}")
        r.emit(f"{name}i0 = {self.source.ix(f't % {self.across}')}")

    def _value(self, sq: str, sk: str, batch: tuple, origin: str, start: str, zero: str,
               target: str, guard: str | None) -> None:
        """`target` = the operand's element at tile place (sq, sk), or zero outside it."""
        r = self.source.renderer
        # NOTE: the coordinates as names: index maps multiply them by strides as they stand
        r.emit(f"gq = {start} + {sq}" if start != "0" else f"gq = {sq}")
        r.emit(f"gk = {origin} + {sk}" if origin != "0" else f"gk = {sk}")
        gq, gk = "gq", "gk"
        guards = [guard] if guard else []
        if self.extent % self.tile:
            guards.append(f"{gq} < {self.extent}")
        if self.plan.depth and self.k % self.plan.depth:
            guards.append(f"{gk} < {self.k}")
        index = batch + ((gq, gk) if self.which == "a" else (gk, gq))
        guarded.read(r, target, zero, guards, lambda: r.value(self.node, index))

    def _slot(self, sq: str, sk: str) -> str:
        at = f"({sk}) * {self.row} + {sq}" if not sk.isidentifier() else f"{sk} * {self.row} + {sq}"
        at = f"{self.base} + {at}" if self.base else at
        return self.source.ix(f"{self.region} + {at}" if self.region else at)

    # -- held in registers -------------------------------------------------------------------------
    def fetch(self, batch: tuple, origin: str, zero: str, start: str = "",
              suffix: str = "") -> None:
        """Every round's element into its register `<which>r<j>` (the tile's origin `start`,
        else row0 or col0 followed by `suffix`)."""
        for j in range(self.rounds):
            sq, sk, guard = self._place(j)
            self._value(sq, sk, batch, origin, start or self.start + suffix, zero,
                        f"{self.which}r{j}", guard)

    def store(self) -> None:
        """The registers fetch filled into shared memory (rounds past the tile skipped)."""
        r = self.source.renderer
        for j in range(self.rounds):
            sq, sk, guard = self._place(j)
            if guard:
                r.emit(f"if {guard}:")
                r.push()
            r.emit(f"smem[{self._slot(sq, sk)}] = {self.which}r{j}")
            if guard:
                r.pop()

    # -- a loop an element at a time ---------------------------------------------------------------
    def loop(self, batch: tuple, origin: str, zero: str, start: str = "") -> None:
        r = self.source.renderer
        r.emit(f"for e in range(t, {self.total}, {self.plan.each}):")
        r.push()
        outer, inner = ("sq", "sk") if self.fast_k else ("sk", "sq")
        r.emit(f"{outer} = {self.source.ix(f'e // {self.across}')}")
        r.emit(f"{inner} = {self.source.ix(f'e - {outer} * {self.across}')}")
        self._value("sq", "sk", batch, origin, start or self.start, zero, "v", None)
        r.emit(f"smem[{self._slot('sq', 'sk')}] = v")
        r.pop()
