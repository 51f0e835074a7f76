"""Order between groups: whether merging groups would make a cycle, and the launch order.

Both walk only what they must, so partitioning stays linear in the program's size: the cycle check
never leaves the stretch of the program (in topological order) that the groups span.
"""
from __future__ import annotations

import heapq

from .group import Group


def path_outside(groups: list[Group], users: dict, order: dict, groups_of: dict | None = None,
                 reach=None) -> bool:
    """Whether a value leaves one of `groups` and reaches one of them again through nodes outside
    them: merging them would then make a cycle. With `groups_of` (node id -> the groups holding
    it), the other groups count as the kernels they will be: reaching any member of one reaches
    all its results (it runs once all its inputs are ready), so a path through a group that holds
    both an ancestor and a descendant of the merged ones is found too. `reach` (spans.Spans.reach)
    bounds the walk: nothing past reach(last member) leads back.

    The walk forward from the groups decides. Beside it, a step for each of its steps, a walk
    back from them over a superset of its edges may prove first that nothing leads back: a
    group early in the program merged with a later one (a loop's reductions, each step's sibling
    of the last) has a long way forward to the later one's position and few ancestors."""
    forward = _forward(groups, users, order, groups_of or {}, reach)
    backward = _backward(groups, groups_of or {})
    while True:
        try:
            next(forward)
        except StopIteration as done:
            return done.value
        if backward is None:
            continue
        try:
            next(backward)
        except StopIteration as done:
            if not done.value:
                return False
            backward = None          # it may have found a path the forward walk does not take


def _backward(groups: list[Group], holders_of: dict):
    """A generator (a step a value it visits) returning False where no value that a member of
    `groups` writes can lead back to one of them, True where one may. It walks back from the
    members over every edge the forward walk follows and more: a node's inputs (whether read
    from memory or not, before or after the bound), and the groups holding them (all of whose
    members then count, as the forward walk enters a group through any of them)."""
    nodes = {}
    for group in groups:
        nodes.update(group.members)
    inside = set(nodes)
    merged = {id(group) for group in groups}
    stack, seen, marked = [], set(), set()

    def push(node) -> None:
        if node.id not in inside and node.id not in seen:
            seen.add(node.id)
            stack.append(node)

    def mark(group) -> bool:
        """`group` may reach the merged ones: every member may too. Whether a merged member
        enters it directly (it recomputes a member's reader without the member)."""
        if id(group) in merged or id(group) in marked:
            return False
        marked.add(id(group))
        for member in group.members.values():
            push(member)
            if member.id in inside and any(
                    s.id in inside and s.id not in group.members and
                    _from_memory(s, member, holders_of) for s in member.inputs):
                return True
        return False

    def readers_of(node) -> bool:
        """`node` may reach the merged groups: its inputs may, and the groups holding them
        (`node` reads their results). Whether a merged member writes one of them."""
        for source in node.inputs:
            if source.id in inside:
                if _from_memory(source, node, holders_of):
                    return True
                continue
            push(source)
            for holder in holders_of.get(source.id, ()):
                if _from_memory(source, node, holders_of) and mark(holder):
                    return True
        return False

    for node in nodes.values():
        for source in node.inputs:
            if source.id not in inside:
                push(source)
            for holder in holders_of.get(source.id, ()):
                if _from_memory(source, node, holders_of) and mark(holder):
                    return True
        yield
    while stack:
        node = stack.pop()
        if readers_of(node):
            return True
        yield
    return False


def _forward(groups: list[Group], users: dict, order: dict, holders_of: dict, reach):
    """path_outside's walk forward from the groups, as a generator (a step a value it visits)
    returning whether it comes back."""
    inside = set()
    for group in groups:
        inside.update(group.members)
    merged = {id(group) for group in groups}
    last = max(order[node_id] for node_id in inside)
    bound = reach(last) if reach is not None else len(order)
    stack, seen, entered = [], set(), set()

    def enter(holders, lacking=None) -> bool:
        """Count `holders` (other than the merged ones) as reached: their results follow.
        Whether one of their results is read inside the merged groups."""
        for other in holders:
            if id(other) in merged or id(other) in entered or \
                    (lacking is not None and lacking in other.members):
                continue
            entered.add(id(other))
            for result in _results(other, users, holders_of):
                if result.id in inside:
                    return True
                if order[result.id] <= bound:
                    stack.append(result)
        return False

    for group in groups:
        for node in group.members.values():
            for user in users[node.id]:
                if not _from_memory(node, user, holders_of):
                    continue
                if user.id not in inside:
                    if order[user.id] <= bound:
                        stack.append(user)
                # NOTE: a reader inside may also be recomputed by another group, which then
                # reads `node` from memory unless it computes `node` too (found by the loop
                # fuzz: a mean's divide held by both merged groups and by the group that
                # computes the sum it divides).
                elif enter(holders_of.get(user.id, ()), lacking=node.id):
                    return True
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        yield
        if enter(holders_of.get(node.id, ())):
            return True
        # NOTE: a node after the last member in topological order reaches no member by itself
        # (only through a group it belongs to, entered above).
        if order[node.id] > last:
            continue
        for user in users[node.id]:
            if user.id in inside:
                return True
            # NOTE: a reader whose every group computes `node` too is reached through those
            # groups, entered above.
            if _from_memory(node, user, holders_of):
                stack.append(user)
    return False


def _from_memory(node, user, groups_of: dict) -> bool:
    """Whether some kernel computing `user` reads `node` from memory (one that does not compute
    `node` itself; a node in no group yet counts as read)."""
    holders = groups_of.get(user.id, ())
    return not holders or any(node.id not in holder.members for holder in holders)


def _results(group: Group, users: dict, groups_of: dict) -> list:
    """The nodes that read one of `group`'s results from memory: readers of its members, except
    those whose every group computes the value itself (inside `group`, or recomputed there). A
    reader inside `group` counts when another group recomputes it without the value."""
    found = []
    for member in group.members.values():
        for user in users[member.id]:
            if user.id in group.members and not groups_of.get(user.id):
                continue
            if _from_memory(member, user, groups_of):
                found.append(user)
    return found


def launch_order(groups: list[Group], order: dict) -> list[Group]:
    """Groups in a topological order, the ready group whose first node comes first launching
    first (ties: the order of `groups`): deterministic."""
    producer = {node_id: group for group in groups for node_id in group.outputs}
    waiting, dependents = {}, {group.id: [] for group in groups}
    key = {}
    for position, group in enumerate(groups):
        deps = {producer[s.id].id for n in group.members.values() for s in n.inputs
                if s.id not in group.members and s.id in producer}
        deps.discard(group.id)
        waiting[group.id] = len(deps)
        for dep in deps:
            dependents[dep].append(group)
        key[group.id] = (min(order[n] for n in group.members), position)
    ready = [(key[g.id], g.id, g) for g in groups if waiting[g.id] == 0]
    heapq.heapify(ready)
    ordered = []
    while ready:
        _, _, group = heapq.heappop(ready)
        ordered.append(group)
        for dependent in dependents[group.id]:
            waiting[dependent.id] -= 1
            if waiting[dependent.id] == 0:
                heapq.heappush(ready, (key[dependent.id], dependent.id, dependent))
    if len(ordered) != len(groups):
        raise AssertionError("fusion produced a cycle between groups")
    return ordered
