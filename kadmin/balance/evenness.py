"""Every topic even: the fewest replica moves with per-topic bounds, as one exact program. Pure.

Per-topic bounds do not fit the broker-level search of :mod:`kadmin.balance.flow`, but they do
fit a network flow modelled at partition level (docs/balancing.md, "Per-topic evenness"):

- a *leave* arc per replica ``(p, a)``: partition ``p``'s replica on broker ``a`` goes (forced
  when ``a`` is no target), from node ``Z[t, a]`` (topic ``t`` of ``p`` on ``a``) to ``P[p]``;
- an *arrive* arc per target ``b`` not in ``p``: a replica of ``p`` comes to ``b``, from
  ``P[p]`` to ``Z[t, b]``, cost 1 (a copy);
- ``P[p]`` conserves flow (a partition keeps its size); the net flow between ``Z[t, b]`` and
  broker ``B[b]`` keeps topic ``t``'s count on ``b`` within its window ``[L_t, L_t + k]``;
  the net flow between ``B[b]`` and the super node keeps ``b``'s count within its balanced
  range (:meth:`kadmin.balance.targets.Group.bounds`: floor/ceiling of the mean or of its
  capacity share).

With the windows fixed that is a circulation with lower and upper bounds: its constraint matrix
is a network matrix, totally unimodular, so the linear program has an integral optimum and the
min-cost flow is exact. A window of width 1 is fixed by the topic's mean (``[floor, ceil]``);
a wider one may sit anywhere that contains the mean, and which is best depends on the other
topics, so ``L_t`` is a variable of the program. Racks add, per partition, a node ``D[p]``
with arcs of capacity 1 to each rack's share of the partition and a lower bound of the racks
the partition has now: still a network (no partition ends with fewer distinct racks).

The program is solved by HiGHS (scipy's ``milp``; see :func:`fewest_moves_within` for the
stages): as a linear program wherever it is a circulation, with integer arcs only where free
windows leave a fractional optimum. A window needs no integer variable: integral counts within
``[L, L + k]`` for a real ``L`` are within ``[min, min + k]``.

Objectives:

- :func:`fewest_moves_within`: the fewest moves with every topic spread at most ``k``;
- :func:`lexicographic`: the fewest moves there are, then, among plans that make that many,
  the least worst topic spread (searched over ``k``: the moves needed never grow with ``k``).

:func:`even_topics`, what a rebalance runs, tries the cheap proofs first: the bound of
:mod:`kadmin.balance.spreads` (a second at a million partitions; the skewed clusters meet it),
then the topic x broker program of :mod:`kadmin.balance.aggregate` (seconds where it answers),
and this module's partition program only where it is small (:data:`DEFAULT_LIMIT`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where the program is built: Spark's executors may lack it
    import numpy as np

from kadmin.balance.aggregate import LIMIT as AGGREGATE_LIMIT
from kadmin.balance.aggregate import SECONDS as AGGREGATE_SECONDS
from kadmin.balance.aggregate import Aggregate
from kadmin.balance.metrics import replica_moves
from kadmin.balance.spreads import least_spread, least_spreads, topic_spreads, worst_spread
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import fewest_to_ranges
from kadmin.model import InvalidInput, Replicas

LIMIT = 400_000
"""Arcs the exact program takes on when asked for (``--topic-spread``: minutes at the most)."""

DEFAULT_LIMIT = 50_000
"""Arcs the default objective runs the program on when the certificate of
:mod:`kadmin.balance.spreads` does not settle the topic spread (seconds: 24,000 arcs take 2 to
5, 300,000 took four minutes); above it the local topic search's spread stands, proven where
it meets the certificate's bound, and otherwise said to be within the gap to that bound."""


class OutOfTime(Exception):
    """Branch and bound ran out of its time: ``best`` is the best plan it found (None: none),
    not proven the fewest."""

    def __init__(self, best: Exact | None) -> None:
        super().__init__("out of time")
        self.best = best


@dataclass(frozen=True)
class Exact:
    final: dict[int, Replicas]
    """New replica lists by partition index, only those that change."""
    moves: int
    topic_spread: int | None
    """The bound every topic was held to (None: none)."""


