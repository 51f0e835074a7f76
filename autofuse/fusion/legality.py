"""The legality table: may producer `p` join consumer group `g`? None if so, else the reason why not.

Reasons are user-facing sentences; "{p}" and "{c}" stand for the producer's and the consumer's
value names, filled in when the fused program is printed.
"""
from __future__ import annotations

import math

from ..ir.graph import Node
from ..ir.ops import ELEMENTWISE, LAYOUT, MATMUL, OPS, REDUCE, SCAN, SCATTER, SORT, TRANSFORM
from .attention import attention_group, attention_reason
from .cost import COSTLY_OP, CostModel
from .columns import column_reason
from .group import Group, axes_text, keepdims_shape, outer_shape
from .in_place import small_region
from .scans import scan_reason, scans_merge_reason
from .scatter import scatter_reason, scatters_merge_reason
from .sorting import into_sort_group, sort_into
from .work import index_map

OPERAND_LAYOUT = ("transpose", "broadcast_to", "reshape", "slice")
RECOMPUTE_VISITS = 64       # recompute_cost's walk: a chain of layout ops costs nothing to count


def readers_in(p: Node, g: Group, users: dict) -> list[Node]:
    """Members of `g` that read `p` directly (walking whichever is shorter: p's readers or g)."""
    readers = users.get(p.id, ())
    if len(readers) <= len(g.members):
        return [user for user in readers if user.id in g.members]
    return [m for m in g.members.values() if any(source.id == p.id for source in m.inputs)]


def descendants(p: Node, g: Group, users: dict) -> list[Node]:
    """Members of `g` that read `p`, directly or through other members."""
    found, stack, seen = [], [p], {p.id}
    while stack:
        node = stack.pop()
        for user in readers_in(node, g, users):
            if user.id not in seen:
                seen.add(user.id)
                found.append(user)
                stack.append(user)
    return found


def read_maps(p: Node, g: Group, users: dict) -> set:
    """The distinct index maps through which members of `g` read `p` (elementwise readers read
    it at their own index, as do broadcasts, explicit like implicit; layout readers through their
    attributes)."""
    maps = set()
    for user in readers_in(p, g, users):
        if user.kind == SCATTER:
            for position, source in enumerate(user.inputs):
                if source.id == p.id:
                    step = index_map(user, position)
                    maps.add(("identity",) if step is None else step)
            continue
        if user.kind in (ELEMENTWISE, REDUCE, MATMUL, SCAN) or user.op == "broadcast_to" \
                or (user.op == "setslice"
                                                                and user.inputs[0].id == p.id) \
                or (user.op == "gather" and user.inputs[0].id != p.id):
            maps.add(("identity",))
        else:
            maps.add((user.op, user.attrs))
    return maps


def outer_broadcast(p: Node, g: Group, users: dict, chains: bool = False,
                    counted=lambda size: size, across: bool = False) -> int:
    """How many times `g` would compute each element of `p`: the extents of the axes its
    readers broadcast it along that come before an axis it varies along (`A @ v` reads v again
    for every row of A). A value broadcast only along later axes (a row's mean or 1/std) is the
    same through a row's inner loop, which computes it once. With `chains`, readers of the same
    size (a cast, a division, a transpose on the way to the broadcast) pass the count on:
    exp(l - m) / s - y read through a transpose and broadcast computes the exp as often as the
    broadcast reads; without, only reshapes do. `counted` counts an axis (CostModel.extent).
    With `across`, a later axis counts too where `g` reduces an earlier axis and keeps it (a
    column reduction's threads run across it, each computing the row's value again); a group
    that reduces no such axis counts 1."""
    space = g.reduce_space if across else None
    crossed = () if space is None else tuple(
        d for d in range(len(space[0])) if d not in space[1] and d > min(space[1]))
    if across and not crossed:
        return 1
    worst, stack, seen = 1, [p], {p.id}
    while stack:
        node = stack.pop()
        for reader in readers_in(node, g, users):
            if reader.size == node.size and (reader.op == "reshape" or chains and (
                    reader.op == "transpose" or reader.kind == ELEMENTWISE)):
                if reader.id not in seen:
                    seen.add(reader.id)
                    stack.append(reader)
                continue
            if not (reader.kind == ELEMENTWISE or reader.op == "broadcast_to") or \
                    reader.size <= node.size:
                continue
            shape = (1,) * (reader.ndim - node.ndim) + tuple(node.shape)
            varying = [d for d, extent in enumerate(shape) if extent > 1]
            if varying:
                crossing = crossed if crossed and reader.shape == space[0] else ()
                worst = max(worst, math.prod(
                    counted(reader.shape[d]) for d, extent in enumerate(shape)
                    if extent == 1 and (d < varying[-1] or d in crossing)))
    return worst


