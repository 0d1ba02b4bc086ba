"""Rebalancing in chunks of topics: what a Spark task does to its chunk, and the rounds the
driver runs over the chunks. Pure: the Spark job supplies the chunks (:class:`Parts`, one per
Spark partition), tests supply a list, and both run the same rounds.

The driver only ever sees :class:`Counts`, a few thousand numbers per chunk; the replica lists
stay with the tasks. The rounds (see :mod:`kadmin.balance.quotas` for why they meet the bound):

1. replicas: the fixed quota of the selected topics, split over the chunks, met by
   ``move_replicas`` in each, one copy per unit, again on what is left until all is met;
2. with ``max_moves``: each chunk keeps its share of the budget, its most loaded brokers
   relieved first (the core's ``cut_moves``);
3. with ``leaders``: the fixed quota of preferred leaders over the planned replica lists, met by
   ``order_leaders`` in each chunk the same way.

Units the rounds leave (rare, see :mod:`kadmin.balance.quotas`) are met on the driver by the same
core functions over a bounded sample of the partitions concerned: the tail.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kadmin.balance.leaders import order_leaders
from kadmin.balance.metrics import Balance, balance, leader_changes, replica_moves
from kadmin.balance.quotas import Chunk, Round, budgets, leader_quota, meet, replica_quota
from kadmin.balance.rebalance import cut_moves
from kadmin.balance.replicas import move_replicas, replica_counts
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota
from kadmin.model import PartitionMove, Replicas


@dataclass(frozen=True)
class Context:
    """What every task of one rebalance shares (broadcast once)."""

    targets: tuple[int, ...]
    rack_of: Mapping[int, str] | None


@dataclass(frozen=True)
class Move:
    """Meet ``share`` with replica moves."""

    share: Quota
    single_copies: bool


@dataclass(frozen=True)
class Lead:
    """Meet ``share`` of preferred leaders by reordering replica lists."""

    share: Quota


@dataclass(frozen=True)
class Cut:
    """Keep at most ``budget`` replica moves."""

    budget: int


@dataclass(frozen=True)
class Replace:
    """Plan these replica lists (by partition index) instead."""

    lists: Mapping[int, Replicas]


Step = Move | Lead | Cut | Replace


@dataclass(frozen=True)
class Picked:
    """A partition sent to the driver for the tail: where it is, as read and as planned."""

    index: int
    topic: str
    partition: int
    original: Replicas
    planned: Replicas


@dataclass(frozen=True)
class Counts:
    """What a task tells the driver of its chunk after each step."""

    partitions: int
    replicas: Mapping[int, int]
    leaders: Mapping[int, int]
    moves: int
    """Replica moves planned in the chunk so far."""


@dataclass(frozen=True)
class PartTotals:
    """One chunk's figures for the manifest, added up by the driver."""

    partitions: int
    """Partitions whose replica list changes."""
    replica_moves: int
    leader_changes: int
    before: Balance
    after: Balance


