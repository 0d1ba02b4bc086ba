"""The class flow of :mod:`kadmin.balance.classes`, the blocks its programs are built of: a
linear program being built (:class:`Program`, solved as a min-cost flow where it is a network,
else by HiGHS, as a linear or a mixed integer program), one class's flow through its racks to
the brokers (:func:`class_flows`), the topic program over it (:class:`TopicProgram`), and the
counts dealt back to partitions (:func:`dealt`). The model itself, and why its flows are
integral, is in :mod:`kadmin.balance.classes`. Pure."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kadmin.balance.netflow import min_cost
from kadmin.balance.racks import racks_kept
from kadmin.balance.realise import dealt as dealt_units
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas


@dataclass
class Program:
    """Columns (cost, bounds) and rows (entries, low, high) being built."""

    cost: list[float]
    lower: list[float]
    upper: list[float]
    rows: list[int]
    cols: list[int]
    vals: list[float]
    low: list[float]
    high: list[float]
    timed_out: bool = False
    """The last :meth:`solve` ran out of time (else a None from it: no solution exists)."""

    @classmethod
    def empty(cls) -> Program:
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

    def solve(self, seconds: float | None, simplex: bool = False
              ) -> tuple[float, object] | None:
        """The linear program's optimum (its objective and columns), or None where it has
        none within ``seconds``: a min-cost flow where the program is a network
        (:func:`kadmin.balance.netflow.min_cost`: the class flows within fixed windows),
        else HiGHS's interior point method, whose crossover ends on a
        vertex (integral where the matrix is a network matrix). Its dual simplex stalls for
        minutes on the topic program's relaxation, the interior point method takes seconds;
        on the flows within fixed windows the dual simplex (``simplex``, a vertex too) is
        the faster, three times at 5,000 partitions."""
        import numpy as np
        from scipy.optimize import linprog
        from scipy.sparse import csr_array, vstack

        width = len(self.cost)
        matrix = csr_array((self.vals, (self.rows, self.cols)), shape=(len(self.low), width))
        low, high = np.array(self.low), np.array(self.high)
        cost = np.array(self.cost)
        flow = min_cost(cost, matrix, low, high, np.array(self.lower), np.array(self.upper))
        if flow is not None:  # a network: the min-cost flow, integral (or proven infeasible)
            self.timed_out = False
            return None if flow is False else (float(cost @ flow), flow)
        equal = low == high
        above, below = ~equal & np.isfinite(high), ~equal & np.isfinite(low)
        options: dict[str, float] = {} if seconds is None else {"time_limit": max(seconds, 1.0)}
        found = linprog(np.array(self.cost), A_ub=vstack([matrix[above], -matrix[below]]),
                        b_ub=np.concatenate([high[above], -low[below]]), A_eq=matrix[equal],
                        b_eq=low[equal], bounds=np.column_stack([self.lower, self.upper]),
                        method="highs-ds" if simplex else "highs-ipm", options=options)
        self.timed_out = found.status == 1
        return None if found.status != 0 else (float(found.fun), found.x)

    def solve_integer(self, integer: Sequence[int], seconds: float) -> Integer:
        """The mixed integer program, ``integer`` its integer columns: HiGHS's branch and
        bound (no gap allowed) within ``seconds``."""
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import csr_array

        width = len(self.cost)
        matrix = csr_array((self.vals, (self.rows, self.cols)), shape=(len(self.low), width))
        kinds = np.zeros(width)
        kinds[list(integer)] = 1
        found = milp(np.array(self.cost), integrality=kinds,
                     constraints=LinearConstraint(matrix, self.low, self.high),
                     bounds=Bounds(self.lower, self.upper),
                     options={"time_limit": max(seconds, 1.0), "mip_rel_gap": 0.0})
        bound = getattr(found, "mip_dual_bound", None)
        return Integer(found.status == 0, found.x,
                       float(found.fun) if found.status == 0 else (
                           -math.inf if bound is None else float(bound)),
                       found.status == 2)


@dataclass(frozen=True)
class Integer:
    """What :meth:`Program.solve_integer` found."""

    optimal: bool
    x: object | None
    """Its best columns (None: none found in time, or none exist)."""
    bound: float
    """No solution's objective is below it (the optimum's where ``optimal``)."""
    infeasible: bool
    """Proven to have no solution."""


@dataclass(frozen=True)
class Flow:
    """The columns of one class's flow: ``x`` per target broker (in ``brokers`` order)."""

    members: frozenset[int]
    partitions: list[int]
    x: list[int]


