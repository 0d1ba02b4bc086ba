"""The numbers of a plan's report (``kadmin plan report``, ``plan validate --report``). Pure:
plain data in (the plan, the cluster, sizes, capacities, the validation report, the composed
schedule), plain data out (:class:`PlanFigures`); :mod:`kadmin.plan_report.page` draws them.

Everything here is what kadmin already computes elsewhere, gathered for one page: the per-broker
figures and lower bound of :func:`kadmin.plans.plan_stats`, the execution model of
:mod:`kadmin.schedule` (who sends, who receives, each batch's load and duration, the plan's
bound). What a reader cannot take in partition by partition is aggregated so that a plan of a
million partitions over a thousand brokers makes a page of a few megabytes:

- where the data goes: a matrix of bytes (replicas, without sizes) from each sending broker to
  each receiving broker, per broker up to :data:`MAX_FLOW_GROUPS` brokers, else per rack, else
  per group of consecutive broker ids;
- topics: the :data:`WORST_TOPICS` topics spread the least evenly after the plan, and a topic x
  broker heat map of them with at most :data:`MAX_HEAT_COLUMNS` columns (groups of brokers
  beyond, each cell the mean per broker of the group);
- the execution: every batch up to :data:`MAX_BATCHES`, else runs of consecutive batches.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import chain
from typing import Any

from kadmin import schedule
from kadmin.model import (
    LIST_LIMIT,
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
)
from kadmin.plans.report import ValidationReport
from kadmin.plans.stats import PlanStats

MAX_FLOW_GROUPS = 50
"""Rows and columns of the flow matrix before brokers are grouped (by rack, else by id)."""
MAX_HEAT_COLUMNS = 100
"""Broker columns of the topic heat map before brokers are grouped by id."""
WORST_TOPICS = 30
"""Topics shown by name: those spread the least evenly after the plan."""
MAX_BATCHES = 1000
"""Batches shown one by one; more are shown as runs of consecutive batches."""


@dataclass(frozen=True)
class Verdict:
    """The plan's validation against the cluster, bounded as every list kadmin prints."""

    valid: bool
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    error_count: int
    warning_count: int


@dataclass(frozen=True)
class BrokerRow:
    broker: int
    rack: str | None
    replicas_before: int
    replicas_after: int
    leaders_before: int
    """Preferred leaders (first replicas); for an election plan, the leaders elected."""
    leaders_after: int
    bytes_before: int | None
    bytes_after: int | None
    capacity: int | None
    """Bytes of disk (``--capacity``); None without."""
    share_before: float | None
    """``bytes / capacity`` (None without sizes or capacity)."""
    share_after: float | None
    over_capacity: bool


@dataclass(frozen=True)
class Matrix:
    """A table of numbers: ``values[i][j]`` for row ``rows[i]`` and column ``columns[j]``."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    unit: str
    """What a value counts: ``bytes``, ``replicas``, ``replicas per broker``."""
    grouping: str
    """How brokers were aggregated, in words (``per broker``, ``per rack``, ...)."""


@dataclass(frozen=True)
class TopicRow:
    topic: str
    partitions: int
    spread_before: int
    spread_after: int


@dataclass(frozen=True)
class BatchRow:
    first: int
    """The batch's number from 1 (the first of a run of batches when they are aggregated)."""
    last: int
    partitions: int
    work: int
    """What the batches copy: bytes with sizes, else replicas."""
    busiest_broker: int | None
    """The broker that bounds the batch (of the longest batch of a run)."""
    load: int
    """The model's load: the most one broker receives or sends (summed over a run)."""
    seconds: float | None
    """Predicted duration at the throttle (None without sizes and throttle)."""


@dataclass(frozen=True)
class Execution:
    batches: tuple[BatchRow, ...]
    batch_count: int
    load: int
    """Sum of the batches' loads."""
    bound: int
    """No schedule's load sum is lower (the most one broker receives or sends in all)."""
    sized: bool
    rate: int | None
    """The throttle in bytes/s, when given."""
    seconds: float | None
    bound_seconds: float | None
    limits: str
    """The batching options, in words."""


