"""Racks of unequal size balanced as one cluster: the end state that sends the fewest replicas
across racks among those reached with the fewest moves. Pure.

Balanced over the whole cluster, every target broker ``b`` ends within its range
``lo_b..hi_b`` (:meth:`kadmin.balance.targets.Group.bounds`), and the ranges hold more units
than there are: ``c = total - sum(lo)`` brokers end on their ceiling. A plan at the rack-free
lower bound moves ``sum(max(0, end_b - now_b))`` replicas, so the ceilings go first to brokers
that hold their ceiling already (each other one costs a move): that fixes how many ceilings
each rack may get (between none and its free ones while ``c`` is at most the free ones, else
all its free ones and up to its other ones), not which racks get them. Each rack must then send
``held - sum(end)`` units to other racks, and only a few partitions allow a replica to change
rack without losing one, so the ceilings are shared out to make those flows least: the
separable convex problem ``min sum |held_r - lo_r - k_r|`` over ``k_r`` in its interval with
``sum k_r = c``, solved exactly by clamping each rack's ideal count to its interval and then
moving the rest one unit at a time where it lowers the sum (every step changes it by exactly
one, so the units that lower it come first: the greedy algorithm for a separable convex
resource allocation, Ibaraki & Katoh, *Resource Allocation Problems*, ch. 2). Inside a rack the
ceilings go to the brokers holding the most (docs/balancing.md), lowest id first on ties.

Where no plan balances the whole cluster without a partition losing a rack, :func:`rack_level`
decides how evenly the rule allows: the least spread of the brokers (each rack's brokers within
one of each other), then the fewest moves at that spread, by an integer program over racks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import product

from kadmin.model import Replicas

LEVEL_LIMIT = 20_000
"""Variables the rack-level program is built with at most (classes of partitions times the end
signatures each may take): a handful of racks gives hundreds; beyond it no end state is
decided and each rack is balanced inside."""

LEVEL_SECONDS = 20.0
"""Seconds HiGHS gets per stage of the rack-level program; a stage unproven by then leaves
each rack balanced inside."""


@dataclass(frozen=True)
class RackEnds:
    """An end state balanced over the whole cluster and what it asks of each rack."""

    ends: dict[int, int]
    """Units each target broker ends with."""
    flow: dict[str | None, int]
    """Units each rack sends to other racks (negative: receives); they add up to 0."""
    moves: int
    """``sum(max(0, end_b - now_b))``: the moves a plan reaching ``ends`` makes at least."""


def racks_kept(members: Replicas, rack_of: Mapping[int, str], served: int) -> int:
    """The distinct racks a partition on ``members`` must end on: as many as it has, or every
    rack with a target (``served`` of them) when it has more; a broker without a rack counts
    in none. The rule :func:`rack_level`, the partition program and the search share."""
    return min(served, len({rack_of.get(b) for b in members} - {None}))


def held_in_racks(members: Collection[int], rack_of: Mapping[int, str], served: int) -> bool:
    """Whether a partition on ``members`` has one replica on each rack it must keep
    (:func:`racks_kept`): no replica may leave its rack, so the partition moves only inside
    them. What the summary counts to say why racks cost moves over the rack-free bound."""
    return len(members) == racks_kept(tuple(members), rack_of, served)


def rack_ends(counts: Mapping[int, int], ranges: Mapping[int, tuple[int, int]],
              rack_of: Mapping[int, str | None], outside: Mapping[int, int]) -> RackEnds:
    """The end state of the module docstring for ``counts`` (units per target broker) within
    ``ranges`` (per target broker, ``hi - lo <= 1``), ``outside`` holding the units of the
    brokers that are no target (they give all, from their own rack)."""
    targets = sorted(ranges)
    total = sum(counts.get(b, 0) for b in targets) + sum(outside.values())
    ceilings = total - sum(lo for lo, _ in ranges.values())
    held: dict[str | None, int] = {}
    lows: dict[str | None, int] = {}
    free: dict[str | None, list[int]] = {}
    other: dict[str | None, list[int]] = {}
    for b, n in outside.items():
        held[rack_of.get(b)] = held.get(rack_of.get(b), 0) + n
    for b in targets:
        rack, (lo, hi), n = rack_of.get(b), ranges[b], counts.get(b, 0)
        held[rack] = held.get(rack, 0) + n
        lows[rack] = lows.get(rack, 0) + lo
        if hi > lo:
            (free if n >= hi else other).setdefault(rack, []).append(b)
    racks = sorted(held, key=str)
    spare = sum(map(len, free.values()))
    if ceilings <= spare:
        bounds = {r: (0, len(free.get(r, []))) for r in racks}
    else:
        bounds = {r: (len(free.get(r, [])), len(free.get(r, [])) + len(other.get(r, [])))
                  for r in racks}
    want = {r: held[r] - lows.get(r, 0) for r in racks}
    share = {r: min(max(want[r], bounds[r][0]), bounds[r][1]) for r in racks}
    left = ceilings - sum(share.values())
    step = 1 if left > 0 else -1
    while left:
        # a unit where it brings the rack closer to what it holds, else where it fits
        open_ = [r for r in racks if bounds[r][0] <= share[r] + step <= bounds[r][1]]
        r = max(open_, key=lambda r: (step * (want[r] - share[r]), str(r)))
        share[r] += step
        left -= step
    ends: dict[int, int] = {b: ranges[b][0] for b in targets}
    for r in racks:
        ranked = (sorted(free.get(r, []), key=lambda b: (-counts.get(b, 0), b))
                  + sorted(other.get(r, []), key=lambda b: (-counts.get(b, 0), b)))
        for b in ranked[:share[r]]:
            ends[b] = ranges[b][1]
    flow = {r: want[r] - share[r] for r in racks}
    moves = sum(max(0, ends[b] - counts.get(b, 0)) for b in targets)
    return RackEnds(ends, flow, moves)


def toward(counts: Mapping[int, int], ends: Mapping[int, int], outside: Mapping[int, int]
           ) -> tuple[dict[int, int], dict[int, int]]:
    """What each broker gives and takes to reach ``ends`` from ``counts`` (units per target
    broker; ``outside``: the units of the brokers that are no target, which give all they
    hold): a quota with no spare unit, so any plan meeting it ends exactly there."""
    give = {b: n for b, n in outside.items() if n > 0}
    take: dict[int, int] = {}
    for b, end in ends.items():
        n = counts.get(b, 0)
        if n > end:
            give[b] = n - end
        elif n < end:
            take[b] = end - n
    return give, take


@dataclass(frozen=True)
class RackLevel:
    """The most even end state the rule allows (no partition on fewer racks than it has)."""

    ends: dict[int, int]
    """Units each target broker ends with: each rack's brokers within one of each other."""
    flow: dict[str | None, int]
    """Units each rack sends to other racks (negative: receives)."""
    spread: int
    """The least spread (most minus fewest units per target broker) any plan under the rule
    reaches, each rack's brokers within one."""
    moves: int
    """The fewest moves any plan under the rule at that spread makes: a lower bound."""


