"""Changing the replication factor of topics with the fewest moves. Pure.

An increase keeps every replica and the preferred leader, and adds each new replica on an
eligible broker: a rack the partition lacks first, then the fewest replicas of the topic (its
spread is what the change is judged by), then the fewest replicas overall; the moves are
exactly the replicas added, the lower bound. A decrease drops followers from the most loaded
brokers, first where a rack holds two of the partition's replicas, and never the leader; it
moves nothing.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping, Sequence

from kadmin.balance.table import PartitionTable
from kadmin.model import InvalidInput, Replicas


def change_replication_factor(table: PartitionTable, factor: int, brokers: Collection[int],
                              loads: Mapping[int, int], rack_of: Mapping[int, str] | None = None
                              ) -> dict[int, Replicas]:
    """The new replica lists (only those that change). ``loads`` are the replicas each broker
    holds today, over the whole cluster: a new replica goes where there is the least data."""
    if factor < 1:
        raise InvalidInput(f"--replication-factor must be at least 1, got {factor}")
    if factor > len(brokers):
        raise InvalidInput(f"--replication-factor {factor} is larger than the {len(brokers)} "
                           f"target broker(s)")
    chooser = _LeastLoaded(brokers, loads, rack_of)
    out: dict[int, Replicas] = {}
    start = 0
    while start < len(table):
        end = start
        while end < len(table) and table.topic_of[end] == table.topic_of[start]:
            end += 1
        topic_counts: dict[int, int] = {}
        for members in table.replicas[start:end]:
            for b in members:
                topic_counts[b] = topic_counts.get(b, 0) + 1
        for i in range(start, end):
            members = table.replicas[i]
            if len(members) != factor:
                out[i] = chooser.resize(members, factor, topic_counts)
        start = end
    return out


class _LeastLoaded:
    def __init__(self, brokers: Collection[int], loads: Mapping[int, int],
                 rack_of: Mapping[int, str] | None) -> None:
        self.load = {b: loads.get(b, 0) for b in brokers}
        self.heap = [(n, b) for b, n in self.load.items()]
        heapq.heapify(self.heap)
        self.rack_of = rack_of
        self.racks = frozenset(rack_of[b] for b in brokers) if rack_of else frozenset()

    def resize(self, members: Replicas, factor: int, topic_counts: dict[int, int]) -> Replicas:
        new = list(members)
        while len(new) < factor:
            b = self._least_loaded(new, topic_counts)
            new.append(b)
            self._count(b, 1, topic_counts)
        while len(new) > factor:
            b = self._most_loaded_follower(new)
            new.remove(b)
            self._count(b, -1, topic_counts)
        return tuple(new)

    def _count(self, b: int, step: int, topic_counts: dict[int, int]) -> None:
        topic_counts[b] = topic_counts.get(b, 0) + step
        if b in self.load:
            self.load[b] += step
            heapq.heappush(self.heap, (self.load[b], b))

    def _least_loaded(self, new: Sequence[int], topic_counts: Mapping[int, int]) -> int:
        """The broker for a new replica: a rack the partition lacks first, then the fewest
        replicas of the topic (a topic's spread is what its replication factor change is seen
        by; with the same moves any broker will do), then the least loaded. Brokers come off
        the heap by load; the scan stops once no broker further on can beat the best so far
        (a rack the partition lacks if one is left, the topic's least count, same load at
        most)."""
        held = {self.rack_of.get(b) for b in new} if self.rack_of else set()
        rack_matters = bool(self.racks - held)
        fewest = self._fewest(topic_counts)
        popped: list[tuple[int, int]] = []
        best: tuple[bool, int, int, int] | None = None
        while self.heap:
            item = heapq.heappop(self.heap)
            n, b = item
            if n != self.load[b] or item in popped:
                continue  # stale, or a duplicate of a fresh entry
            popped.append(item)
            if (best is not None and n > best[2] and (not rack_matters or not best[0])
                    and best[1] <= fewest):
                break
            if b in new:
                continue
            key = (rack_matters and self.rack_of is not None and self.rack_of[b] in held,
                   topic_counts.get(b, 0), n, b)
            if best is None or key < best:
                best = key
        for item in popped:
            heapq.heappush(self.heap, item)
        assert best is not None  # factor <= brokers, so some broker is free
        return best[3]

    def _fewest(self, topic_counts: Mapping[int, int]) -> int:
        """The least count of the topic on a target broker: 0 while some target holds none."""
        held = sum(1 for b, n in topic_counts.items() if n > 0 and b in self.load)
        if held < len(self.load):
            return 0
        return min(topic_counts.get(b, 0) for b in self.load)

    def _most_loaded_follower(self, new: list[int]) -> int:
        racks = [self.rack_of.get(b) for b in new] if self.rack_of else []

        def key(b: int) -> tuple[bool, int, int]:
            shared = bool(racks) and racks.count(self.rack_of.get(b) if self.rack_of else None) > 1
            return (shared, self.load.get(b, 0), -b)

        return max(new[1:], key=key)
