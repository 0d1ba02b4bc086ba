"""`kadmin plan rebalance` end to end: files written, the figures it reports, refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest


def cluster(brokers: list[int], topics: dict[str, list[list[int]]], **extra: Any) -> dict:
    return {"version": 1,
            "brokers": {str(b): {"host": f"h{b}", "port": 9092} for b in brokers},
            "topics": {t: {str(p): r for p, r in enumerate(parts)} for t, parts in topics.items()},
            **extra}


GROWN = cluster([0, 1, 2, 3], {
    "orders": [[p % 3, (p + 1) % 3, (p + 2) % 3] for p in range(12)],
    "events": [[(p + 1) % 3, (p + 2) % 3] for p in range(6)],
})
"""Two topics on brokers 0-2 only; broker 3 was just added."""


def write(tmp_path: Path, doc: dict, name: str = "cluster.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def applied(doc: dict, plan: Path) -> dict[tuple[str, int], list[int]]:
    assignment = {(t, int(p)): r for t, parts in doc["topics"].items() for p, r in parts.items()}
    for entry in json.loads(plan.read_text())["partitions"]:
        assignment[(entry["topic"], entry["partition"])] = entry["replicas"]
    return assignment


def test_a_new_broker_gets_its_share_with_the_fewest_moves(kadmin, tmp_path):
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "p.json")
    assert run.code == 0, run.err
    after = applied(GROWN, tmp_path / "p.json")
    replicas = Counter(b for r in after.values() for b in r)
    leaders = Counter(r[0] for r in after.values())
    assert sorted(replicas.values()) == [12, 12, 12, 12]  # 48 replicas on 4 brokers
    assert max(leaders.values()) - min(leaders.values()) <= 1 and len(leaders) == 4
    assert all(len(set(r)) == len(r) for r in after.values())
    # the lower bound: broker 3 must take 12, the others each give 4
    assert run.out.splitlines()[0].startswith("12 replica move(s) (lower bound 12), ")
    assert "replica spread 16 -> 0, leader spread 6 -> " in run.out
    assert "run 'kadmin elect --all'" in run.out
    rollback = json.loads((tmp_path / "p.rollback.json").read_text())["partitions"]
    plan = json.loads((tmp_path / "p.json").read_text())["partitions"]
    assert [(e["topic"], e["partition"]) for e in rollback] == [
        (e["topic"], e["partition"]) for e in plan]
    assert all(e["replicas"] == GROWN["topics"][e["topic"]][str(e["partition"])]
               for e in rollback)


def test_json_summary_carries_the_figures(kadmin, tmp_path):
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "p.json",
                 "--json")
    assert run.code == 0, run.err
    summary = json.loads(run.out)
    assert (summary["replica_moves"], summary["lower_bound"], summary["unplaced"]) == (12, 12, 0)
    assert summary["before"]["replica_spread"] == 16 and summary["after"]["replica_spread"] == 0
    assert summary["after"]["leader_spread"] <= 1 and not summary["partial"]
    assert [b["replicas_after"] for b in summary["brokers"]] == [12, 12, 12, 12]
    assert summary["plan"] == "p.json" and summary["rollback"] == "p.rollback.json"


def test_draining_a_broker_moves_everything_off_it(kadmin, tmp_path):
    doc = cluster([0, 1, 2, 3], {"t": [[p % 4, (p + 1) % 4] for p in range(8)]})
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, doc)), "--remove-brokers",
                 "3", "--out", "p.json")
    assert run.code == 0, run.err
    after = applied(doc, tmp_path / "p.json")
    counts = Counter(b for r in after.values() for b in r)
    assert counts[3] == 0 and sorted(counts[b] for b in (0, 1, 2)) == [5, 5, 6]
    assert run.out.startswith("4 replica move(s) (lower bound 4)")


def test_a_dead_broker_holding_replicas_is_never_drained_silently(kadmin, tmp_path):
    doc = cluster([0, 1, 2], {"t": [[0, 7], [1, 7], [2, 0]]})
    path = write(tmp_path, doc)
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--out", "p.json")
    assert run.code == 2
    assert run.err.splitlines() == [
        "kadmin: error: broker(s) 7 hold replicas but are not registered in /brokers/ids (dead, "
        "or stopped); name them in --brokers to keep their replicas there, or in "
        "--remove-brokers to move them off"]
    assert not (tmp_path / "p.json").exists()
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--remove-brokers", "7",
                 "--out", "p.json")
    assert run.code == 0, run.err
    assert 7 not in {b for r in applied(doc, tmp_path / "p.json").values() for b in r}
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--brokers", "0,1,7",
                 "--out", "q.json", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["after"]["replica_spread"] <= 1


def test_a_balanced_cluster_writes_no_plan(kadmin, tmp_path):
    doc = cluster([0, 1, 2], {"t": [[0, 1], [1, 2], [2, 0]]})
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, doc)))
    assert run.code == 0, run.err
    assert run.out.startswith("nothing to move: 1 topic(s) are balanced over 3 broker(s)")
    assert not (tmp_path / "plans").exists() or not list((tmp_path / "plans").iterdir())


def test_max_moves_makes_a_partial_plan_that_continues(kadmin, tmp_path):
    path = write(tmp_path, GROWN)
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--max-moves", "5", "--out",
                 "p.json")
    assert run.code == 0, run.err
    assert run.out.startswith("5 replica move(s) (lower bound 12)")
    assert "a partial plan" in run.out
    after = applied(GROWN, tmp_path / "p.json")
    step = cluster([0, 1, 2, 3], {})
    step["topics"] = {t: {str(p): r for (tt, p), r in after.items() if tt == t}
                      for t in GROWN["topics"]}
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, step, "step.json")),
                 "--out", "q.json")
    assert run.out.startswith("7 replica move(s) (lower bound 7)"), run.out


def test_raising_the_replication_factor_of_one_topic(kadmin, tmp_path):
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--topics",
                 "events", "--replication-factor", "3", "--out", "p.json")
    assert run.code == 0, run.err
    plan = json.loads((tmp_path / "p.json").read_text())["partitions"]
    assert {e["topic"] for e in plan} == {"events"} and len(plan) == 6
    for e in plan:
        before = GROWN["topics"]["events"][str(e["partition"])]
        assert e["replicas"][:2] == before and len(e["replicas"]) == 3
    assert Counter(e["replicas"][2] for e in plan)[3] == 6  # broker 3 holds the least
    assert run.out.startswith("6 replica move(s) (lower bound 6), 0 leader change(s)")


def test_same_input_same_bytes_whatever_the_hash_seed(tmp_path):
    path = write(tmp_path, GROWN)
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"p{seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-m", "kadmin", "plan", "rebalance", "--cluster",
                               str(path), "--out", str(out)], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_a_partition_in_flight_is_a_conflict(kadmin, tmp_path):
    doc = json.loads(json.dumps(GROWN))
    doc["topics"]["orders"]["3"] = [0, 1, 3, 2]  # moving to [0, 1, 3]: the znode lists both
    doc["reassigning"] = {"orders": {"3": {"target": [0, 1, 3], "original": [0, 1, 2]}}}
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, doc)), "--out", "p.json")
    assert run.code == 3, run.err
    assert "orders-3" in run.err and not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--brokers", "0,1", "--remove-brokers", "2"], "give either --brokers"),
    (["--remove-brokers", "9"], "broker(s) 9 are neither registered"),
    (["--topics", "nope"], "unknown topic(s) not in the cluster: nope"),
    (["--replication-factor", "5"], "--replication-factor 5 is larger than the 4 target"),
    (["--max-moves", "-1"], "'--max-moves': Input should be greater than or equal to 0"),
])
def test_mistakes_exit_2_with_one_line(kadmin, tmp_path, args, message):
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "p.json",
                 *args)
    assert run.code == 2 and message in run.err, run.err
    assert not (tmp_path / "p.json").exists()


def test_plan_to_stdout_and_summary_to_stderr(kadmin, tmp_path):
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "-")
    assert run.code == 0, run.err
    assert len(json.loads(run.out)["partitions"]) > 0
    assert run.err.startswith("12 replica move(s) (lower bound 12)")
