"""How far the groups stretch in topological order: the bound past which a cycle check need not walk.

Every group covers a stretch of the program, from its first member to its last (positions in the
graph's topological order). A value at a position past every stretch that starts at or before
the merged groups' last member can never lead back to them: it only reaches later nodes, and the
groups holding those start after that point too, so their results come later still. `reach`
gives that point; order.path_outside walks nothing beyond it, which keeps one check from walking
to the end of a long program (a loop whose every step feeds one long chain: boris_push's
positions).

Groups only grow (a join adds a member, a merge unions groups), so a stretch recorded once stays
covered by a live group: recording each new extent and never removing one is exact enough.
The prefix maximum is a Fenwick tree: recording and asking cost O(log n).
"""
from __future__ import annotations

# a chain of overlapping stretches longer than this is not followed: no bound (walk it all)
MAX_HOPS = 64


class Spans:
    def __init__(self, size: int):
        self.size = size
        self._tree = [-1] * (size + 1)

    def record(self, first: int, last: int) -> None:
        """A group covers positions `first`..`last`."""
        i = first + 1
        while i <= self.size:
            if self._tree[i] < last:
                self._tree[i] = last
            i += i & -i

    def _furthest(self, position: int) -> int:
        """The furthest end of a stretch starting at or before `position`."""
        best, i = -1, position + 1
        while i > 0:
            if self._tree[i] > best:
                best = self._tree[i]
            i -= i & -i
        return best

    def reach(self, position: int) -> int:
        """The first point at or after `position` that no stretch starting at or before it
        crosses (the end of the program where the stretches chain past MAX_HOPS)."""
        bound = position
        for _ in range(MAX_HOPS):
            further = self._furthest(min(bound, self.size - 1))
            if further <= bound:
                return bound
            bound = further
        return self.size