@dataclass(frozen=True)
class Part:
    """One chunk's plan so far, as a Spark task keeps it between rounds."""

    table: PartitionTable
    """The chunk as read: its topics in name order and their current replicas."""
    changed: Mapping[int, Replicas]
    """New replica lists of the partitions planned to change, by index in ``table``."""

    def replicas(self) -> list[Replicas]:
        """Every partition's replica list as planned so far."""
        return [self.changed.get(i, r) for i, r in enumerate(self.table.replicas)]

    def counts(self) -> Counts:
        now = self.replicas()
        leaders: dict[int, int] = {}
        for members in now:
            leaders[members[0]] = leaders.get(members[0], 0) + 1
        return Counts(len(now), replica_counts(now), leaders,
                      replica_moves(self.table.replicas, self.changed))

    def step(self, step: Step, context: Context) -> Part:
        if isinstance(step, Move):
            return self.moved(step.share, context, step.single_copies)
        if isinstance(step, Lead):
            return self.led(step.share, context)
        if isinstance(step, Replace):
            return self._with(step.lists)
        return self.cut(step.budget)

    def moved(self, share: Quota, context: Context, single_copies: bool) -> Part:
        """``share`` met by replica moves on top of the plan so far, which the core sees as the
        current state: a round only adds copies to what earlier rounds planned."""
        table = self.table
        now = PartitionTable(table.topics, table.topic_of, table.ids, self.replicas())
        final, _ = move_replicas(now, context.targets, share, context.rack_of,
                                 single_copies=single_copies)
        return self._with(final)

    def led(self, share: Quota, context: Context) -> Part:
        """``share`` of preferred leaders met by reordering the planned replica lists."""
        now = self.replicas()
        reordered, _ = order_leaders(now, leaders_then(self.table.replicas, now),
                                     context.targets, share)
        return self._with(reordered)

    def cut(self, budget: int) -> Part:
        """The planned moves within ``budget`` copies, the brokers that give the most in this
        chunk relieved first (their loads are in proportion to the whole cluster's)."""
        before = self.table.replicas
        gives: dict[int, int] = {}
        for i, new in self.changed.items():
            for b in set(before[i]) - set(new):
                gives[b] = gives.get(b, 0) + 1
        kept = cut_moves(before, self.changed, Quota(gives, {}, frozenset(), frozenset()), budget)
        return Part(self.table, kept)

    def picked(self, brokers: Collection[int], limit: int) -> list[Picked]:
        """Up to ``limit`` partitions, in plan order: first those whose list as read or as
        planned holds one of ``brokers`` (where units left can go, and moves that could be
        re-routed), then any other (a chain of moves may pass through any broker)."""
        wanted = frozenset(brokers)
        table = self.table
        near: list[int] = []
        far: list[int] = []
        for i, original in enumerate(table.replicas):
            if len(near) == limit:
                break
            touches = not wanted.isdisjoint(original) or not wanted.isdisjoint(
                self.changed.get(i, original))
            (near if touches else far).append(i)
        chosen = sorted(near + far[:limit - len(near)])
        return [Picked(i, table.topics[table.topic_of[i]], table.ids[i], table.replicas[i],
                       self.changed.get(i, table.replicas[i])) for i in chosen]

    def _with(self, final: Mapping[int, Replicas]) -> Part:
        before = self.table.replicas
        changed = dict(self.changed)
        changed.update(final)
        return Part(self.table, {i: r for i, r in sorted(changed.items()) if r != before[i]})

    def moves(self) -> list[PartitionMove]:
        """The chunk's plan entries, in plan order."""
        return self.table.moves(self.changed)[0]

    def totals(self, targets: Collection[int]) -> PartTotals:
        table = self.table
        return PartTotals(
            len(self.changed), replica_moves(table.replicas, self.changed),
            leader_changes(table.replicas, self.changed),
            balance(table.replicas, table.topic_of, table.topics, targets),
            balance(self.replicas(), table.topic_of, table.topics, targets))


class Parts(Protocol):
    """The chunks, wherever they are kept."""

    def apply(self, steps: Sequence[Step | None], label: str) -> list[Counts | None]:
        """Apply each chunk's step to it (None: leave it), all in parallel; the counts of the
        chunks that had a step. ``label`` names the round for progress reports."""
        ...

    def pick(self, brokers: Collection[int], limit: int) -> list[list[Picked]]:
        """Per chunk, :meth:`Part.picked`."""
        ...


@dataclass(frozen=True)
class Planned:
    lower_bound: int
    unplaced: int
    """Replica units no plan found (racks, or partitions as wide as the broker list)."""
    partial: bool
    """``max_moves`` cut the plan short: running again continues."""
    rounds: int
    """Rounds of tasks over the chunks, all kinds together."""


def plan(parts: Parts, counts: Sequence[Counts], context: Context, *, leaders: bool = True,
         max_moves: int | None = None, report: Callable[[str], None] = lambda _: None
         ) -> Planned:
    """Rebalance the chunks (see the module docstring); ``counts`` are each chunk's counts as
    read. The chunks end with the plan; the result says how it relates to the bound."""
    run = _Run(parts, list(counts), context)
    total = _added(c.replicas for c in run.state)
    bound = replica_quota(total, context.targets, context.rack_of).units
    moved = meet(replica_quota(total, context.targets, context.rack_of, fixed=True),
                 [Chunk(c.replicas, {}, c.partitions) for c in run.state],
                 run.rounds("replica moves", lambda q: Move(q, True), lambda c: c.replicas))
    unplaced = run.replica_tail() if moved.unmet else 0
    moves = sum(c.moves for c in run.state)
    report(f"{moves:,} replica move(s) planned (lower bound {bound:,})"
           + (f"; {unplaced:,} could not be placed" if unplaced else ""))
    partial = max_moves is not None and moves > max_moves
    if max_moves is not None and partial:
        shares = budgets(max_moves, [c.moves for c in run.state])
        run.apply([Cut(b) if b < c.moves else None for b, c in zip(shares, run.state,
                                                                   strict=True)], "--max-moves")
        report(f"kept {sum(c.moves for c in run.state):,} replica move(s) within --max-moves")
    if leaders:
        share = leader_quota(_added(c.leaders for c in run.state), context.targets,
                             sum(c.partitions for c in run.state), fixed=True)
        led = meet(share, [Chunk(c.leaders, c.replicas) for c in run.state],
                   run.rounds("leaders", Lead, lambda c: c.leaders))
        if led.unmet:
            run.leader_tail()
        report("preferred leaders balanced")
    return Planned(bound, unplaced, partial, run.done)


