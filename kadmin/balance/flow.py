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

Balance is a range, not a number: a broker must give what it holds above ``floor + 1`` and take
what it lacks below ``floor``, and may give or take one unit within the range. Those lower bounds
are met by the big-M method: a path's cost counts -M for each mandatory end, so every path that
meets two mandatory units is taken before any that meets one, and paths between optional ends
only while they lower the cost (cancelling a negative cycle through source and sink: which
brokers end on the ceiling is traded for a cheaper plan).

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
from dataclasses import dataclass
from typing import Protocol

from kadmin.balance.targets import Quota

MANDATORY = 1 << 40
"""The big M: more than any path's cost of hops can be."""


@dataclass
class Ledger:
    """What is left of a quota while units are moved. Mutable, and private to one solve.

    ``giving``/``taking`` say which units the fast direct phase may use now: the mandatory ones
    (``"must"``) or the spare ones (``"may"``); the search weighs both.
    """

    give: dict[int, int]
    take: dict[int, int]
    spare_give: set[int]
    spare_take: set[int]
    giving: str = "must"
    taking: str = "must"

    @classmethod
    def of(cls, quota: Quota) -> Ledger:
        return cls(dict(quota.give), dict(quota.take), set(quota.spare_give),
                   set(quota.spare_take))

    @property
    def pending(self) -> int:
        """Mandatory units not met yet."""
        return max(sum(self.give.values()), sum(self.take.values()))

    def can_give(self, b: int) -> int:
        if self.giving == "must":
            return self.give.get(b, 0)
        return int(b in self.spare_give and not self.give.get(b, 0))

    def can_take(self, b: int) -> int:
        if self.taking == "must":
            return self.take.get(b, 0)
        return int(b in self.spare_take and not self.take.get(b, 0))

    def givers(self) -> list[int]:
        return sorted(b for b in (self.give if self.giving == "must" else self.spare_give)
                      if self.can_give(b))

    def takers(self) -> list[int]:
        return sorted(b for b in (self.take if self.taking == "must" else self.spare_take)
                      if self.can_take(b))

    def start_weight(self, b: int) -> int | None:
        """The cost of starting a path at ``b``: -M for a mandatory unit, 0 for a spare one."""
        if self.give.get(b, 0):
            return -MANDATORY
        return 0 if b in self.spare_give else None

    def end_weight(self, b: int) -> int | None:
        if self.take.get(b, 0):
            return -MANDATORY
        return 0 if b in self.spare_take else None

    def gave(self, b: int) -> None:
        if self.give.get(b, 0):
            self.give[b] -= 1
        elif b in self.spare_give:
            self.spare_give.remove(b)
        else:
            raise RuntimeError(f"balancing: broker {b} has nothing left to give")

    def took(self, b: int) -> None:
        if self.take.get(b, 0):
            self.take[b] -= 1
        elif b in self.spare_take:
            self.spare_take.remove(b)
        else:
            raise RuntimeError(f"balancing: broker {b} has no room left to take")


Step = tuple[int, int, list[int]]
"""``(x, y, witnesses)``: one partition among ``witnesses`` hands its unit from ``x`` to ``y``."""


class Problem(Protocol):
    """One balancing problem as the search sees it."""

    ledger: Ledger
    targets: frozenset[int]
    touched: set[int]
    """Brokers whose hops may have changed since the search last asked: every broker of a
    partition that changed. The search empties it."""

    def direct(self, cost: int) -> int:
        """Move as many units as possible by single hops of exactly ``cost`` from a broker that
        must give to one that must take; returns how many."""
        ...

    def cheapest(self, exhausted: int | None) -> int | None:
        """A hop cost no path between the ends of the current modes can beat now, when the
        problem can prove one cheaply (then a direct hop of that cost needs no search to be
        known shortest); ``exhausted`` is a hop cost whose direct hops just ran out."""
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