def arcs(table: PartitionTable, targets: Collection[int]) -> int:
    """The size of the program, near enough: an arc per partition and target broker (one
    per replica that may leave, one per broker it may gain)."""
    return len(table) * len(targets)


def fewest_moves_within(table: PartitionTable, targets: Collection[int],
                        bounds: Mapping[int, tuple[int, int]] | None,
                        topic_spread: int | None, rack_of: Mapping[int, str] | None = None,
                        most: int | None = None, seconds: float | None = None) -> Exact | None:
    """The fewest moves that put every replica on ``targets``, each broker within ``bounds``
    (None: free), every topic's counts over the targets within a window of ``topic_spread``
    (None: free) and, with ``rack_of``, every partition on at least as many racks as now (or
    every target rack). None when no plan meets all of it, or, with ``most``, none of at most
    that many moves.

    Solved in stages, each exact where it answers: the linear program with free windows (a
    lower bound; its optimum is the answer when integral, and no plan exists when it is
    infeasible or above ``most``); then the windows it chose, rounded up, then down, and fixed
    (a circulation again: integral; the answer when it meets the lower bound); else the
    program with integer arcs (branch and bound, raising :class:`OutOfTime` after
    ``seconds``)."""
    import numpy as np
    program = _Program(table, targets, bounds, topic_spread, rack_of)
    found, cost, windows = program.solve(integral=False)
    if found is not None or cost == np.inf:
        return None if found is None or (most is not None and found.moves > most) else found
    least = int(np.ceil(cost - 1e-6))
    if most is not None and least > most:
        return None
    for rounding in (np.ceil, np.floor) if windows and topic_spread is not None else ():
        fixed, _, _ = _Program(table, targets, bounds, topic_spread, rack_of, {
            t: int(rounding(w + (1e-6 if rounding is np.floor else -1e-6)))
            for t, w in windows.items()}).solve(integral=False)
        if fixed is not None and fixed.moves == least:
            return fixed
    found, _, _ = program.solve(integral=True, seconds=seconds)
    return None if found is None or (most is not None and found.moves > most) else found


def lexicographic(table: PartitionTable, targets: Collection[int],
                  bounds: Mapping[int, tuple[int, int]] | None,
                  rack_of: Mapping[int, str] | None = None, reached: int | None = None,
                  seconds: float | None = None, fewest: int | None = None,
                  least: int = 0) -> Exact | None:
    """The lexicographic optimum (moves, then worst topic spread): the fewest moves any plan
    balancing the brokers makes, then the smallest ``k`` whose fewest moves are still those.
    ``k`` is tried upwards from the least any topic allows (the answer is small, and each
    ``k`` that fails is most often refuted by the linear program alone), below ``reached``,
    a spread some plan of the fewest moves is known to reach; ``fewest``, those moves when the
    caller knows them (the broker-level search is exact without racks); ``least``, a spread
    no plan of the fewest moves goes below (:func:`kadmin.balance.spreads.least_spreads`),
    where the search starts. None when no plan
    balances at all, or no ``k`` below ``reached`` keeps the fewest moves. :class:`OutOfTime` when branch
    and bound could neither find nor refute a plan for some ``k`` within ``seconds``."""
    if fewest is None:
        plain = fewest_moves_within(table, targets, bounds, None, rack_of)
        if plain is None:
            return None
        spread = worst_spread(table, plain.final, targets)
        fewest = plain.moves
    else:  # the caller's plan of the fewest moves reaches ``reached``
        plain, spread = None, reached if reached is not None else 1 << 30
    high = spread if reached is None else min(spread, reached)
    for k in range(max(least, _least_possible(table, targets)), high):
        try:
            found = fewest_moves_within(table, targets, bounds, k, rack_of, most=fewest,
                                        seconds=seconds)
        except OutOfTime as out:
            if out.best is not None and out.best.moves <= fewest:
                return out.best  # every smaller k refuted: this k is the least
            raise
        if found is not None:
            return found
    if plain is None or (reached is not None and spread >= reached):
        return None
    return Exact(plain.final, plain.moves, spread)


def _least_possible(table: PartitionTable, targets: Collection[int]) -> int:
    """0 when every topic's replicas divide evenly over the targets, else 1."""
    return int(least_spreads(table, targets, None, None).max(initial=0))