@dataclass(frozen=True)
class PlanFigures:
    name: str
    kind: str
    verdict: Verdict
    partitions: int = 0
    """Entries of the plan (topics, for a deletion plan)."""
    unchanged: int = 0
    moves: int = 0
    """Replicas added (each a full copy of the partition)."""
    lower_bound: int | None = None
    bytes_moved: int | None = None
    leader_changes: int = 0
    worst_topic: str | None = None
    worst_topic_spread_before: int | None = None
    worst_topic_spread_after: int | None = None
    brokers: tuple[BrokerRow, ...] = ()
    flows: Matrix | None = None
    topics: tuple[TopicRow, ...] = ()
    topics_total: int = 0
    """Topics of the plan (``topics`` holds the worst of them)."""
    heat: Matrix | None = None
    execution: Execution | None = None
    notes: tuple[str, ...] = ()
    """What the page cannot show and why (no sizes, no throttle, ...)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def verdict_of(report: ValidationReport) -> Verdict:
    """The verdict of a validation; its lists already hold at most LIST_LIMIT problems each."""
    return Verdict(report.ok(), tuple(map(str, report.errors[:LIST_LIMIT])),
                   tuple(map(str, report.warnings[:LIST_LIMIT])), report.error_count,
                   report.warning_count)


def refused(name: str, kind: PlanKind | None, verdict: Verdict) -> PlanFigures:
    """A plan that did not validate: its verdict only (nothing of it can be counted)."""
    return PlanFigures(name, kind.value if kind else "unknown", verdict,
                       notes=("the plan has errors: nothing else of it is shown",))


# --- reassignment -------------------------------------------------------------------------------

def reassignment(name: str, plan: ReassignmentPlan, snapshot: ClusterSnapshot, stats: PlanStats,
                 transfers: Sequence[schedule.Transfer], composed: schedule.Schedule,
                 verdict: Verdict, *, sized: bool, rate: int | None, limits: str) -> PlanFigures:
    """A reassignment plan's figures: ``stats`` (:func:`kadmin.plans.plan_stats` of the plan),
    ``transfers`` (the model's view of every changed partition, in the order ``composed``'s
    indices refer to), ``sized`` when transfers weigh bytes, ``rate`` the throttle if any."""
    rack_of = {b: broker.rack for b, broker in snapshot.brokers.items()}
    notes: list[str] = []
    if not sized:
        notes.append("no partition sizes (--sizes, or a snapshot with sizes): data is counted in "
                     "replicas and no duration is predicted")
    elif rate is None:
        notes.append("no --throttle: batches are shown by their load, not their duration")
    topic_rows, heat = _topics(plan, snapshot)
    return PlanFigures(
        name, PlanKind.REASSIGN.value, verdict, stats.partitions, stats.unchanged,
        stats.replica_moves, stats.lower_bound, stats.bytes_moved, stats.leader_changes,
        stats.worst_topic, stats.worst_topic_spread_before, stats.worst_topic_spread_after,
        tuple(_broker_row(load.broker, rack_of.get(load.broker), load.replicas_before,
                          load.replicas_after, load.leaders_before, load.leaders_after,
                          load.bytes_before, load.bytes_after, load.capacity)
              for load in stats.brokers),
        _flows(transfers, rack_of, sized), tuple(topic_rows[:WORST_TOPICS]), len(topic_rows), heat,
        _execution(transfers, composed, sized, rate, limits), tuple(notes))


def _broker_row(broker: int, rack: str | None, replicas_before: int, replicas_after: int,
                leaders_before: int, leaders_after: int, bytes_before: int | None,
                bytes_after: int | None, capacity: int | None) -> BrokerRow:
    def share(held: int | None) -> float | None:
        return None if held is None or not capacity else held / capacity

    return BrokerRow(broker, rack, replicas_before, replicas_after, leaders_before, leaders_after,
                     bytes_before, bytes_after, capacity, share(bytes_before), share(bytes_after),
                     bool(capacity and bytes_after is not None and bytes_after > capacity))


def broker_groups(brokers: Sequence[int], rack_of: Mapping[int, str | None], limit: int
                  ) -> tuple[tuple[str, ...], dict[int, int], str]:
    """Labels of the groups ``brokers`` (sorted) are shown in, each broker's group, and the
    grouping in words: one group per broker up to ``limit``; else one per rack when every broker
    has a rack and there are at most ``limit`` racks; else ``limit`` groups of consecutive ids."""
    if len(brokers) <= limit:
        return tuple(f"broker {b}" for b in brokers), {b: i for i, b in enumerate(brokers)}, \
            "per broker"
    racks = sorted({rack_of.get(b) or "" for b in brokers})
    if "" not in racks and len(racks) <= limit:
        index = {r: i for i, r in enumerate(racks)}
        return (tuple(f"rack {r}" for r in racks),
                {b: index[rack_of[b] or ""] for b in brokers}, "per rack")
    size = math.ceil(len(brokers) / limit)
    labels = tuple(f"brokers {brokers[i]}-{brokers[min(i + size, len(brokers)) - 1]}"
                   for i in range(0, len(brokers), size))
    return labels, {b: i // size for i, b in enumerate(brokers)}, \
        f"brokers in groups of {size} consecutive ids"


def _flows(transfers: Sequence[schedule.Transfer], rack_of: Mapping[int, str | None],
           sized: bool) -> Matrix | None:
    """Bytes (or replicas) each broker sends to each broker, as the execution model has it:
    the partition's leader sends a copy to every new replica."""
    pairs: Counter[tuple[int, int]] = Counter()
    for t in transfers:
        for r in t.receivers:
            pairs[t.sender, r] += t.size
    if not pairs:
        return None
    senders = sorted({s for s, _ in pairs})
    receivers = sorted({r for _, r in pairs})
    every = sorted(set(senders) | set(receivers))
    labels, group, grouping = broker_groups(every, rack_of, MAX_FLOW_GROUPS)
    rows = sorted({group[s] for s in senders})
    columns = sorted({group[r] for r in receivers})
    at_row = {g: i for i, g in enumerate(rows)}
    at_column = {g: j for j, g in enumerate(columns)}
    values = [[0.0] * len(columns) for _ in rows]
    for (s, r), amount in pairs.items():
        values[at_row[group[s]]][at_column[group[r]]] += amount
    return Matrix(tuple(labels[g] for g in rows), tuple(labels[g] for g in columns),
                  tuple(map(tuple, values)), "bytes" if sized else "replicas", grouping)


