"""Topic spreads at any size: a plan's worst topic spread, and a lower bound on the least worst
topic spread of the plans with the fewest moves (the certificate of the default objective). Pure.

Counts are kept per (topic, target broker) cell, sparse, computed with numpy (imported where it
is used: Spark's executors import this module through the balancing core and may lack it), so a
million partitions on a thousand brokers cost a second, not a pass over every topic and broker.

**The bound.** Let ``now_b`` be broker ``b``'s replicas today, ``[lo_b, hi_b]`` its balanced
range (:meth:`kadmin.balance.targets.Group.bounds`, ``hi_b - lo_b <= 1``), and ``F`` the least
``sum_b max(0, end_b - now_b)`` over end states within the ranges
(:func:`kadmin.balance.targets.fewest_to_ranges`). Every plan arriving at ``end`` moves
``sum_b arrivals_b >= sum_b max(0, end_b - now_b) >= F`` replicas (``end_b = kept_b +
arrivals_b`` and ``kept_b <= now_b``). So when some plan makes exactly ``F`` moves, the fewest
there are, *every* plan of the fewest moves makes both inequalities equalities: each broker
either only takes (``arrivals_b = end_b - now_b <= hi_b - now_b``) or only gives (``now_b -
kept_b = now_b - end_b <= now_b - lo_b``). Hence in every such plan topic ``t``'s end count on
``b`` lies in the box ``[c_tb - give_b, c_tb + take_b]`` (clipped to ``[0, P_t]``: a partition
holds a broker once), with ``give_b = max(0, now_b - lo_b)``, ``take_b = max(0, hi_b -
now_b)``. A topic's spread is its max minus its min over the targets, and its ``R_t`` replicas
average ``R_t / n``, so

    spread_t >= max(max_b low_tb, ceil(R_t / n)) - min(min_b high_tb, floor(R_t / n)),

and the worst topic spread of every plan of the fewest moves is at least the largest of these.
Without such a plan (racks can make the fewest moves exceed ``F``) only the mean term is
certain: ``spread_t >= 1`` when ``n`` does not divide ``R_t``.

**Water levels.** The end counts of topic ``t`` also add up to ``R_t`` (every replica ends on a
target), each within its box ``[low_tb, high_tb]``. So its least count ``L`` satisfies
``sum_b max(L, low_tb) <= R_t`` and its largest ``M`` satisfies ``sum_b min(M, high_tb) >= R_t``:
the water-filling levels (:meth:`Boxes.levels`, bisection on the monotone sums) replace the
mean's floor and ceiling above and are never looser (``n L <= R_t <= n M``). They matter on
drains of evenly placed clusters: every target only takes, most targets hold none of a topic
and only a few of its replicas arrive, so its least count stays 0 where the mean says 1
(and the topic x broker program of :mod:`kadmin.balance.aggregate` then has its windows fixed:
a linear program instead of branch and bound).

**The budget bound.** Within spread ``k`` a topic's least count ``L_t`` is at most its low
water level (at most its mean), so every count ends at most that ``+ k``, and at least its high
water level ``- k`` (at least ``ceil(R_t / n) - k``). In a
plan of ``F`` moves broker ``b`` must then give at least ``sum_t max(0, c_tb - floor(R_t / n)
- k)`` and take at least ``sum_t max(0, ceil(R_t / n) - k - c_tb)``: neither may exceed
``give_b`` (``take_b``), and the gives of all brokers together may not exceed the ``F`` minus
the replicas outside the targets that leave anyway (the takes, ``F``). The least ``k`` that
passes is a bound on the worst topic spread: it couples the topics through the brokers, where
the per-topic bound sees each topic alone (a grown cluster whose old brokers hold many topics
three times each, and give only a few replicas, cannot bring them all to two).

A plan of the fewest moves whose worst topic spread meets the bound is the lexicographic
optimum (moves, then worst topic spread): no plan of as few moves does better. On skewed
clusters the bound is tight because the brokers that must take (or stay) already hold some
topic several times, and taking never lowers a count.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Cells:
    """Replicas per (topic, target broker), only the cells that hold some, sorted by topic."""

    topic: np.ndarray
    broker: np.ndarray
    """Index into the sorted targets."""
    count: np.ndarray


def cells(replicas: Sequence[Replicas], topic_of: Sequence[int], targets: Sequence[int]) -> Cells:
    """The cells of ``replicas`` (partition ``i`` of topic ``topic_of[i]``) on ``targets``
    (sorted); replicas elsewhere are not counted."""
    import numpy as np
    lengths = np.fromiter(map(len, replicas), dtype=np.int64, count=len(replicas))
    flat = np.fromiter(chain.from_iterable(replicas), dtype=np.int64, count=int(lengths.sum()))
    topic = np.repeat(np.asarray(topic_of, dtype=np.int64), lengths)
    order = np.asarray(targets, dtype=np.int64)
    at = np.minimum(np.searchsorted(order, flat), len(order) - 1)
    inside = order[at] == flat
    keys, count = np.unique(topic[inside] * len(order) + at[inside], return_counts=True)
    return Cells(keys // len(order), keys % len(order), count)


def per_topic(c: Cells, values: np.ndarray, topics: int, fill: int, reduce: str
               ) -> np.ndarray:
    """``values`` (one per cell) reduced per topic with numpy's ``maximum``/``minimum``;
    ``fill`` for topics with no cell."""
    import numpy as np
    out = np.full(topics, fill, dtype=np.int64)
    if len(values):
        starts = np.flatnonzero(np.r_[True, c.topic[1:] != c.topic[:-1]])
        out[c.topic[starts]] = getattr(np, reduce).reduceat(values, starts)
    return out


def topic_replicas(table: PartitionTable) -> np.ndarray:
    """Replicas of each topic (by index), every partition's replication factor added up."""
    import numpy as np
    sizes = np.fromiter(map(len, table.replicas), dtype=np.int64, count=len(table))
    return np.bincount(np.asarray(table.topic_of, dtype=np.int64), weights=sizes,
                       minlength=len(table.topics)).astype(np.int64)