class _Program:
    """The flow of the module docstring as a linear program: one column per arc (and per
    window and rack flag), one row per node balance."""

    def __init__(self, table: PartitionTable, targets: Collection[int],
                 bounds: Mapping[int, tuple[int, int]] | None, topic_spread: int | None,
                 rack_of: Mapping[int, str] | None,
                 windows: Mapping[int, int] | None = None) -> None:
        import numpy as np
        self.table = table
        self.window_of: dict[int, int] = {}
        """Column of each topic's free window (its lowest count)."""
        self.topic_spread = topic_spread
        self.empty = False
        """A window that cannot exist (spread 0 for a topic that does not divide evenly)."""
        self.targets = sorted(targets)
        inside = frozenset(self.targets)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        low: list[float] = []
        high: list[float] = []
        cost: list[float] = []
        col_low: list[float] = []
        col_high: list[float] = []
        integral: list[int] = []
        self.leave: list[tuple[int, int, int]] = []
        self.arrive: list[tuple[int, int, int]] = []
        """(column, partition, broker) of each arc."""

        def column(c: float, lo: float, hi: float, integer: int = 0) -> int:
            cost.append(c)
            col_low.append(lo)
            col_high.append(hi)
            integral.append(integer)
            return len(cost) - 1

        def row(entries: Sequence[tuple[int, float]], lo: float, hi: float) -> None:
            r = len(low)
            for col, v in entries:
                rows.append(r)
                cols.append(col)
                vals.append(v)
            low.append(lo)
            high.append(hi)

        broker_net: dict[int, list[tuple[int, float]]] = {b: [] for b in self.targets}
        cell_net: dict[tuple[int, int], list[tuple[int, float]]] = {}
        now: dict[int, int] = dict.fromkeys(self.targets, 0)
        cell_now: dict[tuple[int, int], int] = {}
        for p, members in enumerate(table.replicas):
            t = table.topic_of[p]
            net: list[tuple[int, float]] = []
            for a in members:
                stays = a in inside
                col = column(0.0, 0.0 if stays else 1.0, 1.0, integer=1)
                self.leave.append((col, p, a))
                net.append((col, 1.0))
                if stays:
                    now[a] += 1
                    cell_now[(t, a)] = cell_now.get((t, a), 0) + 1
                    broker_net[a].append((col, -1.0))
                    cell_net.setdefault((t, a), []).append((col, -1.0))
            for b in self.targets:
                if b in members:
                    continue
                col = column(1.0, 0.0, 1.0, integer=1)
                self.arrive.append((col, p, b))
                net.append((col, -1.0))
                broker_net[b].append((col, 1.0))
                cell_net.setdefault((t, b), []).append((col, 1.0))
            row(net, 0.0, 0.0)  # P[p]: replicas that leave = replicas that arrive
        if bounds is not None:
            for b in self.targets:
                lo, hi = bounds[b]
                row(broker_net[b], lo - now[b], hi - now[b])
        if topic_spread is not None:
            replicas: dict[int, int] = {}
            partitions: dict[int, int] = {}
            for t, members in zip(table.topic_of, table.replicas, strict=True):
                replicas[t] = replicas.get(t, 0) + len(members)
                partitions[t] = partitions.get(t, 0) + 1
            for t in sorted(replicas):
                whole, rest = divmod(replicas[t], len(self.targets))
                lowest = max(0, whole + (rest > 0) - topic_spread)
                self.empty |= lowest > whole
                if topic_spread <= 1 or lowest == whole:  # one window: [floor, ceil] of the mean
                    top = whole + (rest > 0) if topic_spread <= 1 else whole + topic_spread
                    for b in self.targets:
                        have = cell_now.get((t, b), 0)
                        row(cell_net.get((t, b), []), whole - have, top - have)
                    continue
                if windows is not None:  # fixed: a circulation again
                    for b in self.targets:
                        have = cell_now.get((t, b), 0)
                        row(cell_net.get((t, b), []), windows[t] - have,
                            windows[t] + topic_spread - have)
                    continue
                window = self.window_of[t] = column(0.0, lowest, whole)
                for b in self.targets:
                    have = cell_now.get((t, b), 0)
                    row([*cell_net.get((t, b), []), (window, -1.0)], -have,
                        topic_spread - have)
        if rack_of is not None:
            self._racks(table, rack_of, inside, row, column)
        self.shape = (len(low), len(cost))
        from scipy.optimize import Bounds  # scipy takes a third of a second to import: only here
        from scipy.sparse import coo_array

        self.matrix = coo_array((vals, (rows, cols)), shape=self.shape).tocsr()
        self.bounds = (np.array(low), np.array(high))
        self.cost = np.array(cost)
        self.columns = Bounds(np.array(col_low), np.array(col_high))
        self.integral = np.array(integral)

    def _racks(self, table: PartitionTable, rack_of: Mapping[int, str],
               inside: frozenset[int], row: object, column: object) -> None:
        """Per partition with replicas on two racks or more: a flag per target rack that may
        be 1 only if the partition ends with a replica there, and at least as many flags as
        the racks it has now (or every target rack)."""
        import numpy as np
        target_racks = sorted({rack_of[b] for b in self.targets})
        leave_of: dict[int, list[tuple[int, int]]] = {}
        for col, p, a in self.leave:
            leave_of.setdefault(p, []).append((col, a))
        arrive_of: dict[int, list[tuple[int, int]]] = {}
        for col, p, b in self.arrive:
            arrive_of.setdefault(p, []).append((col, b))
        add_row, add_column = row, column
        for p, members in enumerate(table.replicas):
            has = {rack_of[b] for b in members if rack_of.get(b) is not None}
            need = min(len(has), len(target_racks))
            if need < 2:
                continue
            flags = []
            for rack in target_racks:
                flag = add_column(0.0, 0.0, 1.0)  # type: ignore[operator]
                flags.append((flag, 1.0))
                kept = [(c, 1.0) for c, a in leave_of.get(p, []) if a in inside
                        and rack_of[a] == rack]
                came = [(c, -1.0) for c, b in arrive_of.get(p, []) if rack_of[b] == rack]
                # flag <= replicas kept there + replicas arriving there
                add_row([(flag, 1.0), *kept, *came], -np.inf, len(kept))  # type: ignore[operator]
            add_row(flags, need, np.inf)  # type: ignore[operator]

    def solve(self, integral: bool, seconds: float | None = None
              ) -> tuple[Exact | None, float, dict[int, float]]:
        """The plan (None when the optimum is fractional, or there is none), the optimum's
        cost (infinite when no plan exists) and the windows chosen. Without ``integral`` the
        linear program alone: on a network matrix its vertex optimum is integral. With
        ``seconds``, branch and bound stops then: :class:`OutOfTime` carries what it found."""
        import numpy as np
        if self.empty:
            return None, np.inf, {}
        if not integral:
            return self._linear()
        from scipy.optimize import LinearConstraint, milp

        found = milp(self.cost, constraints=LinearConstraint(self.matrix, *self.bounds),
                     integrality=self.integral, bounds=self.columns,
                     options={"mip_rel_gap": 0.0}  # proven, not within HiGHS' default 1e-4
                     | ({} if seconds is None else {"time_limit": seconds}))
        if found.status == 1:  # the time limit: the best plan found so far, if any
            best = None if found.x is None else self._plan(found.x)
            raise OutOfTime(best)
        if found.status != 0 or found.x is None:
            return None, np.inf, {}
        return (*self._plan_and_cost(found.x, float(found.fun)),
                {t: float(found.x[col]) for t, col in self.window_of.items()})

    def _linear(self) -> tuple[Exact | None, float, dict[int, float]]:
        """The linear program by HiGHS: dual simplex on a circulation; with free windows the
        program is very degenerate (dual simplex took ten times as long there), and the
        interior point method with crossover to a vertex is used."""
        import numpy as np
        low, high = self.bounds
        upper, lower = np.isfinite(high), np.isfinite(low)
        from scipy.optimize import linprog
        from scipy.sparse import vstack

        found = linprog(self.cost, A_ub=vstack([self.matrix[upper], -self.matrix[lower]]),
                        b_ub=np.concatenate([high[upper], -low[lower]]),
                        bounds=np.column_stack([self.columns.lb, self.columns.ub]),
                        method="highs-ipm" if self.window_of else "highs-ds")
        if found.status != 0 or found.x is None:
            return None, np.inf, {}
        return (*self._plan_and_cost(found.x, float(found.fun)),
                {t: float(found.x[col]) for t, col in self.window_of.items()})

    def _plan_and_cost(self, x: np.ndarray, cost: float) -> tuple[Exact | None, float]:
        plan = self._plan(x)
        return plan, cost if plan is None else float(plan.moves)

    def _plan(self, x: np.ndarray) -> Exact | None:
        """The plan of an integral solution (None for a fractional one)."""
        import numpy as np
        arcs = [col for col, _, _ in (*self.leave, *self.arrive)]
        if np.abs(x[arcs] - np.rint(x[arcs])).max(initial=0.0) > 1e-6:
            return None
        chosen = np.rint(x).astype(int)
        gone: dict[int, list[int]] = {}
        for col, p, a in self.leave:
            if chosen[col]:
                gone.setdefault(p, []).append(a)
        came: dict[int, list[int]] = {}
        for col, p, b in self.arrive:
            if chosen[col]:
                came.setdefault(p, []).append(b)
        final: dict[int, Replicas] = {}
        for p, left in gone.items():
            members = list(self.table.replicas[p])
            for a, b in zip(left, came[p], strict=True):
                members[members.index(a)] = b
            final[p] = tuple(members)
        return Exact(final, sum(len(c) for c in came.values()), self.topic_spread)