def _topics(plan: ReassignmentPlan, snapshot: ClusterSnapshot
            ) -> tuple[list[TopicRow], Matrix | None]:
    """Per topic of the plan, its spread over the brokers the plan's topics end on before and
    after (as :mod:`kadmin.balance.metrics` counts it: zeros included), the worst first; and the
    heat map of the worst topics' replicas per broker after the plan."""
    targets_by: dict[str, dict[int, tuple[int, ...]]] = {}
    for move in plan.moves:
        targets_by.setdefault(move.topic, {})[move.partition] = move.replicas
    before: dict[str, Counter[int]] = {}
    after: dict[str, Counter[int]] = {}
    partitions: dict[str, int] = {}
    for topic, moved in targets_by.items():
        current = snapshot.topics.get(topic, {})
        before[topic] = Counter(chain.from_iterable(current.values()))
        after[topic] = Counter(chain.from_iterable(
            moved.get(p, replicas) for p, replicas in current.items()))
        partitions[topic] = len(current)
    targets = sorted(set(chain.from_iterable(after.values())))
    if not targets:
        return [], None

    within = frozenset(targets)

    def topic_spread(counts: Counter[int]) -> int:
        """:func:`kadmin.balance.metrics.spread` over the targets, zeros included, without a
        count per target (a thousand brokers, a hundred thousand topics)."""
        inside = [n for b, n in counts.items() if b in within]
        low = min(inside) if len(inside) == len(within) else 0
        return max(inside, default=0) - low

    rows = sorted((TopicRow(t, partitions[t], topic_spread(before[t]), topic_spread(after[t]))
                   for t in targets_by), key=lambda r: (-r.spread_after, -r.spread_before, r.topic))
    worst = rows[:WORST_TOPICS]
    labels, group, grouping = broker_groups(
        targets, {}, MAX_HEAT_COLUMNS)
    members = Counter(group.values())
    values = []
    for row in worst:
        cells = [0.0] * len(labels)
        for b, n in after[row.topic].items():
            if b in group:
                cells[group[b]] += n
        values.append(tuple(round(c / members[g], 2) for g, c in enumerate(cells)))
    unit = "replicas" if grouping == "per broker" else "replicas per broker (mean of the group)"
    return rows, Matrix(tuple(r.topic for r in worst), labels, tuple(values), unit, grouping)


def _execution(transfers: Sequence[schedule.Transfer], composed: schedule.Schedule, sized: bool,
               rate: int | None, limits: str) -> Execution:
    """The batches as the model runs them; durations only with sizes and a throttle."""
    timed = sized and rate is not None
    rows = []
    for number, (batch, load) in enumerate(zip(composed.batches, composed.loads, strict=True),
                                           start=1):
        moves = [transfers[i] for i in batch]
        rows.append(BatchRow(number, number, len(moves), sum(t.work for t in moves),
                             schedule.load_of(moves)[1], load,
                             load / rate if timed and rate else None))
    return Execution(_runs(rows), len(rows), composed.load, composed.bound, sized, rate,
                     composed.load / rate if timed and rate else None,
                     composed.bound / rate if timed and rate else None, limits)


