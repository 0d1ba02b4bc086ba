"""Reassignments in flight (Kafka 2.4+, docs/znodes.md), started through /admin/reassign_partitions
or through the Admin API (which writes only the topic znode): status reports them, planning and
submitting for them is a conflict, the rollback file records their original replicas, and topics
still being moved are not deleted unless the operator insists.

The moves are real: the simulated controller starts them and, with a replica on a stuck broker,
keeps them in flight (the topic znode lists target and old replicas together) until the test ends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kadmin import snapshots
from kadmin.model import Broker, ClusterSnapshot, PartitionMove, Reassignment, TopicPartition
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths
from tests.helpers import sandbox_fixture, write_plan

pytestmark = pytest.mark.zk

Run = Callable[..., Any]

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(6)},
    topics={"orders": {0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4)},
            "payments": {0: (3, 4, 5), 1: (4, 5, 0)},
            "audit": {0: (5, 0, 1)}},
    controller=0, controller_epoch=1)
STUCK = 5
"""A broker that never joins an ISR: a move that adds it stays in flight."""
MOVE = (TopicPartition("orders", 0), (0, 1, STUCK))
"""orders-0 from [0, 1, 2] to [0, 1, 5]: in flight, the topic znode lists [0, 1, 5, 2]."""


def moving(client: KazooClient, tp: TopicPartition) -> Reassignment:
    """Wait (on a ZooKeeper watch, not a clock) until the topic znode shows ``tp`` in flight."""
    changed = threading.Event()
    for _ in range(100):
        changed.clear()
        data, _ = client.get(paths.topic(tp.topic), watch=lambda _: changed.set())
        found = codec.decode_topic_znode(data).reassigning.get(tp.partition)
        if found is not None:
            return found
        assert changed.wait(30), f"{tp} never started moving"
    raise AssertionError(f"{tp} never started moving")


box = sandbox_fixture(CLUSTER, stuck_brokers={STUCK}, latency=0.0)


@pytest.fixture
def submitted(box: Sandbox) -> Sandbox:
    """orders-0 moving through /admin/reassign_partitions, as another operator started it."""
    tp, target = MOVE
    box.client.create(paths.REASSIGN_PARTITIONS,
                      codec.encode_reassignment([PartitionMove(tp.topic, tp.partition,
                                                                     target)]))
    assert moving(box.client, tp) == Reassignment(target=(0, 1, 5), original=(0, 1, 2))
    return box


@pytest.fixture
def admin_api(box: Sandbox) -> Sandbox:
    """payments-1 moving from [4, 5, 0] to [4, 0, 1], as the Admin API starts a move: the topic
    znode alone records it, and no /admin/reassign_partitions exists. The znode lists the target
    first, so the original recovered from it (as Kafka recovers it) is [4, 0, 5]."""
    box.client.set(paths.topic("payments"), codec.encode_topic(
        {0: (3, 4, 5), 1: (4, 0, 1, 5)}, version=2,
        reassigning={1: Reassignment(target=(4, 0, 1), original=(4, 0, 5))}))
    return box


def test_status_reports_moves_in_flight_with_or_without_the_admin_znode(
        kadmin: Run, submitted: Sandbox, admin_api: Sandbox) -> None:
    run = kadmin("status", "-z", submitted.connect_string, "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["reassignment_in_progress"] == ["orders-0"]
    assert doc["reassigning"] == [
        {"partition": "orders-0", "target": [0, 1, 5], "original": [0, 1, 2]},
        {"partition": "payments-1", "target": [4, 0, 1], "original": [4, 0, 5]}]
    # the ISR of a moving partition is measured against its original replicas, as Kafka does
    assert "orders-0" not in doc["under_replicated"]

    table = kadmin("status", "-z", submitted.connect_string)
    assert table.code == 0
    words = " ".join(w for w in table.out.split() if w != "│")  # the table wraps long cells
    assert ("moving (topic znodes) 2: orders-0 [0, 1, 2] -> [0, 1, 5], payments-1 [4, 0, 5] "
            "-> [4, 0, 1]") in words


@pytest.mark.parametrize("selection", [["--topics", "orders,audit"], ["--all-topics"]])
def test_plan_generate_for_a_partition_in_flight_is_a_conflict(
        kadmin: Run, submitted: Sandbox, tmp_path: Path, selection: list[str]) -> None:
    """Without it the in-flight partition's four replicas would set the RF of its whole topic."""
    run = kadmin("plan", "generate", "-z", submitted.connect_string, *selection,
                 "--out", "plan.json")
    assert run.code == 3, (run.out, run.err)
    assert run.err.splitlines() == [
        "kadmin: error: 1 partition(s) are being reassigned, so no plan is made for their "
        "topics; wait until the controller is done (kadmin status shows them)",
        "  orders-0 is being reassigned from [0, 1, 2] to [0, 1, 5]"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["controller.jsonl"]


def test_plan_generate_for_other_topics_goes_ahead(kadmin: Run, submitted: Sandbox,
                                                   tmp_path: Path) -> None:
    run = kadmin("plan", "generate", "-z", submitted.connect_string, "--topics", "payments",
                 "--out", "plan.json")
    assert run.code == 0, run.err


def test_a_snapshot_carries_the_moves_and_planning_from_it_is_a_conflict_too(
        kadmin: Run, admin_api: Sandbox, tmp_path: Path) -> None:
    for fmt, name in (("json", "snap.json"), ("dir", "snap")):
        run = kadmin("cluster", "snapshot", "-z", admin_api.connect_string, "--out", name,
                     "--format", fmt)
        assert run.code == 0, run.err
        written = snapshots.read_snapshot(tmp_path / name)
        assert written.reassigning == {"payments": {1: Reassignment((4, 0, 1), (4, 0, 5))}}
        assert written.topics["payments"][1] == (4, 0, 1, 5)  # as the topic znode has it

        refused = kadmin("plan", "generate", "--cluster", name, "--all-topics",
                         "--out", "p.json")
        assert refused.code == 3 and "payments-1 is being reassigned" in refused.err


def test_a_sandbox_of_a_snapshot_keeps_its_moves_in_flight(
        kadmin: Run, admin_api: Sandbox, tmp_path: Path) -> None:
    """`kadmin sandbox --cluster` of a snapshot taken mid-move rehearses on a cluster where the
    move is still in flight: the topic znode shows it, so kadmin reads it back and refuses to
    plan or submit for it there too. (Its controller, as Kafka 2.4+'s, resumes the move from
    the topic znode; the replica being added, on broker 1, has not caught up yet.)"""
    assert kadmin("cluster", "snapshot", "-z", admin_api.connect_string, "--out",
                  "snap.json").code == 0
    taken = snapshots.read_snapshot(tmp_path / "snap.json")
    hosts, _, chroot = admin_api.connect_string.partition("/")
    with Sandbox(taken, zookeeper=hosts, chroot=f"/{chroot}/rehearsal", latency=0.0,
                 stuck_brokers=[1]) as copy:
        again = kadmin("cluster", "snapshot", "-z", copy.connect_string, "--out", "again.json")
        assert again.code == 0, again.err
        reread = snapshots.read_snapshot(tmp_path / "again.json")
        assert reread.reassigning == {"payments": {1: Reassignment((4, 0, 1), (4, 0, 5))}}
        assert reread.topics == taken.topics

        write_plan(tmp_path / "p.json", {TopicPartition("payments", 1): (0, 1, 2)})
        run = kadmin("reassign", "--plan", "p.json", "-z", copy.connect_string, "--dry-run")
        assert run.code == 3, (run.out, run.err)
        assert "payments-1 is being reassigned from [4, 0, 5] to [4, 0, 1]" in run.err


def test_plan_validate_warns_about_a_partition_in_flight_and_sees_no_rf_change(
        kadmin: Run, admin_api: Sandbox, tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", {TopicPartition("payments", 1): (0, 1, 2)})
    run = kadmin("plan", "validate", "p.json", "-z", admin_api.connect_string)
    assert run.code == 0, run.err
    assert ("p.json: warning: payments-1: payments-1 is being reassigned from [4, 0, 5] to "
            "[4, 0, 1]; kadmin reassign refuses it until the controller is done") in run.out
    assert "replication factor" not in run.out + run.err


def test_reassign_of_a_partition_someone_else_moves_is_a_conflict(
        kadmin: Run, admin_api: Sandbox, tmp_path: Path) -> None:
    """No admin znode to collide with: only the topic znode says the partition moves."""
    write_plan(tmp_path / "p.json", {TopicPartition("payments", 1): (0, 1, 2),
                                     TopicPartition("audit", 0): (0, 1, 2)})
    for extra in ([], ["--dry-run"]):
        run = kadmin("reassign", "--plan", "p.json", "-z", admin_api.connect_string,
                     "--timeout", "5", *extra)
        assert run.code == 3, (run.out, run.err)
        assert "payments-1 is being reassigned from [4, 0, 5] to [4, 0, 1]" in run.err
    assert not admin_api.client.exists(paths.REASSIGN_PARTITIONS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["controller.jsonl", "p.json"]


def test_the_rollback_of_a_batch_left_in_flight_records_the_original_replicas(
        kadmin: Run, box: Sandbox, tmp_path: Path) -> None:
    """A run killed after its first submission and before it wrote the rollback: the rerun
    writes the rollback while the batch moves, from the topic znode's original replicas."""
    tp, target = MOVE
    plan = write_plan(tmp_path / "p.json", {tp: target})
    box.client.create(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(
        [PartitionMove(tp.topic, tp.partition, target)]))  # what the first run submitted
    moving(box.client, tp)

    run = kadmin("reassign", "--plan", str(plan), "-z", box.connect_string, "--timeout", "1")

    assert run.code == 1 and "timed out" in run.err  # broker 5 never joins: still in flight
    rollback = json.loads((tmp_path / "p.rollback.json").read_text())
    assert rollback["partitions"] == [{"topic": "orders", "partition": 0, "replicas": [0, 1, 2]}]


def test_topics_delete_refuses_topics_a_reassignment_still_moves(
        kadmin: Run, submitted: Sandbox, admin_api: Sandbox) -> None:
    zk = submitted.connect_string
    run = kadmin("topics", "delete", "orders", "payments", "audit", "-z", zk, "--yes")
    assert run.code == 3, (run.out, run.err)
    assert run.err.splitlines() == [
        "kadmin: error: 2 topic(s) to delete are being reassigned (2 partition(s) moving); "
        "nothing was deleted (wait until the reassignment is done, or --allow-reassigning)",
        "  topic orders: partition 0 is moving",
        "  topic payments: partition 1 is moving"]
    assert submitted.client.get_children(paths.DELETE_TOPICS) == []

    forced = kadmin("topics", "delete", "orders", "payments", "audit", "-z", zk, "--yes",
                    "--allow-reassigning", "--dry-run")
    assert forced.code == 0, forced.err
    assert "would delete 3 topic(s)" in forced.out


def test_plan_validate_warns_about_deleting_a_topic_in_flight(kadmin: Run, admin_api: Sandbox,
                                                              tmp_path: Path) -> None:
    (tmp_path / "d.json").write_text('{"version": 1, "topics": ["payments"]}')
    run = kadmin("plan", "validate", "d.json", "-z", admin_api.connect_string, "--strict")
    assert run.code == 2
    assert ("d.json: warning: payments: topic payments has 1 partition(s) being reassigned; "
            "kadmin topics delete refuses it (unless --allow-reassigning)") in run.err
