"""Balancing bytes instead of replica counts (``plan rebalance --balance bytes``). Pure.

Partitions differ in size by orders of magnitude, so a broker can hold its share of replicas
and twice its share of data. Here the target is bytes per broker within one largest partition
of each other, reached by moving as few bytes as possible. Unlike replica counts this has no
polynomial exact algorithm (with sizes it contains bin packing), so it is a best-fit greedy:
the broker furthest above the mean gives to the one furthest below, each time the partition
whose size best fits what both still need, never one that would overshoot when a smaller one
fits. A move is made only when it serves that goal: none when every broker is already within
one largest partition of its share (one dominant partition, say: moving small ones around it
would shave a sliver off a spread it makes), and none after the last one that narrowed the
spread (when brokers tied at the top cannot all give). The report holds it against a lower
bound computed like the replica one: a broker can end no higher than the mean plus one largest
partition, so whatever it holds above that, and every byte on a drained broker, must move.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas, TopicPartition

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


def byte_lower_bound(table: PartitionTable, sizes: Sequence[int], targets: Collection[int],
                     weights: Mapping[int, int] | None = None,
                     fixed: Mapping[int, int] | None = None) -> int:
    """Bytes no plan ending balanced can avoid moving: every byte on a drained broker, and
    whatever a target holds above its share plus one largest partition (with ``weights``, a
    broker's share and slack are in proportion to its capacity). ``fixed``: bytes on the
    targets of partitions that do not move (they count, and stay)."""
    held = Counter(bytes_per_broker(table.replicas, sizes))
    held.update(fixed or {})
    largest = max(sizes, default=0)
    total = sum(held.values())
    weight = _weights(targets, weights)
    whole, least = sum(weight.values()), min(weight.values())
    forced = sum(n for b, n in held.items() if b not in targets)
    return forced + int(sum(max(0.0, held.get(b, 0) - weight[b] * (total / whole
                                                                   + largest / least))
                            for b in targets))


def _weights(targets: Collection[int], weights: Mapping[int, int] | None) -> dict[int, int]:
    return {b: 1 if weights is None else weights[b] for b in targets}


def balance_bytes(table: PartitionTable, sizes: Sequence[int], targets: Collection[int],
                  rack_of: Rack = None, weights: Mapping[int, int] | None = None,
                  fixed: Mapping[int, int] | None = None) -> ByteBalance:
    """Moves until every byte is on a target broker and the targets' bytes differ by at most
    the largest partition (or no move helps any more, or every broker is within it of its
    share already). With ``weights`` (capacities) it is the bytes per unit of capacity that
    end within one largest partition over the smallest capacity of each other
    (docs/balancing.md), each broker's share in proportion. ``fixed``: bytes on the targets of partitions that
    are not in ``table`` and stay where they are."""
    targets = frozenset(targets)
    held = {b: 0 for b in targets}
    held.update(bytes_per_broker(table.replicas, sizes))
    for b, n in (fixed or {}).items():
        held[b] = held.get(b, 0) + n
    current: dict[int, list[int]] = {}
    weight = _weights(targets, weights)

    def load(b: int) -> float:
        return held[b] / weight[b]

    def replicas_of(p: int) -> Sequence[int]:
        return current.get(p) or table.replicas[p]

    shelves = _Shelves(table, sizes, targets, rack_of, replicas_of)
    largest = max(sizes, default=0)
    per_unit = sum(held.values()) / sum(weight.values())
    slack = largest / min(weight.values())

    def move(p: int, x: int, y: int) -> None:
        before = tuple(replicas_of(p))
        now = current.setdefault(p, list(table.replicas[p]))
        now[now.index(x)] = y
        held[x] -= sizes[p]
        held[y] = held.get(y, 0) + sizes[p]
        shelves.moved(p, x, before, now)

    def narrowing(high: int) -> tuple[int, int] | None:
        """A partition of ``high`` and a lighter broker to take it, the lightest that can, such
        that the move narrows their gap (each such move lowers the sum of squared distances to
        the mean, so the loop ends). ``even`` is the size that would leave both at the same
        load: half the gap when brokers are alike."""
        for low in heapq.nsmallest(len(targets), targets, key=lambda b: (load(b), b)):
            gap = load(high) - load(low)
            if gap <= 0:
                return None
            even = gap / (1 / weight[high] + 1 / weight[low])
            p = shelves.best_fit(high, low, min(held[high] - per_unit * weight[high],
                                                per_unit * weight[low] - held[low], even))
            if p is not None and sizes[p] < 2 * even:
                return p, low
        return None

    drained = sorted(b for b in held if b not in targets)
    for x in drained:  # drained brokers first, largest partitions first
        for p in sorted(shelves.partitions_on(x), key=lambda p: (sizes[p], p), reverse=True):
            y = min((b for b in targets if shelves.fits(p, x, b)), key=lambda b: (load(b), b),
                    default=None)
            if y is not None:
                move(p, x, y)
    near = all(abs(load(b) - per_unit) <= slack for b in targets)
    steps = 0 if near else sum(len(r) for r in table.replicas)
    made: list[tuple[int, int, int]] = []

    def loads_spread() -> float:
        return max(map(load, targets)) - min(map(load, targets))

    best, keep = loads_spread(), 0
    while steps:
        steps -= 1
        high = max(targets, key=lambda b: (load(b), -b))
        low = min(targets, key=lambda b: (load(b), b))
        if load(high) - load(low) < best:
            best, keep = load(high) - load(low), len(made)
        if load(high) - load(low) <= slack:
            break
        found = narrowing(high)
        if found is None:
            break
        move(found[0], high, found[1])
        made.append((found[0], high, found[1]))
    if loads_spread() < best:
        keep = len(made)
    for p, x, y in reversed(made[keep:]):  # they did not narrow the spread: not made
        now = current[p]
        now[now.index(y)] = x
    final = {p: tuple(r) for p, r in current.items() if tuple(r) != table.replicas[p]}
    moved = sum(sizes[p] * len(set(r) - set(table.replicas[p])) for p, r in final.items())
    return ByteBalance(final, moved, byte_lower_bound(table, sizes, targets, weights, fixed),
                       largest)


Shelf = list[tuple[int, int]]
"""(size, partition) ascending, for best fit. A partition leaves its broker's shelves when it
moves, but an entry may be stale (the move of another replica changed the racks it may go to):
the caller checks each one it picks."""


class _Shelves:
    """Per broker, its partitions shelved by the racks they may move to without losing rack
    diversity: once for "any rack", else once per allowed rack. With racks, most partitions
    may only move inside their rack, so a search for a lighter broker of another rack reads
    the few that may go there instead of every partition of the broker (on 20,000 partitions
    in 3 racks, 5.4M rack checks fell to thousands).

    Invariant: each partition is on the shelves of every broker holding it, for at least the
    racks it may go to now; best fit drops an entry found stale (another replica's move took
    that rack away) where it finds it, so no stale entry is read twice."""

    def __init__(self, table: PartitionTable, sizes: Sequence[int], targets: frozenset[int],
                 rack_of: Rack, replicas_of: Callable[[int], Sequence[int]]) -> None:
        self._table, self._sizes, self._rack_of = table, sizes, rack_of
        self._replicas_of = replicas_of
        self._everywhere = frozenset(rack_of.get(b) for b in targets) if rack_of else frozenset()
        self._anywhere: dict[int, Shelf] = {}
        self._to_rack: dict[int, dict[str | None, Shelf]] = {}
        for p, replicas in enumerate(table.replicas):
            for b in replicas:
                self._shelve(p, b, self._destinations(p, b, replicas), sort=False)
        for b in {*self._anywhere, *self._to_rack}:
            for shelf in self._of(b):
                shelf.sort()

    def fits(self, p: int, x: int, y: int) -> bool:
        """Whether ``p``'s replica on ``x`` may move to ``y``."""
        now = self._replicas_of(p)
        return x in now and y not in now and self._keeps_racks(p, x, y)

    def best_fit(self, x: int, y: int, want: float) -> int | None:
        """The partition on ``x`` that ``y`` may take whose size is the largest not above
        ``want``, else the smallest that fits at all."""
        bound = (int(want), len(self._sizes))
        shelves = self._towards(x, y)
        below = [e for shelf in shelves
                 if (e := self._first_fit(shelf, x, y, bisect_right(shelf, bound), -1))]
        if below:
            return max(below)[1]
        above = [e for shelf in shelves
                 if (e := self._first_fit(shelf, x, y, bisect_right(shelf, bound), 1))]
        return min(above)[1] if above else None

    def partitions_on(self, x: int) -> set[int]:
        """Every partition ``x`` holds."""
        return {p for shelf in self._of(x) for _, p in shelf}

    def moved(self, p: int, x: int, before: Sequence[int], now: Sequence[int]) -> None:
        """Take ``p`` off ``x``'s shelves, shelve it on its new broker, and on the others for the
        racks it may newly go to. Without the taking off, best fit reads past more and more
        partitions that left, right where it looks (the sizes it picks)."""
        entry = (self._sizes[p], p)
        for shelf in self._of(x):
            at = bisect_left(shelf, entry)
            while at < len(shelf) and shelf[at] == entry:
                del shelf[at]
        for b in now:
            was = self._destinations(p, b, before) if b in before else frozenset()
            if was is not None:
                racks = self._destinations(p, b, now)
                self._shelve(p, b, racks if racks is None else racks - was, sort=True)

    def _first_fit(self, shelf: Shelf, x: int, y: int, split: int, step: int
                   ) -> tuple[int, int] | None:
        """The first entry from ``split`` (down with step -1, from split - 1) that ``y`` may
        take; entries whose racks went stale are dropped on the way (an "any rack" one is
        shelved again for the racks it may still go to)."""
        at = split - 1 if step < 0 else split
        while 0 <= at < len(shelf):
            p = shelf[at][1]
            if self._keeps_racks(p, x, y):
                if y not in self._replicas_of(p):
                    return shelf[at]
                at += step
                continue
            del shelf[at]
            if shelf is self._anywhere.get(x):
                self._shelve(p, x, self._destinations(p, x, self._replicas_of(p)), sort=True)
            at += min(step, 0)
        return None

    def _keeps_racks(self, p: int, x: int, y: int) -> bool:
        """Whether moving ``p``'s replica from ``x`` to ``y`` (a target) leaves it on as many
        racks as it spans in the input."""
        if self._rack_of is None or self._rack_of.get(y) == self._rack_of.get(x):
            return True
        racks = self._destinations(p, x, self._replicas_of(p))
        return racks is None or self._rack_of.get(y) in racks

    def _diversity(self, p: int) -> int:
        rack_of = self._rack_of
        return len({rack_of.get(b) for b in self._table.replicas[p]} - {None}) if rack_of else 0

    def _towards(self, x: int, y: int) -> tuple[Shelf, Shelf]:
        """The shelves of ``x`` that hold every partition ``y`` may take from it."""
        rack = self._rack_of.get(y) if self._rack_of else None
        return self._anywhere.get(x, []), self._to_rack.get(x, {}).get(rack, [])

    def _destinations(self, p: int, b: int, replicas: Sequence[int]
                      ) -> frozenset[str | None] | None:
        """The racks ``p``'s replica on ``b`` may move to; None when any rack will do."""
        rack_of = self._rack_of
        if rack_of is None:
            return None
        others = {rack_of.get(o) for o in replicas if o != b}
        if len(others - {None}) >= self._diversity(p):
            return None
        return (self._everywhere - others) | {rack_of.get(b)}

    def _of(self, b: int) -> list[Shelf]:
        return [self._anywhere.get(b, []), *self._to_rack.get(b, {}).values()]

    def _shelve(self, p: int, b: int, racks: frozenset[str | None] | None, sort: bool) -> None:
        shelves = [self._anywhere.setdefault(b, [])] if racks is None else [
            self._to_rack.setdefault(b, {}).setdefault(rack, []) for rack in racks]
        for shelf in shelves:
            if sort:
                insort(shelf, (self._sizes[p], p))
            else:
                shelf.append((self._sizes[p], p))


def bytes_per_broker(replicas: Sequence[Replicas], sizes: Sequence[int]) -> dict[int, int]:
    """Bytes each broker holds: every partition's size once per replica."""
    held: dict[int, int] = {}
    for size, members in zip(sizes, replicas, strict=True):
        for b in members:
            held[b] = held.get(b, 0) + size
    return held


def topic_bytes_per_broker(topics: Mapping[str, Mapping[int, Replicas]],
                           sizes: Mapping[TopicPartition, int]) -> dict[int, int]:
    """:func:`bytes_per_broker` over ``topics`` (name -> partition -> replicas, as a snapshot
    holds them), a partition ``sizes`` does not measure counting 0."""
    return bytes_per_broker([r for parts in topics.values() for r in parts.values()],
                            [sizes.get(TopicPartition(t, p), 0)
                             for t, parts in topics.items() for p in parts])