TAIL_PARTITIONS = 200_000
"""Partitions the driver may gather to solve the tail of a rebalance (a few hundred bytes each)."""


class _Run:
    """The chunks' counts as the rounds change them, and the tail solves. Private to one plan."""

    def __init__(self, parts: Parts, state: list[Counts], context: Context) -> None:
        self.parts, self.state, self.context = parts, state, context
        self.done = 0

    def apply(self, steps: Sequence[Step | None], label: str) -> None:
        self.done += 1
        for c, result in enumerate(self.parts.apply(steps, label)):
            if result is not None:
                self.state[c] = result

    def rounds(self, kind: str, step: Callable[[Quota], Step],
               held: Callable[[Counts], Mapping[int, int]]) -> Round:
        """A :data:`Round` of ``kind`` for :func:`meet`."""
        number = 0

        def run(quotas: Sequence[Quota | None]) -> list[Mapping[int, int] | None]:
            nonlocal number
            number += 1
            self.apply([None if q is None else step(q) for q in quotas],
                       f"{kind}, round {number}")
            return [None if q is None else held(c)
                    for q, c in zip(quotas, self.state, strict=True)]

        return run

    def _picked(self, share: Quota) -> list[list[Picked]]:
        brokers = set(share.give) | set(share.take)
        return self.parts.pick(brokers, max(1, TAIL_PARTITIONS // len(self.state)))

    def replica_tail(self) -> int:
        """What the rounds left, met the single machine's way on the driver: the partitions
        that hold a broker with units left (as read or as planned) are re-planned from scratch
        together, with the quota of the whole cluster as if they were not planned yet, so the
        search may re-route their moves and choose the ceilings. Returns the units left."""
        context = self.context
        total = _added(c.replicas for c in self.state)
        picked = self._picked(replica_quota(total, context.targets, context.rack_of))
        flat = [p for chunk in picked for p in chunk]
        for p in flat:  # the cluster's counts with these partitions back as they were
            for b in p.planned:
                total[b] -= 1
            for b in p.original:
                total[b] = total.get(b, 0) + 1
        table = _table(flat, [p.original for p in flat])
        final, unmet = move_replicas(table, context.targets,
                                     replica_quota(total, context.targets, context.rack_of),
                                     context.rack_of)
        self._replace(picked, lambda k, p: final.get(k, p.original), "replica moves, tail")
        return unmet

    def leader_tail(self) -> None:
        """What the leader rounds left, met on the driver over the partitions whose planned
        list holds a broker with leaderships left to give or take."""
        context = self.context
        share = leader_quota(_added(c.leaders for c in self.state), context.targets,
                             sum(c.partitions for c in self.state))
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
        self.apply(steps, label)


def leaders_then(original: Sequence[Replicas], planned: Sequence[Replicas]) -> list[int]:
    """The leaders a leader search counts its changes against: today's, except where an
    earlier round handed leadership away from a leader still in the partition; there the
    planned one. Counted against today's, handing it back would cost -1 and chains of such
    hand-backs would be negative cycles, which the search (successive shortest paths from a
    plan of least cost) must never meet; so a round never undoes an earlier round's change
    for less than a fresh one."""
    out = []
    for old, new in zip(original, planned, strict=True):
        out.append(new[0] if old[0] != new[0] and old[0] in new else old[0])
    return out


def _added(counts: Iterable[Mapping[int, int]]) -> dict[int, int]:
    total: dict[int, int] = {}
    for chunk in counts:
        for b, n in chunk.items():
            total[b] = total.get(b, 0) + n
    return total


def _table(picked: Sequence[Picked], replicas: list[Replicas]) -> PartitionTable:
    """The picked partitions as one table (chunks hold ranges of topic names in order)."""
    topics: list[str] = []
    topic_of: list[int] = []
    for p in picked:
        if not topics or topics[-1] != p.topic:
            topics.append(p.topic)
        topic_of.append(len(topics) - 1)
    return PartitionTable(tuple(topics), topic_of, [p.partition for p in picked], replicas)
