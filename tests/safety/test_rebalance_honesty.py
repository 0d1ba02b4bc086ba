"""Issue 20, items 2, 12, 13, 14: ``plan rebalance`` with dead brokers, and summaries that say
what the plan does and what stopped it.

A target broker that holds replicas but is not registered (kept with ``--brokers``) keeps its
replicas and gets nothing new; every plan kadmin writes passes ``plan validate`` against the
same cluster."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin import plans
from kadmin.balance.rebalance import Limits
from kadmin.cli.rebalance import rebalanced_plan
from kadmin.model import Broker, ClusterSnapshot, PlanKind, TopicPartition


def cluster(seed: int, dead: int) -> ClusterSnapshot:
    """Brokers 0-7 hold replicas, skewed; the last ``dead`` of them are not registered, and
    brokers 8 and 9 are new (registered, empty)."""
    rng = random.Random(seed)
    holders = list(range(8))
    weights = [(b + 1) ** 2 for b in holders]
    topics = {}
    for t in range(rng.randint(1, 4)):
        rf = rng.randint(1, 3)
        partitions = {}
        for p in range(rng.randint(1, 12)):
            chosen: list[int] = []
            while len(chosen) < rf:
                b = rng.choices(holders, weights)[0]
                if b not in chosen:
                    chosen.append(b)
            partitions[p] = tuple(chosen)
        topics[f"t{t}"] = partitions
    registered = {b: Broker(b) for b in [*holders[:8 - dead], 8, 9]}
    return ClusterSnapshot(registered, topics)


@settings(max_examples=120)
@given(st.integers(0, 10**9), st.integers(1, 3),
       st.sampled_from(["replicas", "max-moves", "factor", "bytes", "drain"]))
def test_plans_with_dead_brokers_kept_pass_validation(seed: int, dead: int, mode: str) -> None:
    snapshot = cluster(seed, dead)
    gone = list(range(8 - dead, 8))
    holding = {b for t in snapshot.topics.values() for r in t.values() for b in r}
    kept = [b for b in gone if b in holding]
    live = sorted(snapshot.brokers)
    brokers, remove = [*live, *kept], None
    if mode == "drain":  # the dead brokers drained instead
        brokers, remove = None, kept or None
    rng = random.Random(seed)
    sizes = {TopicPartition(t, p): rng.randint(0, 10**6) for t, ps in snapshot.topics.items()
             for p in ps}
    plan, rollback, figures = rebalanced_plan(
        snapshot, sorted(snapshot.topics), brokers, remove,
        replication_factor=2 if mode == "factor" else None,
        limits=Limits(max_moves=5) if mode == "max-moves" else None,
        sizes=sizes, by_bytes=mode == "bytes")
    still = set() if mode == "drain" else set(kept)
    for move in plan.moves:
        before = snapshot.topics[move.topic][move.partition]
        assert still.isdisjoint(before)  # a partition holding a dead replica is left alone
        assert set(move.replicas) <= set(live)  # nothing new on a dead broker
    held = sum(1 for t in snapshot.topics.values() for r in t.values() if still & set(r))
    assert figures.result.held == held
    if plan.moves:
        report = plans.validate(plans.plan_document(plan), PlanKind.REASSIGN, snapshot,
                                allow_rf_change=mode == "factor")
        assert report.ok(), report.errors
        assert plans.validate(plans.plan_document(rollback), PlanKind.REASSIGN).ok()