def grouped(table: PartitionTable, by_topic: bool) -> dict[tuple[int, frozenset[int]], list[int]]:
    classes: dict[tuple[int, frozenset[int]], list[int]] = {}
    topic_of = table.topic_of
    for p, replicas in enumerate(table.replicas):
        classes.setdefault((topic_of[p] if by_topic else 0, frozenset(replicas)), []).append(p)
    return classes


def class_flows(program: Program, classes: Mapping[tuple[int, frozenset[int]], list[int]],
           brokers: Sequence[int], ranges: Mapping[int, tuple[int, int]],
           rack_of: Mapping[int, str], per_topic: bool = False) -> list[Flow] | None:
    """The flow of the module docstring for ``classes``, its broker rows within ``ranges``
    (with ``per_topic`` the caller adds them, through its topics' nodes); None where a class
    is wider than the targets."""
    racks = sorted({rack_of[b] for b in brokers})
    by_rack = {r: [i for i, b in enumerate(brokers) if rack_of[b] == r] for r in racks}
    flows: list[Flow] = []
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
            flows.append(Flow(members, partitions, x))
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
        flows.append(Flow(members, partitions, x))
    if not per_topic:
        for i, b in enumerate(brokers):
            program.row(per_broker[i], *map(float, ranges[b]))
    return flows


def width(classes: int, brokers: Sequence[int], rack_of: Mapping[int, str]) -> int:
    return classes * (len(brokers) + 2 * len({rack_of[b] for b in brokers}) + 1)


def rounded(x: object) -> list[int]:
    import numpy as np

    return [int(v) for v in np.rint(np.asarray(x))]


def integral(x: object) -> bool:
    import numpy as np

    values = np.asarray(x)
    return bool(np.all(np.abs(values - np.rint(values)) < 1e-6))


@dataclass(frozen=True)
class TopicProgram:
    """The topic program of the module docstring: the class flow, each class's units to a
    node per (topic, broker) and on to the broker (``y[t, b]``, the topic's end count there).
    With ``windows`` (per topic, its end counts' bounds) it is a min-cost flow (a network
    matrix: integral); without, each topic's window is ``floor_t .. floor_t + spread``, the
    moves at most ``fewest``, and ``spread`` minimised: its linear relaxation bounds the
    least worst topic spread from below. With ``spread_at`` instead, ``spread`` is that and
    the moves are minimised: with ``floors`` integer, a mixed integer program whose optimum
    is the fewest moves within it (each choice of the floors leaves a min-cost flow)."""

    program: Program
    flows: list[Flow]
    spread: int
    floors: dict[int, int]

    @classmethod
    def build(cls, classes: Mapping[tuple[int, frozenset[int]], list[int]],
              topics: Sequence[int], brokers: Sequence[int],
              ranges: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str],
              fewest: int | None, windows: Mapping[int, tuple[int, int]] | None,
              spread_at: int | None = None) -> TopicProgram:
        program = Program.empty()
        flows = class_flows(program, classes, brokers, ranges, rack_of, per_topic=True)
        assert flows is not None  # fewest_moves built the same flows
        total = float(sum(len(p) * len(m) for (_, m), p in classes.items()))
        spread = program.column(float(windows is None and spread_at is None), total)
        if spread_at is not None:
            program.lower[spread] = program.upper[spread] = float(spread_at)
        moving = [(col, 1.0) for flow in flows for b, col in zip(brokers, flow.x, strict=True)
                  if b not in flow.members]
        if windows is None and spread_at is None:
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


def dealt(table: PartitionTable, brokers: Sequence[int], rack_of: Mapping[int, str],
           flows: Sequence[Flow], chosen: Sequence[int]) -> dict[int, Replicas]:
    """Each class's counts dealt to its partitions (:func:`kadmin.balance.realise.dealt`)."""
    racks = sorted({rack_of[b] for b in brokers})
    by_rack = {r: [b for b in brokers if rack_of[b] == r] for r in racks}
    final: dict[int, Replicas] = {}
    for flow in flows:
        units = {b: chosen[col] for b, col in zip(brokers, flow.x, strict=True)}
        final.update(dealt_units(table.replicas, flow.partitions, flow.members, units, racks, by_rack))
    return final
