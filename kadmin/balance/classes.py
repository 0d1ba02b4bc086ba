"""Racks kept, exactly, at any size: the fewest moves, then the least worst topic spread, over
classes of interchangeable partitions. Pure.

Partitions of one topic on the same replica set are interchangeable, so a plan is, per class
``c`` (a topic, a replica set ``S`` of ``k`` brokers, ``n`` partitions), how many of its
partitions end on each target broker ``b``: ``x[c, b]`` in ``0..n`` (a partition holds a broker
once), each move a unit on a broker outside ``S``. Rack diversity (no partition on fewer racks
than it has, or than there are racks with a target: :func:`kadmin.balance.racks.racks_kept`,
``keep`` of them) is a flow through the class too, as :func:`kadmin.balance.realise.reach`
states it: the class sends ``n k`` units to a node per (class, rack), at most ``n`` of them
directly (one per partition: the partition's first replica there, a rack it ends on) and the
rest through a pool of at most ``n (k - keep)`` extras, and each (class, rack) node sends its
units to the rack's brokers. Every plan keeping the racks is such a flow (its partitions end on
at least ``keep`` racks, so at least ``n keep`` units go direct), and every such flow is dealt
back to partitions keeping their racks (:func:`kadmin.balance.realise.deal`).

**The fewest moves** (:func:`fewest_moves`, the racks' lower bound): that flow, from a source
to the classes, through the rack nodes and the pool to the brokers and on to a sink, each
broker's arc within its balanced range ``lo_b..hi_b`` and every unit onto a broker outside its
class's set costing a move: a min-cost flow. Its matrix is a network matrix (each column one
+1 and one -1), so the linear program's vertex optimum, which a min-cost flow returns
(:mod:`kadmin.balance.netflow`), is integral: no branch and bound. The classes here are
replica sets alone (topics do not bear on moves), so its size is the number of distinct
replica sets, not of partitions.

**The least worst topic spread at those moves** (:func:`plan`): the same flow per (topic,
replica set) class, each class's units passing through a node per (topic, broker) whose arc
on to the broker carries the topic's end count there, ``y[t, b]``, within a window
``L_t .. L_t + s``. With the windows fixed this is again a min-cost flow (network matrix,
integral), and a plan of the fewest moves exists within them or not: exact. At ``s`` 0 or 1
each topic's window is forced (its mean's floor and ceiling), so one flow decides each of
them. From 2 on the windows are not forced: the linear relaxation with ``L_t`` and ``s`` as
columns and the moves at most the fewest bounds ``s`` from below, and the windows it suggests
(each ``L_t`` rounded down, then its top rounded up, then both outward, which holds the
relaxed optimum and so always succeeds) each give a flow; the first making the fewest moves
is the plan, proven where its spread meets the bound. Where it does not, the same program
with ``L_t`` and ``s`` integer (a mixed integer program branching on those columns only:
every choice of them leaves a min-cost flow) decides the least spread exactly, in time.
Topics share only the brokers' ranges, so the flows stay the size of the classes, not of
the partitions.

**The fewest moves within a spread asked** (:func:`within_spread`, ``--topic-spread``): the
same program with ``s`` fixed and the moves minimised; forced windows at 0 and 1 (a flow),
integer ``L_t`` from 2.

Where a partition has one replica on each target rack and must keep every one, no replica may
leave its rack: its class's rack nodes are then rows fixing each rack's units (a shortcut of
the same flow, smaller).

Both programs know only counts; :func:`plan` deals each class's counts back to its partitions,
a kept replica in its place (a kept leader stays first).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance import classflow
from kadmin.balance.evenness import worst_topic
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

LIMIT = 400_000
"""Columns either program is built with at most (classes times the columns of each)."""

SECONDS = 60.0
"""Seconds the topic stage gets at most; unproven by then, its best plan and its bound."""

LP_SHARE = 0.6
"""Of what is left of :data:`SECONDS` once spread 1 is refuted, the share the linear relaxation
gets; the rest goes to wider windows around each topic's mean where it runs out."""


CHALLENGE_SECONDS = 20.0
"""Seconds :func:`plan` gets where it challenges a plan the search did not prove
(:meth:`kadmin.balance.machine.Whole.topics`)."""


