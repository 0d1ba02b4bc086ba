"""Minimum-cost balancing by successive shortest augmenting paths (Busacker-Gowen).

Both balancing problems of kadmin are min-cost *b*-matchings: partitions on one side, brokers on
the other, each partition matched to its replicas (or to its one preferred leader), each broker to
a balanced number of partitions (:class:`~kadmin.balance.targets.Quota`), each edge costing 1 when
it is new (a replica copied, a leader changed). The residual network is searched at broker level:
a *hop* ``x -> y`` moves one partition's unit from broker ``x`` to broker ``y`` and costs
``new(y) - new(x)`` (1 for a fresh move, 0 to re-route an earlier one, -1 to undo one). An
augmenting path starts at a broker that must give, ends at one that must take, and moves one unit
of the quota; successive shortest paths keep the solution of minimum cost after every unit
(Ahuja, Magnanti & Orlin, *Network Flows*, ch. 9), so the plan that meets the whole quota is
optimal.

Most paths are a single hop of the smallest cost possible at that stage: each problem finds those
itself, fast, with its own preferences (``direct``); they are shortest paths because shortest path
costs never decrease. Only when no direct hop is left does the search run: SPFA (Bellman-Ford
with a queue; costs can be negative) labels every broker with its distance, and a blocking flow
(Dinic's current-arc depth-first search) then moves every unit it can along edges whose reduced
cost is 0 under those labels, all of them shortest paths (the primal-dual method). That is the
tail where, say, the last replicas of a drained broker find every broker with room already in
their partition and a chain ``x -> c -> u`` through a full broker ``c`` is needed, or leadership
must travel along a ring of brokers that share partitions only with their neighbours.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kadmin.balance.targets import Quota


@dataclass
class Ledger:
    """What is left of a quota while units are moved. Mutable, and private to one solve.

    A pool is a node of the flow network: which of its brokers gives (or takes) the optional
    unit can change later, when a path runs through it. ``gave_spare``/``took_spare`` remember
    who holds each pool's units so the search can hand them on (:meth:`pool_hops`).
    """

    give: dict[int, int]
    take: dict[int, int]
    spare_give: dict[int, int]
    spare_take: dict[int, int]
    pool_give: list[int]
    pool_take: list[int]
    units: int
    gave_spare: dict[int, int] = field(default_factory=dict)
    took_spare: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, quota: Quota) -> Ledger:
        return cls(dict(quota.give), dict(quota.take), dict(quota.spare_give),
                   dict(quota.spare_take), list(quota.pool_give), list(quota.pool_take),
                   quota.units)

    def can_give(self, b: int) -> int:
        spare = self.spare_give.get(b)
        return self.give.get(b, 0) + (1 if spare is not None and self.pool_give[spare] else 0)

    def can_take(self, b: int) -> int:
        spare = self.spare_take.get(b)
        return self.take.get(b, 0) + (1 if spare is not None and self.pool_take[spare] else 0)

    def gave(self, b: int) -> None:
        if not self.can_give(b):
            raise RuntimeError(f"balancing: broker {b} has nothing left to give")
        if self.give.get(b, 0):
            self.give[b] -= 1
        else:
            pool = self.gave_spare[b] = self.spare_give.pop(b)
            self.pool_give[pool] -= 1

    def took(self, b: int) -> None:
        if not self.can_take(b):
            raise RuntimeError(f"balancing: broker {b} has no room left to take")
        if self.take.get(b, 0):
            self.take[b] -= 1
        else:
            pool = self.took_spare[b] = self.spare_take.pop(b)
            self.pool_take[pool] -= 1
        self.units -= 1

    def givers(self) -> list[int]:
        return sorted(b for b in set(self.give) | set(self.spare_give) if self.can_give(b))

    def takers(self) -> list[int]:
        return sorted(b for b in set(self.take) | set(self.spare_take) if self.can_take(b))

    def pool_hops(self, x: int) -> dict[int, int]:
        """Hops of cost 0 through a pool, ``y -> pool``: ``x`` takes the optional unit another
        broker ``y`` of the pool took (``y`` must then pass a unit on), or ``x`` gets back the
        optional unit it gave while ``y`` gives the pool's unit instead."""
        out: dict[int, int] = {}
        pool = self.spare_take.get(x)
        if pool is not None:
            out.update((y, pool) for y, k in self.took_spare.items() if k == pool)
        pool = self.gave_spare.get(x)
        if pool is not None:
            out.update((y, pool) for y, k in self.spare_give.items() if k == pool)
        return out

    def hand_on(self, x: int, y: int) -> None:
        """Take the pool hop ``x -> y`` of :meth:`pool_hops`."""
        if x in self.spare_take and self.took_spare.get(y) == self.spare_take[x]:
            self.took_spare[x] = self.spare_take.pop(x)
            self.spare_take[y] = self.took_spare.pop(y)
        else:
            self.spare_give[x] = self.gave_spare.pop(x)
            self.gave_spare[y] = self.spare_give.pop(y)


