"""The numbers of a plan's report (kadmin.plan_report.figures): every aggregate keeps the totals
of what it aggregates, and the figures are those plan stats and the schedule's model give."""

from __future__ import annotations

import dataclasses
from collections import Counter

from kadmin import schedule, synthetic
from kadmin.executor.transfers import limits, transfers
from kadmin.model import ClusterSnapshot, ReassignmentPlan
from kadmin.plan_report import figures
from kadmin.plans import PlanStats, changed_moves, plan_stats
from kadmin.plans.report import ValidationReport
from kadmin.sizes import snapshot_sizes

VALID = figures.verdict_of(ValidationReport(None, (), None))


@dataclasses.dataclass
class Case:
    made: figures.PlanFigures
    stats: PlanStats
    views: list[schedule.Transfer]
    composed: schedule.Schedule
    plan: ReassignmentPlan
    cluster: ClusterSnapshot


def reassignment(brokers: int, racks: int, moves: int, batch_size: int = 50,
                 rate: int | None = 10**8) -> Case:
    cluster = synthetic.synthetic_cluster(brokers=brokers, topics=60, partitions=20,
                                          replication_factor=3, racks=racks, seed=2)
    cluster = dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=2))
    cluster, moved = synthetic.synthetic_moves(cluster, "skew", moves, seed=2)
    plan = ReassignmentPlan(tuple(sorted(moved)))
    sizes = snapshot_sizes(cluster)
    stats = plan_stats(plan, cluster, sizes)
    changed, _ = changed_moves(plan, cluster)
    views = transfers(changed, cluster, sizes)
    composed = schedule.compose(views, limits(batch_size, 1_000_000))
    made = figures.reassignment("p.json", plan, cluster, stats, views, composed, VALID,
                                sized=True, rate=rate, limits=f"--batch-size {batch_size}")
    return Case(made, stats, views, composed, plan, cluster)


def test_small_plan_figures_are_plan_stats_and_the_schedule():
    case = reassignment(brokers=12, racks=3, moves=300)
    made, stats, views, composed = case.made, case.stats, case.views, case.composed
    assert (made.moves, made.lower_bound, made.bytes_moved, made.leader_changes) == (
        stats.replica_moves, stats.lower_bound, stats.bytes_moved, stats.leader_changes)
    assert [(b.broker, b.replicas_before, b.replicas_after, b.bytes_after)
            for b in made.brokers] == [(b.broker, b.replicas_before, b.replicas_after,
                                        b.bytes_after) for b in stats.brokers]
    # the flow matrix: per broker here, every byte once; a row is what its broker sends
    assert made.flows is not None and made.flows.grouping == "per broker"
    assert sum(map(sum, made.flows.values)) == stats.bytes_moved
    sent = {b: s for b, (_, s) in schedule.broker_loads(views).items() if s}
    assert {int(label.split()[1]): sum(row) for label, row in
            zip(made.flows.rows, made.flows.values, strict=True)} == sent
    # the execution: the schedule's batches and loads, the duration at the rate
    e = made.execution
    assert e is not None and e.batch_count == len(composed.batches) == len(e.batches)
    assert [b.load for b in e.batches] == list(composed.loads)
    assert e.seconds == composed.load / 10**8 and e.bound_seconds == composed.bound / 10**8
    assert sum(b.partitions for b in e.batches) == len(views)
    # the worst topic is the one plan stats names, at its spreads
    worst = made.topics[0]
    assert (worst.spread_before, worst.spread_after) == (stats.worst_topic_spread_before,
                                                        stats.worst_topic_spread_after)
    assert made.heat is not None and made.heat.rows[0] == worst.topic


def test_a_thousand_brokers_are_grouped_by_rack_then_by_ids():
    case = reassignment(brokers=1000, racks=10, moves=2000)
    made, stats, plan, cluster = case.made, case.stats, case.plan, case.cluster
    assert made.flows is not None and made.flows.grouping == "per rack"
    assert len(made.flows.rows) <= 10 and len(made.flows.columns) <= 10
    assert sum(map(sum, made.flows.values)) == stats.bytes_moved
    heat = made.heat
    assert heat is not None and 50 < len(heat.columns) <= figures.MAX_HEAT_COLUMNS
    assert heat.grouping.startswith("brokers in groups of ")
    # a cell is the mean per broker of its group (to 0.01): times the brokers of the group it
    # gives back the topic's replicas on them after the plan
    after = {(m.topic, m.partition): m.replicas for m in plan.moves}
    targets = sorted({b for t in {m.topic for m in plan.moves}
                      for p, r in cluster.topics[t].items() for b in after.get((t, p), r)})
    labels, group, _ = figures.broker_groups(targets, {}, figures.MAX_HEAT_COLUMNS)
    assert labels == heat.columns
    members = Counter(group.values())
    for topic, row in zip(heat.rows, heat.values, strict=True):
        held = Counter(group[b] for p, r in cluster.topics[topic].items()
                       for b in after.get((topic, p), r))
        assert all(abs(row[g] * members[g] - held[g]) <= 0.005 * members[g]
                   for g in range(len(labels)))
    labels, group, grouping = figures.broker_groups(list(range(1000)), {}, 50)
    assert len(labels) == 50 and grouping == "brokers in groups of 20 consecutive ids"
    assert Counter(group.values()) == dict.fromkeys(range(50), 20)
    assert labels[0] == "brokers 0-19" and labels[-1] == "brokers 980-999"
    labels, group, grouping = figures.broker_groups(list(range(1000)), {
        b: f"r{b % 10}" for b in range(1000)}, 50)
    assert labels == tuple(f"rack r{i}" for i in range(10)) and grouping == "per rack"
    assert group[13] == 3


def test_many_batches_are_shown_as_runs_with_the_same_totals(monkeypatch):
    monkeypatch.setattr(figures, "MAX_BATCHES", 40)
    case = reassignment(brokers=12, racks=0, moves=300, batch_size=1)
    made, views, composed = case.made, case.views, case.composed
    e = made.execution
    assert e is not None and e.batch_count == len(composed.batches) > figures.MAX_BATCHES
    assert len(e.batches) <= figures.MAX_BATCHES
    assert sum(b.partitions for b in e.batches) == len(views)
    assert sum(b.load for b in e.batches) == composed.load == e.load
    assert e.batches[0].first == 1 and e.batches[-1].last == e.batch_count
    assert all(a.last + 1 == b.first for a, b in zip(e.batches, e.batches[1:], strict=False))


def test_without_sizes_or_throttle_nothing_is_timed():
    made = reassignment(brokers=12, racks=3, moves=100, rate=None).made
    assert made.execution is not None and made.execution.seconds is None
    assert all(b.seconds is None for b in made.execution.batches)
    assert any("--throttle" in note for note in made.notes)