def recompute_cost(p: Node, limit: int) -> int:
    """What computing `p` costs from the reductions, inputs and other non-pointwise values before
    it: the OPS costs of `p` and the elementwise ops it is made of, through layout ops (counted up
    to `limit`, over at most RECOMPUTE_VISITS nodes: bounded work on every edge)."""
    total, stack, seen = 0, [p], {p.id}
    while stack and total < limit and len(seen) <= RECOMPUTE_VISITS:
        node = stack.pop()
        total += OPS[node.op].cost if node.kind == ELEMENTWISE else 0
        for source in node.inputs:
            if source.id not in seen and source.kind in (ELEMENTWISE, LAYOUT):
                seen.add(source.id)
                stack.append(source)
    return total


def operand_chain(g: Group) -> set:
    """Ids of members that feed the group's matmul operands (layout ops read by index map)."""
    matmul = g.matmul
    chain, stack = set(), [n for n in matmul.inputs if n.id in g.members]
    while stack:
        node = stack.pop()
        if node.id not in chain:
            chain.add(node.id)
            stack.extend(n for n in node.inputs if n.id in g.members)
    return chain


def _stores(g: Group, shape: tuple) -> bool:
    """Whether `g`'s iterations write a result of `shape`: one of its own shapes, or a 0-d value
    written by every iteration, of which an empty iteration space has none."""
    spaces = g.space_shapes()
    if shape in spaces:
        return True
    return shape == () and all(math.prod(space) > 0 for space in spaces)


# -- the table: every way a value comes to be computed inside a kernel goes through these ---------
def budget_reason(ops: int, work: int, widest: int, cost: CostModel, depth: int = 0,
                  reductions: int = 0) -> str | None:
    """Whether a kernel of `ops` members doing `work` evaluations per element, one member at most
    at `widest` indices and `depth` branch levels deep, holding `reductions` reductions, is small
    enough."""
    if reductions > cost.max_reductions:
        return (f"the kernel would hold {reductions} reductions, more than one kernel may hold "
                f"({cost.max_reductions})")
    if widest > cost.max_recompute_indices:
        return (f"the kernel would compute a value at {widest} different indices per element, "
                f"more than a value is recomputed at ({cost.max_recompute_indices}), counting the "
                f"indices its readers are themselves computed at")
    if depth > cost.max_nesting:
        return (f"the kernel would nest {depth} slice assignments or concatenations, each "
                f"reading the next inside its branch, more than one kernel may ({cost.max_nesting})")
    if ops > cost.max_ops:
        return (f"the kernel would hold {ops} ops, more than one kernel may hold "
                f"({cost.max_ops})")
    if work > cost.max_work:
        return (f"the kernel would compute {work} ops per element, more than the budget "
                f"({cost.max_work}): values read through several index maps are computed once per "
                f"map, with everything they recompute")
    return None


def steps_reason(nodes, cost: CostModel) -> str | None:
    """Whether one kernel may hold `nodes`, given the loop steps a kernel may span
    (CostModel.max_steps; values from before the loop count in every step)."""
    if not cost.max_steps:
        return None
    found = {s for s in (cost.steps.get(n.id, -1) for n in nodes) if s >= 0}
    if not found or max(found) - min(found) < cost.max_steps:
        return None
    return (f"the kernel would hold values of several steps of the loop; its steps were not "
            f"alike when kernels spanned several, so each kernel holds "
            f"{'one step' if cost.max_steps == 1 else f'{cost.max_steps} steps'}")


def can_fuse(p: Node, g: Group, users: dict, is_output: bool, cost: CostModel,
             indices: frozenset, depth: int = 0) -> str | None:
    """May `p` join `g`, computed there at `indices` (work.evaluations), `depth` branch levels
    deep (work.nesting)? None if so, else why not."""
    reason = steps_reason((p, *g.members.values()), cost)
    if reason is not None:
        return reason
    reason = edge_reason(p, g, users, is_output, cost)
    if reason is None:
        reductions = len(g.reductions) + (p.kind == REDUCE)
        reason = budget_reason(len(g.members) + 1, g.work + len(indices), len(indices), cost,
                               depth, reductions)
    return reason