def solve(problem: Problem, cost: int, limit: int | None = None) -> None:
    """Meet every mandatory unit of the problem's quota at the least cost, then trade spare
    units while that lowers the cost; each unit along a shortest path. ``cost`` is the cheapest
    hop cost a path between mandatory units can have at the start (1 for replicas: nothing has
    moved yet). Mandatory units are left only when no plan can meet them (racks, or partitions
    as wide as the broker list), or, with ``limit``, when the next unit would cost more than
    ``limit``: path costs never decrease, so the units met are the most that cost at most
    ``limit`` each (a Spark task meets its chunk's share of the bound this way and hands the
    rest back to the driver rather than pay a chain of moves for it)."""
    hops: dict[int, Hops] = {}
    ledger = problem.ledger
    known: tuple[str, str, int] | None = ("must", "must", cost)
    """The ends the direct phase may use, and the hop cost that is shortest for them now."""
    while True:
        modes = _modes(ledger)
        if modes is not None and (known is None or known[:2] != modes):
            ledger.giving, ledger.taking = modes
            floor = problem.cheapest(None)
            known = None if floor is None else (*modes, floor)
        if known is not None and modes is not None and known[:2] == modes:
            ledger.giving, ledger.taking = modes
            if problem.direct(known[2]):
                continue
            floor = problem.cheapest(known[2])
            if floor is not None and floor > known[2]:
                known = (*modes, floor)
                continue
        for b in problem.touched:
            hops.pop(b, None)
        problem.touched.clear()
        labels = _distances(problem, hops)
        if labels is None or labels[1] >= 0:
            return
        dist, shortest = labels
        ends = round(-shortest / MANDATORY)
        hop_cost = shortest + ends * MANDATORY
        if limit is not None and hop_cost > limit:
            return
        if (modes is not None and ends == (modes[0] == "must") + (modes[1] == "must")
                and (known is None or known[:2] != modes or hop_cost > known[2])):
            known = (*modes, hop_cost)
            if hop_cost <= 1:
                continue  # single hops of the new cost are shortest: the direct phase first
        if not _blocking_flow(problem, hops, dist, shortest):
            return  # the labels promise a path that no witness can take: nothing more to find


def _modes(ledger: Ledger) -> tuple[str, str] | None:
    """Which ends every shortest path joins while mandatory units are left: mandatory to
    mandatory first, then a mandatory end with a spare one (only one side has mandatory units
    left then, or the direct phase could not tell the two kinds apart); None once only spare
    units are left."""
    gives, takes = any(ledger.give.values()), any(ledger.take.values())
    if gives and takes:
        return ("must", "must")
    if gives:
        return ("must", "may")
    if takes:
        return ("may", "must")
    return None


def _hops(problem: Problem, hops: dict[int, Hops], x: int) -> Hops:
    """``x``'s hops, cached across searches (the caller drops those a change touched)."""
    own = hops.get(x)
    if own is None:
        own = hops[x] = problem.hops(x)
    return own


def _distances(problem: Problem, hops: dict[int, Hops]) -> tuple[dict[int, int], int] | None:
    """SPFA from every broker that can give, each starting at its weight (-M for a mandatory
    unit): each reached broker's distance, and the least cost of a whole path (with the weight
    of its end), or None when no broker that can take is reached."""
    ledger = problem.ledger
    dist: dict[int, int] = {}
    for b in sorted(set(ledger.give) | ledger.spare_give):
        weight = ledger.start_weight(b)
        if weight is not None:
            dist[b] = weight
    queue: deque[int] = deque(sorted(dist, key=lambda b: (dist[b], b)))
    queued = set(queue)
    nodes = len(set(problem.targets) | set(dist))
    edges = dict.fromkeys(dist, 0)
    """Hops on each broker's current shortest path: V of them means a negative cycle."""
    while queue:
        x = queue.popleft()
        queued.discard(x)
        dx = dist[x]
        for y, (cost, _) in _hops(problem, hops, x).items():
            d = dx + cost
            if d < dist.get(y, d + 1):
                dist[y] = d
                edges[y] = edges[x] + 1
                if edges[y] >= nodes:
                    raise RuntimeError("balancing search met a negative cycle")
                if y not in queued:
                    queued.add(y)
                    queue.append(y)
    totals = [dist[b] + w for b in set(ledger.take) | ledger.spare_take
              if b in dist and (w := ledger.end_weight(b)) is not None]
    return (dist, min(totals)) if totals else None


def _blocking_flow(problem: Problem, hops: dict[int, Hops], dist: Mapping[int, int],
                   shortest: int) -> int:
    """Move units along admissible edges (``dist[y] == dist[x] + cost``) from givers whose
    distance is their own weight to takers where distance and weight add up to ``shortest``,
    until none is left; returns how many.

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

    def is_end(b: int) -> bool:
        weight = ledger.end_weight(b)
        return weight is not None and dist[b] + weight == shortest

    moved = 0
    while True:
        starts = [b for b in sorted(set(ledger.give) | ledger.spare_give)
                  if b in dist and ledger.start_weight(b) == dist[b]]
        phase = _Phase(starts, arcs, is_end)
        if phase.depth is None:
            return moved
        progress = False
        for giver in starts:
            while ledger.start_weight(giver) == dist[giver]:
                path = phase.path(giver)
                if path is None:
                    break
                failed = problem.apply(path)
                if failed is not None:  # no witness of this arc is left
                    phase.spent.add((path[failed][0], path[failed][1]))
                    continue
                ledger.gave(giver)
                ledger.took(path[-1][1])
                moved += 1
                progress = True
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
