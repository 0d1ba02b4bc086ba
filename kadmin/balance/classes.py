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
+1 and one -1), so the linear program's vertex optimum, which HiGHS's simplex returns, is
integral: no branch and bound. The classes here are replica sets alone (topics do not bear on
moves), so its size is the number of distinct replica sets, not of partitions.

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
is the plan, proven where its spread meets the bound. Topics share only the brokers' ranges,
so the flows stay the size of the classes, not of the partitions.

Where a partition has one replica on each target rack and must keep every one, no replica may
leave its rack: its class's rack nodes are then rows fixing each rack's units (a shortcut of
the same flow, smaller).

Both programs know only counts; :func:`plan` deals each class's counts back to its partitions,
a kept replica in its place (a kept leader stays first).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance.evenness import worst_topic
from kadmin.balance.racks import racks_kept
from kadmin.balance.realise import dealt
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

LIMIT = 400_000
"""Columns either program is built with at most (classes times the columns of each)."""

SECONDS = 60.0
"""Seconds the topic stage gets at most; unproven by then, its best plan and its bound."""

LP_SHARE = 0.6
"""Of what is left of :data:`SECONDS` once spread 1 is refuted, the share the linear relaxation
gets; the rest goes to wider windows around each topic's mean where it runs out."""


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


@dataclass
class _Program:
    """Columns (cost, bounds) and rows (entries, low, high) being built."""

    cost: list[float]
    lower: list[float]
    upper: list[float]
    rows: list[int]
    cols: list[int]
    vals: list[float]
    low: list[float]
    high: list[float]

    @classmethod
    def empty(cls) -> _Program:
        return cls([], [], [], [], [], [], [], [])

    def column(self, cost: float, upper: float, lower: float = 0.0) -> int:
        self.cost.append(cost)
        self.lower.append(lower)
        self.upper.append(upper)
        return len(self.cost) - 1

    def row(self, entries: Mapping[int, float] | Sequence[tuple[int, float]], low: float,
            high: float) -> int:
        n = len(self.low)
        for col, value in (entries.items() if isinstance(entries, Mapping) else entries):
            self.rows.append(n)
            self.cols.append(col)
            self.vals.append(value)
        self.low.append(low)
        self.high.append(high)
        return n

    def solve(self, seconds: float | None) -> tuple[float, object] | None:
        """The linear program's optimum (its objective and columns), or None where it has
        none within ``seconds``: HiGHS's interior point method, whose crossover ends on a
        vertex (integral where the matrix is a network matrix). Its dual simplex stalls for
        minutes on these degenerate flows, the interior point method takes seconds."""
        import numpy as np
        from scipy.optimize import linprog
        from scipy.sparse import csr_array, vstack

        width = len(self.cost)
        matrix = csr_array((self.vals, (self.rows, self.cols)), shape=(len(self.low), width))
        low, high = np.array(self.low), np.array(self.high)
        equal = low == high
        above, below = ~equal & np.isfinite(high), ~equal & np.isfinite(low)
        options: dict[str, float] = {} if seconds is None else {"time_limit": max(seconds, 1.0)}
        found = linprog(np.array(self.cost), A_ub=vstack([matrix[above], -matrix[below]]),
                        b_ub=np.concatenate([high[above], -low[below]]), A_eq=matrix[equal],
                        b_eq=low[equal], bounds=np.column_stack([self.lower, self.upper]),
                        method="highs-ipm", options=options)
        return None if found.status != 0 else (float(found.fun), found.x)


@dataclass(frozen=True)
class _Flow:
    """The columns of one class's flow: ``x`` per target broker (in ``brokers`` order)."""

    members: frozenset[int]
    partitions: list[int]
    x: list[int]


def _classes(table: PartitionTable, by_topic: bool) -> dict[tuple[int, frozenset[int]], list[int]]:
    classes: dict[tuple[int, frozenset[int]], list[int]] = {}
    topic_of = table.topic_of
    for p, replicas in enumerate(table.replicas):
        classes.setdefault((topic_of[p] if by_topic else 0, frozenset(replicas)), []).append(p)
    return classes


