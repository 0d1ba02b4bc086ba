"""Preferred leaders: the fewest leader changes that meet a leadership quota, by reordering
replica lists only. Pure.

The same search as for replicas (:func:`kadmin.balance.flow.solve`), on another matching: each
partition is matched to one of its replicas, its preferred leader. A hop ``x -> y`` hands one
partition's leadership from ``x`` to ``y``, a replica of the same partition; it costs 1 when it
takes leadership from the partition's leader of today, 0 when that leader was gone anyway (its
replica moved, so the partition changes leader whatever is chosen), -1 when it gives leadership
back. A chain of hops through brokers that are already balanced is what lets a leader move
between two brokers that share no partition.

The chosen leader moves to the front; the other replicas keep their order, so the leader of
today, when it stays, is next in line.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from kadmin.balance.flow import Ledger, solve
from kadmin.balance.targets import Quota
from kadmin.model import Replicas


def order_leaders(replicas: Sequence[Replicas], leaders_now: Sequence[int],
                  targets: Collection[int], quota: Quota) -> tuple[dict[int, Replicas], int]:
    """Replica lists reordered so that preferred leaders meet ``quota``, by partition index
    (only those that change), and the units of the quota left unmet.

    ``replicas`` are the lists after the replica moves, ``leaders_now`` each partition's
    preferred leader today (the cost of a change is counted against it).
    """
    problem = _LeaderProblem(replicas, leaders_now, targets, quota)
    solve(problem, cost=0)
    out: dict[int, Replicas] = {}
    for p, leader in problem.leader.items():
        members = replicas[p]
        if members[0] != leader:
            out[p] = (leader, *(b for b in members if b != leader))
    return out, problem.ledger.pending


class _LeaderProblem:
    """The state of one solve.

    The hops out of a broker are kept as exact counts per neighbour and cost (-1, 0, 1), with
    lists of witness partitions, and updated at every handover; a search reads them without
    looking at a single partition. They are built for a broker when it is first searched.
    """

    def __init__(self, replicas: Sequence[Replicas], leaders_now: Sequence[int],
                 targets: Collection[int], quota: Quota) -> None:
        self.replicas = replicas
        self.before = leaders_now
        self.targets = frozenset(targets)
        self.ledger = Ledger.of(quota)
        self.leader: dict[int, int] = {}
        """Partitions whose leader was handed on, and to whom."""
        self.led: dict[int, list[int]] = {}
        """Partitions each broker leads, in partition order; stale entries are skipped."""
        self.counts: dict[int, dict[int, list[int]]] = {}
        """Broker -> neighbour -> partitions it leads with a hop there of cost -1, 0, 1."""
        self.witnesses: dict[int, dict[tuple[int, int], list[int]]] = {}
        """Broker -> (neighbour, cost) -> the partitions (stale entries skipped)."""
        self.touched: set[int] = set()
        self.cursors: dict[tuple[int, int], Iterator[int]] = {}
        """Per giver and hop cost, how far its partitions have been tried: a partition none of
        whose replicas could take stays so, since takers only fill up."""
        self.count: dict[int, int] = {}
        """Partitions each broker leads now."""
        led, count = self.led, self.count
        for p, members in enumerate(replicas):
            led.setdefault(members[0], []).append(p)
            count[members[0]] = count.get(members[0], 0) + 1

    def lead(self, p: int) -> int:
        return self.leader.get(p, self.replicas[p][0])

    def hand(self, p: int, y: int) -> None:
        x = self.lead(p)
        self.touched.add(x)
        self.touched.add(y)
        if x in self.counts:
            self._count(x, p, -1)
        self.count[x] -= 1
        self.count[y] = self.count.get(y, 0) + 1
        self.leader[p] = y
        self.led.setdefault(y, []).append(p)
        if y in self.counts:
            self._count(y, p, 1)

    def _count(self, x: int, p: int, step: int) -> None:
        """Add (``step`` 1) or remove (-1) the hops ``p`` gives its leader ``x``."""
        counts, witnesses, was = self.counts[x], self.witnesses[x], self.before[p]
        gone = x != was
        for y in self.replicas[p]:
            if y != x and y in self.targets:
                cost = (y != was) - gone
                per_cost = counts.get(y)
                if per_cost is None:
                    per_cost = counts[y] = [0, 0, 0]
                per_cost[cost + 1] += step
                if step > 0:
                    witnesses.setdefault((y, cost), []).append(p)

    def cheapest(self) -> int | None:
        """Unknown: a handover can cost nothing, or give leadership back."""
        return None

    def direct(self, cost: int) -> int:
        """Single handovers of exactly ``cost`` from givers, the most to give first, each to
        the replica that must take with the most room."""
        if cost > 1:
            return 0
        ledger = self.ledger
        takers = set(ledger.takers())
        moved = 0
        for x in sorted(ledger.givers(), key=lambda b: (-ledger.can_give(b), b)):
            while takers and ledger.can_give(x):
                found = self._direct_from(x, cost, takers)
                if found is None:
                    break
                p, y = found
                self.hand(p, y)
                ledger.gave(x)
                ledger.took(y)
                moved += 1
                if not ledger.can_take(y):
                    takers.discard(y)
        return moved

    def _direct_from(self, x: int, cost: int, takers: set[int]) -> tuple[int, int] | None:
        cursor = self.cursors.get((x, cost))
        if cursor is None:
            cursor = self.cursors[(x, cost)] = iter(self.led.setdefault(x, []))
        leader, replicas, before, can_take = self.leader, self.replicas, self.before, \
            self.ledger.can_take
        for p in cursor:
            members = replicas[p]
            if leader.get(p, members[0]) != x:
                continue
            was = before[p]
            gone = x != was
            best: tuple[int, int] | None = None
            for y in members:
                if y in takers and (y != was) - gone == cost:
                    room = can_take(y)  # it may have filled up since the set was made
                    if room and (best is None or (-room, y) < best):
                        best = (-room, y)
            if best is not None:
                return p, best[1]
        return None

    def hops(self, x: int) -> dict[int, tuple[int, list[int]]]:
        if x not in self.counts:
            self.counts[x], self.witnesses[x] = {}, {}
            leader, replicas = self.leader, self.replicas
            for p in dict.fromkeys(self.led.get(x, ())):
                if leader.get(p, replicas[p][0]) == x:
                    self._count(x, p, 1)
        witnesses = self.witnesses[x]
        best: dict[int, tuple[int, list[int]]] = {}
        for y, per_cost in self.counts[x].items():
            for cost in (-1, 0, 1):
                if per_cost[cost + 1] > 0:
                    best[y] = (cost, witnesses[(y, cost)])
                    break
        return best

    def apply(self, path: Sequence[tuple[int, int, list[int]]]) -> int | None:
        overlay: dict[int, int] = {}
        chosen: list[tuple[int, int]] = []
        for k, (x, y, witnesses) in enumerate(path):
            while witnesses and self.lead(witnesses[-1]) != x:
                witnesses.pop()  # led by another broker since: never a witness again
            for p in reversed(witnesses):
                if overlay.get(p, self.lead(p)) == x:
                    overlay[p] = y
                    chosen.append((p, y))
                    break
            else:
                return k
        for p, y in chosen:
            self.hand(p, y)
        return None
