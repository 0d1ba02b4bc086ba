"""The default objective's topic spread as a topic x broker flow, exact where it is realized. Pure.

When some plan makes the balance bound's moves ``F``, the fewest there are, every plan of ``F``
moves has each broker only give or only take (:mod:`kadmin.balance.spreads`: a giver ``g``
gives ``now_g - end_g``, a taker ``y`` takes ``end_y - now_y``, each end within its range). So
whether some such plan keeps every topic within spread ``k`` is a question about how many
replicas of each topic each broker gives or takes, with partitions only in a last step:

- a column ``out[t, g]`` per topic ``t`` held by a giver ``g``, in ``[0, c_tg]``;
- a column ``in[t, y]`` per topic that can give and taker ``y``, in ``[0, P_t - c_ty]`` (a
  partition holds a broker once), cost 1 (a copy);
- per topic, what leaves (with its replicas on brokers outside the targets, which all leave)
  equals what arrives; per broker, what it gives or takes keeps it within its range;
- every topic's end counts within a window ``[L_t, L_t + k]``: neutral brokers (neither give
  nor take) keep their counts, so ``L_t`` is bounded by them, by the water levels of
  :meth:`kadmin.balance.spreads.Boxes.levels` (within the mean), and by 0 on a giver not
  holding the topic; where those fix ``L_t`` the window is a bound on each column, else
  ``L_t`` is a column and each count a row;
- all arrivals together at most ``F``: the program asks for a plan of ``F`` moves (a
  feasibility question), so no optimality gap of the solver can pass for a refutation.

**Window cuts.** Where ``L_t`` may take several values, the relaxed program below lets each
count choose its own, and branch and bound over the windows can take minutes (a drained cluster,
30 brokers to 27: 118 s). Every solution has one ``L`` per topic, which ties its cells: with
window ``L`` topic ``t`` sends into a set ``S`` of its takers at most ``sum_S min(cap, L + k -
c_ty)`` and at most all it sends (``outside_t + sum_g max(0, c_tg - L)``) less what the takers
outside ``S`` need to reach ``L`` (``sum max(0, L - c_ty)``), and at least the like. So a row
per topic and ``S`` = its takers holding at least ``h`` of it (each count ``h`` it has), bounded
by the extremes over the ``L`` its range allows (:meth:`Aggregate._window_cuts`): valid for
every solution of the exact program, and nested within the topic's row (laminar: still a
network matrix). On the drained 30 -> 27 cluster they refute spread 3 in a linear program: the
brokers holding 3 of every moving topic gain one only where that topic fills all of its empty
targets first, leaving one replica.

Solved in stages (:meth:`Aggregate.within`, :meth:`Aggregate.least`): the relaxed program
(each count within ``[lowest L_t, highest L_t + k]``, no window column: a network linear
program) refutes ``k``, or its solution is one of the exact program's when every topic spans
at most ``k``; else the windows pinned where its counts suggest (a heuristic); else branch
and bound, only for the ``k`` left undecided below the least one realized.

With ``L_t`` fixed this is a network matrix (totally unimodular): the linear program's vertex
optimum is integral, so branch and bound (HiGHS, scipy's ``milp``) makes only the windows
integer, then the rest follows with those fixed (:func:`_optimum`): as a min-cost flow
(:mod:`kadmin.balance.netflow`, OR-tools) where the rows are a network once the fixed columns
are folded, else by the dual simplex (the window cuts and rack rows below cross). The mixed
program is a relaxation of the integer one, so its infeasibility refutes; it solves in a
fraction of the time every column integer took (bench/RESULTS.md, the mid-size rack clusters).
It relaxes the partition level: the replicas of a topic must still be assigned to partitions,
which is a max flow per topic (giver -> partition holding it -> taker the partition does not
hold -> sink, capacities ``out``, 1, 1 and ``in``; Dinic, scipy's ``maximum_flow``). Hence:

- no solution of ``F`` moves: no plan of the fewest moves keeps every topic within ``k``;
- a solution every topic's flow realizes: a plan of ``F`` moves within ``k``, at partition
  level (moves ``F``, every broker in range, every count in its window);
- a solution some topic's flow does not realize: undecided.

**Racks** (no partition ends on fewer distinct racks than it has, or than the targets have;
racks of any size). Rack diversity is a rule on each partition, not on a topic's counts, so the
program above is a relaxation of the rack-aware one: every rack-aware plan of ``F`` moves is
one of its solutions. Hence a refutation without racks is a refutation with them (exact), and
only the realization must respect racks:

- each topic's max flow routes a partition's departures through a node per rack it holds
  (a replica leaving rack ``r`` may be replaced in ``r``, all but one of them anywhere) and
  one node for new racks, with capacity 1 into each rack the partition does not hold: every
  rack a partition empties is matched by a distinct new one, so no flow it carries loses a
  rack (a sufficient rule, still a max flow; a partition with one rack or none is free);
- rows per topic and rack, laminar refinements of the topic's row (still a network matrix):
  arrivals in a rack at least the partitions that must regain it, and, for partitions on
  every target rack once (rigid), arrivals there against departures there;
- a topic whose flow falls short is modelled at partition level with the rack rule exactly,
  and with it every topic keeping racks (failures beget failures elsewhere), within
  :data:`REFINED_LIMIT`: each partition a flow through its rack nodes (:meth:`_rack_flow`:
  a rack's departures go back into it, anywhere but the last, and the last through one
  node into a distinct rack the partition does not hold, or, where it holds more racks than
  it must keep, anywhere). A flow carries an end state exactly when it keeps the racks, and
  every column is an arc, so the refined program is a network too: with the windows fixed a
  min-cost flow decides it, integral, and only the windows need branch and bound. The
  refined topics' aggregate rows (cuts, rack rows) are implied by their partitions and left
  out, so they do not cross the partitions' network.

A rack-aware plan realized this way is exact (``F`` moves, every topic within ``k``); with
every topic keeping racks refined, the program decides ``k`` exactly in time (the hypothesis
tests hold it to the integer program); a topic still not realized after :data:`ROUNDS` leaves
``k`` undecided, never wrongly decided.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from kadmin.balance.netflow import Total, min_cost
from kadmin.balance.racks import racks_kept
from kadmin.balance.spreads import Boxes, cells, per_topic
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

if TYPE_CHECKING:
    import numpy as np

LIMIT = 2_000_000
"""Columns the program takes on (topics that give times takers, plus cells on givers)."""

ROUNDS = 3
"""Solves per ``k``: each models the topics the last one could not realize at partition level."""

SECONDS = 15.0
"""The time the program may take for one cluster, every ``k`` and round together (a network
program: a linear program each, branch and bound only where windows are free)."""

REFINED_LIMIT = 300_000
"""Columns the partition-level model of every topic keeping racks takes at most (a replica on
a giver or outside, or a taker a partition does not hold, for each such partition): within
it, a topic whose racks' max flow fails puts all of them at partition level at once."""

@dataclass(frozen=True)
class Verdict:
    """What the program says of one ``k``."""

    refuted: bool
    """No plan of the fewest moves keeps every topic within ``k`` (proven)."""
    final: dict[int, Replicas] | None
    """A plan of the fewest moves within ``k`` (changed lists by partition), when realized."""


