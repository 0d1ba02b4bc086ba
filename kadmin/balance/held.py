"""Targets that are not registered: the partitions holding one of their replicas are left as
they are, and count on the registered brokers that hold their other replicas."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance.table import PartitionTable
from kadmin.model import InvalidInput, Replicas


@dataclass(frozen=True)
class Held:
    """The partitions a plan may change, and what the others leave on the registered targets.

    A target broker that is not registered (dead, or stopped, and named to be kept) keeps its
    replicas, and nothing new goes there. A partition holding one of its replicas is left as it
    is: a reassignment naming that broker never completes (its replica cannot join the ISR),
    and ``plan validate`` rejects it. Those partitions still count on the registered brokers
    that hold their other replicas and leaderships."""

    free: PartitionTable
    index: Sequence[int] | None
    """The index in the whole table of each partition of ``free``; None: the whole table."""
    targets: tuple[int, ...]
    """The registered targets: where replicas and leaderships may go."""
    replicas: Mapping[int, int]
    leaders: Mapping[int, int]
    """Replicas and preferred leaders of the held partitions on those targets."""
    partitions: int
    """How many partitions are held."""

    def whole(self, final: Mapping[int, Replicas]) -> dict[int, Replicas]:
        """``final`` (indexed like ``free``) by index of the whole table."""
        index = self.index
        return dict(final) if index is None else {index[i]: r for i, r in final.items()}


def hold(table: PartitionTable, targets: Collection[int], kept: Collection[int]) -> Held:
    """Split ``table`` around the ``kept`` targets (those not registered)."""
    dead = frozenset(kept)
    live = tuple(sorted(b for b in targets if b not in dead))
    if not live:
        raise InvalidInput("no registered target broker: every broker in --brokers is "
                           "unregistered, so nothing could move anywhere")
    if not dead:
        return Held(table, None, live, {}, {}, 0)
    inside = frozenset(live)
    free: list[int] = []
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for i, members in enumerate(table.replicas):
        if dead.isdisjoint(members):
            free.append(i)
        else:
            replicas.update(b for b in members if b in inside)
            if members[0] in inside:
                leaders[members[0]] += 1
    return Held(table.subset(free), free, live, replicas, leaders, len(table) - len(free))
