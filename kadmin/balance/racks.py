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
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class RackEnds:
    """An end state balanced over the whole cluster and what it asks of each rack."""

    ends: dict[int, int]
    """Units each target broker ends with."""
    flow: dict[str | None, int]
    """Units each rack sends to other racks (negative: receives); they add up to 0."""
    moves: int
    """``sum(max(0, end_b - now_b))``: the moves a plan reaching ``ends`` makes at least."""


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


def toward(counts: Mapping[int, int], ends: Mapping[int, int], outside: Collection[int]
           ) -> tuple[dict[int, int], dict[int, int]]:
    """What each broker gives and takes to reach ``ends`` (the brokers ``outside`` the targets
    give all they hold): a quota with no spare unit, so any plan meeting it ends exactly
    there."""
    give = {b: counts[b] for b in outside if counts.get(b, 0) > 0}
    take: dict[int, int] = {}
    for b, end in ends.items():
        n = counts.get(b, 0)
        if n > end:
            give[b] = n - end
        elif n < end:
            take[b] = end - n
    return give, take
