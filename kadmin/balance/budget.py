"""Partial plans: the most useful part of a balanced plan within a budget of moves. Pure.

Incremental rebalancing (kafka-utils' ``--max-partition-movements``) only works if each step is a
piece of the same journey: the step here is a subset of the optimal plan's changes, so the rest
of that plan is still optimal from where the step ends, and the next run finds it again. Which
subset: the brokers most above their ceiling are relieved first, one change at a time.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    """One partition's change: the brokers it relieves (each gives one unit), and its cost."""

    key: Hashable
    gives: tuple[int, ...]
    cost: int


def most_loaded_first(changes: Sequence[Change], excess: Mapping[int, int], budget: int
                      ) -> list[Change]:
    """Changes chosen until ``budget`` is spent: each time from the broker with the most units
    still to give (``excess``), the first change of it in plan order that still fits the
    budget. Changes that cost nothing are always taken."""
    left = dict(excess)
    free = [c for c in changes if c.cost == 0]
    queues: dict[int, deque[Change]] = {}
    for change in changes:
        if change.cost:
            for b in change.gives:
                queues.setdefault(b, deque()).append(change)

    heap = [(-left.get(b, 0), b) for b in sorted(queues)]
    heapq.heapify(heap)
    taken: set[Hashable] = set()
    chosen: list[Change] = []
    while heap and budget > 0:
        key, b = heapq.heappop(heap)
        if -key != left.get(b, 0):
            heapq.heappush(heap, (-left.get(b, 0), b))
            continue
        queue = queues[b]
        while queue and (queue[0].key in taken or queue[0].cost > budget):
            queue.popleft()  # budget only shrinks: a change too big now stays too big
        if not queue:
            continue
        change = queue.popleft()
        taken.add(change.key)
        chosen.append(change)
        budget -= change.cost
        for g in change.gives:
            left[g] = left.get(g, 0) - 1
        if queue:
            heapq.heappush(heap, (-left.get(b, 0), b))
    return free + chosen