@dataclass
class _Columns:
    """The columns of one ``k``'s program (:meth:`Aggregate._columns`): the windows, the
    giver cells' topics, brokers and counts (``gt``, ``gb``, ``gc``), the (movable topic,
    taker) pairs' (``at``, ``ab``, ``ac``) and their capacities, the topics with a free
    window, and the bounds and costs of every column."""

    window_low: np.ndarray
    window_high: np.ndarray
    gt: np.ndarray
    gb: np.ndarray
    gc: np.ndarray
    at: np.ndarray
    ab: np.ndarray
    ac: np.ndarray
    cap: np.ndarray
    free: np.ndarray
    n_out: int
    n_in: int
    width: int
    lo: np.ndarray
    hi: np.ndarray
    cost: np.ndarray


@dataclass
class _Rows:
    """The rows of one program as they are added: the entries (row, column and value
    arrays), each row's bounds, and how many rows there are (``r``)."""

    rows: list = field(default_factory=list)
    cols: list = field(default_factory=list)
    vals: list = field(default_factory=list)
    row_lo: list = field(default_factory=list)
    row_hi: list = field(default_factory=list)
    r: int = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, low: np.ndarray,
            high: np.ndarray) -> None:
        """Entries and the bounds of ``len(low)`` new rows."""
        self.rows.append(rows)
        self.cols.append(cols)
        self.vals.append(vals)
        self.row_lo.append(low)
        self.row_hi.append(high)
        self.r += len(low)


@dataclass
class _Nodes:
    """Rows added one at a time, each a flow node: its ``plus`` columns less its ``minus``
    columns equal a constant (what enters it from outside the program)."""

    r: int
    entries_r: list[int] = field(default_factory=list)
    entries_c: list[int] = field(default_factory=list)
    entries_v: list[float] = field(default_factory=list)
    low: list[float] = field(default_factory=list)
    high: list[float] = field(default_factory=list)

    def node(self, plus: list[int], minus: list[int], value: float) -> None:
        self.entries_r += [self.r] * (len(plus) + len(minus))
        self.entries_c += plus + minus
        self.entries_v += [1.0] * len(plus) + [-1.0] * len(minus)
        self.low.append(value)
        self.high.append(value)
        self.r += 1