def rack_level(parts: Sequence[Replicas], targets: Collection[int],
               rack_of: Mapping[int, str]) -> RackLevel | None:
    """Racks as close as rack diversity permits: the least broker spread, each rack's brokers
    within one, then the fewest moves at that spread, over every plan in which no partition
    ends on fewer distinct racks than it has (or on every rack with a target, when it had
    more); replicas on a drained broker without a rack count in no rack (they must move, and
    a partition keeps the racks it has elsewhere). None where the program is too large or not
    solved in time, or a target broker has no rack.

    Which broker of a rack holds a replica does not bear on rack diversity, so partitions are
    grouped by their signature (replicas per rack) and the program chooses how many of each
    class end with each signature that keeps their racks and fits the racks' brokers: a
    transportation problem from classes to end signatures, whose totals per rack the brokers
    of the rack share (``e_b = f_r + z_b``, ``z_b`` in 0..1). A plan's moves are at least the
    units each broker gains (``t_b >= e_b - now_b``) and, per rack, the replicas partitions
    gain there (from other racks, or from its brokers that are no target). In a rack small
    enough for a partition to fill (a replica on each of its targets) classes also say which
    of its target brokers they hold, and a broker there gains at least each partition filling
    the rack that does not hold it, and at least what it nets plus one for each partition
    holding it that ends off the rack (it loses that replica, so it gains one more): without
    these the bound ignored which broker of a one- or two-broker rack a replica leaves or
    must reach, and fell a move short of the fewest on small clusters. Solved
    lexicographically by HiGHS (scipy's ``milp``, branch and bound): first the least spread
    ``H - L`` over ``L <= e_b <= H``, then, with it fixed, the least sum of those per-rack
    moves. Every plan under the rule maps to a solution of the program (it forgets only which
    broker of a rack holds a replica), so both optima are lower bounds any such plan meets:
    the spread is the least any reaches, and a plan reaching ``ends`` in ``moves`` moves is
    the fewest."""
    brokers = sorted(targets)
    if any(rack_of.get(b) is None for b in brokers):
        return None
    shape = _Shape.of(parts, brokers, rack_of)
    variables = shape.variables()
    if variables is None:
        return None
    program = _LevelProgram(shape, variables)
    spread = program.solve({program.hi: 1.0, program.lo: -1.0})
    if spread is None:
        return None
    least = round(spread[0])
    program.row({program.hi: 1.0, program.lo: -1.0}, -float("inf"), least)
    fewest = program.solve({program.m0 + j: 1.0 for j in range(len(shape.racks))})
    if fewest is None:
        return None
    ends = {b: round(fewest[1][program.e0 + i]) for i, b in enumerate(brokers)}
    held: Counter[str | None] = Counter()
    for b, n in shape.counts.items():
        held[rack_of.get(b)] += n
    for b, n in ends.items():
        held[rack_of.get(b)] -= n
    return RackLevel(ends, {r: held[r] for r in sorted(held, key=str)}, least,
                     round(fewest[0]))