def merge_reason(groups: list[Group], combine, count, users: dict, outputs: set,
                 cost: CostModel, cycle=None) -> tuple[str | None, Group | None]:
    """May `groups` become one kernel? (None, the kernel) if so, else (why not, None). `combine()`
    makes the kernel's members; `count(kernel)` counts their indices again (the costly part, so
    it runs only once every edge passes, and after `cycle()`, where given: why merging would
    make a cycle, or None). Every value one member reads from another must pass the same table
    as a producer joining a consumer, and the kernel must fit the same budgets."""
    reason = _spaces_reason(groups)
    if reason is not None:
        return reason, None
    ops = len(set().union(*(g.members for g in groups)))
    reductions = len(set().union(*({n.id for n in g.reductions} for g in groups)))
    if ops > cost.max_ops or reductions > cost.max_reductions:
        return budget_reason(ops, 0, 0, cost, reductions=reductions), None
    reason = steps_reason([n for g in groups for n in g.members.values()], cost)
    if reason is not None:
        return reason, None
    merged = combine()
    for p in merged.members.values():
        if not readers_in(p, merged, users):
            continue
        reason = edge_reason(p, merged, users, p.id in outputs, cost)
        if reason is not None:
            return reason.replace("{p}", "{n%d}" % p.id), None
    reason = cycle() if cycle is not None else None
    if reason is not None:
        return reason, None
    count(merged)
    widest = max(len(indices) for indices in merged.indices.values())
    reason = budget_reason(ops, merged.work, widest, cost, max(merged.nesting.values()))
    return (reason, None) if reason is not None else (None, merged)


def _spaces_reason(groups: list[Group]) -> str | None:
    """Whether the groups iterate over one space (a reduction's groups over its rows)."""
    if any(g.matmul is not None for g in groups):
        return "a matmul kernel is not merged with other kernels"
    if any(g.sort is not None for g in groups):
        return "a sort kernel is not merged with other kernels"
    if any(g.transform is not None for g in groups):
        return "a library FFT step is not merged with kernels"
    reason = scans_merge_reason(groups) or scatters_merge_reason(groups)
    if reason is not None:
        return reason
    spaces = {g.reduce_space for g in groups if g.reduce_space is not None}
    if len(spaces) > 1:
        return "they reduce over different axes or shapes"
    if spaces:
        allowed = next(g for g in groups if g.reduce_space is not None).space_shapes()
        if any(g.reduce_space is None and g.root.shape not in allowed for g in groups):
            return "some iterate over a shape that is not the reduction's"
    elif len({g.root.shape for g in groups}) > 1:
        return "they iterate over different shapes"
    return None


def edge_reason(p: Node, g: Group, users: dict, is_output: bool, cost: CostModel) -> str | None:
    """The rules for `p` computed inside `g`, where members of `g` read it."""
    if is_output and not _stores(g, p.shape):
        return (f"{{p}} is also a result of the function, and its shape {p.shape} is outside the "
                f"consumer's iteration space")
    if cost.region_updates and p.op == "setslice" and any(
            user.op == "setslice" and user.inputs[0].id == p.id and small_region(user)
            for user in readers_in(p, g, users)):
        return ("{p} is the array a slice assignment of this kernel writes a small region of: "
                "written in place, into {p}'s memory, the kernel computes that region alone")
    bound = max(COSTLY_OP, cost.broadcast_recompute_cost)
    if cost.broadcast_recompute and p.kind == ELEMENTWISE and p.ndim and p.size:
        times = outer_broadcast(p, g, users, cost.broadcast_chains, cost.extent) \
            if OPS[p.op].cost >= bound else 1
        if times < cost.broadcast_recompute and cost.broadcast_across and \
                recompute_cost(p, bound) >= bound:
            times = outer_broadcast(p, g, users, cost.broadcast_chains, cost.extent, across=True)
        if times >= cost.broadcast_recompute:
            return (f"{{p}} would be computed {times} times an element in this kernel (read "
                    f"through a broadcast); computing it once and storing it costs less")
    if p.kind in (ELEMENTWISE, LAYOUT):
        maps = read_maps(p, g, users)
        if len(maps) > 1:
            return (f"{{p}} is read through {len(maps)} different index maps (shifted slices, a "
                    f"transpose); computing it once and storing it beats recomputing it for each, "
                    f"which compounds across chained stencils")
    if p.kind == TRANSFORM:
        return ("{p} is an FFT run by the array library as a step between kernels (its plan says "
                "why): its result is stored and read back")
    if g.transform is not None:
        return ("{c} is an FFT run by the array library as a step between kernels: its input is "
                "stored for it")
    if attention_group(g):
        return attention_reason(p, g, users, is_output)
    if p.kind == SCATTER or g.scatter is not None:
        return scatter_reason(p, g, readers_in(p, g, users), is_output)
    if (p.kind == SORT or g.sort is not None) and (p.kind == SCAN or g.scan is not None):
        return "a sort and a scan are separate kernels"
    if p.kind == SORT:
        return sort_into(p, g, users, cost, descendants)
    if g.sort is not None:
        return into_sort_group(p, g, cost)
    if p.kind == SCAN or g.scan is not None:
        reason = scan_reason(p, g, users)
        if reason is not None:
            return reason
    if p.kind == MATMUL:
        return _matmul_into(p, g, users)
    if g.matmul is not None:
        return _into_output_group(p, g, users)
    if p.kind == REDUCE:
        return _reduction_into(p, g, users, cost)
    return None


