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
ceilings go to the brokers holding the most (the spec's rule), lowest id first on ties.

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
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array

    brokers = sorted(targets)
    if any(rack_of.get(b) is None for b in brokers):
        return None
    racks = sorted({rack_of[b] for b in brokers})
    size = Counter(rack_of[b] for b in brokers)
    inside = frozenset(brokers)
    widest = max(map(len, parts), default=0)
    small = frozenset(r for r in racks if size[r] <= widest)
    """Racks a partition can fill (a replica on each of its target brokers)."""
    classes = Counter((len(r), tuple(sorted(Counter(rack_of[b] for b in r if b in rack_of
                                                    ).items())),
                       tuple(sorted(Counter(rack_of[b] for b in r if b in inside).items())),
                       tuple(sorted(b for b in r if b in inside and rack_of[b] in small)))
                      for r in parts)
    """Partitions by their size, replicas per rack (a replica on a drained broker without
    a rack counts in none), those on targets (the others must move), and the target brokers
    they hold in racks they can fill."""
    moves_of: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    """Per variable: its class, its end signature (replicas per target rack), and per rack
    the replicas it gains there (each a move: more than the targets of the rack hold of it)."""
    keys = list(classes)
    for k, (width, key, kept, _) in enumerate(keys):
        now, held_on = dict(key), dict(kept)
        keep = min(len(now), len(racks))
        shapes = [end for end in product(*(range(min(size[r], width) + 1) for r in racks))
                  if sum(end) == width and sum(1 for n in end if n) >= keep]
        if not shapes:
            return None
        moves_of.extend((k, end, tuple(max(0, n - held_on.get(r, 0))
                                       for r, n in zip(racks, end, strict=True)))
                        for end in shapes)
        if len(moves_of) > LEVEL_LIMIT:
            return None
    counts = Counter(b for r in parts for b in r)
    nx, nb, nr = len(moves_of), len(brokers), len(racks)
    x0, e0, f0, t0, m0 = 0, nx, nx + nb, nx + nb + nr, nx + 2 * nb + nr
    hi, lo = nx + 2 * nb + 2 * nr, nx + 2 * nb + 2 * nr + 1
    width = lo + 1
    at = {r: i for i, r in enumerate(racks)}
    rows: list[dict[int, float]] = []
    low: list[float] = []
    high: list[float] = []

    def row(entries: dict[int, float], a: float, b: float) -> None:
        rows.append(entries)
        low.append(a)
        high.append(b)

    for k, group in enumerate(keys):
        row({i: 1.0 for i, (c, _, _) in enumerate(moves_of) if c == k},
            classes[group], classes[group])
    for j, r in enumerate(racks):
        entries = {x0 + i: -float(end[j]) for i, (_, end, _) in enumerate(moves_of) if end[j]}
        entries.update({e0 + i: 1.0 for i, b in enumerate(brokers) if rack_of[b] == r})
        row(entries, 0, 0)
        entered = {x0 + i: -float(into[j]) for i, (_, _, into) in enumerate(moves_of)
                   if into[j]}
        row({m0 + j: 1.0, **entered}, 0, np.inf)
        row({m0 + j: 1.0, **{t0 + i: -1.0 for i, b in enumerate(brokers)
                             if rack_of[b] == r}}, 0, np.inf)
    for i, b in enumerate(brokers):
        if rack_of[b] in small:
            # b gains every partition filling its rack that does not hold it, and beside
            # what it nets, one for each partition holding it that leaves its rack
            j, full = at[rack_of[b]], size[rack_of[b]]
            row({t0 + i: 1.0, **{x0 + v: -1.0 for v, (c, end, _) in enumerate(moves_of)
                                 if end[j] == full and b not in keys[c][3]}}, 0, np.inf)
            row({t0 + i: 1.0, e0 + i: -1.0,
                 **{x0 + v: -1.0 for v, (c, end, _) in enumerate(moves_of)
                    if end[j] == 0 and b in keys[c][3]}}, -counts.get(b, 0), np.inf)
        row({e0 + i: 1.0, f0 + at[rack_of[b]]: -1.0}, 0, 1)
        row({e0 + i: 1.0, hi: -1.0}, -np.inf, 0)
        row({e0 + i: 1.0, lo: -1.0}, 0, np.inf)
        row({t0 + i: 1.0, e0 + i: -1.0}, -counts.get(b, 0), np.inf)
    total = float(sum(map(len, parts)))
    bounds = Bounds(np.zeros(width), np.full(width, total))
    integral = np.ones(width)

    def solve(cost: dict[int, float]) -> tuple[float, np.ndarray] | None:
        cells = [(n, i, v) for n, entries in enumerate(rows) for i, v in entries.items()]
        matrix = csr_array(([v for _, _, v in cells], ([n for n, _, _ in cells],
                                                       [i for _, i, _ in cells])),
                           shape=(len(rows), width))  # a few entries a row: sparse
        objective = np.zeros(width)
        for i, v in cost.items():
            objective[i] = v
        found = milp(objective, constraints=LinearConstraint(matrix, low, high),
                     integrality=integral, bounds=bounds,
                     options={"mip_rel_gap": 0.0, "time_limit": LEVEL_SECONDS,
                              "presolve": False})  # scipy 1.17's presolve called a feasible
        # program of two partitions infeasible (tests/unit/test_balance_racks_search.py)
        return None if found.status != 0 else (float(found.fun), found.x)

    spread = solve({hi: 1.0, lo: -1.0})
    if spread is None:
        return None
    least = round(spread[0])
    row({hi: 1.0, lo: -1.0}, -np.inf, least)
    fewest = solve({m0 + j: 1.0 for j in range(nr)})
    if fewest is None:
        return None
    values = np.rint(fewest[1]).astype(int)
    ends = {b: int(values[e0 + i]) for i, b in enumerate(brokers)}
    held: Counter[str | None] = Counter()
    for b, n in counts.items():
        held[rack_of.get(b)] += n
    for b, n in ends.items():
        held[rack_of.get(b)] -= n
    return RackLevel(ends, {r: held[r] for r in sorted(held, key=str)}, least,
                     round(fewest[0]))
