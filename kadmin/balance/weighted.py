"""Balancing bytes instead of replica counts (``plan rebalance --balance bytes``). Pure.

Partitions differ in size by orders of magnitude, so a broker can hold its share of replicas
and twice its share of data. Here the target is bytes per broker within one largest partition
of each other, reached by moving as few bytes as possible. Unlike replica counts this has no
polynomial exact algorithm (with sizes it contains bin packing), so it is a best-fit greedy:
the broker furthest above the mean gives to the one furthest below, each time the partition
whose size best fits what both still need, never one that would overshoot when a smaller one
fits. The report holds it against a lower bound computed like the replica one: a broker can
end no higher than the mean plus one largest partition, so whatever it holds above that, and
every byte on a drained broker, must move.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right, insort
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

Rack = Mapping[int, str] | None


@dataclass(frozen=True)
class ByteBalance:
    final: dict[int, Replicas]
    """New replica lists by partition index, only those that change."""
    bytes_moved: int
    lower_bound: int
    """Bytes no plan that ends within one largest partition can avoid moving."""
    largest: int
    """The largest partition: the spread of bytes aimed at."""


def byte_lower_bound(table: PartitionTable, sizes: Sequence[int], targets: Collection[int]
                     ) -> int:
    held = bytes_per_broker(table.replicas, sizes)
    largest = max(sizes, default=0)
    total = sum(size * len(r) for size, r in zip(sizes, table.replicas, strict=True))
    mean = total / len(targets)
    forced = sum(n for b, n in held.items() if b not in targets)
    return forced + int(sum(max(0.0, held.get(b, 0) - mean - largest) for b in targets))


def balance_bytes(table: PartitionTable, sizes: Sequence[int], targets: Collection[int],
                  rack_of: Rack = None) -> ByteBalance:
    """Moves until every byte is on a target broker and the targets' bytes differ by at most
    the largest partition (or no move helps any more)."""
    targets = frozenset(targets)
    held = {b: 0 for b in targets}
    held.update(bytes_per_broker(table.replicas, sizes))
    current: dict[int, list[int]] = {}
    by_broker: dict[int, list[tuple[int, int]]] = {}
    """Per broker, (size, partition) ascending, for best fit; stale entries skipped."""
    for p, replicas in enumerate(table.replicas):
        for b in replicas:
            by_broker.setdefault(b, []).append((sizes[p], p))
    for entries in by_broker.values():
        entries.sort()
    largest = max(sizes, default=0)
    mean = sum(held.values()) / len(targets)

    def replicas_of(p: int) -> Sequence[int]:
        return current.get(p) or table.replicas[p]

    def fits(p: int, x: int, y: int) -> bool:
        now = replicas_of(p)
        if x not in now or y in now:
            return False
        if rack_of is None or rack_of.get(y) == rack_of.get(x):
            return True
        others = {rack_of.get(b) for b in now if b != x}
        return rack_of.get(y) not in others or len(others - {None}) >= len(
            {rack_of.get(b) for b in table.replicas[p]} - {None})

    def move(p: int, x: int, y: int) -> None:
        now = current.setdefault(p, list(table.replicas[p]))
        now[now.index(x)] = y
        held[x] -= sizes[p]
        held[y] = held.get(y, 0) + sizes[p]
        insort(by_broker.setdefault(y, []), (sizes[p], p))

    def best_fit(x: int, y: int, want: float) -> int | None:
        """The partition on ``x`` that ``y`` may take whose size is the largest not above
        ``want``, else the smallest that fits at all."""
        entries = by_broker.get(x, [])
        for i in range(bisect_right(entries, (int(want), len(sizes))) - 1, -1, -1):
            if fits(entries[i][1], x, y):
                return entries[i][1]
        return next((p for _, p in entries[bisect_right(entries, (int(want), len(sizes))):]
                     if fits(p, x, y)), None)

    racks = set(rack_of.values()) if rack_of else set()
    within: Rack = rack_of if rack_of and all(
        len(members) == len(racks) == len({rack_of.get(b) for b in members})
        for members in table.replicas) else None
    """The racks when every partition has one replica in each: a move to another rack could
    only break that, so lighter brokers of other racks need not be searched (the same plan, far
    sooner); else None."""

    def narrowing(high: int) -> tuple[int, int] | None:
        """A partition of ``high`` and a lighter broker to take it, the lightest that can, such
        that the move narrows their gap (each such move lowers the sum of squared distances to
        the mean, so the loop ends)."""
        for low in heapq.nsmallest(len(targets), targets, key=lambda b: (held[b], b)):
            gap = held[high] - held[low]
            if gap <= 0:
                return None
            if within is not None and within.get(low) != within.get(high):
                continue
            p = best_fit(high, low, min(held[high] - mean, mean - held[low], gap / 2))
            if p is not None and sizes[p] < gap:
                return p, low
        return None

    for x in sorted(b for b in held if b not in targets):  # drained brokers first, largest first
        for _, p in sorted(by_broker.get(x, []), reverse=True):
            if x in replicas_of(p):
                y = min((b for b in targets if fits(p, x, b)), key=lambda b: (held[b], b),
                        default=None)
                if y is not None:
                    move(p, x, y)
    steps = sum(len(r) for r in table.replicas)
    while steps:
        steps -= 1
        high = max(targets, key=lambda b: (held[b], -b))
        low = min(targets, key=lambda b: (held[b], b))
        gap = held[high] - held[low]
        if gap <= largest:
            break
        found = narrowing(high)
        if found is None:
            break
        move(found[0], high, found[1])
    final = {p: tuple(r) for p, r in current.items() if tuple(r) != table.replicas[p]}
    moved = sum(sizes[p] * len(set(r) - set(table.replicas[p])) for p, r in final.items())
    return ByteBalance(final, moved, byte_lower_bound(table, sizes, targets), largest)


def bytes_per_broker(replicas: Sequence[Replicas], sizes: Sequence[int]) -> dict[int, int]:
    """Bytes each broker holds: every partition's size once per replica."""
    held: dict[int, int] = {}
    for size, members in zip(sizes, replicas, strict=True):
        for b in members:
            held[b] = held.get(b, 0) + size
    return held
