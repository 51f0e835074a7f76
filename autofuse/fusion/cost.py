"""The cost model: a few named numbers, and the bytes a group of ops moves fused and unfused."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, LAYOUT, OPS
from ..ir.products import counted_extent


@dataclass(frozen=True)
class CostModel:
    """What fusion decisions weigh. Bytes are device-memory traffic; time is expressed in bytes."""
    # A kernel launch (~4 us) costs about the time of moving this many bytes at ~4 TB/s.
    launch_bytes: int = 16 * 2**20
    # The most ops one generated kernel may hold (register pressure and compile time).
    max_ops: int = 128
    # The most reductions one kernel may hold: each brings its own accumulators, combining code
    # and partial stores, so a kernel of 28 of NPBench azimint's masked sums (CUDA) was 4,800
    # lines that numba compiled in 80 s or failed on (a RecursionError in its control-flow walk).
    max_reductions: int = 16
    # The most op evaluations one kernel may do per element once members read through several
    # index maps are counted once per map (fusion/work.py): bounds the source and the compile.
    max_work: int = 256
    # The most elements of one row a row-persistent reduction (softmax, layernorm) keeps on chip.
    max_row: int = 32768
    # The most bytes a whole-column program (reductions over leading or middle axes whose
    # results the rest of the column reads: softmax or layernorm along axis 0) reads in one
    # kernel; 0: no bound. Such a kernel (CUDA's column tiles) walks its columns again for each
    # level of reductions, from DRAM once they outgrow the L2; past this the reduced values are
    # stored instead: each level a reduction kernel of its own (reading the columns coalesced,
    # the extent cut across blocks), the rest one pointwise pass.
    max_column_bytes: int = 0
    # ... and where it keeps fewer than `column_fill` columns (its tiles of a few columns a
    # block too few to fill the GPU), the longest column it walks (`column_walk` elements): a
    # block walks its columns alone, once a level.
    column_fill: int = 0
    column_walk: int = 0
    # Whether softmax's denominator sum(exp(x - max(x))), where a kernel would read x again for
    # it (columns; rows longer than max_row), is reduced beside the max in one pass (ir/online.py)
    online_sums: bool = False
    # The longest row a sort holds on chip with its producers and consumers in its kernel
    # (fusion/sorting.py); longer rows are sorted alone.
    max_sort_row: int = 4096
    # A pointwise producer is recomputed in at most this many consumer groups,
    max_recompute_groups: int = 4
    # and inside one kernel computed at most at this many indices (read through shifted slices,
    # by readers themselves computed at several): its cost must not grow with a chain's depth.
    max_recompute_indices: int = 4
    # The deepest a member's code may sit in the branches of slice assignments and concatenations
    # it is read through (each such reader renders its operands inside an if/else): a chain of
    # `u[::2] = ...` updates in one kernel nested past Python's 100 indentation levels.
    max_nesting: int = 24
    # Arithmetic is not free: an op of cost c on n elements weighs c * n * this many bytes.
    bytes_per_op: float = 0.25
    # Whether the backend writes a slice assignment's region in place, into its base's memory
    # (fusion/in_place.py): then a chain of slice assignments is cut before each link that
    # writes a small region, so that link's kernel computes the region alone.
    region_updates: bool = False
    # A costly pointwise value (an op of cost >= COSTLY_OP: a division, a root, a transcendental)
    # is not fused into a kernel that would compute it this many times per element or more (read
    # through a broadcast: `A @ (v / norm(v))`'s rows each dividing all of v); 0: no bound. On the
    # CPU arithmetic is what such a kernel waits on; on a GPU it hides under memory traffic.
    broadcast_recompute: int = 0
    # ... counting only ops of at least this cost (OPS[...].cost): the CPU every division and root
    # (COSTLY_OP); CUDA transcendentals only (8), whose recompute does not hide under memory
    # traffic when a product's operand is computed again for each of 64 columns (softmax
    # regression's gradient, x.T @ (softmax(x @ w) - y): exp 64 times an element).
    broadcast_recompute_cost: int = 4
    # ... counting the broadcast readers reached through same-size elementwise and layout ops too
    # (CUDA); the CPU counts direct readers only, since its column kernels would otherwise split
    # a z-score's sqrt(var) + 1 out of the pass that reads it (legality.outer_broadcast).
    broadcast_chains: bool = False
    # ... counting too (where a value is read across them) the kept axes that a reduction's
    # kernel runs its threads across, after a reduced axis: each column's thread of a column
    # kernel computes a per-row value again, where a row kernel's inner loop computes it once a
    # row. Such a value counts by what computing it from the reductions and inputs before it
    # costs (the pointwise ops it is made of), not by its own op alone: the logistic loss's
    # gradient read down x's columns in `x.T @ dz` recomputed an exp and four divisions 1,024
    # times an element (86 us of an Adam step's 120 on an H200; 18 us stored), RMSNorm's
    # 1/sqrt(mean) in its weight gradient's column sums 36 -> 28 us.
    broadcast_across: bool = False
    # Extents that vary in a shape class build (dynamic/builder.py builds it at stand-in sizes,
    # then at 2, 3, ...), as (size, its stand-in) pairs: a rule counting such an extent counts
    # the stand-in, so every build partitions as the stand-ins' does (a batchnorm's 1/sqrt(var)
    # read through the batch is stored at 1009 rows, recomputed per row at 2; its columns are
    # one kernel up to max_row rows, materialized past). Static builds: none.
    varying: tuple = ()
    # A loop's steps each kernel may span (fusion/rolled.py): where a loop's steps did not come
    # out alike (one kernel recomputing a value carried through every step: conjugate gradient's
    # x, read only after the loop), stages.roll partitions them again with each kernel held to
    # one step's values. 0: no bound. `steps`: node id -> its step (after the loop counts as the
    # last), for the graph being partitioned.
    max_steps: int = 0
    # ... taken where the few steps held so move at most this many times the bytes they move
    # unbounded (mandelbrot's escape counts, summed once after the loop unbounded, would be
    # stored every step: 1.4x the bytes, 1.4x the time on an H200)
    held_bytes: float = 1.05
    steps: dict | None = field(default=None, compare=False, hash=False, repr=False)

    def extent(self, size: int) -> int:
        """`size` as a fusion rule counts it: its stand-in where it varies."""
        return counted_extent(size, self.varying)


DEFAULT = CostModel()
COSTLY_OP = 4            # OPS[...].cost of a division or a square root, and above


def read_bytes(node: Node) -> int:
    """Bytes a consumer reads for `node` (a broadcast reads only its source)."""
    while node.op == "broadcast_to":
        node = node.inputs[0]
    return node.nbytes if node.ndim else 0


def node_bytes_unfused(node: Node) -> int:
    """Bytes one op moves as its own kernel: each input read once, the output written once."""
    if node.op in ("input", "constant") or node.op == "iota":
        return 0
    return sum(read_bytes(n) for n in node.inputs) + node.nbytes


def pointwise(node: Node) -> bool:
    """Whether each element of `node` is computed alone (so it may be recomputed anywhere)."""
    return OPS[node.op].kind in (ELEMENTWISE, LAYOUT) or node.op == "iota"


def recompute_reason(node: Node, evaluations: list[int], cost: CostModel) -> str | None:
    """None if computing `node` inside each consumer group beats materializing it once, else why
    not ("{p}" stands for its name). `evaluations[i]` is how many times group i would compute it
    per element: once per index it is read at, so it counts what those readers already recompute."""
    if not pointwise(node):
        return "{p} is not pointwise, so it is computed once"
    groups = len(evaluations)
    if groups > cost.max_recompute_groups:
        return (f"{{p}} is read by more than {cost.max_recompute_groups} groups (the most a value "
                f"is recomputed in); it is computed once and stored")
    inputs = sum(read_bytes(n) for n in node.inputs)
    arithmetic = int(OPS[node.op].cost * node.size * cost.bytes_per_op)
    recomputed = sum(evaluations) * (inputs + arithmetic)
    materialized = inputs + arithmetic + node.nbytes * (1 + groups) + cost.launch_bytes
    if recomputed <= materialized:
        return None
    return (f"{{p}} is read by {groups} groups; computing it once and storing it "
            f"({mib(materialized)} moved) costs less than recomputing it in each "
            f"({mib(recomputed)})")


def mib(count: int) -> str:
    """A byte count for people: 1.50 MiB, 12.0 KiB, 96 B."""
    if count >= 2**20:
        return f"{count / 2**20:.2f} MiB"
    if count >= 2**10:
        return f"{count / 2**10:.1f} KiB"
    return f"{count} B"
