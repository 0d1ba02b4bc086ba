"""A journal (``<plan>.journal.json``) belongs to one plan, one cluster and one run; a rollback
(``<plan>.rollback.json``) to one plan, and it covers every partition the run changes.

A finished run's journal never turns a new run into a no-op (the same plan after its rollback
ran, or on another cluster); an unfinished run's journal of another cluster, a truncated one or
another plan's is refused naming the file and the way out (never taken for absent, never
overwritten); a partition the journal records submitted that the cluster shows neither at its
target nor moving is named and submitted again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot
from kadmin.sandbox import Sandbox, read_events
from kadmin.zk import codec, paths
from tests.helpers import kill_when_submitted, write_plan

pytestmark = pytest.mark.zk

Run = Callable[..., Any]

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(5)},
    topics={"a": {0: (0, 1), 1: (1, 2)}, "b": {0: (2, 3), 1: (3, 4)}, "c": {0: (4, 0)}},
    controller=0, controller_epoch=1)
PLAN = {("a", 0): [1, 2], ("a", 1): [2, 3], ("b", 0): [3, 4], ("b", 1): [4, 0],
        ("c", 0): [0, 1]}


def replicas(box: Sandbox, topic: str, partition: int) -> tuple[int, ...]:
    data, _ = box.client.get(paths.topic(topic))
    return codec.decode_topic(data)[partition]


def submissions(tmp_path: Path) -> int:
    return sum(1 for e in read_events(tmp_path / "controller.jsonl")
               if e.kind == "reassign_submitted")


def test_a_finished_run_never_makes_the_next_one_a_no_op(kadmin: Run, start_sandbox: Any,
                                                         tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    zk = box.connect_string
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", zk, "--batch-size", "2", "--timeout", "60")
    assert run.code == 0, run.err
    first_run = json.loads((tmp_path / "p.journal.json").read_text())["run"]
    # the operator undoes it with the rollback kadmin wrote, then runs the plan again
    run = kadmin("reassign", "--plan", "p.rollback.json", "-z", zk, "--timeout", "60")
    assert run.code == 0, run.err
    assert all(replicas(box, t, p) == CLUSTER.topics[t][p] for t, p in PLAN)
    before = submissions(tmp_path)
    run = kadmin("reassign", "--plan", "p.json", "-z", zk, "--batch-size", "2", "--timeout", "60")
    assert run.code == 0, run.err
    assert "reassign: 5 partition(s), 0 need nothing, 0 already done, 3 batch(es) to run" in run.err
    assert "resuming" not in run.err
    assert all(replicas(box, t, p) == tuple(r) for (t, p), r in PLAN.items())
    assert submissions(tmp_path) == before + 3
    journal = json.loads((tmp_path / "p.journal.json").read_text())
    assert journal["run"] != first_run and journal["partitions_done"] == 5


def test_the_same_plan_on_another_cluster_runs_there(kadmin: Run, start_sandbox: Any,
                                                     zk_connect: str, tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "60")
    assert run.code == 0, run.err
    # another cluster: the same topics loaded anew under another chroot
    hosts, chroot = zk_connect.split("/", 1)
    other = Sandbox(CLUSTER, zookeeper=hosts, chroot=f"/{chroot}-other", latency=0.0,
                    record_path=tmp_path / "other.jsonl").start()
    try:
        run = kadmin("reassign", "--plan", "p.json", "-z", other.connect_string, "--timeout",
                     "60")
        assert run.code == 0, run.err
        assert "5 partition(s), 0 need nothing, 0 already done, 1 batch(es) to run" in run.err
        assert all(replicas(other, t, p) == tuple(r) for (t, p), r in PLAN.items())
        verify = kadmin("verify", "--plan", "p.json", "-z", other.connect_string)
        assert verify.code == 0, verify.err
    finally:
        other.stop()


def test_an_unfinished_run_on_another_cluster_is_refused(kadmin: Run, start_sandbox: Any,
                                                         kadmin_process: Any, zk_connect: str,
                                                         tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.0, stuck_brokers={4})
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--batch-size", "1",
                 "--timeout", "3")
    assert run.code == 1  # b-0 and b-1 wait for broker 4, which never catches up
    journal = (tmp_path / "p.journal.json").read_bytes()
    hosts, chroot = zk_connect.split("/", 1)
    other = Sandbox(CLUSTER, zookeeper=hosts, chroot=f"/{chroot}-other", latency=0.0,
                    record_path=tmp_path / "other.jsonl").start()
    try:
        for dry in ((), ("--dry-run",)):
            run = kadmin("reassign", "--plan", "p.json", "-z", other.connect_string, *dry)
            assert run.code == 2, run.err
            assert "p.journal.json: the journal of an unfinished run of this plan on another " \
                   "cluster" in run.err and "move it away and run again" in run.err
        assert not other.client.exists(paths.REASSIGN_PARTITIONS)
        assert (tmp_path / "p.journal.json").read_bytes() == journal
    finally:
        other.stop()


@pytest.mark.parametrize("damage", ["truncated", "another plan"])
def test_a_damaged_or_foreign_journal_is_refused_not_overwritten(
        kadmin: Run, start_sandbox: Any, tmp_path: Path, damage: str) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "60")
    assert run.code == 0, run.err
    path = tmp_path / "p.journal.json"
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:60])
        expected = "p.journal.json"
    else:  # the operator edits the plan after its run
        write_plan(tmp_path / "p.json", {**PLAN, ("c", 0): [0, 2]})
        expected = "p.journal.json: the journal of another plan"
    damaged = path.read_bytes()
    for command in (("reassign", "--timeout", "60"), ("reassign", "--dry-run"), ("verify",)):
        run = kadmin(command[0], "--plan", "p.json", "-z", box.connect_string, *command[1:])
        assert run.code == 2, (command, run.err)
        assert expected in run.err and "move it away and run again" in run.err, run.err
        assert len(run.err.strip().splitlines()) == 1, run.err
    assert path.read_bytes() == damaged
    assert replicas(box, "c", 0) == (0, 1)


def test_a_partition_the_cluster_contradicts_is_named_and_submitted_again(
        start_sandbox: Any, kadmin_process: Any, tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    write_plan(tmp_path / "p.json", PLAN)
    reassign = ["reassign", "--plan", str(tmp_path / "p.json"), "-z", box.connect_string,
                "--batch-size", "1", "--json", "--timeout", "60"]
    kill_when_submitted(kadmin_process(*reassign, stderr=None), batch=3)
    journal = json.loads((tmp_path / "p.journal.json").read_text())
    assert journal["batches_submitted"] >= 2
    first = journal["batches"][0]
    assert len(first) == 1
    topic, partition = sorted(PLAN)[first[0]]
    # someone puts the first batch's partition back where it was
    original = CLUSTER.topics[topic][partition]
    data, _ = box.client.get(paths.topic(topic))
    box.client.set(paths.topic(topic), codec.encode_topic(
        {**codec.decode_topic(data), partition: original}))
    assert replicas(box, topic, partition) == original

    again = kadmin_process.run(*reassign, timeout=120)
    assert again.returncode == 0, again.stderr
    planned = json.loads(again.stdout.splitlines()[0])
    assert planned["event"] == "execution_planned"
    assert planned["contradicted"] == [f"{topic}-{partition}"]
    assert planned["contradicted_count"] == 1
    assert all(replicas(box, t, p) == tuple(r) for (t, p), r in PLAN.items())
    text = kadmin_process.run(*[a for a in reassign if a != "--json"], timeout=120)
    assert text.returncode == 0 and "journal records" not in text.stderr


def test_the_rollback_covers_every_partition_the_run_changes(kadmin: Run, start_sandbox: Any,
                                                             tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    # a rollback of the plan's first two partitions (as `plan generate` wrote it); the operator
    # then adds three partitions to the plan
    write_plan(tmp_path / "p.rollback.json", {tp: CLUSTER.topics[tp[0]][tp[1]]
                                              for tp in sorted(PLAN)[:2]})
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "60")
    assert run.code == 0, run.err
    rollback = json.loads((tmp_path / "p.rollback.json").read_text())["partitions"]
    assert {(e["topic"], e["partition"]): tuple(e["replicas"]) for e in rollback} == {
        tp: CLUSTER.topics[tp[0]][tp[1]] for tp in PLAN}


@pytest.mark.parametrize("rollback", ["another plan", "truncated"])
def test_a_rollback_that_is_not_the_plans_is_refused(kadmin: Run, start_sandbox: Any,
                                                     tmp_path: Path, rollback: str) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    write_plan(tmp_path / "p.json", {("a", 0): [1, 2]})
    path = write_plan(tmp_path / "p.rollback.json", {("a", 0): [0, 1], ("c", 0): [4, 0]})
    if rollback == "truncated":
        path.write_bytes(path.read_bytes()[:30])
    kept = path.read_bytes()
    for dry in (("--dry-run",), ()):
        run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, *dry)
        assert run.code == 2, run.err
        assert "p.rollback.json" in run.err and "move it away and run again" in run.err
        assert len(run.err.strip().splitlines()) == 1, run.err
    assert path.read_bytes() == kept
    assert replicas(box, "a", 0) == (0, 1) and not (tmp_path / "p.journal.json").exists()
