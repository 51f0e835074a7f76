"""Building one program for a shape class: the stages run at stand-in sizes, compared, checked
at small sizes, then compiled once with the sizes as kernel arguments.

For symbols n0, n1, ... (each a set of argument dimensions of one size) the program is built at
base stand-ins (primes at least the call's size, so size-driven choices are the ones the call's
size makes) and once more per symbol moved to the next prime; forms.py fits every size that
differs. The program built at sizes 2 and 3 (and at twice the stand-in, an even size) must then
be the fitted one at those sizes (so no choice made at the stand-ins is wrong for small sizes),
and so must the program with every symbol moved at once (a product of two sizes is no affine
form of either); 0 and 1 join the class where the same
holds for them, else they stay specialized (NumPy's broadcasting and squeeze decide on them).
A symbol whose builds disagree, or that the user's code decides on (sizes.py), stays static:
its dimension is specialized and the reason kept for the fused text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ValueNeeded
from ..stages import assemble
from ..trace import leaf_spec
from .forms import Mismatch, Parts, Plan, Text, evaluate, first_difference, symbols_of, unify
from .policy import LATER, Slower, shape_of
from .sizes import Watch

CHECKED = (2, 3)          # sizes every symbol must give the fitted program at (and twice its
#                           stand-in: an even size, where the stand-ins are odd primes) ...
LOWEST = (4, 8, 16)       # ... or, where it does not at 2 or 3, at the first of these and the
#                           size after it (a stencil's u[1:-1] is empty at 2): smaller sizes
#                           compile on their own
JOINABLE = (0, 1)         # sizes that run the class's program where it is theirs too
SMALLEST_STAND_IN = 1009


@dataclass
class Shapes:
    """What is dynamic in an entry (`entry.dynamic`): symbol -> dimensions, names and stand-in;
    the sizes 0 and 1 it also runs; and why other dimensions stayed static."""
    places: dict                            # symbol -> ((leaf, dim), ...)
    names: dict                             # symbol -> "x.shape[0]"
    stand_ins: dict                         # symbol -> base stand-in size
    joins: dict = field(default_factory=dict)       # symbol -> frozenset of sizes in JOINABLE
    static: dict = field(default_factory=dict)      # "x.shape[1]" -> why it stayed static
    apart: dict = field(default_factory=dict)       # (symbol, 0 or 1) -> why it is not joined
    least: dict = field(default_factory=dict)       # symbol -> the least size past 1 it runs
    #                                                 (where not 2), and why not smaller ones
    nodes: object = None                    # pattern of the graph's nodes (forms.unify)
    texts: list = field(default_factory=list)       # forms.Text per kernel record
    messages: object = ()                   # pattern of the checks' messages (trace/checks.py)

    def sizes(self, leaves) -> dict:
        """symbol -> this call's size."""
        return {s: shape_of(leaves[leaf])[dim] for s, ((leaf, dim), *_) in self.places.items()}

    def as_text(self) -> str:
        lines = [f"# dynamic: n{s} = {' = '.join(self._place_names(s))} (traced at {v}"
                 + (f"; also runs size {', '.join(map(str, sorted(self.joins[s])))}"
                    if self.joins.get(s) else "") + ")"
                 for s, v in self.stand_ins.items()]
        lines += [f"# n{s}: sizes 2 to {least - 1} compile on their own: {why}"
                  for s, (least, why) in sorted(self.least.items())]
        lines += [f"# n{s}: size {size} compiles on its own: {why}"
                  for (s, size), why in sorted(self.apart.items())]
        lines += [f"# static: {name}: {why}" for name, why in self.static.items()]
        return "\n".join(lines)

    def _place_names(self, symbol: int) -> list:
        return self.names[symbol]


WIDE = 1 << 31          # elements past which a backend's kernels index in 64 bits (its widest())


def _stand_ins(sizes: dict, taken: set, least: int = SMALLEST_STAND_IN) -> dict:
    """A distinct prime per symbol, at least its size and `least`, and no static size."""
    chosen, used = {}, set(taken)
    for symbol, size in sizes.items():
        candidate = _next_prime(max(size, least))
        while candidate in used or _next_prime(candidate + 1) in used:
            candidate = _next_prime(candidate + 1)
        chosen[symbol] = candidate
        used |= {candidate, _next_prime(candidate + 1)}
    return chosen


