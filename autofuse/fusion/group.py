"""A fusion group: the ops one kernel computes, the values it reads and writes, and its kind."""
from __future__ import annotations

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, LAYOUT, MATMUL, REDUCE, SCAN, SCATTER, SORT, TRANSFORM
from .cost import node_bytes_unfused, read_bytes
from .work import OWN_INDEX

AT_OWN_INDEX = frozenset({OWN_INDEX})

KINDS = ("elementwise", "loop", "input", "scan", "output", "sort", "scatter", "fft")


# Ops whose `start` attribute a shared kernel may take as an argument (backends/sharing.py).
SLICING = ("slice", "setslice")
# structure(lifted=...): every slice start (and every scalar constant an elementwise member reads)
EVERY_START = frozenset({"every start"})
EVERY = frozenset({"every start and scalar"})


def outer_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def axes_text(axes: tuple) -> str:
    return f"axis {axes[0]}" if len(axes) == 1 else f"axes {axes}"


def keepdims_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if d in axes else s for d, s in enumerate(shape))


class Group:
    """A set of nodes computed by one kernel. `members` may share nodes with other groups
    (a pointwise producer recomputed in each consumer). `indices` holds, per member, the index
    paths the kernel computes it at (work.py); `work` is their total count."""

    def __init__(self, gid: int, root: Node):
        self.id = gid
        self.members: dict[int, Node] = {}
        self.indices: dict[int, frozenset] = {}
        self.nesting: dict[int, int] = {}   # member -> branch levels its code sits in (work.py)
        self.work = 0
        self._matmul: Node | None = None
        self._reductions: list[Node] = []
        self._sort: Node | None = None
        self._scans: list[Node] = []
        self._scatter: Node | None = None
        self._transform: Node | None = None
        self.root = root
        self.add(root)
        self.outputs: dict[int, Node] = {}
        self.inputs: list[Node] = []        # filled by finish()
        self.nodes: list[Node] = []         # members in topological order, filled by finish()
        self._order: dict[int, int] = {}    # member id -> its place in `nodes`
        self.kind = "elementwise"

    # -- what the group iterates over ----------------------------------------------------------
    @property
    def matmul(self) -> Node | None:
        return self._matmul

    @property
    def sort(self) -> Node | None:
        """The group's sort (fusion/sorting.py: a group holds one at most), or None."""
        return self._sort

    @property
    def reductions(self) -> list[Node]:
        """The group's reductions, each after those it reads (once finish() has ordered the
        members: a rewrite can give a producer a later id than its reader, as `x.sum()` beside
        `x.var(axis=1)` simplified to a sum of the row sums the variance's mean reads)."""
        if self._order:
            last = len(self._order)
            return sorted(self._reductions, key=lambda n: (self._order.get(n.id, last), n.id))
        return sorted(self._reductions, key=lambda n: n.id)

    @property
    def scan(self) -> Node | None:
        """The group's scan (a scan group holds one: fusion/scans.py), or None."""
        return self._scans[0] if self._scans else None

    @property
    def scatter(self) -> Node | None:
        """The group's scatter-add (a scatter group holds one: fusion/scatter.py), or None."""
        return self._scatter

    @property
    def transform(self) -> Node | None:
        """The group's fft node (a library step, alone in its group: ir/fourier.py), or None."""
        return self._transform

    @property
    def reduce_space(self) -> tuple[tuple, tuple] | None:
        """(shape reduced, axes) shared by the group's reductions, or None."""
        reductions = self.reductions
        if not reductions:
            return None
        first = reductions[0]
        return first.inputs[0].shape, first.attrs["axes"]

    def space_shapes(self) -> set:
        """The output shapes one iteration of this group can produce."""
        space = self.reduce_space
        if space is not None:
            shape, axes = space
            return {shape, outer_shape(shape, axes), keepdims_shape(shape, axes)}
        if self.matmul is not None:
            return {self.matmul.shape}
        if self.sort is not None:
            return {self.sort.shape, self.sort.shape[:-1], self.sort.shape[:-1] + (1,)}
        if self.scan is not None:
            return {self.scan.shape}
        if self.scatter is not None:
            return {self.scatter.inputs[2].shape}
        return {self.root.shape}

    def depends_on_reduction(self, node: Node) -> bool:
        """Whether `node` reads, through members of this group, one of its reductions."""
        stack, seen = [node], set()
        while stack:
            n = stack.pop()
            if n.id in seen or n.id not in self.members:
                continue
            seen.add(n.id)
            if n.kind == REDUCE:
                return True
            stack.extend(n.inputs)
        return False

    def __contains__(self, node: Node) -> bool:
        return node.id in self.members

    def add(self, node: Node, indices: frozenset = AT_OWN_INDEX, depth: int = 0) -> None:
        """Make `node` a member computed at `indices`, its code `depth` branch levels deep
        (replacing what it was computed at)."""
        if node.id not in self.members:
            self.members[node.id] = node
            # NOTE: an attention group holds its scores' product too; its softmax_matmul is
            # the group's product (fusion/attention.py), whichever joins first
            if node.kind == MATMUL and (self._matmul is None or node.op == "softmax_matmul"):
                self._matmul = node
            if node.kind == REDUCE:
                self._reductions.append(node)
            if node.kind == SORT and self._sort is None:
                self._sort = node
            if node.kind == SCAN:
                self._scans.append(node)
            if node.kind == SCATTER and self._scatter is None:
                self._scatter = node
            if node.kind == TRANSFORM and self._transform is None:
                self._transform = node
        self.work += len(indices) - len(self.indices.get(node.id, ()))
        self.indices[node.id] = indices
        self.nesting[node.id] = depth

    # -- once partitioning is done -------------------------------------------------------------
    def finish(self, order: dict, needed_outside: set) -> None:
        """Order members, find inputs/outputs, and settle the kind."""
        self.nodes = sorted(self.members.values(), key=lambda n: order[n.id])
        self._order = {node.id: k for k, node in enumerate(self.nodes)}
        seen, inputs = set(), []
        for node in self.nodes:
            for source in node.inputs:
                inline = source.op == "constant" and source.ndim == 0
                if source.id not in self.members and source.id not in seen and not inline:
                    seen.add(source.id)
                    inputs.append(source)
        self.inputs = inputs
        self.outputs = {n.id: n for n in self.nodes if n.id in needed_outside}
        self.kind = self._kind()

    def _kind(self) -> str:
        if self.matmul is not None:
            return "output"
        if self.reductions:
            return "input"
        if self.sort is not None:
            return "sort"
        if self.scan is not None:
            return "scan"
        if self.scatter is not None:
            return "scatter"
        if self.transform is not None:
            return "fft"
        for node in self.nodes:
            if node.kind == LAYOUT or node.op == "iota":
                return "loop"
            if any(source.shape != node.shape for source in node.inputs if source.ndim):
                return "loop"
        return "elementwise"

    def structure(self, strides: dict, sizes=None, lifted=frozenset()) -> tuple:
        """What the group computes, up to which nodes it computes it on: its kind; its inputs'
        kinds, shapes, dtypes and element strides (`strides`: node id -> strides, None when
        C-contiguous); each member's op, shape, dtype, attributes and operands (by position in
        the group, or an inline constant's value); its outputs by position. Groups with equal
        structures get the same kernel (a loop's sweeps on other buffers). `sizes`, where given,
        maps each shape (and each `shape` attribute) to what the structure records of it: a
        kernel taking its sizes as arguments keeps only which extents are 1. `lifted`: what the
        kernel takes as arguments (backends/sharing.py), recorded as None: ("start", member
        position, axis) a slice's start, ("value", member position, operand position) a scalar
        constant an elementwise member reads; EVERY: all of them, EVERY_START: every start."""
        template = getattr(self, "_template", None)
        if template is not None:
            seen = tuple(strides.get(n.id) for n in self.inputs)
            if seen == tuple(strides.get(n.id) for n in template.inputs):
                key = (seen, sizes, lifted)
                found = template._structures.get(key)
                if found is None:
                    found = template._structures[key] = template.structure(strides, sizes, lifted)
                return found
        size = sizes or (lambda shape: shape)
        inputs_in_order, nodes_in_order = self.canonical()
        place = {n.id: ("input", k) for k, n in enumerate(inputs_in_order)}
        place.update((n.id, ("node", j)) for j, n in enumerate(nodes_in_order))

        def operand(reader: Node, j: int, k: int, source: Node):
            found = place.get(source.id)
            if found is not None:
                return found
            if lifted and (("value", j, k) in lifted or
                           (lifted is EVERY and reader.kind == ELEMENTWISE)):
                return ("constant", source.dtype.str, None)
            return ("constant", source.dtype.str, source.attrs)

        def attrs(node: Node, j: int):
            changed = {}
            if sizes is not None and node.attrs.get("shape") is not None:
                changed["shape"] = size(tuple(node.attrs["shape"]))
            if lifted and node.op in SLICING:
                changed["start"] = tuple(
                    None if lifted is EVERY or lifted is EVERY_START or ("start", j, axis) in lifted
                    else start
                    for axis, start in enumerate(node.attrs["start"]))
            if not changed:
                return node.attrs
            return tuple(sorted({**node.attrs.as_dict(), **changed}.items()))

        inputs = tuple((n.op == "input" and n.ndim == 0, size(n.shape), n.dtype.str,
                        strides.get(n.id)) for n in inputs_in_order)
        members = tuple((n.op, size(n.shape), n.dtype.str, attrs(n, j),
                         tuple(operand(n, j, k, s) for k, s in enumerate(n.inputs)))
                        for j, n in enumerate(nodes_in_order))
        return (self.kind, inputs, members, tuple(place[i] for i in self.outputs),
                place[self.root.id])

    def canonical(self) -> tuple[list, list]:
        """(inputs, members) in an order set by what the group computes, not by node ids:
        depth first from the root and then the outputs, operands in order, each member after its
        operands. A loop's first sweep reads a slice made there and the next sweeps the same
        slice made a step before (an older node), so ordered by id their members differ
        (wave_2d: two strip kernels for one computation); in this order they are the same.
        Kept once made (a backend asks for it several times a group), until the group changes."""
        key = (self.root.id, tuple(self.outputs), len(self.nodes), len(self.members))
        if getattr(self, "_canonical_key", None) == key:
            return self._canonical
        self._canonical_key, self._canonical = key, self._canonical_order()
        return self._canonical

    def _canonical_order(self) -> tuple[list, list]:
        members, inputs, seen = [], [], set()
        for start in [self.root, *self.outputs.values(), *self.nodes]:
            stack = [(start, False)]
            while stack:
                node, expanded = stack.pop()
                if expanded:
                    members.append(node)
                    continue
                if node.id in seen:
                    continue
                seen.add(node.id)
                if node.id not in self.members:
                    if not (node.op == "constant" and node.ndim == 0):
                        inputs.append(node)
                    continue
                stack.append((node, True))
                stack.extend((source, False) for source in reversed(node.inputs))
        return inputs, members

    def correspondence(self, other: "Group") -> dict:
        """{node id of `other`: this group's node at the same place}, for a group of the same
        structure (places in the canonical order)."""
        mine, theirs = self.canonical(), other.canonical()
        mapping = {a.id: b for a, b in zip(theirs[0], mine[0])}
        mapping.update((a.id, b) for a, b in zip(theirs[1], mine[1]))
        return mapping

    # -- bytes -----------------------------------------------------------------------------------
    def bytes_fused(self) -> int:
        return sum(read_bytes(n) for n in self.inputs) + sum(n.nbytes for n in self.outputs.values())

    def bytes_unfused(self) -> int:
        return sum(node_bytes_unfused(n) for n in self.nodes if not
                   (n.op == "constant" and n.ndim == 0))

    @property
    def ops(self) -> list[str]:
        return [n.op for n in self.nodes if not (n.op == "constant" and n.ndim == 0)]

    def copied(self, gid: int, node_for) -> "Group":
        """This finished group computing on other nodes: `node_for(node)` for each of its nodes
        (another step of a loop, fusion/rolled.py); indices and nesting carried over."""
        copy = Group.__new__(Group)
        copy.id, copy.work, copy.kind = gid, self.work, self.kind
        # NOTE: the same structure as this group's where its inputs' strides are (structure())
        copy._template = self
        if not hasattr(self, "_structures"):
            self._structures = {}
        copy.members = {}
        copy.indices, copy.nesting = {}, {}
        for node_id, node in self.members.items():
            new = node_for(node)
            copy.members[new.id] = new
            copy.indices[new.id] = self.indices[node_id]
            copy.nesting[new.id] = self.nesting[node_id]
        single = lambda node: None if node is None else node_for(node)
        copy._matmul, copy._sort = single(self._matmul), single(self._sort)
        copy._scatter, copy._transform = single(self._scatter), single(self._transform)
        copy._reductions = [node_for(n) for n in self._reductions]
        copy._scans = [node_for(n) for n in self._scans]
        copy.root = node_for(self.root)
        copy.nodes = [node_for(n) for n in self.nodes]
        copy._order = {node.id: k for k, node in enumerate(copy.nodes)}
        copy.inputs = [node_for(n) for n in self.inputs]
        copy.outputs = {new.id: new for new in map(node_for, self.outputs.values())}
        inputs, members = self.canonical()
        copy._canonical = ([node_for(n) for n in inputs], [node_for(n) for n in members])
        copy._canonical_key = (copy.root.id, tuple(copy.outputs), len(copy.nodes),
                               len(copy.members))
        return copy

    def __repr__(self):
        return f"Group({self.id}, {self.kind}, {self.ops})"
