"""Balanced end states and the lower bound of moves (docs/balancing.md). Pure.

Balanced means every target broker ends with ``floor`` or ``floor + 1`` units (replicas, or
preferred leaderships) of its group, where a group is every target broker, or one rack when racks
differ in size (then a rack is balanced inside, starting from the units it holds). A
:class:`Quota` states what each broker must give or take to get there and what it may, and its
``units`` are the lower bound of moves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """Brokers balanced together, and the units they hold in total once balanced; with
    ``weights`` (capacities, aligned with ``brokers``) each broker's share follows its weight."""

    brokers: tuple[int, ...]
    total: int
    weights: tuple[int, ...] | None = None

    @property
    def floor(self) -> int:
        return self.total // len(self.brokers)

    def bounds(self) -> dict[int, tuple[int, int]]:
        """Each broker's balanced range ``(low, high)``: ``floor``/``floor + 1`` of the group
        when brokers are alike; with weights, floor and ceiling of its share
        ``s_b = total * w_b / sum(w)`` (docs/balancing.md), exactly (integer arithmetic). The
        counts add up to ``total`` whatever the choice within the ranges, so which brokers end
        on their ceiling is left to the search."""
        if self.weights is None:
            floor = self.floor
            return {b: (floor, floor + 1) for b in self.brokers}
        whole = sum(self.weights)
        out = {}
        for b, w in zip(self.brokers, self.weights, strict=True):
            low, rest = divmod(self.total * w, whole)
            out[b] = (low, low + (rest > 0))
        return out


@dataclass(frozen=True)
class Quota:
    """Units each broker must give or take for the counts to end balanced, and the brokers that
    may give or take one unit more and still end balanced.

    Balanced is ``low`` or ``high`` per broker (:meth:`Group.bounds`: ``floor`` or ``floor + 1``
    of its group, or floor and ceiling of its capacity share). A broker above ``high`` *must*
    give down to it and *may* give one more; one below ``low`` must take up to it and may take
    one more; one at ``high`` may give one, one at ``low`` may take one (none may when ``low ==
    high``). Which
    brokers end on the ceiling is left open: the spec's bound gives the ceilings to the brokers
    that hold the most, but among brokers that tie a fixed choice can cost a move, and for
    leaders (whose changes can be free) any choice may be the cheapest. Brokers outside the
    targets must give everything they hold.
    """

    give: Mapping[int, int]
    take: Mapping[int, int]
    spare_give: frozenset[int]
    spare_take: frozenset[int]

    @property
    def units(self) -> int:
        """Units that must change broker: the lower bound of moves (or leader changes). Every
        unit a broker must take is a replica it does not hold; every unit one must give
        reaches a broker that did not hold it."""
        return max(sum(self.give.values()), sum(self.take.values()))


def quota(counts: Mapping[int, int], groups: Iterable[Group], outside: Mapping[int, int]
          ) -> Quota:
    """The quota that balances ``counts`` (units per target broker) over ``groups``; ``outside``
    holds the units on brokers that are no target (they must give all of them)."""
    give = {b: n for b, n in outside.items() if n > 0}
    take: dict[int, int] = {}
    spare_give: set[int] = set()
    spare_take: set[int] = set()
    for group in groups:
        for b, (low, high) in group.bounds().items():
            held = counts.get(b, 0)
            if held > high:
                give[b] = held - high
            elif held < low:
                take[b] = low - held
            if high > low:
                (spare_give if held > low else spare_take).add(b)
    return Quota(give, take, frozenset(spare_give), frozenset(spare_take))


def fewest_to_ranges(inside: Mapping[int, int], ranges: Mapping[int, tuple[int, int]],
                     total: int) -> int:
    """The least ``sum max(0, end_b - now_b)`` over end states of ``total`` units with every
    target broker ``b`` within ``ranges[b]`` (``high - low <= 1``), ``now_b = inside[b]``:
    every broker below its low takes up to it, and the ceilings beyond those that brokers
    holding at least their high keep for free each cost one more. No plan reaching such an end
    state moves fewer (docs/balancing.md's balance term)."""
    ceilings = total - sum(low for low, _ in ranges.values())
    free = sum(1 for b, (low, high) in ranges.items() if high > low and inside[b] >= high)
    return (sum(max(0, low - inside[b]) for b, (low, _) in ranges.items())
            + max(0, ceilings - free))


def groups_of(targets: Iterable[int], counts: Mapping[int, int], outside: Mapping[int, int],
              rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None = None
              ) -> list[Group]:
    """One group of every target broker, or, when racks differ in size, one group per rack;
    with ``weights`` (capacities) each broker's share follows its weight.

    With racks of unequal size (in brokers, or with weights in capacity) a balanced count per
    broker would force replicas across racks and cost rack diversity; each rack then keeps the
    units it holds (those of drained brokers in it included) and is balanced inside. Units of
    drained brokers whose rack has no target broker left go, one at a time, to the rack with
    the fewest units per broker (per unit of capacity).
    """
    brokers = sorted(targets)
    total = sum(counts.get(b, 0) for b in brokers) + sum(outside.values())
    weight = (lambda b: 1) if weights is None else weights.__getitem__

    def group(members: list[int], units: int) -> Group:
        return Group(tuple(members), units,
                     None if weights is None else tuple(weights[b] for b in members))

    if rack_of is None:
        return [group(brokers, total)]
    by_rack: dict[str, list[int]] = {}
    for b in brokers:
        by_rack.setdefault(rack_of[b], []).append(b)
    size = {r: sum(map(weight, members)) for r, members in by_rack.items()}
    if len(set(size.values())) <= 1:
        return [group(brokers, total)]
    totals = {r: sum(counts.get(b, 0) for b in members) for r, members in by_rack.items()}
    homeless = 0
    for b, n in outside.items():
        rack = rack_of.get(b)
        if rack in totals:
            totals[rack] += n
        else:
            homeless += n
    for _ in range(homeless):
        rack = min(sorted(totals), key=lambda r: totals[r] / size[r])
        totals[rack] += 1
    return [group(by_rack[r], totals[r]) for r in sorted(by_rack)]


def spec_lower_bound(counts: Mapping[int, int], targets: Iterable[int], forced: int) -> int:
    """docs/balancing.md, word for word: ceilings to the brokers that hold the most now;
    ``forced`` replicas (on brokers outside the targets, or added) move whatever happens."""
    brokers = sorted(targets, key=lambda b: (-counts.get(b, 0), b))
    total = sum(counts.get(b, 0) for b in brokers) + forced
    floor, ceilings = divmod(total, len(brokers))
    return forced + sum(max(0, counts.get(b, 0) - floor - (1 if i < ceilings else 0))
                        for i, b in enumerate(brokers))