def _runs(rows: Sequence[BatchRow]) -> tuple[BatchRow, ...]:
    """``rows`` as they are up to MAX_BATCHES, else as MAX_BATCHES runs of consecutive batches
    (their loads, durations and work summed; the busiest broker of the run's longest batch)."""
    if len(rows) <= MAX_BATCHES:
        return tuple(rows)
    size = math.ceil(len(rows) / MAX_BATCHES)
    out = []
    for i in range(0, len(rows), size):
        run = rows[i:i + size]
        longest = max(run, key=lambda r: r.load)
        seconds = [r.seconds for r in run]
        out.append(BatchRow(run[0].first, run[-1].last, sum(r.partitions for r in run),
                            sum(r.work for r in run), longest.busiest_broker,
                            sum(r.load for r in run),
                            None if None in seconds else sum(s or 0.0 for s in seconds)))
    return tuple(out)


# --- election and deletion ----------------------------------------------------------------------

def election(name: str, plan: ElectionPlan, snapshot: ClusterSnapshot, verdict: Verdict
             ) -> PlanFigures:
    """A preferred replica election: leaders per broker now (the partition states; the preferred
    replica where a state is unknown) and once the plan's partitions are led by their preferred
    replica. No data moves."""
    rack_of = {b: broker.rack for b, broker in snapshot.brokers.items()}
    replicas = Counter(chain.from_iterable(
        r for partitions in snapshot.topics.values() for r in partitions.values()))
    leader_now: dict[TopicPartition, int] = {}
    for topic, partitions in snapshot.topics.items():
        for p, members in partitions.items():
            state = snapshot.state(TopicPartition(topic, p))
            if state is not None and state.leader >= 0:
                leader_now[TopicPartition(topic, p)] = state.leader
            elif members:
                leader_now[TopicPartition(topic, p)] = members[0]
    leader_then = dict(leader_now)
    changes = 0
    for tp in plan.partitions:
        members = snapshot.replicas(tp) or ()
        if members and leader_now.get(tp) != members[0]:
            leader_then[tp] = members[0]
            changes += 1
    before, after = Counter(leader_now.values()), Counter(leader_then.values())
    brokers = sorted(set(snapshot.brokers) | set(replicas))
    return PlanFigures(
        name, PlanKind.ELECTION.value, verdict, len(plan.partitions),
        len(plan.partitions) - changes, 0, None, None, changes,
        brokers=tuple(_broker_row(b, rack_of.get(b), replicas[b], replicas[b], before[b],
                                  after[b], None, None, None) for b in brokers),
        notes=("an election moves no data: leaders are the partitions' current leaders before, "
               "their preferred replicas after",))


def deletion(name: str, plan: DeletionPlan, snapshot: ClusterSnapshot,
             sizes: Mapping[TopicPartition, int] | None, verdict: Verdict) -> PlanFigures:
    """A topic deletion: replicas, preferred leaders and bytes per broker now and once the
    plan's topics are gone."""
    rack_of = {b: broker.rack for b, broker in snapshot.brokers.items()}
    gone = set(plan.topics)
    loads: dict[bool, tuple[Counter[int], Counter[int], Counter[int]]] = {}
    for keep_all in (True, False):
        replicas: Counter[int] = Counter()
        leaders: Counter[int] = Counter()
        data: Counter[int] = Counter()
        for topic, partitions in snapshot.topics.items():
            if not keep_all and topic in gone:
                continue
            for p, members in partitions.items():
                replicas.update(members)
                if members:
                    leaders[members[0]] += 1
                if sizes is not None:
                    size = sizes.get(TopicPartition(topic, p), 0)
                    for b in members:
                        data[b] += size
        loads[keep_all] = (replicas, leaders, data)
    (r0, l0, d0), (r1, l1, d1) = loads[True], loads[False]
    sized = sizes is not None
    removed = sum(len(snapshot.topics.get(t, {})) for t in gone)
    return PlanFigures(
        name, PlanKind.DELETION.value, verdict, len(plan.topics), 0, 0, None, None, 0,
        brokers=tuple(_broker_row(b, rack_of.get(b), r0[b], r1[b], l0[b], l1[b],
                                  d0[b] if sized else None, d1[b] if sized else None, None)
                      for b in sorted(set(snapshot.brokers) | set(r0))),
        notes=(f"deleting {len(gone)} topic(s), {removed:,} partition(s): replicas and data "
               "are removed, nothing is copied",))