class PricedProgram:
    """The program of :func:`fewest_moves_within` with the brokers free, each replica that
    arrives on broker ``b`` costing ``prices[b]`` more and each that leaves ``a``
    ``prices[a]`` less: the subproblem of a Lagrangian decomposition over the brokers' counts
    (Spark's chunks, :meth:`kadmin.balance.chunks._Run.price`). Built once; :meth:`solve`
    changes only the costs."""

    def __init__(self, table: PartitionTable, targets: Collection[int], topic_spread: int,
                 rack_of: Mapping[int, str] | None = None) -> None:
        import numpy as np
        self.program = _Program(table, targets, None, topic_spread, rack_of)
        self.moves = self.program.cost.copy()
        """The costs unpriced: 1 per arriving replica."""
        self.arcs = len(self.moves)
        self.brokers = sorted({b for _, _, b in (*self.program.arrive, *self.program.leave)})
        at = {b: i for i, b in enumerate(self.brokers)}
        self.arrive = np.array([(c, at[b]) for c, _, b in self.program.arrive],
                               dtype=np.int64).reshape(-1, 2)
        self.leave = np.array([(c, at[a]) for c, _, a in self.program.leave],
                              dtype=np.int64).reshape(-1, 2)

    def solve(self, prices: Mapping[int, float]) -> tuple[Exact | None, float]:
        """The linear program at ``prices`` (a network: its vertex optimum is integral
        except with free windows, spreads above 1): the plan (None: fractional, or none) and
        the cost (the plan's moves, unpriced; the priced optimum when fractional; infinite
        when no plan keeps the topics within the spread)."""
        import numpy as np
        price = np.array([prices.get(b, 0.0) for b in self.brokers])
        cost = self.moves.copy()
        cost[self.arrive[:, 0]] += price[self.arrive[:, 1]]
        cost[self.leave[:, 0]] -= price[self.leave[:, 1]]
        self.program.cost = cost
        found, value, _ = self.program.solve(integral=False)
        return found, value


