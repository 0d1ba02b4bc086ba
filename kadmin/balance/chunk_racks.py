"""The replica stage over chunks with racks, exactly (:func:`plan_racks`): the class program of
:mod:`kadmin.balance.classes` once over the whole selection on the Spark driver, then once per
chunk. Pure: the chunks are :class:`kadmin.balance.part.Parts`.

A selection of at most :data:`kadmin.balance.driver.WHOLE_PARTITIONS` partitions is gathered on
the driver as read and planned as ``plan rebalance`` plans it (:func:`kadmin.balance.classes.plan`:
the fewest moves keeping the racks, then the least worst topic spread at those moves, both over
the whole, proven where the program says so); each chunk gets its lists back. Larger ones go
as follows.

Partitions on the same replica set are interchangeable for the moves, so the driver needs only
how many partitions each chunk holds on each replica set (:class:`ReplicaSets`, as read; a
replica set per column group, so a few hundred sets where partitions were placed in runs). It
solves the min-cost flow of :func:`kadmin.balance.classes.fewest_by_sets` over the sum: the
fewest moves ``F`` of any plan that ends every target broker within its balanced range of the
whole selection without a partition losing a rack, the rack-kept lower bound ``plan
rebalance`` proves. Each set's units are dealt into one replica list per partition
(:func:`kadmin.balance.realise.deal`, every list keeping its racks), the lists handed to the
set's chunks in chunk order, and each chunk's end counts per broker are the sum of its lists.

Each chunk then runs the class program over itself (:class:`Racked`) with every broker ranged
to exactly that count: the fewest moves keeping its racks at those counts, then the least
worst topic spread at those moves. Why the moves add up to ``F``: the dealt lists are a plan
of each chunk at its counts, so each chunk's fewest ``F_c`` is at most what its lists move and
``sum F_c <= F``; and the chunks' plans together end every broker on the whole optimum's
count, within its range, keeping every rack, so ``sum F_c >= F``. Hence the plan makes exactly
``F``, proven. The topic spread is proven only chunk by chunk: each chunk's is the least at its
forced counts, and other counts per chunk (the same moves in total) could let the whole reach
a smaller spread; over the whole only the topics' own floor (0 or 1) is claimed.

Where the racks cost no move over the rack-free bound, or the program does not apply (a target
without a rack, capacities, ``--topic-spread``, too many replica sets, no plan keeps every rack
within the ranges), the quota rounds of :mod:`kadmin.balance.chunks` plan as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import cast

from kadmin.balance import classes, driver
from kadmin.balance.across import RackBalance
from kadmin.balance.driver import Driver
from kadmin.balance.part import Racked, Replace, ReplicaSets, added, picked_table
from kadmin.balance.racks import held_in_racks
from kadmin.balance.realise import deal


@dataclass(frozen=True)
class RacksPlanned:
    """What :func:`plan_racks` did and proves."""

    fewest: int
    """The fewest moves of any plan keeping every partition's racks with every broker within
    its balanced range of the whole selection: the plan's moves and its lower bound, proven."""
    rack_free: int
    """The lower bound racks aside."""
    within: int
    """Partitions with one replica on each rack they must keep: they may move only inside
    their racks, why ``fewest`` exceeds ``rack_free``."""
    chunks: int
    spread: int
    """The worst topic spread over the chunks."""
    chunks_proven: int
    """Chunks whose worst topic spread is proven the least at their counts and moves."""
    least: int
    """No plan of these moves has a smaller worst topic spread (per chunk: only the topics'
    own floor, 1 where some topic's replicas do not divide evenly over the targets, else 0)."""
    whole: bool = False
    """Planned over the whole selection on the driver: the spread proven over the whole where
    it meets ``least`` (else chunk by chunk at the counts split from the whole)."""

    def balance(self) -> RackBalance:
        """In ``plan rebalance``'s words: every broker balanced, the racks kept, the bound
        proven, ``within`` partitions why it exceeds the rack-free one."""
        return RackBalance(True, self.rack_free, True, self.fewest, within=self.within)


