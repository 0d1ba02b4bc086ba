"""`plan rebalance` with racks kept exactly, and `plan stats` printing the same lower bound.

The issue's cluster, small: 21 brokers in 3 racks (broker b in rack b % 3), broker 20 new,
topics of RF 3 on three consecutive brokers of 0..19, so a tenth of the partitions span two
racks and every other one may move only inside its racks."""

from __future__ import annotations

import json
from pathlib import Path

from kadmin.model import Broker, ClusterSnapshot, PartitionState
from kadmin.snapshots import write_snapshot
from kadmin.synthetic import synthetic_cluster

PARTITIONS, TOPICS = 1_200, 20


def expansion(path: Path, partitions: int = PARTITIONS) -> Path:
    topics = {f"t{t:02d}": {p: tuple((t + p + k) % 20 for k in range(3))
                            for p in range(partitions // TOPICS)} for t in range(TOPICS)}
    states = {t: {p: PartitionState(r[0], r) for p, r in parts.items()}
              for t, parts in topics.items()}
    brokers = {b: Broker(b, f"broker-{b}", 9092, rack=f"r{b % 3}") for b in range(21)}
    write_snapshot(ClusterSnapshot(brokers, topics, states, 0, 1), path)
    return path


def test_the_bound_printed_is_the_rack_constrained_minimum_and_the_spread_the_least(
        kadmin, tmp_path) -> None:
    cluster = str(expansion(tmp_path / "cluster.json"))
    run = kadmin("plan", "rebalance", "--cluster", cluster, "--out", "p.json", "--json")
    assert run.code == 0, run.err
    summary = json.loads(run.out)
    racks, goal = summary["racks"], summary["topic_goal"]
    assert summary["replica_moves"] == summary["lower_bound"] > racks["rack_free_bound"]
    assert racks["rack_free_bound"] == 3 * PARTITIONS // 21  # broker 20 takes its floor
    assert racks["within"] == PARTITIONS * 9 // 10  # the partitions on three racks
    assert goal["exact"] and goal["least"] == summary["after"]["worst_topic_spread"]
    stats = kadmin("plan", "stats", "--plan", "p.json", "--cluster", cluster, "--json")
    assert json.loads(stats.out)["lower_bound"] == summary["lower_bound"]
    text = kadmin("plan", "rebalance", "--cluster", cluster, "--out", "q.json")
    bound = summary["lower_bound"]
    assert (f"{racks['within']:,} partition(s) hold one replica on each rack they must keep "
            f"and can only move within their rack (what racks cost); the fewest moves that keep "
            f"every partition's racks, proven") in text.out
    assert (f"lower bound {bound}: {racks['rack_free_bound']} to balance every broker, racks "
            f"aside (the rack-free bound), {bound - racks['rack_free_bound']} more that racks "
            f"cost\n") in text.out


def test_topic_spread_with_racks_prints_its_proven_fewest_moves(kadmin, tmp_path) -> None:
    """600 partitions: the plan of the fewest moves keeping the racks ends at topic spread 3,
    so spread 1 costs moves over them; the lower bound printed is the fewest moves within
    spread 1 keeping the racks, which the plan makes, and the racks line counts the racks
    alone."""
    cluster = str(expansion(tmp_path / "cluster.json", 600))
    run = kadmin("plan", "rebalance", "--cluster", cluster, "--out", "p.json", "--json",
                 "--topic-spread", "1")
    assert run.code == 0, run.err
    summary = json.loads(run.out)
    racks, goal = summary["racks"], summary["topic_goal"]
    assert summary["after"]["worst_topic_spread"] <= 1 and goal["reachable"] and goal["exact"]
    assert summary["replica_moves"] == summary["lower_bound"] == goal["fewest"]
    assert racks["rack_free_bound"] < racks["fewest"] == goal["plain_bound"] < goal["fewest"]
    text = kadmin("plan", "rebalance", "--cluster", cluster, "--out", "q.json",
                  "--topic-spread", "1")
    # one story: each part of the bound once, the racks' own cost apart from the topics'
    free = racks["rack_free_bound"]
    assert (f"lower bound {goal['fewest']}: {free} to balance every broker, racks aside (the "
            f"rack-free bound), {racks['fewest'] - free} more that racks cost, "
            f"{goal['fewest'] - racks['fewest']} more to bring every topic within spread 1"
            ) in text.out


def test_stats_and_rebalance_print_one_bound_never_above_the_moves(kadmin, tmp_path) -> None:
    """48 brokers in 3 racks; and every replica asked onto brokers 1 and 2 (RF 3: no plan
    fits, so the bound counts what each partition can gain there, no more)."""
    cluster = tmp_path / "c48.json"
    write_snapshot(synthetic_cluster(brokers=48, topics=30, partitions=10, replication_factor=3,
                                     racks=3, seed=1), cluster)
    for extra in ((), ("--brokers", "1,2")):
        run = kadmin("plan", "rebalance", "--cluster", str(cluster), "--out", "p.json",
                     "--force", "--json", *extra)
        assert run.code == 0, run.err
        summary = json.loads(run.out)
        assert summary["lower_bound"] <= summary["replica_moves"]
        if not extra:
            stats = kadmin("plan", "stats", "--plan", "p.json", "--cluster", str(cluster),
                           "--json")
            assert json.loads(stats.out)["lower_bound"] == summary["lower_bound"] > 0
