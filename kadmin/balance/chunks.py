"""Rebalancing in chunks of topics: the rounds the Spark driver runs over the chunks (what a
task does to its chunk is :mod:`kadmin.balance.part`). Pure: the Spark job supplies the chunks
(:class:`kadmin.balance.part.Parts`, one per Spark partition), tests supply a list
(:class:`Listed`), and both run the same stages (:mod:`kadmin.balance.stages`).

The driver only ever sees :class:`kadmin.balance.part.Counts`, a few thousand numbers per
chunk; the replica lists stay with the tasks. The rounds (see :mod:`kadmin.balance.quotas`
for why they meet the bound):

1. replicas: the fixed quota of the selected topics, split over the chunks, met by
   ``move_replicas`` in each, one copy per unit, again on what is left until all is met; with
   racks that cost moves over the rack-free bound, instead the class program over the whole
   and then per chunk (:mod:`kadmin.balance.chunk_racks`), which decides the topics too;
2. topics (:mod:`kadmin.balance.chunk_topics`), as ``plan rebalance`` does them
   (:func:`kadmin.balance.evenness.even_topics`, the exact program) but chunk by chunk: a
   chunk holds whole topics, so each topic's spread is the chunk's business, and only the
   brokers' counts tie the chunks together. By default each chunk small enough for the
   program (and whose executors have scipy) runs the lexicographic objective with every
   broker held to the count the rounds left it there, so the moves stay the bound (elsewhere
   the local search of :mod:`kadmin.balance.topics` the rounds ran stays). With
   ``--topic-spread N`` the driver first asks each chunk what its topics allow a broker to
   hold under spreads ``N, N+1...`` (:class:`kadmin.balance.part.Window`), takes the least
   ``k >= N`` for which counts per chunk and broker exist within those windows that keep each
   broker within its balanced range (:func:`kadmin.balance.quotas.compatible`; no plan
   reaches a smaller spread), and each chunk runs the program held to its counts: the fewest
   moves that keep its topics within ``k``. A chunk that cannot meet its counts ends as near
   them as it can (within :data:`kadmin.balance.part.SLACKS`) and is held there while the
   other chunks' counts are chosen again to make room; rounds of this end when every chunk
   met its counts (at most ``MAX_ROUNDS``, then each chunk keeps the counts the replica
   rounds left it, which it always meets). Where those moves exceed the bound, the brokers' counts are priced
   (:meth:`kadmin.balance.chunk_topics.TopicRounds.price`, a Lagrangian decomposition of the
   one exact program: rounds of one linear program per chunk), which raises the bound
   towards the fewest moves, and the chunks' counts averaged over the rounds are met the same
   way; the better of the two plans stays. Measured on five small clusters in 7 chunks
   (tests/unit/test_balance_chunks.py): 0 to 1.0% above the exact minimum, was 0 to 8.1%,
   with the bound 0 to 1.1% below it. By default (3.), every chunk is held to the
   certificate of :mod:`kadmin.balance.spreads` (:class:`kadmin.balance.part.Certify`, a
   question: the chunks only read), raised on small selections by the topic x broker program
   over the whole (:meth:`kadmin.balance.chunk_topics.TopicRounds._refuted`). See
   :class:`kadmin.balance.chunk_topics.TopicsPlanned` for what that proves of the whole;
4. with ``max_moves``: each chunk keeps its share of the budget, its most loaded brokers
   relieved first (the core's ``cut_moves``);
5. with ``leaders``: the fixed quota of preferred leaders over the planned replica lists, met by
   ``order_leaders`` in each chunk the same way.

Units the rounds leave (rare, see :mod:`kadmin.balance.quotas`) are met on the driver by the same
core functions over a bounded sample of the partitions concerned: the tail.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import cast

from kadmin.balance import stages
from kadmin.balance.chunk_racks import RacksPlanned, plan_racks
from kadmin.balance.chunk_topics import TopicRounds, TopicsPlanned
from kadmin.balance.driver import TAIL_PARTITIONS, Driver
from kadmin.balance.leaders import order_leaders
from kadmin.balance.part import (
    Answer,
    Context,
    Counts,
    Cut,
    Lead,
    Move,
    Part,
    Parts,
    Picked,
    Question,
    Replace,
    Step,
    added,
    leaders_then,
    picked_table,
)
from kadmin.balance.quotas import Chunk, budgets, leader_quota, meet, replica_quota
from kadmin.balance.replicas import move_replicas
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota
from kadmin.model import Replicas


@dataclass(frozen=True)
class Planned:
    lower_bound: int
    unplaced: int
    """Replica units no plan found (racks, or partitions as wide as the broker list)."""
    partial: bool
    """``max_moves`` cut the plan short: running again continues."""
    rounds: int
    """Rounds of tasks over the chunks, all kinds together."""
    topics: TopicsPlanned | None = None
    """What the topic step did (None: it did not run)."""
    racks: RacksPlanned | None = None
    """With racks, where the class program planned the chunks
    (:mod:`kadmin.balance.chunk_racks`): ``lower_bound`` is then its rack-kept fewest moves."""


def plan(parts: Parts, counts: Sequence[Counts], context: Context, *,
         exact_topics: bool = True, certify: bool = True, racks: bool = True,
         report: Callable[[str], None] = lambda _: None) -> Planned:
    """Rebalance the chunks (see the module docstring); ``counts`` are each chunk's counts as
    read; the goals are ``context.objective``'s. The chunks end with the plan; the result says
    how it relates to the bound. With ``--topic-spread`` every chunk must be small enough for
    the exact program (:data:`kadmin.balance.evenness.LIMIT`); ``exact_topics``: the default
    objective may run the exact program where a chunk is small enough (the executors have
    scipy); ``certify``: the default objective's spread is held to the certificate of
    :mod:`kadmin.balance.spreads` over every chunk (the executors have numpy); ``racks``: the
    class program of :mod:`kadmin.balance.chunk_racks` may run (the executors have scipy)."""
    chunked = ChunkStages(parts, counts, context, exact_topics, certify, racks, report)
    stages.run(chunked, context.objective)
    return Planned(chunked.bound, chunked.missing, chunked.partial, chunked.run.done,
                   chunked.planned_topics, chunked.racks)


class ChunkStages:
    """The stages of :mod:`kadmin.balance.stages` over the chunks, run by the driver: the
    replica and leader rounds and the cut here, the topic stage in
    :mod:`kadmin.balance.chunk_topics`. ``read``: each chunk's counts as read."""

    def __init__(self, parts: Parts, read: Sequence[Counts], context: Context,
                 exact_topics: bool, certify: bool, racks: bool,
                 report: Callable[[str], None]) -> None:
        self.run = Driver(parts, list(read), context)
        self.read, self.context, self.objective = read, context, context.objective
        self.exact_topics, self.certifies, self.report = exact_topics, certify, report
        self.exact_racks = racks
        self.bound = 0
        self.missing = 0
        self.planned_topics: TopicsPlanned | None = None
        self.partial = False
        self.racks: RacksPlanned | None = None

    def replicas(self) -> None:
        """With racks that cost moves over the rack-free bound, the class program over the
        whole selection and then per chunk (:mod:`kadmin.balance.chunk_racks`, where the
        executors have scipy); else the fixed quota of the selected topics split over the
        chunks and met round after round (:func:`kadmin.balance.quotas.meet`), the rest on the
        driver (the tail)."""
        run, context = self.run, self.context
        total = added(c.replicas for c in run.state)
        self.bound = replica_quota(total, context.targets, context.rack_of,
                                   weights=context.weights).units
        self.racks = plan_racks(run, self.bound) if self.exact_racks else None
        if self.racks is not None:
            self.bound = self.racks.fewest
            self.report(f"{self.moves():,} replica move(s) planned (lower bound {self.bound:,}: "
                        f"the fewest that keep every partition's racks, proven; "
                        f"{self.racks.rack_free:,} racks aside)")
            return
        moved = meet(replica_quota(total, context.targets, context.rack_of, fixed=True,
                                   weights=context.weights),
                     [Chunk(c.replicas, {}, c.partitions) for c in run.state],
                     run.rounds("replica moves", lambda q: Move(q, True), lambda c: c.replicas))
        self.missing = self._replica_tail() if moved.unmet else 0
        self.report(f"{self.moves():,} replica move(s) planned (lower bound {self.bound:,})"
                    + (f"; {self.missing:,} could not be placed" if self.missing else ""))

    def unplaced(self) -> int:
        return self.missing

    def topics(self) -> None:
        """The chunks' exact programs (with ``--topic-spread``, or by default where the
        executors have scipy), then, by default, the certificate (where they have numpy)."""
        if self.racks is not None:  # the class program decided the topics with the moves
            racks = self.racks
            self.planned_topics = TopicsPlanned(
                None, racks.chunks, len(self.run.state), racks.spread,
                racks.chunks_proven == racks.chunks, racks.least, self.moves(),
                chunks_proven=racks.chunks_proven, racked="whole" if racks.whole else "chunks")
            self.report(f"worst topic spread {racks.spread}; {racks.chunks_proven:,} of "
                        f"{racks.chunks:,} chunk(s) at the least their broker counts allow")
            return
        asked = self.objective.topic_spread
        rounds = TopicRounds(self.run)
        if asked is not None or self.exact_topics:
            self.planned_topics = topics = rounds.even(asked, self.bound)
            if topics is not None and asked is not None:
                self.report(f"{self.moves():,} replica move(s) keep every topic within spread "
                            f"{topics.spread if topics.spread > asked else asked}")
        if self.objective.least_spread and self.certifies:
            self.planned_topics = topics = rounds.certify(self.read, self.planned_topics)
            self.report(f"worst topic spread {topics.spread}; no plan of these moves goes "
                        f"below {topics.bound}; {topics.chunks_proven:,} of {topics.of:,} "
                        f"chunk(s) ({topics.topics_proven:,} of {topics.topics:,} topics) meet "
                        f"their own bound")

    def moves(self) -> int:
        return sum(c.moves for c in self.run.state)

    def cut(self, budget: int) -> None:
        """Each chunk keeps its share of the budget, its most loaded brokers relieved first."""
        run = self.run
        shares = budgets(budget, [c.moves for c in run.state])
        run.apply([Cut(b) if b < c.moves else None for b, c in zip(shares, run.state,
                                                                   strict=True)], "--max-moves")
        self.partial = True
        self.report(f"kept {self.moves():,} replica move(s) within --max-moves")

    def leaders(self) -> None:
        """The fixed quota of preferred leaders over the planned lists, met the same way."""
        run, context = self.run, self.context
        share = leader_quota(added(c.leaders for c in run.state), context.targets,
                             sum(c.partitions for c in run.state), fixed=True,
                             weights=context.weights)
        led = meet(share, [Chunk(c.leaders, c.replicas) for c in run.state],
                   run.rounds("leaders", Lead, lambda c: c.leaders))
        if led.unmet:
            self._leader_tail()
        self.report("preferred leaders balanced")

    def _picked(self, share: Quota) -> list[list[Picked]]:
        brokers = set(share.give) | set(share.take)
        return self.run.parts.pick(brokers, max(1, TAIL_PARTITIONS // len(self.run.state)))

    def _replica_tail(self) -> int:
        """What the rounds left, met the single machine's way on the driver: the partitions
        that hold a broker with units left (as read or as planned) are re-planned from scratch
        together, with the quota of the whole cluster as if they were not planned yet, so the
        search may re-route their moves and choose the ceilings. Returns the units left."""
        context = self.context
        total = added(c.replicas for c in self.run.state)
        picked = self._picked(replica_quota(total, context.targets, context.rack_of,
                                            weights=context.weights))
        flat = [p for chunk in picked for p in chunk]
        for p in flat:  # the cluster's counts with these partitions back as they were
            for b in p.planned:
                total[b] -= 1
            for b in p.original:
                total[b] = total.get(b, 0) + 1
        table = picked_table(flat, [p.original for p in flat])
        final, unmet = move_replicas(table, context.targets,
                                     replica_quota(total, context.targets, context.rack_of,
                                                   weights=context.weights),
                                     context.rack_of, even_topics=context.even_topics)
        self._replace(picked, lambda k, p: final.get(k, p.original), "replica moves, tail")
        return unmet

    def _leader_tail(self) -> None:
        """What the leader rounds left, met on the driver over the partitions whose planned
        list holds a broker with leaderships left to give or take."""
        context = self.context
        share = leader_quota(added(c.leaders for c in self.run.state), context.targets,
                             sum(c.partitions for c in self.run.state), weights=context.weights)
        picked = self._picked(share)
        flat = [p for chunk in picked for p in chunk]
        planned = [p.planned for p in flat]
        reordered, _ = order_leaders(planned, leaders_then([p.original for p in flat], planned),
                                     context.targets, share)
        self._replace(picked, lambda k, p: reordered.get(k, p.planned), "leaders, tail")

    def _replace(self, picked: Sequence[Sequence[Picked]],
                 choose: Callable[[int, Picked], Replicas], label: str) -> None:
        steps: list[Step | None] = []
        k = 0
        for chunk in picked:
            lists = {}
            for p in chunk:
                lists[p.index] = choose(k, p)
                k += 1
            steps.append(Replace(lists) if lists else None)
        self.run.apply(steps, label)


class Listed:
    """The chunks in a list, in one process: what the Spark job keeps in an RDD, one chunk per
    Spark partition (the tests' and benchmarks' :class:`Parts`)."""

    def __init__(self, tables: Sequence[PartitionTable], context: Context) -> None:
        self.parts = [Part(t, {}) for t in tables]
        self.context = context
        self.labels: list[str] = []
        """Every round's label, in order."""
        self.asked: list[str] = []
        """The labels of the rounds that only read (:meth:`ask`)."""

    def apply(self, steps: Sequence[Step | None], label: str) -> list[Counts | None]:
        self.labels.append(label)
        out: list[Counts | None] = []
        for c, step in enumerate(steps):
            if step is not None:
                self.parts[c] = self.parts[c].step(step, self.context)
            out.append(None if step is None else self.parts[c].counts())
        return out

    def ask(self, questions: Sequence[Question | None], label: str) -> list[Answer]:
        self.labels.append(label)
        self.asked.append(label)
        return [None if q is None else p.answer(q, self.context)
                for p, q in zip(self.parts, questions, strict=True)]

    def pick(self, brokers: Collection[int], limit: int) -> list[list[Picked]]:
        return [p.picked(brokers, limit) for p in self.parts]

    def hold(self) -> object:
        return list(self.parts)  # the parts are immutable

    def let_go(self, held: object, restore: bool) -> None:
        if restore:
            self.parts = list(cast("list[Part]", held))

    def replicas(self) -> list[Replicas]:
        """Every partition's replica list as planned, chunk after chunk."""
        return [r for p in self.parts for r in p.replicas()]

    def planning(self) -> list[str]:
        """The labels of the rounds that plan (:meth:`apply`)."""
        asked = set(self.asked)
        return [label for label in self.labels if label not in asked]
