"""The quotas of a plan over the whole table: the replicas per target broker, their balanced
ranges with racks and without (:class:`Split`), and the leader quota. The Spark driver splits
its own over the chunks (:mod:`kadmin.balance.quotas`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

from kadmin.balance.replicas import replica_counts
from kadmin.balance.targets import Group, Quota, groups_of, quota
from kadmin.model import Replicas


def replica_quota(replicas: Sequence[Replicas], brokers: Collection[int],
                  rack_of: Mapping[int, str] | None, counts: Mapping[int, int] | None = None,
                  weights: Mapping[int, int] | None = None) -> Quota:
    """The quota that balances ``replicas`` over ``brokers`` (by ``weights``, their
    capacities, when given); ``counts`` are their replicas per broker when the caller has them
    already."""
    counts = replica_counts(replicas) if counts is None else counts
    return Split.of(counts, brokers, rack_of, weights).quota(racks=True)


@dataclass(frozen=True)
class Split:
    """Replicas per target broker and on the brokers given up, and the groups a quota balances
    them in (:func:`groups_of`) with racks (one per rack when racks differ in size) and
    without: counted once per rebalance for every quota, range and rack question on the way."""

    inside: dict[int, int]
    outside: dict[int, int]
    racked: list[Group]
    free: list[Group]

    @classmethod
    def of(cls, counts: Mapping[int, int], brokers: Collection[int],
           rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None) -> Split:
        inside = {b: counts.get(b, 0) for b in brokers}
        outside = {b: n for b, n in counts.items() if b not in inside}
        free = groups_of(brokers, inside, outside, None, weights)
        racked = free if rack_of is None else groups_of(brokers, inside, outside, rack_of,
                                                         weights)
        return cls(inside, outside, racked, free)

    @property
    def by_rack(self) -> bool:
        """Whether the quota balances each rack on its own (racks of unequal size)."""
        return len(self.racked) > 1

    def quota(self, racks: bool) -> Quota:
        return quota(self.inside, self.racked if racks else self.free, self.outside)

    def ranges(self, racks: bool) -> dict[int, tuple[int, int]]:
        """Each target broker's balanced range, as the quota states it."""
        ranges: dict[int, tuple[int, int]] = {}
        for group in self.racked if racks else self.free:
            ranges.update(group.bounds())
        return ranges


def leader_quota(replicas: Sequence[Replicas], brokers: Collection[int],
                 weights: Mapping[int, int] | None = None,
                 fixed: Mapping[int, int] | None = None) -> Quota:
    """Leadership is balanced over all target brokers together (by ``weights`` when given, the
    same shares as replicas): a leader costs no disk, so racks do not bound where it may go.
    ``fixed``: leaderships on the targets of partitions that do not change (they count, and
    cannot move)."""
    leaders = Counter(fixed or {})
    leaders.update(map(itemgetter(0), replicas))
    inside = {b: leaders.get(b, 0) for b in brokers}
    outside = {b: n for b, n in leaders.items() if b not in inside}
    ordered = tuple(sorted(brokers))
    total = len(replicas) + sum((fixed or {}).values())
    return quota(inside, [Group(ordered, total, None if weights is None else
                                tuple(weights[b] for b in ordered))], outside)
