"""`kadmin plan rebalance` end to end: files written, the figures it reports, refusals."""

from __future__ import annotations

import json
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
    assert "'kadmin reassign --elect'" in run.out
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
    # broker 3, new and holding none of the topic, takes most; the topic ends within one
    assert Counter(e["replicas"][2] for e in plan)[3] == 5
    events = Counter(b for e in plan for b in e["replicas"])
    assert max(events.values()) - min(events.values()) <= 1
    assert run.out.startswith("6 replica move(s) (lower bound 6), 0 leader change(s)")


def test_same_input_same_bytes_whatever_the_hash_seed(tmp_path, kadmin_process):
    path = write(tmp_path, GROWN)
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"p{seed}.json"
        done = kadmin_process.run("plan", "rebalance", "--cluster", str(path), "--out", str(out),
                                  env={"PYTHONHASHSEED": seed}, timeout=120)
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
    (["--max-moves", "-1"], "'--max-moves': '-1' is less than the minimum 0"),
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


def log_dirs(sizes: dict[tuple[str, int], int]) -> str:
    """kafka-log-dirs.sh --describe output, header lines and all."""
    doc = {"version": 1, "brokers": [{"broker": 0, "logDirs": [{
        "logDir": "/data", "error": None, "partitions": [
            {"partition": f"{t}-{p}", "size": size, "offsetLag": 0, "isFuture": False}
            for (t, p), size in sizes.items()]}]}]}
    return ("Querying brokers for log directories information\n"
            "Received log directory information from brokers 0\n" + json.dumps(doc) + "\n")


GROWN_SIZES = {**{("orders", p): 10**9 * (p + 1) for p in range(12)},
               **{("events", p): 10**6 for p in range(6)}}
"""Long-tailed: orders-11 is 12 GB, every events partition 1 MB."""


def held_bytes(assignment: dict[tuple[str, int], list[int]]) -> dict[int, int]:
    return {b: sum(GROWN_SIZES[tp] for tp, r in assignment.items() if b in r) for b in range(4)}


def test_balance_bytes_evens_out_bytes_and_reports_them_against_the_bound(kadmin, tmp_path):
    (tmp_path / "sizes.txt").write_text(log_dirs(GROWN_SIZES))
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "p.json",
                 "--sizes", "sizes.txt", "--balance", "bytes", "--json")
    assert run.code == 0, run.err
    summary = json.loads(run.out)
    before = held_bytes(applied(GROWN, tmp_path / "p.rollback.json"))
    after = held_bytes(applied(GROWN, tmp_path / "p.json"))
    assert max(after.values()) - min(after.values()) <= 12 * 10**9  # one largest partition
    assert max(before.values()) - min(before.values()) > 12 * 10**9
    moved = sum(GROWN_SIZES[(e["topic"], e["partition"])] * len(
        set(e["replicas"]) - set(GROWN["topics"][e["topic"]][str(e["partition"])]))
        for e in json.loads((tmp_path / "p.json").read_text())["partitions"])
    assert summary["balance"] == "bytes" and summary["bytes_moved"] == moved
    assert moved >= summary["bytes_lower_bound"] > 0
    assert [(b["bytes_before"], b["bytes_after"]) for b in summary["brokers"]] == [
        (before[b], after[b]) for b in range(4)]


def test_replica_balance_with_sizes_reports_bytes_too(kadmin, tmp_path):
    (tmp_path / "sizes.txt").write_text(log_dirs(GROWN_SIZES))
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "p.json",
                 "--sizes", "sizes.txt")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].startswith("12 replica move(s) (lower bound 12)")
    assert lines[1].endswith(" to copy") and lines[2].startswith("bytes per broker: spread ")
    assert lines[3:7] == [f"  broker {b}: " + lines[3 + b].split(": ", 1)[1] for b in range(4)]
    assert lines[6].startswith("  broker 3: 0 B -> ")


@pytest.mark.parametrize(("args", "message"), [
    (["--balance", "bytes"], "--balance bytes needs partition sizes: give --sizes FILE"),
    (["--balance", "bytes", "--sizes", "sizes.txt", "--max-moves", "3"],
     "--balance bytes makes a whole plan: it does not combine with"),
    (["--balance", "disk"],
     "Invalid value for '--balance': Value error, 'disk' is not one of 'replicas', 'bytes'"),
    (["--sizes", "missing.txt"], "missing.txt"),
])
def test_byte_balancing_mistakes_exit_2(kadmin, tmp_path, args, message):
    (tmp_path / "sizes.txt").write_text(log_dirs(GROWN_SIZES))
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, GROWN)), "--out", "p.json",
                 *args)
    assert run.code == 2 and message in run.err and run.err.count("\n") == 1, run.err
    assert not (tmp_path / "p.json").exists()