def _flows(program: _Program, classes: Mapping[tuple[int, frozenset[int]], list[int]],
           brokers: Sequence[int], ranges: Mapping[int, tuple[int, int]],
           rack_of: Mapping[int, str], per_topic: bool = False) -> list[_Flow] | None:
    """The flow of the module docstring for ``classes``, its broker rows within ``ranges``
    (with ``per_topic`` the caller adds them, through its topics' nodes); None where a class
    is wider than the targets."""
    racks = sorted({rack_of[b] for b in brokers})
    by_rack = {r: [i for i, b in enumerate(brokers) if rack_of[b] == r] for r in racks}
    flows: list[_Flow] = []
    per_broker: list[list[tuple[int, float]]] = [[] for _ in brokers]
    for (_, members), partitions in classes.items():
        n, k = len(partitions), len(members)
        if k > len(brokers):
            return None
        keep = racks_kept(tuple(members), rack_of, len(racks))
        x = [program.column(float(b not in members), n) for b in brokers]
        held = Counter(rack_of.get(b) for b in members)
        if keep == k == len(racks) and held.keys() <= by_rack.keys():
            # one replica on each target rack, each of which it must keep: none leaves its rack
            for r in racks:
                program.row([(x[i], 1.0) for i in by_rack[r]], n * held[r], n * held[r])
            for i, col in enumerate(x):
                per_broker[i].append((col, 1.0))
            flows.append(_Flow(members, partitions, x))
            continue
        w = program.column(0.0, n * (k - keep))
        pool: list[tuple[int, float]] = [(w, 1.0)]
        source: list[tuple[int, float]] = [(w, -1.0)]
        for r in racks:
            u = program.column(0.0, n)
            v = program.column(0.0, n * k)
            source.append((u, -1.0))
            pool.append((v, -1.0))
            program.row([(u, 1.0), (v, 1.0)] + [(x[i], -1.0) for i in by_rack[r]], 0.0, 0.0)
        program.row(source, -float(n * k), -float(n * k))
        program.row(pool, 0.0, 0.0)
        for i, col in enumerate(x):
            per_broker[i].append((col, 1.0))
        flows.append(_Flow(members, partitions, x))
    if not per_topic:
        for i, b in enumerate(brokers):
            program.row(per_broker[i], *map(float, ranges[b]))
    return flows


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
    found = _fewest(table, targets, ranges, rack_of)
    return None if found is None else found[0]


def _fewest(table: PartitionTable, targets: Collection[int],
            ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str]
            ) -> tuple[int, dict[int, Replicas]] | None:
    """:func:`fewest_moves` and a plan making them (topics aside)."""
    brokers = _ready(sum(map(len, table.replicas)), targets, ranges, rack_of)
    if brokers is None:
        return None
    classes = _classes(table, by_topic=False)
    if _width(len(classes), brokers, rack_of) > LIMIT:
        return None
    program = _Program.empty()
    flows = _flows(program, classes, brokers, ranges, rack_of)
    found = None if flows is None else program.solve(None)
    if flows is None or found is None or not _integral(found[1]):
        return None
    return round(found[0]), _dealt(table, brokers, rack_of, flows, _rounded(found[1]))


def _width(classes: int, brokers: Sequence[int], rack_of: Mapping[int, str]) -> int:
    return classes * (len(brokers) + 2 * len({rack_of[b] for b in brokers}) + 1)