# A class of partitions: its size, replicas per rack (a replica on a drained broker without a
# rack counts in none), those on targets (the others must move), and the target brokers it
# holds in racks it can fill.
_Class = tuple[int, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...], tuple[int, ...]]

# A variable of the program: its class (index), its end signature (replicas per target rack),
# and per rack the replicas it gains there (each a move: more than the targets of the rack
# hold of it).
_Variable = tuple[int, tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class _Shape:
    """What :func:`rack_level`'s program is built from: the partitions by class, the racks
    and their sizes."""

    brokers: list[int]
    rack_of: Mapping[int, str]
    racks: list[str]
    size: Counter[str]
    small: frozenset[str]  # racks a partition can fill (a replica on each of its targets)
    classes: Counter[_Class]
    counts: Counter[int]  # replicas per broker now

    @classmethod
    def of(cls, parts: Sequence[Replicas], brokers: list[int], rack_of: Mapping[int, str]
           ) -> _Shape:
        racks = sorted({rack_of[b] for b in brokers})
        size = Counter(rack_of[b] for b in brokers)
        inside = frozenset(brokers)
        widest = max(map(len, parts), default=0)
        small = frozenset(r for r in racks if size[r] <= widest)
        classes = Counter(
            (len(r), tuple(sorted(Counter(rack_of[b] for b in r if b in rack_of).items())),
             tuple(sorted(Counter(rack_of[b] for b in r if b in inside).items())),
             tuple(sorted(b for b in r if b in inside and rack_of[b] in small)))
            for r in parts)
        return cls(brokers, rack_of, racks, size, small, classes,
                   Counter(b for r in parts for b in r))

    def variables(self) -> list[_Variable] | None:
        """Every end signature of every class that keeps its racks and fits the racks'
        brokers; None when a class has none or there are more than :data:`LEVEL_LIMIT`."""
        racks, size = self.racks, self.size
        out: list[_Variable] = []
        for k, (width, key, kept, _) in enumerate(self.classes):
            now, held_on = dict(key), dict(kept)
            keep = min(len(now), len(racks))
            shapes = [end for end in product(*(range(min(size[r], width) + 1) for r in racks))
                      if sum(end) == width and sum(1 for n in end if n) >= keep]
            if not shapes:
                return None
            out.extend((k, end, tuple(max(0, n - held_on.get(r, 0))
                                      for r, n in zip(racks, end, strict=True)))
                       for end in shapes)
            if len(out) > LEVEL_LIMIT:
                return None
        return out


class _LevelProgram:
    """:func:`rack_level`'s integer program: its columns are the variables (``x``), then per
    broker its end (``e``), per rack the floor its brokers share (``f``), per broker what it
    gains (``t``), per rack the moves into it (``m``), and the highest and lowest end
    (``hi``, ``lo``); its rows are added by :meth:`row`."""

    def __init__(self, shape: _Shape, variables: list[_Variable]) -> None:
        self.shape, self.variables = shape, variables
        nx, nb, nr = len(variables), len(shape.brokers), len(shape.racks)
        self.x0, self.e0, self.f0 = 0, nx, nx + nb
        self.t0, self.m0 = nx + nb + nr, nx + 2 * nb + nr
        self.hi, self.lo = nx + 2 * nb + 2 * nr, nx + 2 * nb + 2 * nr + 1
        self.width = self.lo + 1
        self.rows: list[dict[int, float]] = []
        self.low: list[float] = []
        self.high: list[float] = []
        self._classes()
        self._racks()
        for i, b in enumerate(shape.brokers):
            self._broker(i, b)

    def row(self, entries: dict[int, float], a: float, b: float) -> None:
        """The constraint ``a <= sum(entries) <= b``."""
        self.rows.append(entries)
        self.low.append(a)
        self.high.append(b)

    def _classes(self) -> None:
        """Every partition of a class ends with one of its signatures."""
        classes = self.shape.classes
        for k, group in enumerate(classes):
            self.row({i: 1.0 for i, (c, _, _) in enumerate(self.variables) if c == k},
                     classes[group], classes[group])

    def _racks(self) -> None:
        """A rack's brokers share its replicas; its moves are at least what partitions gain
        there, and at least what its brokers gain."""
        shape, inf = self.shape, float("inf")
        for j, r in enumerate(shape.racks):
            entries = {self.x0 + i: -float(end[j])
                       for i, (_, end, _) in enumerate(self.variables) if end[j]}
            entries.update({self.e0 + i: 1.0 for i, b in enumerate(shape.brokers)
                            if shape.rack_of[b] == r})
            self.row(entries, 0, 0)
            entered = {self.x0 + i: -float(into[j])
                       for i, (_, _, into) in enumerate(self.variables) if into[j]}
            self.row({self.m0 + j: 1.0, **entered}, 0, inf)
            self.row({self.m0 + j: 1.0, **{self.t0 + i: -1.0 for i, b in
                                            enumerate(shape.brokers)
                                            if shape.rack_of[b] == r}}, 0, inf)

    def _broker(self, i: int, b: int) -> None:
        """Broker ``b`` (column ``i``): within one of its rack's floor, between the lowest
        and the highest end, gaining at least what it nets."""
        shape, inf = self.shape, float("inf")
        keys = list(shape.classes)
        rack = shape.rack_of[b]
        now = shape.counts.get(b, 0)
        if rack in shape.small:
            # b gains every partition filling its rack that does not hold it, and beside
            # what it nets, one for each partition holding it that leaves its rack
            j, full = shape.racks.index(rack), shape.size[rack]
            self.row({self.t0 + i: 1.0, **{self.x0 + v: -1.0
                                           for v, (c, end, _) in enumerate(self.variables)
                                           if end[j] == full and b not in keys[c][3]}}, 0, inf)
            self.row({self.t0 + i: 1.0, self.e0 + i: -1.0,
                      **{self.x0 + v: -1.0 for v, (c, end, _) in enumerate(self.variables)
                         if end[j] == 0 and b in keys[c][3]}}, -now, inf)
        self.row({self.e0 + i: 1.0, self.f0 + shape.racks.index(rack): -1.0}, 0, 1)
        self.row({self.e0 + i: 1.0, self.hi: -1.0}, -inf, 0)
        self.row({self.e0 + i: 1.0, self.lo: -1.0}, 0, inf)
        self.row({self.t0 + i: 1.0, self.e0 + i: -1.0}, -now, inf)

    def solve(self, cost: dict[int, float]) -> tuple[float, list[float]] | None:
        """The least ``cost`` over the rows so far (HiGHS, exact gap); None: not solved."""
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import csr_array

        width = self.width
        cells = [(n, i, v) for n, entries in enumerate(self.rows) for i, v in entries.items()]
        matrix = csr_array(([v for _, _, v in cells], ([n for n, _, _ in cells],
                                                       [i for _, i, _ in cells])),
                           shape=(len(self.rows), width))  # a few entries a row: sparse
        objective = np.zeros(width)
        for i, v in cost.items():
            objective[i] = v
        total = float(sum(self.shape.counts.values()))
        found = milp(objective, constraints=LinearConstraint(matrix, self.low, self.high),
                     integrality=np.ones(width), bounds=Bounds(np.zeros(width),
                                                               np.full(width, total)),
                     options={"mip_rel_gap": 0.0, "time_limit": LEVEL_SECONDS,
                              "presolve": False})  # scipy 1.17's presolve called a feasible
        # program of two partitions infeasible (tests/unit/test_balance_racks_search.py)
        return None if found.status != 0 else (float(found.fun), list(found.x))
