"""kadmin.schedule's composer places every partition exactly where its slower predecessor did
(tests/unit/schedule_reference.py): the same batches, so the same duration against the same bound,
on random plans under every kind of limit and on a realistic one."""

from __future__ import annotations

import dataclasses
from unittest import mock

import schedule_reference
from hypothesis import given, settings
from schedule_reference import Composer
from test_schedule import plans

from kadmin import schedule, synthetic
from kadmin.executor.transfers import limits, transfers
from kadmin.schedule import Limits, Transfer
from kadmin.sizes import snapshot_sizes


def both(ts: list[Transfer], lim: Limits) -> tuple[schedule.Schedule, schedule.Schedule]:
    fast = schedule.compose(ts, lim)
    with mock.patch.object(schedule, "_Composer", Composer):
        slow = schedule.compose(ts, lim)
    return fast, slow


@settings(max_examples=150, deadline=None)
@given(plans())
def test_same_batches_as_the_reference_composer(case: tuple[list[Transfer], Limits]) -> None:
    ts, lim = case
    fast, slow = both(ts, lim)
    assert fast == slow


@settings(max_examples=150, deadline=None)
@given(plans())
def test_same_greedy_and_search_per_group(case: tuple[list[Transfer], Limits]) -> None:
    """The composer itself, before compose() falls back to slicing where that is faster."""
    ts, lim = case
    group = list(range(len(ts)))
    if group:
        assert schedule._Composer(ts, group, lim).run() == Composer(ts, group, lim).run()


def test_same_batches_on_a_long_tailed_plan_with_a_search_to_do() -> None:
    """A plan the greedy pass leaves above the bound, so the local search moves and swaps (with
    a smaller budget, which both composers read, to keep the test short)."""
    budget = 20_000
    with mock.patch.object(schedule, "SEARCH_BUDGET", budget), \
            mock.patch.object(schedule_reference, "SEARCH_BUDGET", budget):
        compare_on_long_tailed_plans(budget)


def compare_on_long_tailed_plans(budget: int) -> None:
    cluster = synthetic.synthetic_cluster(brokers=40, topics=40, partitions=50,
                                          replication_factor=3, racks=4, seed=3)
    cluster = dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=3))
    for kind, cap in (("random", None), ("drain", 4)):
        snapshot, moves = synthetic.synthetic_moves(cluster, kind, 1500, seed=3)
        ts = transfers(moves, snapshot, snapshot_sizes(snapshot))
        lim = limits(100, 1_000_000, max_moves_per_broker=cap)
        group = list(range(len(ts)))
        mine, theirs = schedule._Composer(ts, group, lim), Composer(ts, group, lim)
        assert mine.run() == theirs.run()
        assert theirs.budget < budget  # the local search ran, not only the greedy pass
        fast, slow = both(ts, lim)
        assert fast == slow