@dataclass(frozen=True)
class TopicGoal:
    """What a rebalance says of its topics' evenness."""

    asked: int | None
    """``--topic-spread N``; None for the default objective."""
    spread: int
    """The worst topic spread the plan ends with."""
    plain_bound: int
    """The fewest moves that balance the brokers without a topic constraint."""
    fewest: int | None
    """With ``asked``: the fewest moves that also keep every topic within it (or within the
    smallest spread reachable, ``spread``, when racks or partition sizes forbid ``asked``)."""
    exact: bool
    """Whether the result is proven: by default the spread is the least any plan of the
    fewest moves reaches (it meets the bound of :mod:`kadmin.balance.spreads`, or the exact
    program found it); with ``asked``, ``fewest`` is the fewest moves."""
    least: int | None = None
    """Default objective: the least worst topic spread proven possible for plans of these
    moves (``spread`` when ``exact``; else the gap is ``spread - least``)."""
    chunked: bool = False
    """Planned in chunks of whole topics (``spark rebalance``): each chunk exact for the
    broker counts the driver gave it, the whole ``exact`` only where it meets a bound
    (:class:`kadmin.balance.chunks.TopicsPlanned`)."""

    @property
    def reachable(self) -> bool:
        return self.asked is None or self.spread <= self.asked


