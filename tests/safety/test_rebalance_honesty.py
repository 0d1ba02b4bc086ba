"""Issue 20, items 2, 12, 13, 14: ``plan rebalance`` with dead brokers, and summaries that say
what the plan does and what stopped it.

A target broker that holds replicas but is not registered (kept with ``--brokers``) keeps its
replicas and gets nothing new; every plan kadmin writes passes ``plan validate`` against the
same cluster."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin import plans
from kadmin.model import Broker, ClusterSnapshot, PlanKind, TopicPartition
from kadmin.operations.rebalance import rebalanced_plan
from kadmin.requests import RebalanceRequest
from tests.cli.test_cli_plan import log_dirs_output
from tests.cli.test_cli_rebalance import cluster, write


def cluster_at(tmp_path: Path, brokers: list[int], topics: dict[str, list[list[int]]]) -> Path:
    return write(tmp_path, cluster(brokers, topics))


def generated(seed: int, dead: int) -> ClusterSnapshot:
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
    snapshot = generated(seed, dead)
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
        snapshot, sorted(snapshot.topics), RebalanceRequest(
            brokers=brokers, remove=remove,
            replication_factor=2 if mode == "factor" else None,
            max_moves=5 if mode == "max-moves" else None, by_bytes=mode == "bytes"), sizes)
    still = set() if mode == "drain" else set(kept)
    for move in plan.moves:
        before = snapshot.topics[move.topic][move.partition]
        assert still.isdisjoint(before)  # a partition holding a dead replica is left alone
        assert set(move.replicas) <= set(live)  # nothing new on a dead broker
    held = sum(1 for t in snapshot.topics.values() for r in t.values() if still & set(r))
    assert figures.held == held
    if plan.moves:
        report = plans.validate(plans.plan_document(plan), PlanKind.REASSIGN, snapshot,
                                allow_rf_change=mode == "factor")
        assert report.ok(), report.errors
        assert plans.validate(plans.plan_document(rollback), PlanKind.REASSIGN).ok()


SKEWED = {"t": [[0, 1], [0, 2], [0, 1], [0, 2], [1, 0], [0, 1], [2, 0], [0, 1], [0, 3], [1, 0]]}
"""Broker 0 holds 10 replicas, 3 holds 1."""


def test_a_dead_broker_kept_gets_nothing_and_the_plan_validates(kadmin, tmp_path):
    """Broker 3 holds a replica and is not registered: kept, its partition t-8 stays as it is,
    no replica or leadership goes to it (before: every move could land there)."""
    path = cluster_at(tmp_path, [0, 1, 2, 4], SKEWED)
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--brokers", "0,1,2,3,4",
                 "--out", "p.json")
    assert run.code == 0, run.err
    entries = json.loads((tmp_path / "p.json").read_text())["partitions"]
    assert entries and all(3 not in e["replicas"] for e in entries)
    assert all(e["partition"] != 8 for e in entries)
    assert ("broker(s) 3 are not registered: their replicas stay, nothing new goes there, and "
            "the 1 partition(s) holding one are left as they are") in run.out
    run = kadmin("plan", "validate", "p.json", "--cluster", str(path))
    assert run.code == 0, run.out + run.err


def test_max_moves_0_says_what_stopped_it(kadmin, tmp_path):
    path = cluster_at(tmp_path, [0, 1, 2, 3], {"t": [[0, 1], [0, 1], [0, 1], [1, 0]] * 3})
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--max-moves", "0",
                 "--no-leaders", "--out", "p.json")
    assert run.code == 0, run.err
    assert run.out.startswith("nothing to move: --max-moves 0 allows none of the changes the "
                              "balance needs (12 replica move(s) at least; replica spread 12"), \
        run.out
    assert "are balanced" not in run.out and not (tmp_path / "p.json").exists()
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--max-moves", "0",
                 "--no-leaders", "--json")
    assert json.loads(run.out)["stopped"].startswith("--max-moves 0 allows none")


def test_bytes_with_every_size_0_say_there_is_nothing_to_balance(kadmin, tmp_path):
    path = cluster_at(tmp_path, [0, 1, 2, 3], {"t": [[0, 1], [0, 1], [0, 1], [1, 0]] * 3})
    (tmp_path / "sizes.txt").write_text(log_dirs_output({f"t-{p}": 0 for p in range(12)}))
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--sizes", "sizes.txt",
                 "--balance", "bytes", "--no-leaders")
    assert run.code == 0, run.err
    assert ("nothing to move: every partition's size is 0, so --balance bytes has nothing to "
            "balance (replica spread 12") in run.err + run.out


def test_a_dominant_partition_is_said_to_leave_nothing_to_move(kadmin, tmp_path):
    parts = [[p % 4, (p + 1) % 4] for p in range(12)]
    path = cluster_at(tmp_path, [0, 1, 2, 3], {"t": parts})
    sizes = {f"t-{p}": 10**6 + p for p in range(12)}
    sizes["t-0"] = 10**12
    (tmp_path / "sizes.txt").write_text(log_dirs_output(sizes))
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--sizes", "sizes.txt",
                 "--balance", "bytes", "--no-leaders")
    assert run.code == 0, run.err
    assert "nothing to move: bytes per broker are within one largest partition (1 TB) of " \
        "the mean already" in run.err + run.out


def test_the_summary_names_the_brokers_it_empties(kadmin, tmp_path):
    """--brokers 0,1,2 on brokers 0-5: the spread over 0-2 says nothing of 3-5 being drained."""
    parts = [[p % 6, (p + 1) % 6, (p + 2) % 6] for p in range(12)]
    path = cluster_at(tmp_path, list(range(6)), {"t": parts})
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--brokers", "0,1,2",
                 "--out", "p.json")
    assert run.code == 0, run.err
    assert "empties broker(s) 3, 4, 5: their 18 replica(s) move to the targets" in run.out
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--brokers", "0,1,2",
                 "--max-moves", "5", "--out", "q.json", "--json")
    drained = json.loads(run.out)["drained"]
    assert [d["broker"] for d in drained] == [3, 4, 5]
    assert sum(d["replicas_before"] - d["replicas_after"] for d in drained) == 5