def _rounded(x: object) -> list[int]:
    import numpy as np

    return [int(v) for v in np.rint(np.asarray(x))]


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
    At 2, first the windows around each topic's mean; then the windows of the linear
    relaxation (each topic's ``floor_t`` rounded, then its top, then both outward, which
    holds the relaxation's optimum: within one of its bound), each a min-cost flow; where the
    relaxation runs out of time, wider windows around the means. Out of ``seconds``, the plan
    of the fewest moves alone."""
    start = time.monotonic()
    brokers = _ready(sum(map(len, table.replicas)), targets, ranges, rack_of)
    found = None if brokers is None else _fewest(table, brokers, ranges, rack_of)
    if brokers is None or found is None:
        return None
    fewest, plain = found
    if fewest <= beyond:
        return None
    classes = _classes(table, by_topic=True)
    if _width(len(classes), brokers, rack_of) > LIMIT:
        return _settled(table, brokers, fewest, plain, 0)
    topics = sorted({t for t, _ in classes})
    width = {t: 0 for t in topics}
    for (t, members), partitions in classes.items():
        width[t] += len(members) * len(partitions)
    nb = len(brokers)
    least = max((int(n % nb != 0) for n in width.values()), default=0)
    tries: list[dict[int, tuple[int, int]]] = []
    for s in range(least, 2):
        tries.append({t: (n // nb, -(-n // nb)) if s else (n // nb, n // nb)
                      for t, n in width.items()})
    fixed = _first_within(table, classes, topics, brokers, ranges, rack_of, fewest, tries,
                          start + seconds)
    if fixed is not None:
        return fixed
    least = 2

    def centred(s: int) -> dict[int, tuple[int, int]]:
        return {t: (max(0, round(n / nb) - s // 2), max(0, round(n / nb) - s // 2) + s)
                for t, n in width.items()}

    fixed = _first_within(table, classes, topics, brokers, ranges, rack_of, fewest,
                          [centred(2)], start + seconds)
    if fixed is not None:  # spread 2 reached where 1 is refuted
        return fixed
    left = seconds - (time.monotonic() - start)
    relaxed = _TopicProgram.build(classes, topics, brokers, ranges, rack_of, fewest, None)
    solved = None if left <= 0 else relaxed.program.solve(left * LP_SHARE)
    if solved is None:  # no bound above 2: the windows around each topic's mean, wider
        fixed = _first_within(table, classes, topics, brokers, ranges, rack_of, fewest,
                              [centred(3), centred(4)], start + seconds)
        return _settled(table, brokers, fewest, plain, least) if fixed is None else (
            RackPlan(fixed.final, fixed.moves, fixed.spread, least))
    x = solved[1]
    spread = float(x[relaxed.spread])  # type: ignore[index]
    least = max(least, math.ceil(spread - 1e-6))
    floors = {t: float(x[col]) for t, col in relaxed.floors.items()}  # type: ignore[index]
    low = {t: math.floor(floors[t] + 1e-6) for t in topics}
    high = {t: math.ceil(floors[t] + spread - 1e-6) for t in topics}
    tries = [{t: (low[t], low[t] + least) for t in topics},
             {t: (high[t] - least, high[t]) for t in topics},
             {t: (low[t], high[t]) for t in topics}]
    fixed = _first_within(table, classes, topics, brokers, ranges, rack_of, fewest, tries,
                          start + seconds)
    return _settled(table, brokers, fewest, plain, least) if fixed is None else (
        RackPlan(fixed.final, fixed.moves, fixed.spread, least))


def _first_within(table: PartitionTable,
                  classes: Mapping[tuple[int, frozenset[int]], list[int]], topics: Sequence[int],
                  brokers: Sequence[int], ranges: Mapping[int, tuple[int, int]],
                  rack_of: Mapping[int, str], fewest: int,
                  tries: Sequence[Mapping[int, tuple[int, int]]], deadline: float
                  ) -> RackPlan | None:
    """The plan of the first ``tries`` (topic windows) whose min-cost flow makes ``fewest``
    moves, its spread proven the least (each try's windows are the least width not refuted
    before it)."""
    for windows in tries:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        program = _TopicProgram.build(classes, topics, brokers, ranges, rack_of, None, windows)
        solved = program.program.solve(left)
        if solved is not None and round(solved[0]) == fewest and _integral(solved[1]):
            final = _dealt(table, brokers, rack_of, program.flows, _rounded(solved[1]))
            reached = worst_topic(table, final, brokers)[0]
            return RackPlan(final, fewest, reached, reached)
    return None


def _settled(table: PartitionTable, brokers: Sequence[int], fewest: int,
             plain: dict[int, Replicas], least: int) -> RackPlan:
    """The plan of the fewest moves alone, its topics as they fell."""
    reached = worst_topic(table, plain, brokers)[0]
    return RackPlan(plain, fewest, reached, min(least, reached))


def _integral(x: object) -> bool:
    import numpy as np

    values = np.asarray(x)
    return bool(np.all(np.abs(values - np.rint(values)) < 1e-6))


@dataclass(frozen=True)
class _TopicProgram:
    """The topic program of the module docstring: the class flow, each class's units to a
    node per (topic, broker) and on to the broker (``y[t, b]``, the topic's end count there).
    With ``windows`` (per topic, its end counts' bounds) it is a min-cost flow (a network
    matrix: integral); without, each topic's window is ``floor_t .. floor_t + spread``, the
    moves at most ``fewest``, and ``spread`` minimised: its linear relaxation bounds the
    least worst topic spread from below."""

    program: _Program
    flows: list[_Flow]
    spread: int
    floors: dict[int, int]

    @classmethod
    def build(cls, classes: Mapping[tuple[int, frozenset[int]], list[int]],
              topics: Sequence[int], brokers: Sequence[int],
              ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str],
              fewest: int | None, windows: Mapping[int, tuple[int, int]] | None
              ) -> _TopicProgram:
        program = _Program.empty()
        flows = _flows(program, classes, brokers, ranges, rack_of, per_topic=True)
        assert flows is not None  # fewest_moves built the same flows
        total = float(sum(len(p) * len(m) for (_, m), p in classes.items()))
        spread = program.column(float(windows is None), total)
        moving = [(col, 1.0) for flow in flows for b, col in zip(brokers, flow.x, strict=True)
                  if b not in flow.members]
        if windows is None:
            for col, _ in moving:
                program.cost[col] = 0.0
            program.row(moving, 0.0, float(fewest or 0))
        cells: dict[tuple[int, int], list[tuple[int, float]]] = {}
        for (t, _), flow in zip(classes, flows, strict=True):
            for i, col in enumerate(flow.x):
                cells.setdefault((t, i), []).append((col, 1.0))
        per_broker: list[list[tuple[int, float]]] = [[] for _ in brokers]
        floors: dict[int, int] = {}
        for t in topics:
            low, high = (0, total) if windows is None else windows[t]
            floor = -1 if windows is not None else program.column(0.0, total)
            if floor >= 0:
                floors[t] = floor
            for i in range(len(brokers)):
                y = program.column(0.0, float(high), lower=float(low))
                program.row([*cells.get((t, i), []), (y, -1.0)], 0.0, 0.0)
                per_broker[i].append((y, 1.0))
                if floor >= 0:
                    program.row([(y, 1.0), (floor, -1.0)], 0.0, math.inf)
                    program.row([(y, 1.0), (floor, -1.0), (spread, -1.0)], -math.inf, 0.0)
        for i, b in enumerate(brokers):
            program.row(per_broker[i], *map(float, ranges[b]))
        return cls(program, flows, spread, floors)


def _dealt(table: PartitionTable, brokers: Sequence[int], rack_of: Mapping[int, str],
           flows: Sequence[_Flow], chosen: Sequence[int]) -> dict[int, Replicas]:
    """Each class's counts dealt to its partitions (:func:`kadmin.balance.realise.dealt`)."""
    racks = sorted({rack_of[b] for b in brokers})
    by_rack = {r: [b for b in brokers if rack_of[b] == r] for r in racks}
    final: dict[int, Replicas] = {}
    for flow in flows:
        units = {b: chosen[col] for b, col in zip(brokers, flow.x, strict=True)}
        final.update(dealt(table.replicas, flow.partitions, flow.members, units, racks, by_rack))
    return final


def fewest_by_sets(sets: Mapping[frozenset[int], int], targets: Collection[int],
                   ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str]
                   ) -> tuple[int, dict[frozenset[int], dict[int, int]]] | None:
    """:func:`fewest_moves` of partitions known only by how many sit on each replica set
    (``sets``), and each set's units per target broker in a plan making them (the program's
    own answer: dealt to the set's partitions by :func:`kadmin.balance.realise.deal`). What
    the Spark driver solves for the whole selection from its chunks' counts. None as there."""
    total = sum(len(members) * n for members, n in sets.items())
    brokers = _ready(total, targets, ranges, rack_of)
    if brokers is None or _width(len(sets), brokers, rack_of) > LIMIT:
        return None
    program = _Program.empty()
    flows = _flows(program, {(0, members): list(range(n)) for members, n in sets.items()},
                   brokers, ranges, rack_of)
    found = None if flows is None else program.solve(None)
    if flows is None or found is None or not _integral(found[1]):
        return None
    chosen = _rounded(found[1])
    return round(found[0]), {flow.members: {b: chosen[col] for b, col in zip(
        brokers, flow.x, strict=True)} for flow in flows}