def aggregates(table: PartitionTable) -> bool:
    """Whether the (topic, replica set) classes are at most half the partitions: where they
    are not, the class program is the partition program again, and slower than the search."""
    return 2 * len(set(zip(table.topic_of, map(frozenset, table.replicas), strict=True))) <= (
        len(table.replicas))


@dataclass(frozen=True)
class RackPlan:
    """The plan of :func:`plan` and what it proves."""

    final: dict[int, Replicas]
    """The replica lists that change, by partition index."""
    moves: int
    """Its moves: the fewest any plan keeping the racks within the ranges makes."""
    spread: int
    """Its worst topic spread over the targets."""
    least: int
    """No plan of these moves (keeping the racks, within the ranges) has a worst topic spread
    below it: ``spread`` when proven."""


@dataclass(frozen=True)
class SpreadPlan:
    """The plan of :func:`within_spread` and what it proves."""

    final: dict[int, Replicas]
    """The replica lists that change, by partition index."""
    moves: int
    spread: int
    """Its worst topic spread over the targets."""
    allowed: int
    """The spread its topics were held within: the one asked, or the least above it that any
    plan keeping the racks within the ranges reaches (proven)."""
    fewest: int
    """No plan within ``allowed`` makes fewer moves: ``moves`` where proven."""
    plain: int
    """The fewest moves keeping the racks within the ranges, topics aside."""


def _ready(total: int, targets: Collection[int], ranges: Mapping[int, tuple[int, int]],
           rack_of: Mapping[int, str]) -> list[int] | None:
    """The targets in order, or None where the programs do not apply: a target without a
    rack or without a range, or ranges that cannot hold the ``total`` replicas."""
    brokers = sorted(targets)
    if not brokers or any(rack_of.get(b) is None or b not in ranges for b in brokers):
        return None
    if not sum(ranges[b][0] for b in brokers) <= total <= sum(ranges[b][1] for b in brokers):
        return None
    return brokers


def fewest_moves(table: PartitionTable, targets: Collection[int],
                 ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str]) -> int | None:
    """The fewest moves of any plan that ends every target broker ``b`` within ``ranges[b]``,
    every replica on a target, no partition on fewer racks than it must keep: the min-cost
    flow of the module docstring (a network linear program). None where no such plan exists,
    a target has no rack, or the program exceeds :data:`LIMIT`."""
    found = _fewest_over(table, targets, ranges, rack_of)
    return None if found is None else found[1]


def _fewest_over(table: PartitionTable, targets: Collection[int],
                 ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str]
                 ) -> tuple[list[int], int, dict[int, Replicas]] | None:
    """The targets in order (:func:`_ready`), the fewest moves and a plan making them
    (:func:`_fewest`); None where either is."""
    brokers = _ready(sum(map(len, table.replicas)), targets, ranges, rack_of)
    found = None if brokers is None else _fewest(table, brokers, ranges, rack_of)
    return None if brokers is None or found is None else (brokers, *found)


def _fewest(table: PartitionTable, brokers: Sequence[int],
            ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str]
            ) -> tuple[int, dict[int, Replicas]] | None:
    """:func:`fewest_moves` and a plan making them (topics aside), over the targets
    :func:`_ready` returned."""
    classes = classflow.grouped(table, by_topic=False)
    if classflow.width(len(classes), brokers, rack_of) > LIMIT:
        return None
    program = classflow.Program.empty()
    flows = classflow.class_flows(program, classes, brokers, ranges, rack_of)
    found = None if flows is None else program.solve(None)
    if flows is None or found is None or not classflow.integral(found[1]):
        return None
    return round(found[0]), classflow.dealt(table, brokers, rack_of, flows, classflow.rounded(found[1]))


def fewest_by_sets(sets: Mapping[frozenset[int], int], targets: Collection[int],
                   ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str]
                   ) -> tuple[int, dict[frozenset[int], dict[int, int]]] | None:
    """:func:`fewest_moves` of partitions known only by how many sit on each replica set
    (``sets``), and each set's units per target broker in a plan making them (the program's
    own answer: dealt to the set's partitions by :func:`kadmin.balance.realise.deal`). What
    the Spark driver solves for the whole selection from its chunks' counts. None as there."""
    total = sum(len(members) * n for members, n in sets.items())
    brokers = _ready(total, targets, ranges, rack_of)
    if brokers is None or classflow.width(len(sets), brokers, rack_of) > LIMIT:
        return None
    program = classflow.Program.empty()
    flows = classflow.class_flows(
        program, {(0, members): list(range(n)) for members, n in sets.items()}, brokers,
        ranges, rack_of)
    found = None if flows is None else program.solve(None)
    if flows is None or found is None or not classflow.integral(found[1]):
        return None
    chosen = classflow.rounded(found[1])
    return round(found[0]), {flow.members: {b: chosen[col] for b, col in zip(
        brokers, flow.x, strict=True)} for flow in flows}