class Aggregate:
    """The program of the module docstring for one cluster; :meth:`within` asks it of one
    ``k``. ``fewest``: ``F``, which some plan is known to make; ``rack_of``: plans keep
    every partition's racks."""

    def __init__(self, table: PartitionTable, targets: Collection[int],
                 bounds: Mapping[int, tuple[int, int]], now: Mapping[int, int],
                 fewest: int, rack_of: Mapping[int, str] | None = None) -> None:
        import numpy as np
        self.table, self.fewest, self.rack_of = table, fewest, rack_of
        self.target_racks = len({rack_of.get(b) for b in targets} - {None}) if rack_of else 0
        self.order = order = sorted(targets)
        self.inside = frozenset(order)
        self.refined: set[int] = set()
        """Topics modelled at partition level (their aggregate did not realize)."""
        self._relaxed_seen: dict[tuple[int, int], Verdict | tuple | None] = {}
        """The relaxed program's answer by ``k`` and how many topics were refined (they
        only grow)."""
        n = len(order)
        held = np.array([now.get(b, 0) for b in order], dtype=np.int64)
        low = np.array([bounds[b][0] for b in order], dtype=np.int64)
        high = np.array([bounds[b][1] for b in order], dtype=np.int64)
        self.giver = held > low
        self.taker = held < high
        self.give_range = (np.maximum(0, held - high), np.maximum(0, held - low))
        self.take_range = (np.maximum(0, low - held), np.maximum(0, high - held))
        topics = len(table.topics)
        boxes = Boxes.of(table, targets, bounds, now)
        self.replicas, self.partitions = boxes.replicas, boxes.partitions
        self.c = c = boxes.c
        low_level, high_level = boxes.levels()
        inside = np.bincount(c.topic, weights=c.count, minlength=topics).astype(np.int64)
        self.outside = self.replicas - inside
        """Replicas of each topic on brokers outside the targets: all of them leave."""
        on_giver = self.giver[c.broker]
        self.gives = (np.bincount(c.topic[on_giver], minlength=topics) > 0) | (self.outside > 0)
        """Topics that can give (only those take)."""
        self.movable = np.flatnonzero(self.gives)
        self.takers = np.flatnonzero(self.taker)
        self.giver_cells = np.flatnonzero(on_giver)
        self.size = len(self.giver_cells) + len(self.movable) * len(self.takers)
        neutral = ~(self.giver | self.taker)

        def least_over(mask: np.ndarray) -> np.ndarray:
            """Per topic, its least count over the brokers of ``mask`` (0 unless it holds
            every one of them; a large number when there are none)."""
            on = mask[c.broker]
            sub = type(c)(c.topic[on], c.broker[on], c.count[on])
            least = per_topic(sub, sub.count, topics, 0, "minimum")
            every = np.bincount(sub.topic, minlength=topics) == int(mask.sum())
            return np.where(every, least, 0) if mask.any() else np.full(topics, 1 << 40)

        def most_over(mask: np.ndarray) -> np.ndarray:
            on = mask[c.broker]
            sub = type(c)(c.topic[on], c.broker[on], c.count[on])
            return per_topic(sub, sub.count, topics, 0, "maximum")

        self.window_high = np.minimum.reduce([least_over(neutral), least_over(self.giver),
                                              low_level])
        """The highest ``L_t`` can be: neutral counts stay, a giver never gains, the least
        count is at most the low water level (:meth:`kadmin.balance.spreads.Boxes.levels`;
        at most the mean)."""
        self.fixed_top = np.maximum(most_over(neutral), most_over(self.taker))
        """Counts some end reaches whatever the plan: neutral ones stay, a taker never loses."""
        self.mean_top = high_level
        """The largest count is at least the high water level (at least the mean)."""
        self.current = np.where(self.gives, 0, per_topic(c, c.count, topics, 0, "maximum")
                                - np.where(np.bincount(c.topic, minlength=topics) == n,
                                           per_topic(c, c.count, topics, 0, "minimum"), 0))
        """The spread of each topic that cannot give: it keeps its counts."""

    def within(self, k: int, deadline: float, branch: bool = True) -> Verdict | None:
        """The verdict for spread ``k``; None when the solver ran out of time (``deadline``,
        by ``time.monotonic``) or the windows it chose admit no integral plan (undecided).
        The relaxed program first (a linear program: it refutes, or
        its solution is one of the exact program's); then, with ``branch``, the exact one
        (branch and bound over free windows). Topics whose flow does not realize the solution
        are modelled at partition level (as :mod:`kadmin.balance.evenness` does, inside this
        program) and the program solved again, up to :data:`ROUNDS` times."""
        import time
        last: tuple | None = None
        """The last round's solution: its windows, pinned, are tried first (the partitions
        of the topics it failed on now modelled)."""
        for _ in range(ROUNDS):
            seconds = deadline - time.monotonic()
            if seconds <= 0:
                return None
            solved: Verdict | tuple | None = \
                self._pinned(k, last, deadline) if last is not None else None
            if solved is None or solved is last:
                solved = self._relaxed(k, seconds)
            if isinstance(solved, tuple) and not self._within(k, *solved[:6]):
                solved = self._pinned(k, solved, deadline)
            if isinstance(solved, tuple) and not self._within(k, *solved[:6]):
                if not branch:
                    return Verdict(False, None)
                solved = self._solve(k, deadline - time.monotonic())
            if solved is None or isinstance(solved, Verdict):
                return solved
            final, failed = self._realize(*solved)
            if not failed:
                return Verdict(False, final)
            last = solved
            self.refined |= failed
            if self.rack_of and self._kept_racks[1] <= REFINED_LIMIT:
                # racks: failures beget failures elsewhere (measured: rounds of 25, 266 and
                # 28 more topics), and the partition-level model is exact and a flow
                self.refined |= self._kept_racks[0]
        return Verdict(False, None)

    def least(self, least: int, reached: int, deadline: float
              ) -> tuple[dict[int, Replicas] | None, int, bool]:
        """The least ``k`` from ``least`` below ``reached`` that some plan of the fewest moves
        keeps, as far as the program decides by ``deadline``: the linear programs for every
        ``k`` upwards until one realizes a plan, then branch and bound on the ``k`` below it
        they left undecided, upwards. With racks each ``k`` the linear programs leave
        undecided is decided at once (:meth:`within` with branch and bound; once a round finds
        topics whose flow fails, every topic with partitions keeping racks at partition level,
        within :data:`REFINED_LIMIT`, else again while each solve finds more) and the search
        stops at the first it does not decide. Returns the plan
        of the least ``k`` realized (None: none below ``reached``), the least ``k`` still
        possible, and whether that is decided (every smaller ``k`` refuted)."""
        found: tuple[int, dict[int, Replicas]] | None = None
        undecided: list[int] = []
        for k in range(least, reached):
            verdict = self.within(k, deadline, branch=False)
            if verdict is None:
                break
            if verdict.final is not None:
                found = (k, verdict.final)
                break
            if not verdict.refuted and self.rack_of:
                # racks: what fails is realizing (the topic rows cannot tell which kind of
                # partition leaves a broker); branch and bound with the failing topics at
                # partition level decides this k, or nothing does in the time left (again
                # while each solve finds more such topics)
                refined = -1
                while verdict is not None and not verdict.refuted and verdict.final is None \
                        and len(self.refined) > refined:
                    if self.refined and self._kept_racks[1] <= REFINED_LIMIT:
                        # failures beget failures elsewhere: every such topic at once
                        self.refined |= self._kept_racks[0]
                    refined = len(self.refined)
                    verdict = self.within(k, deadline)
                if verdict is not None and verdict.final is not None:
                    found = (k, verdict.final)
                    break
                if verdict is None or not verdict.refuted:
                    return None, k, False
                continue
            if not verdict.refuted:
                undecided.append(k)
        else:
            verdict = Verdict(True, None)
        if verdict is None and found is None:  # out of time before a plan or the end
            undecided.append(k)
        for k in undecided:
            verdict = self.within(k, deadline)
            if verdict is None or not verdict.refuted:
                if verdict is not None and verdict.final is not None:
                    return verdict.final, k, True
                return (None, k, False) if found is None else (found[1], k, False)
        if found is None:
            return None, reached, True
        return found[1], found[0], True

    def _relaxed(self, k: int, seconds: float) -> Verdict | tuple | None:
        """The relaxed program for ``k`` (:meth:`_solve`), solved once for each set of
        refined topics (a round after one without branch and bound begins where it did)."""
        key = (k, len(self.refined))
        if key not in self._relaxed_seen:
            self._relaxed_seen[key] = self._solve(k, seconds, relaxed=True)
        return self._relaxed_seen[key]

    def _pinned(self, k: int, relaxed: tuple, deadline: float) -> tuple:
        """A solution of the exact program near the relaxed one (a heuristic: it decides
        nothing when it fails): each topic's window pinned where the relaxed solution's counts
        suggest, at its largest count less ``k`` (lows raised), else at its least count
        (highs lowered); each a network linear program. ``relaxed`` back when neither
        works."""
        import time

        import numpy as np
        low, high = self._ends(*relaxed[:6])
        for pin in (high - k, low):
            seconds = deadline - time.monotonic()
            if seconds <= 0:
                break
            solved = self._solve(k, seconds, pinned=np.maximum(pin, 0))
            if isinstance(solved, tuple):
                return solved
        return relaxed

    def _solve(self, k: int, seconds: float, relaxed: bool = False,
               pinned: np.ndarray | None = None) -> Verdict | tuple | None:
        """The program for ``k``: a refuting :class:`Verdict`, None when out of time or
        undecided (:func:`_optimum`), or the
        integral solution's columns for :meth:`_realize`. ``relaxed``: every window free to lie
        anywhere in its range on each cell separately (each count within ``[lowest L,
        highest L + k]``): a network matrix with no window column, a linear program whose
        infeasibility refutes ``k`` and whose solution, when every topic's counts happen to
        span at most ``k`` (:meth:`_within`), is one of the exact program's. ``pinned``: each
        topic's window fixed there (clipped to its range): a solution is one of the exact
        program's, but infeasibility proves nothing (the returned refutation is then only
        that pinning's)."""
        columns = self._columns(k, relaxed, pinned)
        if columns is None:
            return Verdict(True, None)
        rows = _Rows()
        total = self._flow_rows(columns, rows)
        n_out, n_in = columns.n_out, columns.n_in
        cuts = self._window_cuts(k, columns.window_low, columns.window_high, columns.ac,
                                 columns.cap, columns.lo[n_out:n_out + n_in],
                                 columns.hi[n_out:n_out + n_in], columns.gt, columns.gc,
                                 n_out, rows.r)
        if cuts is None:
            return Verdict(True, None)
        rows.add(*cuts)
        if self.rack_of:
            self._rack_rows(columns, rows)
        if len(columns.free):
            self._free_window_rows(k, columns, rows)
        return self._solved(columns, rows, total, seconds)

    def _columns(self, k: int, relaxed: bool, pinned: np.ndarray | None) -> _Columns | None:
        """The program's columns for ``k`` and their bounds: per giver cell the replicas
        leaving (``out[t, g]``), per movable topic and taker those arriving (``in[t, y]``),
        per topic whose window is free its window ``L_t``. None: some bound already refutes
        ``k``."""
        import numpy as np
        topics = len(self.table.topics)
        if self.current.max(initial=0) > k:
            return None
        window_low = np.maximum.reduce([np.zeros(topics, dtype=np.int64), self.fixed_top - k,
                                        self.mean_top - k])
        if (window_low > self.window_high)[self.movable].any():
            return None
        c, takers, movable = self.c, self.takers, self.movable
        window_high = self.window_high
        if pinned is not None:
            window_low = window_high = np.minimum(np.maximum(pinned, window_low), window_high)
        # topics whose window is fixed: the window bounds each column; else L_t is one
        fixed = (window_low == window_high) | relaxed
        gt, gb, gc = c.topic[self.giver_cells], c.broker[self.giver_cells], c.count[self.giver_cells]
        at = np.repeat(movable, len(takers))
        ab = np.tile(takers, len(movable))
        ac = _lookup(c.topic * len(self.order) + c.broker, c.count, at * len(self.order) + ab)
        free = np.flatnonzero(~fixed & self.gives)
        n_out, n_in = len(gt), len(at)
        width = n_out + n_in + len(free)
        lo = np.zeros(width)
        hi = np.zeros(width)
        base = np.where(fixed, window_low, 0)
        top = np.where(fixed, window_high if relaxed else window_low, 0)
        # out[t, g]: the end c - out within [L, L + k] when L is fixed
        lo[:n_out] = np.where(fixed[gt], np.maximum(0, gc - top[gt] - k), 0)
        hi[:n_out] = np.where(fixed[gt], gc - base[gt], gc)
        # in[t, y]: at most the partitions not on y; the end c + in within the window
        leaving, moving_key, moving_count = self._leaving
        cap = leaving[at] - _lookup(moving_key, moving_count, at * len(self.order) + ab)
        lo[n_out:n_out + n_in] = np.where(fixed[at], np.maximum(0, base[at] - ac), 0)
        hi[n_out:n_out + n_in] = np.where(fixed[at], np.minimum(cap, top[at] + k - ac), cap)
        lo[n_out + n_in:] = window_low[free]
        hi[n_out + n_in:] = window_high[free]
        if (lo > hi).any():
            return None
        cost = np.zeros(width)
        cost[n_out:n_out + n_in] = 1.0
        return _Columns(window_low, window_high, gt, gb, gc, at, ab, ac, cap, free, n_out, n_in,
                        width, lo, hi, cost)

    def _flow_rows(self, columns: _Columns, rows: _Rows) -> Total:
        """Per topic, arrivals less departures are its replicas outside the targets; per
        broker, its gives (givers) or takes (takers) within its range; all arrivals together
        at most ``F`` (the takers' rows together: returned as such for the flow)."""
        import numpy as np
        topics, movable, takers = len(self.table.topics), self.movable, self.takers
        gt, gb, at, ab = columns.gt, columns.gb, columns.at, columns.ab
        n_out, n_in = columns.n_out, columns.n_in
        # (a refined topic's row is the sum of its partitions' and cells', left out)
        aggregated = movable[~self._refined_mask[movable]]
        topic_row = np.full(topics, -1)
        topic_row[aggregated] = rows.r + np.arange(len(aggregated))
        for t, col, sign in ((gt, np.arange(n_out), -1.0), (at, n_out + np.arange(n_in), 1.0)):
            on = topic_row[t] >= 0
            rows.rows.append(topic_row[t[on]])
            rows.cols.append(col[on])
            rows.vals.append(np.full(int(on.sum()), sign))
        rows.row_lo.append(self.outside[aggregated])
        rows.row_hi.append(self.outside[aggregated])
        rows.r += len(aggregated)
        r = rows.r
        broker_row = np.full(len(self.order), -1)
        givers = np.flatnonzero(self.giver)
        broker_row[givers] = r + np.arange(len(givers))
        broker_row[takers] = r + len(givers) + np.arange(len(takers))
        rows.rows += [broker_row[gb], broker_row[ab]]
        rows.cols += [np.arange(n_out), n_out + np.arange(n_in)]
        rows.vals += [np.ones(n_out), np.ones(n_in)]
        rows.row_lo += [self.give_range[0][givers], self.take_range[0][takers]]
        rows.row_hi += [self.give_range[1][givers], self.take_range[1][takers]]
        rows.r += len(givers) + len(takers)
        # all arrivals together at most F (every plan moves at least F): the program asks
        # for a plan of F moves, not for the least moves, so a solver's optimality gap never
        # turns into a refutation (HiGHS stops branch and bound within a relative gap)
        total = Total(rows.r, r + len(givers) + np.arange(len(takers)))
        rows.add(np.full(n_in, rows.r), n_out + np.arange(n_in), np.ones(n_in),
                 np.array([0.0]), np.array([float(self.fewest)]))
        return total

    def _rack_rows(self, columns: _Columns, rows: _Rows) -> None:
        """Per topic and rack, at least the arrivals its partitions must have; for the
        topics whose racks are rigid, arrivals in each rack against departures there."""
        import numpy as np
        topics, movable, takers = len(self.table.topics), self.movable, self.takers
        gt, gb, at, ab = columns.gt, columns.gb, columns.at, columns.ab
        n_out, n_in = columns.n_out, columns.n_in
        rack_of = self.rack_of or {}
        topic, rack, need = self._regain
        kept = ~self._refined_mask[topic]
        topic, rack, need = topic[kept], rack[kept], need[kept]
        movable_pos = np.full(topics, -1)
        movable_pos[movable] = np.arange(len(movable))
        taker_rack = np.array([self._rack_index.get(rack_of.get(self.order[y]), -1)
                               for y in takers.tolist()], dtype=np.int64)
        r = rows.r
        for i, (t, g) in enumerate(zip(topic.tolist(), rack.tolist(), strict=True)):
            mine = n_out + movable_pos[t] * len(takers) + np.flatnonzero(taker_rack == g)
            rows.rows.append(np.full(len(mine), r + i))
            rows.cols.append(mine)
            rows.vals.append(np.ones(len(mine)))
        rows.row_lo.append(need.astype(float))
        rows.row_hi.append(np.full(len(need), np.inf))
        rows.r += len(need)
        rigid, least_more, most_more = self._rigid
        kept = ~self._refined_mask[rigid]
        rigid, least_more, most_more = rigid[kept], least_more[kept], most_more[kept]
        if not len(rigid):
            return
        racks = len(self._rack_index)
        row_of = np.full(topics, -1)
        row_of[rigid] = rows.r + np.arange(len(rigid)) * racks
        rack_at = np.array([self._rack_index.get(rack_of.get(b), -1)
                            for b in self.order], dtype=np.int64)
        for t, b, col, sign in ((gt, gb, np.arange(n_out), -1.0),
                                (at, ab, n_out + np.arange(n_in), 1.0)):
            on = (row_of[t] >= 0) & (rack_at[b] >= 0)
            rows.rows.append(row_of[t[on]] + rack_at[b[on]])
            rows.cols.append(col[on])
            rows.vals.append(np.full(int(on.sum()), sign))
        rows.row_lo.append(least_more.ravel().astype(float))
        rows.row_hi.append(most_more.ravel().astype(float))
        rows.r += len(rigid) * racks

    def _free_window_rows(self, k: int, columns: _Columns, rows: _Rows) -> None:
        """Free windows: ``c - out - L`` and ``c + in - L`` within ``[0, k]``."""
        import numpy as np
        gt, gc, at, ac = columns.gt, columns.gc, columns.at, columns.ac
        n_out, n_in, free = columns.n_out, columns.n_in, columns.free
        window_col = np.full(len(self.table.topics), -1)
        window_col[free] = n_out + n_in + np.arange(len(free))
        for t, count, col, sign in ((gt, gc, np.arange(n_out), -1.0),
                                    (at, ac, n_out + np.arange(n_in), 1.0)):
            mine = np.flatnonzero(window_col[t] >= 0)
            own = rows.r + np.arange(len(mine))
            rows.rows += [own, own]
            rows.cols += [col[mine], window_col[t[mine]]]
            rows.vals += [np.full(len(mine), sign), -np.ones(len(mine))]
            rows.row_lo.append(-count[mine])
            rows.row_hi.append(k - count[mine])
            rows.r += len(mine)

    def _solved(self, columns: _Columns, rows: _Rows, total: Total, seconds: float
                ) -> Verdict | tuple | None:
        """The program solved (the refined topics at partition level first, where any):
        see :meth:`_solve`."""
        import numpy as np
        from scipy.sparse import coo_array
        gt, gb, at, ab = columns.gt, columns.gb, columns.at, columns.ab
        n_out, n_in = columns.n_out, columns.n_in
        lo, hi, cost, width = columns.lo, columns.hi, columns.cost, columns.width
        arcs: list[tuple[int, int, int]] = []
        if self.refined:
            width, arcs, caps = self._refine(gt, gb, n_out, rows, width)
            lo = np.concatenate([lo, np.zeros(width - len(lo))])
            hi = np.concatenate([hi, np.array(caps)])
            cost = np.concatenate([cost, np.zeros(width - len(cost))])
        if not width:  # nothing can move: the plan is no move, if the brokers are in range
            empty = np.zeros(0, dtype=np.int64)
            still = (np.concatenate(rows.row_lo) <= 0).all() \
                and (np.concatenate(rows.row_hi) >= 0).all()
            return (gt, gb, empty, at, ab, empty, [], empty) if still else Verdict(True, None)
        # each in[t, y] in two parallel arcs: its first replica at cost 1, the others at 2,
        # so that of the solutions the program prefers those spreading a topic over more
        # takers, which partitions realize more often (a partition gains one replica per
        # taker); still a network matrix, and integral costs for the flow. (Any solution of
        # at most F arrivals answers the question: the costs only choose among them.)
        rows_all, cols_all, vals_all = (np.concatenate(rows.rows), np.concatenate(rows.cols),
                                        np.concatenate(rows.vals))
        first = (cols_all >= n_out) & (cols_all < n_out + n_in)
        extra = width
        rows_all = np.concatenate([rows_all, rows_all[first]])
        vals_all = np.concatenate([vals_all, vals_all[first]])
        cols_all = np.concatenate([cols_all, cols_all[first] - n_out + extra])
        lo_in, hi_in = lo[n_out:n_out + n_in].copy(), hi[n_out:n_out + n_in].copy()
        lo[n_out:n_out + n_in], hi[n_out:n_out + n_in] = np.minimum(lo_in, 1), np.minimum(hi_in, 1)
        lo = np.concatenate([lo, np.maximum(lo_in - 1, 0)])
        hi = np.concatenate([hi, np.maximum(hi_in - 1, 0)])
        cost = np.concatenate([cost, np.full(n_in, 2.0)])
        width += n_in
        matrix = coo_array((vals_all, (rows_all, cols_all)), shape=(rows.r, width)).tocsr()
        # with free windows, branch and bound decides the windows: every other column
        # follows from them by a network program (:func:`_optimum`)
        branch_on = n_out + n_in + np.arange(len(columns.free))
        x = _optimum(cost, matrix, np.concatenate(rows.row_lo), np.concatenate(rows.row_hi),
                     lo, hi, branch_on, seconds, total)
        if x is None:
            return None
        if x is False:  # infeasible
            return Verdict(True, None)
        x = np.rint(x).astype(np.int64)
        into = x[n_out:n_out + n_in] + x[extra:extra + n_in]
        if int(into.sum()) > self.fewest:
            return Verdict(True, None)
        return gt, gb, x[:n_out], at, ab, into, arcs, x

    def _window_cuts(self, k: int, window_low: np.ndarray, window_high: np.ndarray,
                     ac: np.ndarray, cap: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                     gt: np.ndarray, gc: np.ndarray, n_out: int, r: int
                     ) -> tuple[np.ndarray, ...] | None:
        """Rows on the arrivals of a topic whose window ``L_t`` is free (its range holds more
        than one value) into the takers holding the most of it: the module docstring's
        window cuts. For topic ``t`` and ``S`` the takers holding at least ``h``
        of it (``h`` each count it has on a taker), with window ``L`` the arrivals into ``S``
        are at most ``sum_S min(cap, L + k - c)`` and at most what arrives in all
        (``outside_t + sum_g max(0, c_tg - L)``) less what the other takers need to reach
        ``L`` (``sum max(0, L - c)``); at least ``sum_S max(0, L - c)`` and at least what
        must arrive (``outside_t + sum_g max(0, c_tg - L - k)``) less what the others can take.
        Every solution has some ``L`` in the range, so the row's bounds are the extremes of
        these over the ``L`` that pass the same sums for all takers (none passing: no
        solution, None). Nested sets within the topic's columns: a laminar refinement of its
        row (the matrix stays a network matrix without racks). Returns the new rows' row,
        column and value entries, their low and high bounds."""
        import numpy as np
        movable, takers = self.movable, self.takers
        y = len(takers)
        empty = np.zeros(0)
        chosen = np.flatnonzero((window_low[movable] < window_high[movable])
                                & ~self._refined_mask[movable])
        if not len(chosen) or not y:
            return (empty.astype(np.int64), empty.astype(np.int64), empty, empty, empty)
        topic = movable[chosen]
        count = ac.reshape(-1, y)[chosen]
        order = np.argsort(-count, axis=1, kind="stable")
        count = np.take_along_axis(count, order, axis=1)
        room = np.take_along_axis(cap.reshape(-1, y)[chosen], order, axis=1)
        cell_lo = np.take_along_axis(lo.reshape(-1, y)[chosen], order, axis=1)
        cell_hi = np.take_along_axis(hi.reshape(-1, y)[chosen], order, axis=1)
        topics = len(self.table.topics)
        most = np.full(count.shape, -1.0)
        least = np.full(count.shape, np.inf)
        for level in range(int(window_low[topic].min()), int(window_high[topic].max()) + 1):
            # only the topics whose range holds this level: work in proportion to the ranges
            on = np.flatnonzero((window_low[topic] <= level) & (level <= window_high[topic]))
            mine, has, cap = topic[on], count[on], room[on]
            arrive_most = (self.outside + np.bincount(gt, weights=np.maximum(0, gc - level),
                                                      minlength=topics))[mine]
            arrive_least = (self.outside + np.bincount(
                gt, weights=np.maximum(0, gc - level - k), minlength=topics))[mine]
            top = np.minimum(cap, level + k - has)
            bottom = np.maximum(0, level - has)
            ok = ((top >= bottom).all(axis=1) & (bottom.sum(axis=1) <= arrive_most)
                  & (arrive_least <= top.sum(axis=1)))
            on, top, bottom = on[ok], np.maximum(top[ok], 0), bottom[ok]
            tops, bottoms = np.cumsum(top, axis=1), np.cumsum(bottom, axis=1)
            most[on] = np.maximum(most[on], np.minimum(
                tops, arrive_most[ok][:, None] - (bottoms[:, -1:] - bottoms)))
            least[on] = np.minimum(least[on], np.maximum(
                bottoms, arrive_least[ok][:, None] - (tops[:, -1:] - tops)))
        if (most[:, -1] < 0).any():
            return None
        # a row per distinct count (the takers holding at least it), where it cuts
        boundary = np.ones(count.shape, dtype=bool)
        boundary[:, :-1] = count[:, :-1] != count[:, 1:]
        cuts = boundary & ((most < np.cumsum(cell_hi, axis=1))
                           | (least > np.cumsum(cell_lo, axis=1)))
        which, length = np.nonzero(cuts)
        length = length + 1
        own = np.repeat(np.arange(len(which)), length)
        offset = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length)
        position = np.searchsorted(movable, topic[which])
        column = n_out + position[own] * y + order[which[own], offset]
        return (r + own, column, np.ones(len(own)), least[which, length - 1],
                most[which, length - 1])

    def _within(self, k: int, gt: np.ndarray, gb: np.ndarray, out: np.ndarray,
                at: np.ndarray, ab: np.ndarray, into: np.ndarray) -> bool:
        """Whether every topic's end counts over the targets (its counts now, less ``out``
        on the givers, plus ``into`` on the takers) span at most ``k``."""
        low, high = self._ends(gt, gb, out, at, ab, into)
        return bool((high - low <= k).all())

    def _ends(self, gt: np.ndarray, gb: np.ndarray, out: np.ndarray, at: np.ndarray,
              ab: np.ndarray, into: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each topic's least and largest end count over the targets (see :meth:`_within`)."""
        import numpy as np
        c, n = self.c, len(self.order)
        keys = np.concatenate([c.topic * n + c.broker, gt * n + gb, at * n + ab])
        delta = np.concatenate([c.count, -out, into])
        cell, where = np.unique(keys, return_inverse=True)
        end = np.bincount(where, weights=delta).astype(np.int64)
        on = end > 0
        topic, count = cell[on] // n, end[on]
        topics = len(self.table.topics)
        high = np.zeros(topics, dtype=np.int64)
        np.maximum.at(high, topic, count)
        low = np.full(topics, np.iinfo(np.int64).max)
        np.minimum.at(low, topic, count)
        return np.where(np.bincount(topic, minlength=topics) == n, low, 0), high

    @cached_property
    def _leaving(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per topic, its partitions that can lose a replica (only they gain one); and, as
        sorted keys ``topic * n + broker`` and counts, how many of them hold each broker (such
        a partition cannot gain it). Computed once, when the program is first built."""
        import numpy as np
        table, order = self.table, self.order
        index = {b: i for i, b in enumerate(order)}
        giver = self.giver.tolist()
        leaves = [i for i, members in enumerate(table.replicas)
                  if any(b not in index or giver[index[b]] for b in members)]
        topic_of = np.asarray(table.topic_of, dtype=np.int64)
        moving = cells([table.replicas[i] for i in leaves], [table.topic_of[i] for i in leaves],
                       order)
        return (np.bincount(topic_of[leaves], minlength=len(table.topics)),
                moving.topic * len(order) + moving.broker, moving.count)

    def _refine(self, gt: np.ndarray, gb: np.ndarray, n_out: int, rows: _Rows, width: int
                ) -> tuple[int, list[tuple[int, int, int]], list[float]]:
        """The refined topics at partition level: a column per replica on a giver (it leaves)
        and per taker a partition does not hold (a replica arrives), a row per partition
        (arrivals = departures + its replicas outside the targets) and per cell (the topic's
        column is the sum of its partitions'); a partition keeping racks is a flow through
        rack nodes instead of its row (:meth:`_rack_flow`). Adds the rows to ``rows``; returns
        the columns now, each partition column's (column, partition, broker index; ``-1 - index``: it leaves)
        and every new column's upper bound."""
        import numpy as np
        table, order = self.table, self.order
        index = {b: i for i, b in enumerate(order)}
        takers = self.takers.tolist()
        taker_pos = {y: i for i, y in enumerate(takers)}
        movable_pos = {t: i for i, t in enumerate(self.movable.tolist())}
        out_col = {(t, b): i for i, (t, b) in enumerate(zip(gt.tolist(), gb.tolist(),
                                                            strict=True)) if t in self.refined}
        links: dict[int, list[int]] = {}
        """Column of a topic's cell -> the partition columns that add up to it."""
        arcs: list[tuple[int, int, int]] = []
        matrix = _Nodes(rows.r)
        caps: list[float] = []
        for t in sorted(self.refined):
            if t not in movable_pos:
                continue
            first = n_out + movable_pos[t] * len(takers)
            for p in range(bisect_left(table.topic_of, t), bisect_right(table.topic_of, t)):
                members = table.replicas[p]
                where = [index.get(b) for b in members]
                outside = sum(1 for w in where if w is None)
                leaving = [w for w in where if w is not None and self.giver[w]]
                if not leaving and not outside:
                    continue
                departs: list[tuple[int, int]] = []
                arrives: list[tuple[int, int]] = []
                """This partition's (column, broker index) of departures and arrivals."""
                for w in leaving:
                    links.setdefault(out_col[(t, w)], []).append(width)
                    arcs.append((width, p, -1 - w))
                    departs.append((width, w))
                    width += 1
                for y in takers:
                    if y in where:
                        continue
                    links.setdefault(first + taker_pos[y], []).append(width)
                    arcs.append((width, p, y))
                    arrives.append((width, y))
                    width += 1
                caps += [1.0] * (len(departs) + len(arrives))
                need = self._need(members)
                if need < 2:
                    matrix.node([c for c, _ in arrives], [c for c, _ in departs], outside)
                else:
                    width = self._rack_flow(members, departs, arrives, need, width, matrix, caps)
        for col, parts in links.items():
            matrix.node([col], parts, 0)
        rows.add(np.array(matrix.entries_r, dtype=np.int64),
                 np.array(matrix.entries_c, dtype=np.int64), np.array(matrix.entries_v),
                 np.array(matrix.low), np.array(matrix.high))
        return width, arcs, caps

    def _rack_flow(self, members: Replicas, departs: list[tuple[int, int]],
                   arrives: list[tuple[int, int]], need: int, width: int, matrix: _Nodes,
                   caps: list[float]) -> int:
        """A partition that must end on ``need`` racks (two or more), as a flow: its
        departures enter a node per rack they leave (those from brokers outside the targets
        as a constant), its arrivals leave a node per rack they enter, and between them a
        rack's departures go back into the same rack (at most as many as it holds), anywhere
        (all but one of them: the rack keeps a replica), or, the last one, through a node
        ``emptied`` that sends each unit into a distinct rack the partition does not hold
        (the rack lost is replaced) or, at most ``racks - need`` of them, anywhere (racks it
        may lose: more racks than the targets serve). An end state keeps ``need`` racks
        exactly when such a flow carries it (every emptied rack is matched to a new one or
        forgiven), so this is the rack rule itself, not a relaxation, and every column is an
        arc: the partition adds a network to the network program, integral with the windows
        fixed. Returns the columns now."""
        rack_of, order = self.rack_of or {}, self.order
        held = Counter(rack_of.get(b) for b in members)
        outside = Counter(rack_of.get(b) for b in members if b not in self.inside)
        into: dict[str | None, list[int]] = {}
        for col, y in arrives:
            into.setdefault(rack_of.get(order[y]), []).append(col)
        out_of: dict[str | None, list[int]] = {}
        for col, w in departs:
            out_of.setdefault(rack_of.get(order[w]), []).append(col)
        arc_in: dict[str | None, list[int]] = {rack: [] for rack in into}
        """Per rack arrivals may enter, the arcs into its node."""
        anywhere_in: list[int] = []
        anywhere_out: list[int] = []
        emptied_in: list[int] = []
        emptied_out: list[int] = []

        def arc(cap: float) -> int:
            nonlocal width
            caps.append(cap)
            width += 1
            return width - 1

        for rack in sorted(out_of.keys() | outside.keys(), key=str):  # the racks it leaves
            leaves: list[int] = []
            if rack in into:
                leaves.append(arc(held[rack]))
                arc_in[rack].append(leaves[-1])
            if rack is None:
                leaves.append(arc(held[rack]))
                anywhere_in.append(leaves[-1])
            else:
                if held[rack] > 1:
                    leaves.append(arc(held[rack] - 1))
                    anywhere_in.append(leaves[-1])
                leaves.append(arc(1))
                emptied_in.append(leaves[-1])
            matrix.node(leaves, out_of.get(rack, []), outside.get(rack, 0))
        for rack in into:
            if rack is not None and rack not in held:
                emptied_out.append(arc(1))
                arc_in[rack].append(emptied_out[-1])
        spare = len(set(held) - {None}) - need
        if spare > 0:
            emptied_out.append(arc(spare))
            anywhere_in.append(emptied_out[-1])
        for rack in into:
            anywhere_out.append(arc(len(members)))
            arc_in[rack].append(anywhere_out[-1])
        matrix.node(emptied_in, emptied_out, 0)
        matrix.node(anywhere_in, anywhere_out, 0)
        for rack, cols in into.items():
            matrix.node(arc_in[rack], cols, 0)
        return width

    @property
    def _refined_mask(self) -> np.ndarray:
        """Per topic, whether it is modelled at partition level: exactly, so the cuts and rack
        rows on its aggregate (valid, but crossing its partitions' network) are left out."""
        import numpy as np
        mask = np.zeros(len(self.table.topics), dtype=bool)
        mask[sorted(self.refined)] = True
        return mask

    @cached_property
    def _rack_index(self) -> dict[str | None, int]:
        rack_of = self.rack_of or {}
        return {r: i for i, r in enumerate(sorted(_racks(rack_of, self.order)))}

    @cached_property
    def _regain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per (topic, target rack), the partitions that must gain a replica in that rack in
        every plan: those that must end on every target rack and whose replicas there are all
        on brokers outside the targets (they leave; only takers gain). As arrays: topic, rack
        index, count. A row each: the topic's arrivals in the rack are at least that many
        (a laminar refinement of the topic's row: the matrix stays a network matrix)."""
        import numpy as np
        rack_of, index = self.rack_of or {}, self._rack_index
        found: dict[tuple[int, int], int] = {}
        for p, members in enumerate(self.table.replicas):
            if all(b in self.inside for b in members) or self._need(members) < self.target_racks:
                continue
            kept = {rack_of.get(b) for b in members if b in self.inside}
            for g in {rack_of.get(b) for b in members if b not in self.inside} - kept:
                if g in index:
                    key = (self.table.topic_of[p], index[g])
                    found[key] = found.get(key, 0) + 1
        keys = sorted(found)
        return (np.array([t for t, _ in keys], dtype=np.int64),
                np.array([g for _, g in keys], dtype=np.int64),
                np.array([found[key] for key in keys], dtype=np.int64))

    @cached_property
    def _rigid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The topics with rigid partitions, and per such topic and target rack ``r`` the
        least and most its arrivals in ``r`` may exceed its departures from the givers in
        ``r``. A partition is rigid when its replicas are on distinct target racks, one on
        each: it must end so, every departure replaced in its own rack. So a topic's arrivals
        in ``r`` are at least its departures there (givers' and outside the targets') less
        those its other partitions may make there (``slack``), and at most its departures
        there plus every departure its other partitions may make. Rows refining the topic's
        own, laminar: still a network matrix."""
        import numpy as np
        rack_of, index = self.rack_of or {}, self._rack_index
        topics = len(self.table.topics)
        rigid = np.zeros(topics, dtype=bool)
        outside = np.zeros((topics, len(index)), dtype=np.int64)
        slack = np.zeros((topics, len(index)), dtype=np.int64)
        loose = np.zeros(topics, dtype=np.int64)
        """Departures the other partitions of a topic may make, every rack together."""
        giver = {b for b, g in zip(self.order, self.giver.tolist(), strict=True) if g}
        for p, members in enumerate(self.table.replicas):
            moving = [b for b in members if b in giver or b not in self.inside]
            if not moving:
                continue
            t = self.table.topic_of[p]
            racks = [index.get(rack_of.get(b), -1) for b in members]
            if -1 not in racks and len(set(racks)) == len(members) == len(index):
                rigid[t] = True
            else:
                loose[t] += len(moving)
                for b in moving:
                    g = index.get(rack_of.get(b), -1)
                    if g >= 0:
                        slack[t, g] += 1
            for b in members:
                g = index.get(rack_of.get(b), -1)
                if b not in self.inside and g >= 0:
                    outside[t, g] += 1
        chosen = np.flatnonzero(rigid & self.gives)
        return (chosen, outside[chosen] - slack[chosen],
                outside[chosen] + loose[chosen][:, None])

    @cached_property
    def _kept_racks(self) -> tuple[set[int], int]:
        """The topics that can give with a partition that must keep two racks or more and
        can move (what :meth:`_refine` models with rack rows), and the columns their
        partition-level model takes."""
        giver = {b for b, g in zip(self.order, self.giver.tolist(), strict=True) if g}
        takers = {self.order[y] for y in self.takers.tolist()}
        gives = self.gives.tolist()
        topics: set[int] = set()
        columns = 0
        for p, members in enumerate(self.table.replicas):
            t = self.table.topic_of[p]
            moving = sum(1 for b in members if b in giver or b not in self.inside)
            if gives[t] and moving and self._need(members) >= 2:
                topics.add(t)
        rack_of = self.rack_of or {}
        for p, members in enumerate(self.table.replicas):
            if self.table.topic_of[p] in topics \
                    and any(b in giver or b not in self.inside for b in members):
                gains = takers - set(members)
                columns += sum(1 for b in members if b in giver) + len(gains)
                if self._need(members) >= 2:  # the rack flow's arcs (:meth:`_rack_flow`)
                    leave = {rack_of.get(b) for b in members if b in giver or b not in self.inside}
                    columns += 3 * len(leave) + 2 * len({rack_of.get(y) for y in gains}) + 1
        return topics, columns

    def _need(self, members: Replicas) -> int:
        """The distinct racks a partition must end on: as many as it has, or as the targets
        have (0 without racks)."""
        return racks_kept(members, self.rack_of, self.target_racks) if self.rack_of else 0

    def _realize(self, gt: np.ndarray, gb: np.ndarray, out: np.ndarray, at: np.ndarray,
                 ab: np.ndarray, into: np.ndarray, arcs: list[tuple[int, int, int]],
                 x: np.ndarray) -> tuple[dict[int, Replicas], set[int]]:
        """The partition-level plan of an integral solution: refined topics as their
        partition columns say, the others by a max flow each from their givers through their
        partitions to their takers; and the topics whose flow does not carry everything."""
        order, table = self.order, self.table
        lost: dict[int, list[int]] = {}
        gained: dict[int, list[int]] = {}
        for col, p, b in arcs:
            if x[col]:
                if b < 0:
                    lost.setdefault(p, []).append(order[-1 - b])
                else:
                    gained.setdefault(p, []).append(order[b])
        for p, held in enumerate(table.replicas) if arcs else ():
            if p in gained:  # replicas outside the targets leave too
                lost.setdefault(p, []).extend(a for a in held if a not in self.inside)
        leaving: dict[int, dict[int, int]] = {}
        for t, b, v in zip(gt.tolist(), gb.tolist(), out.tolist(), strict=True):
            if v and t not in self.refined:
                leaving.setdefault(t, {})[order[b]] = v
        arriving: dict[int, dict[int, int]] = {}
        for t, b, v in zip(at.tolist(), ab.tolist(), into.tolist(), strict=True):
            if v and t not in self.refined:
                arriving.setdefault(t, {})[order[b]] = v
        failed: set[int] = set()
        for t, takes in arriving.items():
            if not self._carry(t, leaving.get(t, {}), takes, lost, gained):
                failed.add(t)
        final: dict[int, Replicas] = {}
        for p, gone in lost.items():
            members = list(table.replicas[p])
            for a, b in zip(sorted(gone), sorted(gained[p]), strict=True):
                members[members.index(a)] = b
            final[p] = tuple(members)
            if self.rack_of and len({self.rack_of.get(b) for b in members} - {None}) \
                    < self._need(table.replicas[p]):
                failed.add(table.topic_of[p])  # the rules above keep racks: never met
        return final, failed

    def _carry(self, t: int, gives: dict[int, int], takes: dict[int, int],
               lost: dict[int, list[int]], gained: dict[int, list[int]]) -> bool:
        """Topic ``t``'s max flow (Dinic, scipy's ``maximum_flow``): giver -> partition holding
        it (1) -> taker the partition does not hold (1) -> sink; with racks the partition is a
        node per rack it holds (its departures from that rack: replaced there, all but one
        anywhere, the last one in a new rack), one per rack it may gain in (1 into each new
        rack from the racks it empties), as in the module docstring. What each
        partition loses and gains goes into ``lost`` and ``gained``. False when the flow does
        not carry every arrival."""
        import numpy as np
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import maximum_flow
        table, rack_of = self.table, self.rack_of or {}
        gives = dict(gives)
        mine = range(bisect_left(table.topic_of, t), bisect_right(table.topic_of, t))
        for p in mine:
            for a in table.replicas[p]:
                if a not in self.inside:
                    gives[a] = gives.get(a, 0) + 1
        parts = [p for p in mine if any(a in gives for a in table.replicas[p])]
        giver_ids, taker_ids = sorted(gives), sorted(takes)
        g_node = {g: 2 + i for i, g in enumerate(giver_ids)}
        y_node = {y: 2 + len(giver_ids) + i for i, y in enumerate(taker_ids)}
        size = 2 + len(giver_ids) + len(taker_ids)
        edges: list[tuple[int, int, int]] = [(0, g_node[g], gives[g]) for g in giver_ids]
        edges += [(y_node[y], 1, takes[y]) for y in taker_ids]
        part_of: dict[int, int] = {}
        """Every node of a partition -> the partition."""

        def node(p: int) -> int:
            nonlocal size
            part_of[size] = p
            size += 1
            return size - 1

        for p in parts:
            members = table.replicas[p]
            racks = _racks(rack_of, members)
            anywhere = node(p)
            """Free (no rack rule), or with racks: departures that empty no rack."""
            if self._need(members) < 2:
                edges += [(g_node[a], anywhere, 1) for a in members if a in gives]
                edges += [(anywhere, y_node[y], 1) for y in taker_ids if y not in members]
                continue
            # departures by rack; arrivals by rack into the takers (one arc each: a taker
            # gained once); a rack's departures replaced in it, all but one of them anywhere,
            # and the one that empties it in a distinct new rack
            many = Counter(rack_of.get(a) for a in members)
            held = {rack: node(p) for rack in sorted(racks)}
            into: dict[str, int] = {}
            for y in taker_ids:
                rack = rack_of.get(y)
                if y in members or rack is None:
                    continue
                if rack not in into:
                    into[rack] = node(p)
                edges.append((into[rack], y_node[y], 1))
            for a in members:
                if a in gives:
                    rack = rack_of.get(a)
                    edges.append((g_node[a], anywhere if rack is None else held[rack], 1))
            emptied = node(p)
            for rack, v in held.items():
                if rack in into:
                    edges.append((v, into[rack], many[rack]))
                if many[rack] > 1:
                    edges.append((v, anywhere, many[rack] - 1))
                edges.append((v, emptied, 1))
            edges += [(anywhere, w, len(members)) for w in into.values()]
            edges += [(emptied, w, 1) for rack, w in into.items() if rack not in racks]
        tails, heads, caps = zip(*edges, strict=True)
        flow = maximum_flow(csr_array((np.array(caps, dtype=np.int32), (tails, heads)),
                                      shape=(size, size)), 0, 1)
        if flow.flow_value != sum(takes.values()):
            return False
        carried = flow.flow.tocoo()
        giver_of = {v: g for g, v in g_node.items()}
        taker_of = {v: y for y, v in y_node.items()}
        for i, j, v in zip(carried.row.tolist(), carried.col.tolist(), carried.data.tolist(),
                           strict=True):
            if v > 0 and i in giver_of and j in part_of:
                lost.setdefault(part_of[j], []).append(giver_of[i])
            elif v > 0 and i in part_of and j in taker_of:
                gained.setdefault(part_of[i], []).append(taker_of[j])
        return True


def _racks(rack_of: Mapping[int, str], brokers: Iterable[int]) -> set[str]:
    """The racks of ``brokers`` (those without one left out)."""
    return {r for b in brokers if (r := rack_of.get(b)) is not None}


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at ``wanted`` in the sorted ``keys`` (0 where absent)."""
    import numpy as np
    if not len(keys):
        return np.zeros(len(wanted), dtype=np.int64)
    where = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[where] == wanted, values[where], 0)


def _optimum(cost: np.ndarray, matrix: object, low: np.ndarray, high: np.ndarray,
             col_low: np.ndarray, col_high: np.ndarray, branch_on: np.ndarray, seconds: float,
             total: Total | None = None) -> np.ndarray | bool | None:
    """An integral optimum. With nothing to branch on (every window fixed), a min-cost flow
    where the program is a network once its fixed columns and single-entry rows are folded
    (:func:`kadmin.balance.netflow.min_cost`; ``total``: the row that is the takers' rows
    summed), else the dual simplex (HiGHS), whose basic optimum of a network matrix is
    integral. Otherwise branch and bound with only the ``branch_on`` columns integer (the
    free windows), which is a relaxation of the integer program (its infeasibility refutes),
    then those columns fixed at its answer and the flow or the simplex for the rest, a
    network program again. The flow is not interrupted at the deadline (it takes seconds on
    the largest programs the limits let through). Where a simplex answer is fractional, branch and bound
    with every column integer (on the fixed program after the first step: undecided, never a
    refutation, where that fails). False when there is none; None out of time (also when
    ``seconds`` is already spent: HiGHS takes no negative time limit)."""
    import time

    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    deadline = time.monotonic() + seconds
    if seconds <= 0:
        return None
    fixed = False
    if len(branch_on):
        integrality = np.zeros(len(cost))
        integrality[branch_on] = 1
        found = milp(cost, constraints=LinearConstraint(matrix, low, high),
                     integrality=integrality, bounds=Bounds(col_low, col_high),
                     options={"time_limit": seconds})
        if found.status == 2:
            return False
        if found.status != 0 or found.x is None:
            return None
        col_low, col_high = col_low.copy(), col_high.copy()
        col_low[branch_on] = col_high[branch_on] = np.rint(found.x[branch_on])
        fixed = True
    # a network program (nothing but arcs once the fixed columns and single-entry rows are
    # folded, ``total`` the sum of its parts): a min-cost flow; else the dual simplex
    x = min_cost(cost, matrix, low, high, col_low, col_high, total) \
        if deadline > time.monotonic() else None
    if x is None:
        x = _simplex(cost, matrix, low, high, col_low, col_high, deadline - time.monotonic())
    if x is None or isinstance(x, np.ndarray):
        return x
    if x is False:  # fixed: the columns chosen admit no integral plan, undecided
        return None if fixed else False
    seconds = deadline - time.monotonic()
    if seconds <= 0:
        return None
    found = milp(cost, constraints=LinearConstraint(matrix, low, high),
                 integrality=np.ones(len(cost)), bounds=Bounds(col_low, col_high),
                 options={"time_limit": seconds})
    if found.status == 2:
        return None if fixed else False
    return None if found.status != 0 or found.x is None else found.x


def _simplex(cost: np.ndarray, matrix: object, low: np.ndarray, high: np.ndarray,
             col_low: np.ndarray, col_high: np.ndarray, seconds: float
             ) -> np.ndarray | bool | None:
    """The dual simplex's basic optimum where it is integral; True where it is fractional,
    False where the program is infeasible, None out of time."""
    if seconds <= 0:
        return None
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import vstack
    upper, lower = np.isfinite(high), np.isfinite(low)
    found = linprog(cost, A_ub=vstack([matrix[upper], -matrix[lower]]),  # type: ignore[index]
                    b_ub=np.concatenate([high[upper], -low[lower]]),
                    bounds=np.column_stack([col_low, col_high]), method="highs-ds",
                    options={"time_limit": seconds})
    if found.status == 2:
        return False
    if found.status == 1:
        return None
    if found.status == 0 and found.x is not None and \
            np.abs(found.x - np.rint(found.x)).max(initial=0.0) < 1e-6:
        return found.x
    return True