def plan_racks(run: Driver, rack_free: int) -> RacksPlanned | None:
    """Plan the chunks by the class program (see the module docstring), or None where it does
    not apply or the racks cost no move over ``rack_free`` (the chunks then stay as read)."""
    context, objective = run.context, run.context.objective
    rack_of = context.rack_of
    if rack_of is None or objective.weights is not None or not objective.even_topics \
            or objective.topic_spread is not None:
        return None
    brokers = sorted(context.targets)
    if any(b not in rack_of for b in brokers):
        return None
    served = len({rack_of[b] for b in brokers})
    if sum(c.partitions for c in run.state) <= driver.WHOLE_PARTITIONS:
        return _whole(run, brokers, rack_free, rack_of, served)
    per_set = len(brokers) + 2 * served + 1  # the program's columns per replica set
    answers = run.ask(ReplicaSets(classes.LIMIT // per_set), "replica sets")
    if any(a is None for a in answers):
        return None
    held = cast("list[dict[frozenset[int], int]]", answers)
    sets = added(held)
    found = classes.fewest_by_sets(sets, brokers, run.ranges(), rack_of)
    if found is None or found[0] <= rack_free:
        return None
    fewest, units = found
    kept, state = run.parts.hold(), list(run.state)
    run.apply([Racked(counts) for counts in chunk_counts(held, units, rack_of)], "racks")
    failed = any(c.failed or c.topics is None for c in run.state)  # not expected
    run.parts.let_go(kept, restore=failed)
    if failed:  # the chunks as read again, for the quota rounds
        run.state = state
        return None
    goals = [c.topics for c in run.state if c.topics is not None]
    return RacksPlanned(fewest, rack_free, _within(sets, rack_of, served), len(goals),
                        max(g.spread for g in goals), sum(g.exact for g in goals),
                        max(c.least for c in run.state))


def _whole(run: Driver, brokers: Sequence[int], rack_free: int, rack_of: Mapping[int, str],
           served: int) -> RacksPlanned | None:
    """The selection gathered on the driver as read and planned by
    :func:`kadmin.balance.classes.plan` over the whole, each chunk's lists sent back."""
    picked = run.parts.pick(brokers, max(c.partitions for c in run.state))
    flat = [p for chunk in picked for p in chunk]
    found = classes.plan(picked_table(flat, [p.original for p in flat]), brokers, run.ranges(),
                         rack_of, beyond=rack_free)
    if found is None:
        return None
    starts = accumulate((len(chunk) for chunk in picked), initial=0)
    run.apply([Replace({p.index: found.final[start + j] for j, p in enumerate(chunk)
                        if start + j in found.final})
               for chunk, start in zip(picked, starts, strict=False)], "racks, whole selection")
    sets: dict[frozenset[int], int] = {}
    for p in flat:
        sets[frozenset(p.original)] = sets.get(frozenset(p.original), 0) + 1
    proven = found.spread == found.least
    return RacksPlanned(found.moves, rack_free, _within(sets, rack_of, served), len(picked),
                        found.spread, len(picked) if proven else 0, found.least, whole=True)


def _within(sets: Mapping[frozenset[int], int], rack_of: Mapping[int, str], served: int) -> int:
    """Partitions with one replica on each rack they must keep (they move only inside them)."""
    return sum(n for members, n in sets.items() if held_in_racks(members, rack_of, served))


def chunk_counts(held: Sequence[Mapping[frozenset[int], int]],
                 units: Mapping[frozenset[int], Mapping[int, int]], rack_of: Mapping[int, str]
                 ) -> list[dict[int, int]]:
    """Each chunk's end count per target broker: every replica set's ``units`` dealt into one
    list per partition (:func:`kadmin.balance.realise.deal`), handed to the chunks holding
    the set (``held``: partitions per set in each chunk) interleaved in proportion to their
    partitions there, so every chunk gets its share of each kind of list (the moves, and
    which brokers they go to, spread over the chunks as their topics are)."""
    brokers = sorted({b for counts in units.values() for b in counts})
    racks = sorted({rack_of[b] for b in brokers})
    by_rack = {r: [b for b in brokers if rack_of[b] == r] for r in racks}
    out: list[dict[int, int]] = [dict.fromkeys(brokers, 0) for _ in held]
    for members, counts in units.items():
        shares = [chunk.get(members, 0) for chunk in held]
        lists = deal(counts, sum(shares), racks, by_rack)
        turns = sorted(((k + 0.5) / n, c) for c, n in enumerate(shares) for k in range(n))
        for (_, c), end in zip(turns, sorted(lists, key=sorted), strict=True):
            for b in end:
                out[c][b] += 1
    return out