def _next_prime(n: int) -> int:
    while n < 2 or any(n % p == 0 for p in range(2, int(n ** 0.5) + 1)):
        n += 1
    return n


def _description(entry, texts: list) -> tuple:
    """What must agree between builds: the graph's nodes, groups, results and kernel texts; and
    the checks' messages (their sizes are the call's: an instance's own, classes.py)."""
    graph = entry.graph
    nodes = tuple((n.op, tuple(i.id for i in n.inputs), n.dtype.str, n.shape, n.attrs)
                  for n in graph.nodes)
    ends = (tuple(n.id for n in graph.inputs), tuple(n.id for n in graph.outputs))
    groups = tuple((g.kind, tuple(sorted(g.members)), tuple(i.id for i in g.inputs),
                    tuple(g.outputs)) for g in entry.fused.groups)
    traced = entry.traced
    results = (tuple(tuple(spec) for spec in traced.outputs), tuple(traced.mutations),
               tuple(traced.weak_int_casts.items()), traced.nonnegative, entry.input_leaves,
               entry.single_array, tuple((index, error) for index, error, _ in traced.checks))
    messages = tuple(message for _, _, message in traced.checks)
    return nodes, (ends, groups, results, tuple(meta for meta, _, _ in texts)), messages


class Builder:
    """Builds the class program of one call: `fn` with `places` (symbol -> dimensions) dynamic."""

    def __init__(self, fn, structure, leaves, statics, backend, name, options, places, names,
                 asked: bool = False):
        from ..backends import dynamic_backend
        # NOTE: `asked` (jit(dynamic=True)): the user wants classes where they cost speed too.
        # Attention is first built with its flash kernel (a batch that varies is its argument);
        # where that class does not fit (a sequence that varies), an asked class runs attention
        # as three kernels (1.8x the flash kernel's time on an H200), and the automatic policy
        # keeps the size static for its first sizes.
        self.asked = asked
        self.flash = True                  # attention's flash kernel in this attempt
        self.flashed = False               # ... and the attempt's program had one
        self.fn, self.structure, self.leaves, self.statics = fn, structure, leaves, statics
        self.backend, self.name, self.options = backend, name, options
        self.places, self.names = dict(places), names
        self.static: dict = {}             # place name -> why it stayed static
        self.dropped: set = set()          # (leaf, dim) kept static
        self.slower: set = set()           # ... of them, only where a class would be slower
        self.messages = ()                 # pattern of the checks' messages (_attempt's)
        self.target = dynamic_backend(backend)
        self.base: dict = {}               # symbol -> base stand-in of this attempt

    def _specs(self, sizes: dict) -> list:
        specs = [None if i in self.statics else leaf_spec(leaf, f"{self.name}() argument {i}")
                 for i, leaf in enumerate(self.leaves)]
        for symbol, places in self.places.items():
            for leaf, dim in places:
                spec = specs[leaf]
                shape = spec.shape[:dim] + (sizes[symbol],) + spec.shape[dim + 1:]
                specs[leaf] = type(spec)(spec.kind, shape, spec.dtype, spec.strides,
                                         spec.writeable, spec.weak)
        return specs

    def _run(self, sizes: dict):
        watch = Watch(sizes, self.base)
        entry = assemble(self.fn, self.structure, self.leaves, self._specs(sizes), self.statics,
                         self.backend, self.name, self.options, watch, sized_kernels=not self.asked,
                         flash=self.flash)
        self.flashed |= any(node.op == "softmax_matmul" for node in entry.graph.nodes)
        try:
            texts = self.target.dynamic_texts(entry)
        except ValueError as refused:        # (the backend's: a kernel that plans on its sizes)
            raise Unwritten(str(refused), isinstance(refused, Slower)) from None
        return entry, _description(entry, texts), texts, watch

    def _drop(self, symbol: int, why: str, slower: bool = False) -> None:
        for name in self.names[symbol]:
            self.static[name] = why
        self.dropped |= set(self.places[symbol])
        if slower:
            self.slower |= set(self.places[symbol])
        del self.places[symbol]

    def build(self):
        """The class entry, or None where every symbol stayed static (`self.static` says why)."""
        while self.places:
            self.flashed = False
            try:
                entry = self._attempt()
            except Mismatch as mismatch:
                if self.flashed and self.asked:
                    self.flash = False           # (again, attention as three kernels)
                    continue
                if self.flashed:
                    self._drop(mismatch.symbol, f"{mismatch.what} (built with attention's "
                               f"flash kernel); {LATER}", True)
                    continue
                self._drop(mismatch.symbol, mismatch.what, mismatch.slower)
                self.flash = True                # (the flash kernel may fit the sizes left)
                continue
            if entry is not None:
                return entry
        return None

    def _attempt(self):
        actual = {s: shape_of(self.leaves[p[0][0]])[p[0][1]] for s, p in self.places.items()}
        taken = {size for leaf in self.leaves for size in getattr(leaf, "shape", ())}
        base = self.base = _stand_ins(actual, taken)
        try:
            template, description, texts, watch = self._run(base)
            largest = self.target.widest(template) if hasattr(self.target, "widest") else 0
            if 4 * largest >= WIDE:
                # NOTE: kernels spanning 2^31 elements at the stand-ins (attention over long
                # sequences, a batch entry of 4M elements) would index in 64 bits, unlike
                # those at sizes 2 and 3: stand-ins small enough that twice them stay under it
                least = max(5, min(base.values()) * WIDE // (8 * largest))
                if least < min(base.values()):
                    base = self.base = _stand_ins(actual, taken, least)
                    template, description, texts, watch = self._run(base)
        except ValueNeeded:
            raise
        except Exception as error:       # noqa: BLE001 - any failure keeps the sizes static
            symbol = next(iter(self.places))
            raise Mismatch(symbol, f"{_failure(error)} at a stand-in size",
                           getattr(error, "slower", False))
        if not self.asked:
            self._against_own_sizes(template, actual)
        plan = Plan(tuple(base.items()), tuple((s, _next_prime(v + 1)) for s, v in base.items()))
        builds = [(description, texts, watch)]
        for k, (symbol, value) in enumerate(plan.moves):
            builds.append(self._variant(plan.sizes(k + 1), symbol, value))
        for _, _, seen in builds:
            for symbol, why in seen.decisions.items():
                if symbol in self.places:
                    raise Mismatch(symbol, f"the function decides on it: {why}")
        nodes = _unify_nodes([b[0][0] for b in builds], plan, template.graph)
        rest = unify([b[0][1] for b in builds], plan, "the fusion groups or the results")
        self.messages = unify([b[0][2] for b in builds], plan, "a check's message")
        for symbol in symbols_of(rest):
            # NOTE: only the graph and the kernels' texts are made anew at a call's sizes
            raise Mismatch(symbol, "a size reaches a result the program returns as it traced it "
                                   "(a Python int, a constant)")
        kernels = [Text([b[1][i][1] for b in builds], plan, f"kernel {i}")
                   for i in range(len(texts))]
        if len(plan.moves) > 1:
            # NOTE: each symbol moved alone cannot tell n0 * n1 from an affine form; all moved
            # at once can. A product of sizes keeps the last of them static.
            moved = dict(plan.moves)
            why = self._differs(moved, nodes, rest, kernels, plan.moves[-1][0], None)
            if why is not None:
                raise Mismatch(plan.moves[-1][0], f"with every size moved {why} (sizes that "
                                                  f"reach the program multiplied together)")
        joins, apart, least = self._check(plan, base, nodes, rest, kernels)
        shapes = Shapes({s: tuple(p) for s, p in self.places.items()},
                        {s: self.names[s] for s in self.places}, base, joins, dict(self.static),
                        apart, least, nodes, kernels, self.messages)
        template.dynamic = shapes
        self.target.prepare_dynamic(template, shapes, [raw for _, _, raw in texts])
        return template

    def _against_own_sizes(self, template, actual: dict) -> None:
        """The automatic policy's check that a class kernel is of the kind the call's own sizes
        would get: a planner that chooses by a size (few long rows split over many blocks, a
        strip of outputs where an axis divides, a product lowered to a reduction) chooses at
        the stand-ins, where the choice may be another (H200, the reductions sweep at d7800b4:
        sum(-1) over 4 rows of 2^23 ran 26.6x as a class of a block a row, log-sum-exp over 16
        rows 9.7x, pairwise distances without their strip 2.8x, k-means' argmin 2.3x). Where
        the kinds differ and the call moves enough bytes to matter (the backend's other_kinds),
        the size stays static for its first sizes (a Slower refusal)."""
        if not hasattr(self.target, "other_kinds"):
            return
        try:
            own = assemble(self.fn, self.structure, self.leaves, self._specs(actual),
                           self.statics, self.backend, self.name, self.options)
        except ValueNeeded:
            raise
        except Exception:                # noqa: BLE001 - (the call's own compile says why)
            return
        why = self.target.other_kinds(own, template)
        if why is not None:
            raise Mismatch(next(iter(self.places)), f"{why}; {LATER}", True)

    def _variant(self, sizes: dict, symbol: int, value: int):
        try:
            _, description, texts, watch = self._run(sizes)
        except ValueNeeded:
            raise
        except Exception as error:       # noqa: BLE001
            raise Mismatch(symbol, f"{_failure(error)} at size {value}")
        return description, texts, watch

    def _check(self, plan, base, nodes, rest, kernels) -> tuple:
        joins, apart, least = {}, {}, {}
        for symbol in list(self.places):
            joins[symbol] = set()
            low = self._lowest(base, nodes, rest, kernels, symbol)
            if low is not None:
                least[symbol] = low
            for size in (2 * base[symbol],) + JOINABLE:
                sizes = {**base, symbol: size}
                why = self._differs(sizes, nodes, rest, kernels, symbol, size)
                if why is None:
                    if size in JOINABLE:
                        joins[symbol].add(size)
                elif size not in JOINABLE:
                    raise Mismatch(symbol, f"at size {size} {why}")
                else:
                    apart[(symbol, size)] = why
            joins[symbol] = frozenset(joins[symbol])
        return joins, apart, least

    def _lowest(self, base, nodes, rest, kernels, symbol) -> tuple | None:
        """None where the symbol gives the fitted program at CHECKED sizes; else (the least of
        LOWEST from which it does, at that size and the next; why size 2 does not): sizes
        below it compile on their own. A Mismatch where none does."""
        first = None
        for low in (CHECKED[0],) + LOWEST:
            if low + 1 >= base[symbol]:         # (a pair below the stand-in, or none)
                break
            why = None
            for size in (low, low + 1):
                why = why or self._differs({**base, symbol: size}, nodes, rest, kernels,
                                           symbol, size)
            if why is None:
                return None if low == CHECKED[0] else (low, first)
            first = first or f"at size {low} {why}"
        raise Mismatch(symbol, first)

    def _differs(self, sizes, nodes, rest, kernels, symbol, size) -> str | None:
        try:
            _, (built_nodes, built_rest, built_messages), texts, watch = self._run(sizes)
        except ValueNeeded:
            raise
        except Exception as error:       # noqa: BLE001
            return _failure(error)
        if symbol in watch.decisions:
            return f"the function decides on it: {watch.decisions[symbol]}"
        if evaluate(nodes, sizes) != built_nodes or evaluate(rest, sizes) != built_rest or \
                evaluate(self.messages, sizes) != built_messages:
            return "the program differs from the size-generic one"
        same = getattr(self.target, "same_kernel", str.__eq__)
        for k, (text, (_, built, _)) in enumerate(zip(kernels, texts)):
            concrete = text.concrete(sizes)
            if not same(concrete, built):
                return f"kernel {k}: {first_difference(concrete, built)}"
        return None


def _unify_nodes(builds: list, plan, graph):
    """The pattern of the graph's nodes over the builds; a Mismatch names the value that differs."""
    for k, other in enumerate(builds[1:]):
        if len(other) != len(builds[0]):
            raise Mismatch(plan.moves[k][0], "the number of values in the program changes with it")
    parts = []
    for position, node in enumerate(graph.nodes):
        where = f"the shape or attributes of v{node.id} = {node.op}(...) at {node.origin}"
        parts.append(unify([b[position] for b in builds], plan, where))
    return Parts(tuple, tuple(parts))


class Unwritten(Exception):
    """The backend writes no kernel taking sizes as arguments for a group (it says why);
    `slower`: it would, but its kernel for the sizes is faster (a Slower refusal)."""

    def __init__(self, why: str, slower: bool = False):
        super().__init__(why)
        self.slower = slower


def _failure(error: Exception) -> str:
    if isinstance(error, Unwritten):
        return f"no kernel with sizes as arguments ({error})"
    return f"tracing fails ({_first_line(error)})"


def _first_line(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