def plan(table: PartitionTable, targets: Collection[int], ranges: Mapping[int, tuple[int, int]],
         rack_of: Mapping[int, str], seconds: float = SECONDS, beyond: int = -1
         ) -> RackPlan | None:
    """The lexicographic optimum of the module docstring, dealt to partitions: the fewest
    moves within ``ranges`` keeping the racks (exact), then the least worst topic spread at
    those moves where it is proven, else the best plan found and the proven bound
    (``least``). None where :func:`fewest_moves` is, or the fewest moves are at most
    ``beyond`` (the rack-free bound: the racks cost nothing, and the broker-level search with
    its topic certificate plans faster).

    The spread in steps, cheapest first. No topic goes below ``s0`` (1 where its replicas do
    not divide evenly over the targets, else 0), and at spread 0 or 1 every topic's window is
    forced (its mean's floor and ceiling), so the topic program is a min-cost flow: a plan of
    the fewest moves in it proves the least spread, none proves 2 the least there may be.
    From 2, the linear relaxation bounds the spread (``least``, its ceiling); then, each a
    min-cost flow, the windows around each topic's mean where that bound is 2, and the
    relaxation's windows (each topic's ``floor_t`` rounded, then its top, then both outward,
    which holds the relaxation's optimum: within one of its bound); where the relaxation
    runs out of time, windows around the means, wider. Where a gap is left, branch and bound
    on the windows (:func:`_branched`) closes it. Out of ``seconds``, the best plan found
    (at worst the plan of the fewest moves alone) and the bound."""
    start = time.monotonic()
    found = _fewest_over(table, targets, ranges, rack_of)
    if found is None:
        return None
    brokers, fewest, plain = found
    if fewest <= beyond:
        return None
    classes = classflow.grouped(table, by_topic=True)
    if classflow.width(len(classes), brokers, rack_of) > LIMIT:
        return _settled(table, brokers, fewest, plain, 0)
    topics, width = _widths(classes)
    nb = len(brokers)
    least = max((int(n % nb != 0) for n in width.values()), default=0)
    tries = [_forced(width, nb, s) for s in range(least, 2)]
    fixed, decided = _first_within(table, classes, topics, brokers, ranges, rack_of, fewest,
                                   tries, start + seconds)
    if fixed is not None:
        return fixed
    if decided:  # every flow refuted its spread (out of time, they proved nothing)
        least = 2

    def centred(s: int) -> dict[int, tuple[int, int]]:
        return {t: (max(0, round(n / nb) - s // 2), max(0, round(n / nb) - s // 2) + s)
                for t, n in width.items()}

    left = seconds - (time.monotonic() - start)
    relaxed = classflow.TopicProgram.build(classes, topics, brokers, ranges, rack_of, fewest, None)
    solved = None if left <= 0 else relaxed.program.solve(left * LP_SHARE)
    if solved is None:  # no bound above 2: the windows around each topic's mean, wider
        tries = [centred(2), centred(3), centred(4)]
    else:
        x = solved[1]
        spread = float(x[relaxed.spread])  # type: ignore[index]
        least = max(least, math.ceil(spread - 1e-6))
        floors = {t: float(x[col]) for t, col in relaxed.floors.items()}  # type: ignore[index]
        low = {t: math.floor(floors[t] + 1e-6) for t in topics}
        high = {t: math.ceil(floors[t] + spread - 1e-6) for t in topics}
        tries = [centred(2)] * (least == 2) + [
            {t: (low[t], low[t] + least) for t in topics},
            {t: (high[t] - least, high[t]) for t in topics},
            {t: (low[t], high[t]) for t in topics}]
    fixed, _ = _first_within(table, classes, topics, brokers, ranges, rack_of, fewest, tries,
                             start + seconds)
    best = _settled(table, brokers, fewest, plain, least) if fixed is None else (
        RackPlan(fixed.final, fixed.moves, fixed.spread, least))
    if best.least >= best.spread:
        return best
    return _branched(table, classes, topics, brokers, ranges, rack_of, best,
                     start + seconds - time.monotonic())


def _branched(table: PartitionTable, classes: Mapping[tuple[int, frozenset[int]], list[int]],
              topics: Sequence[int], brokers: Sequence[int],
              ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str],
              best: RackPlan, seconds: float) -> RackPlan:
    """Where rounding the relaxation left a gap: the topic program of
    :class:`kadmin.balance.classflow.TopicProgram` as a mixed integer program (the windows'
    floors and the spread integer, between ``best.least`` and one below ``best.spread``, the
    moves at most ``best.moves``): HiGHS's branch and bound on those columns alone, since
    each choice of them leaves a min-cost flow. No solution proves ``best``; its optimum's
    windows give the plan by a flow; out of ``seconds``, its best and its bound."""
    if seconds <= 0:
        return best
    program = classflow.TopicProgram.build(classes, topics, brokers, ranges, rack_of,
                                           best.moves, None)
    columns = program.program
    columns.lower[program.spread] = float(best.least)
    columns.upper[program.spread] = float(best.spread - 1)
    solved = columns.solve_integer([program.spread, *program.floors.values()], seconds)
    if solved.infeasible:
        return RackPlan(best.final, best.moves, best.spread, best.spread)
    least = max(best.least, math.ceil(solved.bound - 1e-6))
    if solved.x is None:
        return RackPlan(best.final, best.moves, best.spread, least)
    windows = _windows(program, solved.x, round(solved.x[program.spread]))  # type: ignore[index]
    try:
        within = _cheapest_within(table, classes, topics, brokers, ranges, rack_of, windows,
                                  max(seconds, 1.0))
    except _OutOfTime:
        within = None
    if within is None or within[1] != best.moves:
        return RackPlan(best.final, best.moves, best.spread, least)
    reached = worst_topic(table, within[0], brokers)[0]
    return RackPlan(within[0], best.moves, reached, reached if solved.optimal else least)


def _first_within(table: PartitionTable,
                  classes: Mapping[tuple[int, frozenset[int]], list[int]], topics: Sequence[int],
                  brokers: Sequence[int], ranges: Mapping[int, tuple[int, int]],
                  rack_of: Mapping[int, str], fewest: int,
                  tries: Sequence[Mapping[int, tuple[int, int]]], deadline: float
                  ) -> tuple[RackPlan | None, bool]:
    """The plan of the first ``tries`` (topic windows) whose min-cost flow makes ``fewest``
    moves, its spread proven the least (each try's windows are the least width not refuted
    before it), and whether every try was decided: False where a flow ran out of time (or
    its answer was fractional) before a plan, so the tries before it refute nothing more."""
    for windows in tries:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, False
        try:
            within = _cheapest_within(table, classes, topics, brokers, ranges, rack_of, windows,
                                      left, at_most=fewest)
        except _OutOfTime:
            return None, False
        if within is not None:  # no plan makes fewer than the fewest
            reached = worst_topic(table, within[0], brokers)[0]
            return RackPlan(within[0], fewest, reached, reached), True
    return None, True


def _widths(classes: Mapping[tuple[int, frozenset[int]], list[int]]
            ) -> tuple[list[int], dict[int, int]]:
    """The topics in order and each one's replicas (its classes' sets times partitions)."""
    topics = sorted({t for t, _ in classes})
    width = dict.fromkeys(topics, 0)
    for (t, members), partitions in classes.items():
        width[t] += len(members) * len(partitions)
    return topics, width


def _forced(width: Mapping[int, int], brokers: int, spread: int) -> dict[int, tuple[int, int]]:
    """Each topic's window at ``spread`` 0 or 1, forced by its mean over the ``brokers``: the
    floor alone, or the floor and the ceiling."""
    return {t: (n // brokers, -(-n // brokers) if spread else n // brokers)
            for t, n in width.items()}


def _windows(program: classflow.TopicProgram, x: object, spread: int
             ) -> dict[int, tuple[int, int]]:
    """The windows of a solution ``x`` of ``program``'s integer program: each topic's floor
    there and ``spread`` above it."""
    return {t: (round(x[col]), round(x[col]) + spread)  # type: ignore[index]
            for t, col in program.floors.items()}


def _settled(table: PartitionTable, brokers: Sequence[int], fewest: int,
             plain: dict[int, Replicas], least: int) -> RackPlan:
    """The plan of the fewest moves alone, its topics as they fell."""
    reached = worst_topic(table, plain, brokers)[0]
    return RackPlan(plain, fewest, reached, min(least, reached))


def within_spread(table: PartitionTable, targets: Collection[int],
                  ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str], asked: int,
                  seconds: float = SECONDS) -> SpreadPlan | None:
    """``--topic-spread``, exactly: the fewest moves of any plan keeping the racks, every
    target broker within its range, and every topic within ``asked`` (where no such plan
    exists, within the least spread above it that one reaches). The plan of the fewest moves
    alone answers where its topics are within it (no plan moves fewer). Otherwise, spread by
    spread from ``asked``: at 0 and 1 each topic's window is forced (its mean's floor and
    ceiling), so a min-cost flow decides; from 2 the mixed integer program of
    :class:`kadmin.balance.classflow.TopicProgram` (``spread_at``) chooses the windows,
    branching on their floors only. Out of time, its best plan and its bound; None where the
    class program does not apply or found no plan in time (the search decides)."""
    deadline = time.monotonic() + seconds
    found = _fewest_over(table, targets, ranges, rack_of)
    if found is None:
        return None
    brokers, fewest, plain = found
    reached = worst_topic(table, plain, brokers)[0]
    if reached <= asked:
        return SpreadPlan(plain, fewest, reached, asked, fewest, fewest)
    classes = classflow.grouped(table, by_topic=True)
    if classflow.width(len(classes), brokers, rack_of) > LIMIT:
        return None
    topics, width = _widths(classes)
    nb = len(brokers)
    for k in range(asked, reached):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if k == 0 and any(n % nb for n in width.values()):
            continue
        if k <= 1:
            try:
                within = _cheapest_within(table, classes, topics, brokers, ranges, rack_of,
                                          _forced(width, nb, k), left)
            except _OutOfTime:
                return None
            if within is None:
                continue
            final, moves = within
            return SpreadPlan(final, moves, worst_topic(table, final, brokers)[0], k, moves,
                              fewest)
        program = classflow.TopicProgram.build(classes, topics, brokers, ranges, rack_of, None,
                                               None, spread_at=k)
        solved = program.program.solve_integer(list(program.floors.values()), left)
        if solved.infeasible:
            continue
        if solved.x is None:
            return None
        try:
            within = _cheapest_within(table, classes, topics, brokers, ranges, rack_of,
                                      _windows(program, solved.x, k),
                                      max(deadline - time.monotonic(), 1.0))
        except _OutOfTime:
            return None
        if within is None:  # the program's windows hold its plan: not reached
            return None
        final, moves = within
        return SpreadPlan(final, moves, worst_topic(table, final, brokers)[0], k,
                          moves if solved.optimal else max(fewest, math.ceil(solved.bound - 1e-6)),
                          fewest)
    return SpreadPlan(plain, fewest, reached, reached, fewest, fewest)


class _OutOfTime(Exception):
    """A flow of :func:`_cheapest_within` ran out of time."""


def _cheapest_within(table: PartitionTable,
                     classes: Mapping[tuple[int, frozenset[int]], list[int]],
                     topics: Sequence[int], brokers: Sequence[int],
                     ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str],
                     windows: Mapping[int, tuple[int, int]], seconds: float,
                     at_most: int | None = None) -> tuple[dict[int, Replicas], int] | None:
    """The plan of the fewest moves with every topic's end counts within ``windows`` (the
    min-cost flow of :class:`kadmin.balance.classflow.TopicProgram`) and its moves; None
    where none exists, or where they are more than ``at_most`` (nothing dealt then);
    :class:`_OutOfTime` where the flow ran out of ``seconds``."""
    program = classflow.TopicProgram.build(classes, topics, brokers, ranges, rack_of, None,
                                           windows)
    solved = program.program.solve(seconds, simplex=True)
    if solved is None:
        if program.program.timed_out:
            raise _OutOfTime
        return None
    if not classflow.integral(solved[1]):  # a vertex is integral: the crossover stopped short
        raise _OutOfTime
    if at_most is not None and round(solved[0]) > at_most:
        return None
    final = classflow.dealt(table, brokers, rack_of, program.flows,
                            classflow.rounded(solved[1]))
    return final, round(solved[0])