SECONDS = 5.0
"""Branch and bound's time per ``k`` for the default objective; ``--topic-spread`` allows
:data:`ASKED_SECONDS`. Most ``k`` are settled by linear programs in well under a second."""

ASKED_SECONDS = 120.0


LEAST_CAP = 16
"""How far :func:`least_if_fewest` raises the bound: each step is a pass over every (topic,
broker) cell, and a bound this high is no stop worth making for the topic search."""


def least_if_fewest(table: PartitionTable, targets: Collection[int],
                    bounds: Mapping[int, tuple[int, int]], now: Mapping[int, int]) -> int:
    """The worst topic spread no plan of the fewest moves within ``bounds`` goes below
    (:func:`kadmin.balance.spreads.least_spread`), known before any plan is made, up to
    :data:`LEAST_CAP` (a cap means "at least this"). The topic search stops there
    (:func:`kadmin.balance.topics.even_out_topics`), or never starts when the plan is already
    there, and :func:`even_topics` takes it as its certificate when the plan does make the
    fewest moves."""
    return least_spread(table, targets, bounds, now, LEAST_CAP, levels=True)


def worst_topic(table: PartitionTable, final: Mapping[int, Replicas],
                targets: Collection[int]) -> tuple[int, int]:
    """The worst topic spread over ``targets`` once ``final`` is made, and the first topic of
    the table at it (by index): the figure :func:`kadmin.balance.metrics.balance` names, so a
    plan's summary takes it from here instead of counting again."""
    spreads = topic_spreads(table, final, targets)
    if not len(spreads):
        return 0, 0
    worst = int(spreads.argmax())
    return int(spreads[worst]), worst