def topic_spreads(table: PartitionTable, final: Mapping[int, Replicas],
                  targets: Collection[int]) -> np.ndarray:
    """Each topic's spread over ``targets`` once ``final`` (changed lists by partition) is
    made: max minus min of its counts, the min 0 unless it holds every target."""
    import numpy as np
    order = sorted(targets)
    after = [final.get(i, r) for i, r in enumerate(table.replicas)] if final else table.replicas
    c = cells(after, table.topic_of, order)
    topics = len(table.topics)
    high = per_topic(c, c.count, topics, 0, "maximum")
    low = per_topic(c, c.count, topics, 0, "minimum")
    held = np.bincount(c.topic, minlength=topics)
    return np.where(held == len(order), high - low, high)


def worst_spread(table: PartitionTable, final: Mapping[int, Replicas],
                 targets: Collection[int]) -> int:
    """The largest topic spread over ``targets`` once ``final`` is made (0 for no topic)."""
    spreads = topic_spreads(table, final, targets)
    return int(spreads.max()) if len(spreads) else 0


@dataclass(frozen=True)
class Boxes:
    """The boxes of the module docstring: per (topic, target) cell the least and most count it
    can end with in a plan of the fewest moves (targets not holding a topic: 0 and
    ``min(take_b, P_t)``), and what the bounds need of each broker and topic."""

    c: Cells
    low: np.ndarray
    high: np.ndarray
    give: np.ndarray
    take: np.ndarray
    """Per target (sorted): the most it may give, or take."""
    replicas: np.ndarray
    partitions: np.ndarray
    """Per topic."""

    @property
    def n(self) -> int:
        return len(self.take)

    @classmethod
    def of(cls, table: PartitionTable, targets: Collection[int],
           bounds: Mapping[int, tuple[int, int]], now: Mapping[int, int]) -> Boxes:
        import numpy as np
        order = sorted(targets)
        replicas = topic_replicas(table)
        partitions = np.bincount(np.asarray(table.topic_of, dtype=np.int64),
                                 minlength=len(table.topics))
        give, take = allowance(now, bounds, order)
        c = cells(table.replicas, table.topic_of, order)
        low = np.maximum(0, c.count - give[c.broker])
        high = np.minimum(c.count + take[c.broker], partitions[c.topic])
        return cls(c, low, high, give, take, replicas, partitions)

    def mean(self) -> tuple[np.ndarray, np.ndarray]:
        """Per topic, the floor and ceiling of its mean count over the targets: what its least
        end count is at most and its largest at least, in any plan."""
        return self.replicas // self.n, -(-self.replicas // self.n)

    def levels(self) -> tuple[np.ndarray, np.ndarray]:
        """Per topic, the highest its least end count and the lowest its largest end count
        can be (water filling): the end counts lie in their boxes and add up to ``R_t``, so
        the least ``L`` has ``sum_b max(L, low_tb) <= R_t`` and the largest ``M`` has
        ``sum_b min(M, high_tb) >= R_t``; each found by bisection on the monotone sums, all
        topics at once. Both are within the mean's floor and ceiling (``n L <= R_t <= n M``)
        and at least as tight (the per-topic bound of the module docstring)."""
        import numpy as np
        c, n = self.c, self.n
        topics = len(self.replicas)
        held = np.bincount(c.topic, minlength=topics)
        ranked = np.sort(self.take)
        prefix = np.r_[0, np.cumsum(ranked)]

        def filled_to(level: np.ndarray) -> np.ndarray:  # sum_b max(level, low_tb)
            over = np.maximum(level[c.topic], self.low)
            return np.bincount(c.topic, weights=over, minlength=topics) + (n - held) * level

        def capped_at(level: np.ndarray) -> np.ndarray:  # sum_b min(level, high_tb)
            level = np.minimum(level, self.partitions)
            every = np.searchsorted(ranked, level)  # sum over targets of min(level, take_b)
            every = prefix[every] + (n - every) * level
            own = np.bincount(c.topic, weights=np.minimum(level[c.topic], self.take[c.broker]),
                              minlength=topics)
            cells_sum = np.bincount(c.topic, weights=np.minimum(level[c.topic], self.high),
                                    minlength=topics)
            return every - own + cells_sum

        # highest L: filled_to(lo) <= R always holds at 0; hi is infeasible (n (floor+1) > R)
        lo = np.zeros(topics, dtype=np.int64)
        hi = self.replicas // n + 1
        while (hi - lo > 1).any():
            mid = (lo + hi) // 2
            ok = filled_to(mid) <= self.replicas
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        highest_low = lo
        # lowest M: capped_at(lo) < R (lo = ceil - 1 < the mean); hi feasible (P + 1: a
        # sentinel where even P falls short, which no plan of the fewest moves allows)
        lo = -(-self.replicas // n) - 1
        hi = np.maximum(self.partitions + 1, lo + 1)
        while (hi - lo > 1).any():
            mid = (lo + hi) // 2
            ok = capped_at(mid) >= self.replicas
            lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
        return highest_low, hi

    def least_spreads(self, low_level: np.ndarray, high_level: np.ndarray) -> np.ndarray:
        """:func:`least_spreads` of these boxes with ``low_level`` and ``high_level`` (the
        mean's, :meth:`mean`, or the water levels, :meth:`levels`)."""
        return _bounded(*self.per_topic_bound(), low_level, high_level)

    def per_topic_bound(self) -> tuple[np.ndarray, np.ndarray]:
        """Per topic, the largest of the box lows and the least of the box highs (the latter
        over the targets not holding the topic too)."""
        import numpy as np
        c, take, partitions = self.c, self.take, self.partitions
        topics = len(self.replicas)
        most_low = per_topic(c, self.low, topics, 0, "maximum")
        least_high = per_topic(c, self.high, topics, np.iinfo(np.int64).max, "minimum")
        # brokers not holding the topic: low 0, high min(take_b, P_t); the smallest take_b
        # among them is the smallest take overall unless the topic holds every broker that
        # has it
        smallest = int(take.min())
        spare = np.flatnonzero(take == smallest)
        holding = np.bincount(c.topic[take[c.broker] == smallest], minlength=topics)
        absent = np.minimum(smallest, partitions)
        crowded = np.flatnonzero(holding >= len(spare))
        if len(crowded):
            by_take = np.argsort(take, kind="stable")
            starts = np.searchsorted(c.topic, crowded)
            ends = np.searchsorted(c.topic, crowded, side="right")
            for t, s, e in zip(crowded.tolist(), starts.tolist(), ends.tolist(), strict=True):
                mine = set(c.broker[s:e].tolist())
                other = next((int(take[b]) for b in by_take if int(b) not in mine), None)
                absent[t] = partitions[t] if other is None else min(other, int(partitions[t]))
        return most_low, np.minimum(least_high, absent)


def allowance(now: Mapping[int, int], bounds: Mapping[int, tuple[int, int]],
              order: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per target of ``order`` (sorted), the most it gives and the most it takes in a plan of
    the fewest moves: ``max(0, now_b - lo_b)`` and ``max(0, hi_b - now_b)`` (the module
    docstring's ``give_b`` and ``take_b``)."""
    import numpy as np
    held = np.array([now.get(b, 0) for b in order], dtype=np.int64)
    give = np.maximum(0, held - np.array([bounds[b][0] for b in order], dtype=np.int64))
    take = np.maximum(0, np.array([bounds[b][1] for b in order], dtype=np.int64) - held)
    return give, take


def least_spreads(table: PartitionTable, targets: Collection[int],
                  bounds: Mapping[int, tuple[int, int]] | None, now: Mapping[int, int] | None,
                  levels: bool = False) -> np.ndarray:
    """Per topic, the lower bound of the module docstring on its spread in every plan of the
    fewest moves that ends within ``bounds``. ``now``: replicas per target today, given only
    when some plan of ``F`` moves is known (else only the mean term holds, as without
    ``bounds``). ``levels``: with the water levels of :meth:`Boxes.levels` in place of the
    mean (tighter, a few passes over the cells more)."""
    n = len(targets)
    if bounds is None or now is None:
        replicas = topic_replicas(table)
        return -(-replicas // n) - replicas // n
    boxes = Boxes.of(table, targets, bounds, now)
    return boxes.least_spreads(*(boxes.levels() if levels else boxes.mean()))


def _bounded(most_low: np.ndarray, least_high: np.ndarray, low_level: np.ndarray,
             high_level: np.ndarray) -> np.ndarray:
    """Per topic, the per-topic bound of the module docstring with ``low_level`` and
    ``high_level`` (the mean's floor and ceiling, or the water levels)."""
    import numpy as np
    return np.maximum(most_low, high_level) - np.minimum(least_high, low_level)


def least_spread(table: PartitionTable, targets: Collection[int],
                 bounds: Mapping[int, tuple[int, int]] | None, now: Mapping[int, int] | None,
                 reached: int, levels: bool = False) -> int:
    """The worst topic spread no plan of the fewest moves within ``bounds`` goes below (``now``
    as for :func:`least_spreads`): the largest per-topic bound, raised while the budget bound
    of the module docstring refuses it, up to ``reached`` (a spread some such plan has).

    Cheapest first, each stage only where the one before leaves a gap: the per-topic bound
    with the mean, the budget bound with the mean (these two prove the million-partition
    runs), then, with ``levels``, both with the water levels (:meth:`Boxes.levels`; each
    topic's own, so Spark's chunks certify them and their budget needs add up)."""
    if bounds is None or now is None:
        return min(int(least_spreads(table, targets, bounds, now).max(initial=0)), reached)
    from kadmin.balance.targets import fewest_to_ranges
    boxes = Boxes.of(table, targets, bounds, now)  # built once for every stage
    most_low, least_high = boxes.per_topic_bound()
    mean = boxes.mean()
    k = int(_bounded(most_low, least_high, *mean).max(initial=0))
    if k >= reached:
        return reached
    total = int(boxes.replicas.sum())
    fewest = fewest_to_ranges({b: now.get(b, 0) for b in sorted(targets)}, bounds, total)
    k = _budget(boxes, fewest, *mean, k, reached)
    if k >= reached or not levels:
        return k
    low_level, high_level = boxes.levels()
    k = max(k, int(_bounded(most_low, least_high, low_level, high_level).max(initial=0)))
    return _budget(boxes, fewest, low_level, high_level, k, reached)


def _budget(boxes: Boxes, fewest: int, low_level: np.ndarray, high_level: np.ndarray, k: int,
            reached: int) -> int:
    """The least spread from ``k`` up to ``reached`` that the budget bound of the module
    docstring passes, every topic's least count at most ``low_level`` and its largest at
    least ``high_level``."""
    c, n = boxes.c, boxes.n
    return least_admitted(lambda k: needs(c, low_level, high_level, k, n), boxes.give,
                          boxes.take, int(boxes.replicas.sum()) - int(c.count.sum()), fewest,
                          k, reached)


def least_admitted(needs_at: Callable[[int], tuple[np.ndarray, np.ndarray]], give: np.ndarray,
                   take: np.ndarray, outside: int, fewest: int, k: int, reached: int) -> int:
    """The budget bound's loop: the least spread from ``k`` up to ``reached`` whose
    :func:`needs` (``needs_at``, of one table or added up over tables of disjoint topics) a
    plan of ``fewest`` moves can give and take (:func:`admits`; ``give``/``take``:
    :func:`allowance`; ``outside``: the replicas on no target, which leave anyway)."""
    leaving = fewest - outside
    """Replicas the targets give in a plan of ``F`` moves (the rest come from outside)."""
    while k < reached:
        # every count within [M_t - k, L_t + k]: what each broker must give and take for it
        if admits(*needs_at(k), give, take, leaving, fewest):
            return k
        k += 1
    return k


def needs(c: Cells, floor: np.ndarray, ceil: np.ndarray, k: int, n: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """Per target broker, the replicas of the cells' topics it must give and take for every
    one of them to end within spread ``k`` (the budget bound of the module docstring;
    ``floor``/``ceil``, each topic's mean replicas per target, or its water levels). Sums
    over topics: tables of disjoint topics add up (Spark's chunks)."""
    import numpy as np
    gives = np.bincount(c.broker, weights=np.maximum(0, c.count - floor[c.topic] - k),
                        minlength=n)
    least = np.maximum(0, ceil - k)
    takes = least.sum() - np.bincount(c.broker, weights=np.minimum(c.count, least[c.topic]),
                                      minlength=n)
    return gives, takes


def admits(gives: np.ndarray, takes: np.ndarray, give: np.ndarray, take: np.ndarray,
           leaving: int, fewest: int) -> bool:
    """Whether a plan of ``fewest`` moves can give and take :func:`needs`' replicas: no broker
    beyond what it gives (``give``) or takes (``take``) in such a plan, the targets' gives
    within ``leaving``, the takes within ``fewest``."""
    return bool((gives <= give).all() and (takes <= take).all() and gives.sum() <= leaving
                and takes.sum() <= fewest)