Step = tuple[int, int, list[int]]
"""``(x, y, witnesses)``: one partition among ``witnesses`` hands its unit from ``x`` to ``y``."""


class Problem(Protocol):
    """One balancing problem as the search sees it."""

    ledger: Ledger
    touched: set[int]
    """Brokers whose hops may have changed since the search last asked: every broker of a
    partition that changed. The search empties it."""

    def direct(self, cost: int) -> int:
        """Move as many units as possible by single hops of exactly ``cost`` from a broker that
        must give to one that must take; returns how many."""
        ...

    def hops(self, x: int) -> Mapping[int, tuple[int, list[int]]]:
        """The cheapest hops out of ``x`` in the current state: ``y -> (cost, partitions)``, a
        few witness partitions that realise the cost."""
        ...

    def apply(self, path: Sequence[Step]) -> int | None:
        """Move the partitions of ``path`` (hops with their witnesses; the ledger is the
        caller's), choosing witnesses that are still valid when the hops are taken in order.
        Returns None when done, or the index of the first hop no witness can take (then
        nothing changed)."""
        ...


Hops = Mapping[int, tuple[int, list[int]]]
"""A broker's hops: ``y -> (cost, witnesses)``."""


def solve(problem: Problem, cost: int) -> None:
    """Move every unit of the problem's quota, each along a shortest path. ``cost`` is the
    cheapest a path can be at the start (1 for replicas: nothing has moved yet). Stops early only
    when no path is left: the quota cannot be met (racks forbid it, or partitions as wide as the
    broker list leave nowhere to go)."""
    hops: dict[int, Hops] = {}
    while problem.ledger.units:
        if problem.direct(cost):
            continue
        for b in problem.touched:
            hops.pop(b, None)
        problem.touched.clear()
        labels = _distances(problem, hops)
        if labels is None:
            return
        dist, shortest = labels
        if shortest > cost:  # single hops of the new cost are shortest paths too: cheaper first
            cost = shortest
            if cost <= 1 and problem.direct(cost):
                continue
        if not _blocking_flow(problem, hops, dist, shortest):
            return  # the labels promise a path that no witness can take: nothing more to find


def _hops(problem: Problem, hops: dict[int, Hops], x: int) -> Hops:
    """``x``'s partition hops (cached across searches) and its pool hops (read fresh)."""
    own = hops.get(x)
    if own is None:
        own = hops[x] = problem.hops(x)
    through_pool = problem.ledger.pool_hops(x)
    if not through_pool:
        return own
    return {**own, **{y: (0, []) for y in through_pool if own.get(y, (1,))[0] > 0}}


def _distances(problem: Problem, hops: dict[int, Hops]) -> tuple[dict[int, int], int] | None:
    """SPFA from every broker that can give: each reached broker's distance, and the least
    distance of a broker that can take (None when none can be reached)."""
    ledger = problem.ledger
    dist: dict[int, int] = {}
    queue: deque[int] = deque(ledger.givers())
    for b in queue:
        dist[b] = 0
    queued = set(queue)
    enqueued: dict[int, int] = {}
    while queue:
        x = queue.popleft()
        queued.discard(x)
        dx = dist[x]
        for y, (cost, _) in _hops(problem, hops, x).items():
            d = dx + cost
            if d < dist.get(y, d + 1):
                dist[y] = d
                if y not in queued:
                    enqueued[y] = enqueued.get(y, 0) + 1
                    if enqueued[y] > len(dist) + 1:  # Bellman-Ford's bound on relabelling
                        raise RuntimeError("balancing search met a negative cycle")
                    queued.add(y)
                    queue.append(y)
    reached = [dist[b] for b in ledger.takers() if b in dist]
    return (dist, min(reached)) if reached else None


