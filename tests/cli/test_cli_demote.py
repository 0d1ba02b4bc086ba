"""`kadmin plan demote` from a cluster file: the plan, the rollback, the summary, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli_rebalance import cluster, write

RING = cluster([0, 1, 2, 3], {"t": [[p % 4, (p + 1) % 4, (p + 2) % 4] for p in range(12)],
                              "u": [[3, 0], [3, 1], [3], [3, 9]]})
"""Each broker leads 3 of t's partitions; broker 3 also leads all of u: u-2 lives on 3 alone
and u-3's other replica is on broker 9, which is not registered."""


def entries(path: Path) -> dict[tuple[str, int], list[int]]:
    return {(e["topic"], e["partition"]): e["replicas"]
            for e in json.loads(path.read_text())["partitions"]}


def test_demote_writes_a_reordering_and_its_rollback(kadmin, tmp_path):
    run = kadmin("plan", "demote", "--brokers", "3", "--cluster", str(write(tmp_path, RING)),
                 "-o", "demote.json")
    assert run.code == 0, run.err
    plan, rollback = entries(tmp_path / "demote.json"), entries(tmp_path / "demote.rollback.json")
    assert plan.keys() == rollback.keys()
    for tp, replicas in plan.items():
        assert sorted(replicas) == sorted(rollback[tp]) and replicas[0] != 3
    led_by_3 = {("t", p) for p in range(12) if p % 4 == 3} | {("u", 0), ("u", 1)}
    assert led_by_3 <= plan.keys()
    lines = run.out.splitlines()
    assert lines[0] == (f"{len(plan)} leader change(s) in 2 topic(s), by reordering replica "
                        f"lists only (no data moves)")
    assert lines[1].startswith("leaders move: ") and "3 -> " in lines[1]
    assert lines[2] == "preferred leaders over broker(s) 0, 1, 2: spread 0 -> 1"
    assert "  broker 3 (demoted): 7 -> 2" in lines
    assert ("1 partition(s) keep their preferred leader: every replica is on a demoted broker: "
            "u-2") in lines
    assert ("1 partition(s) keep their preferred leader: their other replicas are on "
            "unregistered brokers, which must not lead: u-3") in lines
    assert "plan demote.json, rollback demote.rollback.json (the way back)" in lines
    assert lines[-1].startswith("next: kadmin reassign --plan demote.json")


def test_json_gives_the_handovers_and_what_stays(kadmin, tmp_path):
    run = kadmin("plan", "demote", "--brokers", "3", "--cluster", str(write(tmp_path, RING)),
                 "-o", "demote.json", "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["targets"] == [0, 1, 2] and doc["leader_spread_after"] <= 1
    assert sum(h["partitions"] for h in doc["handovers"]) == doc["leader_changes"]
    assert all(h["to"] != 3 for h in doc["handovers"])
    assert doc["demoted_leaders"] == [{"broker": 3, "leaders_before": 7, "leaders_after": 2}]
    assert doc["all_demoted"] == {"count": 1, "partitions": ["u-2"]}
    assert doc["no_live_replica"] == {"count": 1, "partitions": ["u-3"]}
    assert doc["plan"] == "demote.json" and doc["rollback"] == "demote.rollback.json"


def test_a_plan_to_stdout_keeps_the_summary_on_stderr(kadmin, tmp_path):
    run = kadmin("plan", "demote", "--brokers", "3", "--cluster", str(write(tmp_path, RING)),
                 "-o", "-", "--json")
    assert run.code == 0, run.err
    assert len(json.loads(run.out)["partitions"]) > 0  # stdout holds the plan alone
    assert json.loads(run.err)["leader_changes"] == 6  # the summary, one JSON document, on stderr


def test_minimal_changes_only_what_the_demoted_broker_leads(kadmin, tmp_path):
    run = kadmin("plan", "demote", "--brokers", "3", "--minimal", "--json",
                 "--cluster", str(write(tmp_path, RING)), "-o", "demote.json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    plan = entries(tmp_path / "demote.json")
    assert {tp for tp, r in plan.items()} == (
        {("t", p) for p in range(12) if p % 4 == 3} | {("u", 0), ("u", 1)})
    assert doc["leader_changes"] == 5 and doc["minimal"]


def test_a_long_list_of_partitions_that_stay_is_bounded(kadmin, tmp_path):
    doc = cluster([0, 1], {"t": [[1]] * 150 + [[1, 0]]})
    run = kadmin("plan", "demote", "--brokers", "1", "--cluster", str(write(tmp_path, doc)),
                 "-o", "demote.json")
    assert run.code == 0, run.err
    line = next(x for x in run.out.splitlines() if "every replica is on a demoted" in x)
    assert line.startswith("150 partition(s) keep their preferred leader") and \
        line.endswith("t-9 (and 140 more)")


def test_a_demoted_broker_that_is_down_is_fine(kadmin, tmp_path):
    doc = cluster([0, 1], {"t": [[5, 0], [5, 1], [0, 5], [1, 0]]})
    run = kadmin("plan", "demote", "--brokers", "5", "--cluster", str(write(tmp_path, doc)),
                 "-o", "demote.json")
    assert run.code == 0, run.err
    assert entries(tmp_path / "demote.json") == {("t", 0): [0, 5], ("t", 1): [1, 5]}
    assert "--no-health-gate (broker(s) 5 are down" in run.out
    run = kadmin("plan", "validate", "demote.json", "--cluster", "cluster.json")
    assert run.code == 0, run.out + run.err


def test_nothing_to_demote_writes_no_plan(kadmin, tmp_path):
    doc = cluster([0, 1, 2], {"t": [[0, 1], [1, 0], [0, 1], [1, 0]]})
    run = kadmin("plan", "demote", "--brokers", "2", "--cluster", str(write(tmp_path, doc)),
                 "-o", "demote.json")
    assert run.code == 0, run.err
    assert run.out.startswith("nothing to move: no partition of 1 topic(s) needs another "
                              "preferred leader to keep it off broker(s) 2")
    assert not (tmp_path / "demote.json").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--brokers", "3,3"], "--brokers: broker id 3 is given more than once"),
    (["--brokers", "8"], "--brokers: broker(s) 8 are neither registered nor hold replicas"),
    (["--brokers", "0,1,2,3"], "no broker is left to lead"),
    (["--brokers", "x"], "'x' is not a broker id"),
    (["--brokers", "3", "--topics", "nope"], "unknown topic(s) not in the cluster: nope"),
])
def test_mistakes_exit_2_and_write_nothing(kadmin, tmp_path, args, message):
    run = kadmin("plan", "demote", "--cluster", str(write(tmp_path, RING)), "-o", "demote.json",
                 *args)
    assert run.code == 2 and message in run.err and run.err.count("\n") == 1, run.err
    assert not (tmp_path / "demote.json").exists()


def test_a_partition_being_reassigned_is_a_conflict(kadmin, tmp_path):
    doc = json.loads(json.dumps(RING))
    doc["topics"]["t"]["3"] = [0, 1, 2, 3]
    doc["reassigning"] = {"t": {"3": {"original": [3, 0, 1], "target": [0, 1, 2]}}}
    run = kadmin("plan", "demote", "--brokers", "3", "--cluster", str(write(tmp_path, doc)),
                 "-o", "demote.json")
    assert run.code == 3, run.err
    assert not (tmp_path / "demote.json").exists()