def _matmul_into(p: Node, g: Group, users: dict) -> str | None:
    if g.matmul is not None:
        return "two matmuls cannot share one kernel"
    if g.reductions:
        return "a matmul result feeding a reduction is materialized (the reduction needs whole rows)"
    if g.root.shape != p.shape:
        return (f"the consumer iterates over {g.root.shape}, not over the matmul's output "
                f"{p.shape}")
    for node in descendants(p, g, users):
        if node.kind != ELEMENTWISE or node.shape != p.shape:
            return (f"the matmul result reaches {node.op} with shape {node.shape}; an epilogue must "
                    f"use each product element where it is computed")
    return None


def _into_output_group(p: Node, g: Group, users: dict) -> str | None:
    chain = operand_chain(g) | {g.matmul.id}
    feeds_operand = any(u.id in chain for u in users.get(p.id, ()) if u.id in g.members)
    if feeds_operand:
        if p.op in OPERAND_LAYOUT:
            return None
        return ("elementwise work on a matmul operand would be redone for every output tile; "
                "it is materialized")
    if p.kind == REDUCE:
        return "a reduction feeding a matmul epilogue is materialized"
    return None


def _reduction_into(p: Node, g: Group, users: dict, cost: CostModel) -> str | None:
    shape, axes = p.inputs[0].shape, p.attrs["axes"]
    space = g.reduce_space
    if space is not None and space != (shape, axes):
        other_shape, other_axes = space
        return (f"a reduction over {axes_text(axes)} of {shape} feeds a reduction over "
                f"{axes_text(other_axes)} of {other_shape}")
    allowed = {shape, outer_shape(shape, axes), keepdims_shape(shape, axes)}
    if space is None and g.root.shape not in allowed:
        return (f"the consumer iterates over {g.root.shape}, which is neither the reduced shape "
                f"{shape} nor its result {outer_shape(shape, axes)}")
    row_phase = False
    readers = descendants(p, g, users)
    for node in readers:
        if node.kind == REDUCE:
            row_phase = True
            continue
        if node.shape not in allowed:
            return (f"the reduced value reaches {node.op} with shape {node.shape}, outside the rows "
                    f"being reduced")
        if _misaligned(node, {p.id} | {n.id for n in readers}, shape, axes):
            return (f"the reduced value (shape {outer_shape(shape, axes)}) is broadcast against "
                    f"{node.shape} along other axes than its rows, so it would need other rows")
        row_local = node.kind == ELEMENTWISE or node.op in ("reshape", "broadcast_to")
        if not row_local:
            return f"the reduced value reaches {node.op}, which would need other rows"
        if node.shape == shape and shape != outer_shape(shape, axes):
            row_phase = True
    inner = 1
    for a in axes:
        inner *= cost.extent(shape[a])
    if row_phase and inner > cost.max_row:
        return (f"its rows ({inner} elements) do not fit on chip (at most {cost.max_row}), so the "
                f"reduced value is materialized before it is used across the row")
    trailing = tuple(axes) == tuple(range(len(shape) - len(axes), len(shape)))
    if row_phase and not trailing:
        return column_reason(p, cost)
    return None


def _misaligned(node: Node, derived: set, shape: tuple, axes: tuple) -> bool:
    """Whether `node` broadcasts a value of the reduction's result shape against the reduced
    shape, which NumPy aligns from the right: onto the rows only where the reduced axes lead
    (`x - x.sum(0)`), not otherwise (`x - x.max(1)` with x square reads the max of another row)."""
    outer = outer_shape(shape, axes)
    broadcasts = node.kind == ELEMENTWISE or node.op == "broadcast_to"
    if not broadcasts or node.shape == outer or tuple(axes) == tuple(range(len(axes))):
        return False
    return any(s.id in derived and s.shape == outer for s in node.inputs)


__all__ = ["can_fuse", "merge_reason", "steps_reason", "edge_reason", "budget_reason",
           "descendants", "readers_in", "axes_text", "LAYOUT"]