def _blocking_flow(problem: Problem, hops: dict[int, Hops], dist: Mapping[int, int],
                   shortest: int) -> int:
    """Move units along admissible edges (``dist[y] == dist[x] + cost``) from givers at
    distance 0 to takers at distance ``shortest`` until none is left; returns how many.

    Dinic's algorithm on the admissible network: breadth-first levels make each phase's graph
    acyclic (admissible edges of cost 0 could otherwise form cycles to wander round), a
    depth-first search with a current arc per broker sends unit after unit through it, and
    phases repeat while a taker can be reached. Givers in broker id order and arcs in the order
    the problem listed them: deterministic.
    """
    ledger = problem.ledger
    admissible: dict[int, list[tuple[int, list[int]]]] = {}

    def arcs(x: int) -> list[tuple[int, list[int]]]:
        found = admissible.get(x)
        if found is None:
            dx = dist[x]
            found = admissible[x] = [(y, w) for y, (c, w) in _hops(problem, hops, x).items()
                                     if dist.get(y) == dx + c]
        return found

    moved = 0
    while True:
        starts = [b for b in ledger.givers() if dist.get(b) == 0]
        phase = _Phase(starts, arcs, lambda b: dist[b] == shortest and ledger.can_take(b) > 0)
        if phase.depth is None:
            return moved
        progress = False
        for giver in starts:
            while ledger.can_give(giver):
                path = phase.path(giver)
                if path is None:
                    break
                pooled = [(x, y) for x, y, witnesses in path if not witnesses]
                stale = [(x, y) for x, y in pooled if y not in ledger.pool_hops(x)]
                if stale:  # an earlier unit of this flow moved the pool's unit elsewhere
                    phase.spent.add(stale[0])
                    continue
                steps = [step for step in path if step[2]]
                failed = problem.apply(steps)
                if failed is not None:  # no witness of this arc is left
                    phase.spent.add((steps[failed][0], steps[failed][1]))
                    continue
                ledger.gave(giver)
                for x, y in pooled:
                    ledger.hand_on(x, y)
                ledger.took(path[-1][1])
                moved += 1
                progress = True
                if pooled:  # pool hops change the ledger the arcs were listed from
                    return moved
        if not progress:
            return moved


class _Phase:
    """One phase of Dinic's algorithm: levels by breadth-first search from the givers, up to
    the first level that holds a taker, then paths that go one level deeper at every hop."""

    def __init__(self, starts: list[int], arcs: Callable[[int], list[tuple[int, list[int]]]],
                 is_end: Callable[[int], bool]) -> None:
        self.arcs, self.is_end = arcs, is_end
        self.level: dict[int, int] = dict.fromkeys(starts, 0)
        self.depth: int | None = None
        frontier = list(starts)
        while frontier and self.depth is None:
            following = []
            for x in frontier:
                for y, _ in arcs(x):
                    if y not in self.level:
                        self.level[y] = self.level[x] + 1
                        following.append(y)
                        if is_end(y):
                            self.depth = self.level[y]
            frontier = following
        self.current: dict[int, int] = {}
        self.dead: set[int] = set()
        self.spent: set[tuple[int, int]] = set()

    def path(self, start: int) -> list[Step] | None:
        depth, level, dead, spent = self.depth, self.level, self.dead, self.spent
        stack = [start]
        chosen: list[Step] = []
        while stack:
            x = stack[-1]
            if len(stack) - 1 == depth:
                if self.is_end(x):
                    return chosen
                dead.add(x)
            else:
                out, i = self.arcs(x), self.current.get(x, 0)
                below = level[x] + 1
                while i < len(out) and (level.get(out[i][0]) != below or out[i][0] in dead
                                        or (x, out[i][0]) in spent):
                    i += 1
                self.current[x] = i
                if i < len(out):
                    stack.append(out[i][0])
                    chosen.append((x, out[i][0], out[i][1]))
                    continue
                dead.add(x)
            stack.pop()
            if chosen:
                chosen.pop()
        return None
