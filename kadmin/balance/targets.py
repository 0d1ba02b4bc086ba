"""Balanced end states and the lower bound of moves (spec section 7). Pure.

Balanced means every target broker ends with ``floor`` or ``floor + 1`` units (replicas, or
preferred leaderships) of its group, where a group is every target broker, or one rack when racks
differ in size (then a rack keeps its total and is balanced inside). Which brokers end at
``floor + 1`` is left open: the spec's bound gives the ceilings to the brokers that hold the most,
but among brokers that tie, a fixed choice can cost a move that another choice saves. So a
:class:`Quota` states what each broker *must* give or take, plus pools of units that any of a set
of brokers may give or take one of. A plan that meets the quota exactly moves ``Quota.units``
replicas, which is the lower bound: each unit a broker must take is a replica it does not hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """Brokers balanced together, and the units they hold in total once balanced."""

    brokers: tuple[int, ...]
    total: int

    @property
    def floor(self) -> int:
        return self.total // len(self.brokers)


@dataclass(frozen=True)
class Quota:
    """Units each broker must give or take for the counts to end balanced.

    ``give``/``take`` are mandatory. ``spare_give`` maps a broker that may give one unit more to its
    pool; the pool ``pool_give[k]`` must be given in full, one unit per broker at most (likewise
    for taking). Brokers outside the targets give everything they hold.
    """

    give: Mapping[int, int]
    take: Mapping[int, int]
    spare_give: Mapping[int, int]
    spare_take: Mapping[int, int]
    pool_give: tuple[int, ...]
    pool_take: tuple[int, ...]

    @property
    def units(self) -> int:
        """Units that change broker: the lower bound of moves (or leader changes)."""
        return sum(self.take.values()) + sum(self.pool_take)


def quota(counts: Mapping[int, int], groups: Iterable[Group], outside: Mapping[int, int]
          ) -> Quota:
    """The quota that balances ``counts`` (units per target broker) over ``groups``; ``outside``
    holds the units on brokers that are no target (they must give all of them)."""
    give = {b: n for b, n in outside.items() if n > 0}
    take: dict[int, int] = {}
    spare_give: dict[int, int] = {}
    spare_take: dict[int, int] = {}
    pool_give: list[int] = []
    pool_take: list[int] = []
    for pool, group in enumerate(groups):
        floor, ceilings = divmod(group.total, len(group.brokers))
        high = [b for b in group.brokers if counts.get(b, 0) > floor]
        for b in group.brokers:
            held = counts.get(b, 0)
            if held > floor + 1:
                give[b] = held - floor - 1
            elif held < floor:
                take[b] = floor - held
        # `high` brokers end at floor+1 or floor; if there are more of them than ceilings, some
        # must give one more, any of them; if fewer, other brokers take one more, any of them.
        if len(high) >= ceilings:
            pool_give.append(len(high) - ceilings)
            pool_take.append(0)
            spare_give.update((b, pool) for b in high)
        else:
            pool_give.append(0)
            pool_take.append(ceilings - len(high))
            spare_take.update((b, pool) for b in group.brokers if counts.get(b, 0) <= floor)
    return Quota(give, take, spare_give, spare_take, tuple(pool_give), tuple(pool_take))


def groups_of(targets: Iterable[int], counts: Mapping[int, int], outside: Mapping[int, int],
              rack_of: Mapping[int, str] | None) -> list[Group]:
    """One group of every target broker, or, when racks differ in size, one group per rack.

    With racks of unequal size a balanced count per broker would force replicas across racks and
    cost rack diversity; each rack then keeps the units it holds (those of drained brokers in it
    included) and is balanced inside. Units of drained brokers whose rack has no target broker
    left go, one at a time, to the rack with the fewest units per broker.
    """
    brokers = sorted(targets)
    total = sum(counts.get(b, 0) for b in brokers) + sum(outside.values())
    if rack_of is None:
        return [Group(tuple(brokers), total)]
    by_rack: dict[str, list[int]] = {}
    for b in brokers:
        by_rack.setdefault(rack_of[b], []).append(b)
    if len({len(members) for members in by_rack.values()}) <= 1:
        return [Group(tuple(brokers), total)]
    totals = {r: sum(counts.get(b, 0) for b in members) for r, members in by_rack.items()}
    homeless = 0
    for b, n in outside.items():
        rack = rack_of.get(b)
        if rack in totals:
            totals[rack] += n
        else:
            homeless += n
    for _ in range(homeless):
        rack = min(sorted(totals), key=lambda r: totals[r] / len(by_rack[r]))
        totals[rack] += 1
    return [Group(tuple(by_rack[r]), totals[r]) for r in sorted(by_rack)]


def spec_lower_bound(counts: Mapping[int, int], targets: Iterable[int], forced: int) -> int:
    """Spec section 7, word for word: ceilings to the brokers that hold the most now;
    ``forced`` replicas (on brokers outside the targets, or added) move whatever happens."""
    brokers = sorted(targets, key=lambda b: (-counts.get(b, 0), b))
    total = sum(counts.get(b, 0) for b in brokers) + forced
    floor, ceilings = divmod(total, len(brokers))
    return forced + sum(max(0, counts.get(b, 0) - floor - (1 if i < ceilings else 0))
                        for i, b in enumerate(brokers))