def even_topics(table: PartitionTable, targets: Collection[int],
                bounds: Mapping[int, tuple[int, int]], rack_of: Mapping[int, str] | None,
                moved: Mapping[int, Replicas], plain_bound: int, asked: int | None,
                now: Mapping[int, int] | None = None, least: int | None = None,
                reached: int | None = None, moves: int | None = None
                ) -> tuple[dict[int, Replicas], TopicGoal] | None:
    """The replica plan with the topic goal on top of ``moved`` (the fast search's plan,
    brokers within ``bounds``).

    Default objective, the lexicographic optimum: ``moved``'s worst topic spread is proven
    the least when it meets the lower bound of :func:`kadmin.balance.spreads.least_spreads`
    (at any size: a second at a million partitions); else the exact program searches from
    that bound where the cluster is small enough (:data:`DEFAULT_LIMIT`), and above it
    ``moved`` stands, not proven, with the bound in the goal.

    ``asked``: the fewest moves with every topic within ``asked`` (the smallest spread above
    it that some plan reaches, when none reaches ``asked``). When ``moved`` makes the fewest
    moves there are (:func:`kadmin.balance.targets.fewest_to_ranges`) and keeps every topic
    within ``asked``, or the topic x broker program realizes a plan of those moves within it,
    that plan is the answer at any size (no plan moves fewer); otherwise the exact program
    runs, and a cluster too large for it (:data:`LIMIT`) is an input error.

    ``now``: replicas per target today, when the caller has them; ``least``:
    :func:`least_if_fewest`, when the caller computed it before the plan; ``reached``:
    ``moved``'s worst topic spread, when the caller has it (:func:`worst_topic`); ``moves``:
    the replicas ``moved`` copies, likewise."""
    reached = worst_spread(table, moved, targets) if reached is None else reached
    now = Counter(chain.from_iterable(table.replicas)) if now is None else now
    """Replicas per broker today, of this table: what the proofs count from."""
    moves = replica_moves(table.replicas, moved) if moves is None else moves
    fewest = moves == fewest_to_ranges({b: now.get(b, 0) for b in targets}, bounds,
                                       sum(map(len, table.replicas)))
    """``moved`` meets the balance bound: the fewest moves any plan within ``bounds`` makes."""
    if asked is None:
        if fewest and least is not None and (least < LEAST_CAP or reached <= LEAST_CAP):
            least = min(least, reached)  # least_spread's answer up to ``reached``
        else:
            least = least_spread(table, targets, bounds, now if fewest else None, reached,
                                 levels=True)
        if reached <= least:
            return dict(moved), TopicGoal(None, reached, plain_bound, None, True, reached)
        if fewest:
            better, spread, least, decided = _by_aggregate(table, targets, bounds, now, moves,
                                                           least, reached, rack_of)
            if decided:
                final, spread = (dict(moved), reached) if better is None else (better, spread)
                return final, TopicGoal(None, spread, plain_bound, None, True, spread)
            if better is not None:  # lower than the search's, not proven the least
                moved, reached = better, spread
        unproven = dict(moved), TopicGoal(None, reached, plain_bound, None, False, least)
        if arcs(table, targets) > DEFAULT_LIMIT:
            return unproven
        try:
            best = lexicographic(table, targets, bounds, rack_of, reached, SECONDS,
                                 moves if fewest or rack_of is None else None, least)
        except OutOfTime:
            return unproven
        if best is None or best.moves > moves:
            return dict(moved), TopicGoal(None, reached, plain_bound, None, True, reached)
        spread = worst_spread(table, best.final, targets)
        return best.final, TopicGoal(None, spread, plain_bound, None, True, spread)
    if fewest and reached <= asked:
        return dict(moved), TopicGoal(asked, reached, plain_bound, moves, True)
    if fewest and least_spread(table, targets, bounds, now, asked + 1) <= asked:
        # a plan of the fewest moves there are within ``asked``?
        within, spread, _, _ = _by_aggregate(table, targets, bounds, now, moves, asked,
                                             asked + 1, rack_of)
        if within is not None:
            return within, TopicGoal(asked, spread, plain_bound, moves, True)
    if arcs(table, targets) > LIMIT:
        raise InvalidInput(
            f"--topic-spread: {len(table):,} partitions over {len(targets):,} brokers are "
            f"more than the exact program takes ({LIMIT:,} partition-broker pairs); select "
            f"fewer topics (--topics), or use spark rebalance, whose chunks hold whole topics")
    for k in range(asked, max(asked, reached) + 1):
        try:
            found = fewest_moves_within(table, targets, bounds, k, rack_of,
                                        seconds=ASKED_SECONDS)
        except OutOfTime as out:
            if out.best is None:
                continue
            return out.best.final, TopicGoal(asked, worst_spread(table, out.best.final, targets),
                                              plain_bound, out.best.moves, False)
        if found is not None:
            return found.final, TopicGoal(asked, worst_spread(table, found.final, targets),
                                          plain_bound, found.moves, True)
    return dict(moved), TopicGoal(asked, reached, plain_bound, moves, True)


def _by_aggregate(table: PartitionTable, targets: Collection[int],
                  bounds: Mapping[int, tuple[int, int]], now: Mapping[int, int], moves: int,
                  least: int, reached: int, rack_of: Mapping[int, str] | None = None
                  ) -> tuple[dict[int, Replicas] | None, int, int, bool]:
    """The topic x broker program of :mod:`kadmin.balance.aggregate` (with ``rack_of``, its
    plans keep every partition's racks), ``k`` from ``least`` below ``reached`` (``moves``,
    the balance bound's, are the fewest; :meth:`Aggregate.least`): the plan of the least
    ``k`` it realizes (None: none below ``reached``) and its worst topic spread (``reached``
    without one), the least spread still possible, and whether that settles it (False: the
    program is too large, ran out of time, or could not realize a ``k`` it did not refute; a
    plan is then better than ``reached``, not proven)."""
    import time
    deadline = time.monotonic() + AGGREGATE_SECONDS
    program = Aggregate(table, targets, bounds, now, moves, rack_of)
    if program.size > AGGREGATE_LIMIT:
        return None, reached, least, False
    final, k, decided = program.least(least, reached, deadline)
    if final is None:
        return None, reached, k, decided
    spread = worst_spread(table, final, targets)
    if replica_moves(table.replicas, final) != moves or spread >= reached:
        return None, reached, k, False  # a realization the checks refuse is no plan
    if decided and spread > k:
        return None, reached, k, False  # nor a proof
    return final, spread, k, decided
