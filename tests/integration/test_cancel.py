"""``kadmin reassign --cancel`` against a real ZooKeeper and the sandbox playing Kafka 2.3 and
2.8: a plan stopped mid-batch goes back to its original replicas (order included), nothing else
changes, kadmin's throttles go, and a rerun of the plan starts afresh."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from kadmin import throttles
from kadmin.kafka_version import KafkaVersion, parse_kafka_version
from kadmin.model import Broker, ClusterSnapshot, PartitionMove
from kadmin.sandbox import Sandbox, read_events
from kadmin.zk import codec, paths
from tests.helpers import write_plan

pytestmark = pytest.mark.zk

V23, V28 = parse_kafka_version("2.3"), parse_kafka_version("2.8")

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, host=f"kafka-{b}", port=9092) for b in range(1, 7)},
    topics={"t": {0: (1, 2, 3), 1: (2, 3, 4), 2: (3, 4, 5), 3: (1, 3, 5)},
            "other": {0: (1, 2, 4)}},
    controller=1, controller_epoch=3)

PLAN = {("t", 0): (6, 2, 3), ("t", 1): (6, 4, 2), ("t", 2): (5, 6, 4)}
"""Every move adds a replica on broker 6, whose replicas never catch up: batches of two leave
the first batch in flight for good and the second unsubmitted."""


def topic_doc(client: KazooClient, topic: str) -> dict[str, Any]:
    return json.loads(client.get(paths.topic(topic))[0])


def throttle_keys(client: KazooClient) -> dict[str, list[str]]:
    found = {}
    for entity in ["topics/t", "topics/other", *(f"brokers/{b}" for b in range(1, 7))]:
        try:
            config = json.loads(client.get(f"/config/{entity}")[0])["config"]
        except NoNodeError:
            continue
        keys = sorted(k for k in config if k in throttles.KEYS)
        if keys:
            found[entity] = keys
    return found


def submitted(tmp_path: Path) -> list[list[tuple[str, int, list[int]]]]:
    return [[(p["topic"], p["partition"], p["replicas"]) for p in e.detail["partitions"]]
            for e in read_events(tmp_path / "controller.jsonl") if e.kind == "reassign_submitted"]


def stopped_mid_batch(kadmin: Callable[..., Any], box: Sandbox, tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--batch-size", "2",
                 "--throttle", "10MB", "--timeout", "2")
    assert run.code == 1 and "timed out" in run.err, (run.out, run.err)
    assert box.client.exists(paths.REASSIGN_PARTITIONS)
    assert throttle_keys(box.client)  # the batch still copies: its throttles stay


@pytest.mark.parametrize("version", [V23, V28], ids=str)
def test_cancel_mid_batch_puts_every_partition_back_and_touches_nothing_else(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        version: KafkaVersion) -> None:
    box = start_sandbox(CLUSTER, kafka_version=version, stuck_brokers=[6], latency=0.05)
    zk = box.client
    before = {t: topic_doc(zk, t) for t in ("t", "other")}
    epoch = codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0])
    stopped_mid_batch(kadmin, box, tmp_path)
    (first,) = submitted(tmp_path)
    assert len(first) == 2
    moving = topic_doc(zk, "t")["partitions"]
    assert all(len(moving[str(p)]) == 4 for _, p, _ in first)  # the union of old and new

    run = kadmin("reassign", "--cancel", "--plan", "p.json", "-z", box.connect_string, "--yes",
                 "--timeout", "60")

    assert run.code == 0, (run.out, run.err)
    assert f"Kafka {'2.4+' if version == V28 else 'before 2.4'} (" in run.out
    assert ("moving the controller" in run.out) is (version == V23)
    after = {t: topic_doc(zk, t) for t in ("t", "other")}
    assert after == before  # originals, in their order; the third never moved; other untouched
    assert not zk.exists(paths.REASSIGN_PARTITIONS)
    assert throttle_keys(zk) == {}
    assert zk.get_children("/kadmin/throttles/topics") == []
    assert json.loads((tmp_path / "p.journal.json").read_text())["cancelled"]
    new_epoch = codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0])
    assert (new_epoch > epoch) is (version == V23)

    # cancelling again finds nothing moving, and reverts nothing twice
    again = kadmin("reassign", "--cancel", "--plan", "p.json", "-z", box.connect_string,
                   "--yes", "--json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["reverted"] == []

    # a rerun of the plan starts afresh: its first batch is submitted again
    rerun = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--batch-size", "2",
                   "--timeout", "1")
    assert rerun.code == 1, rerun.err
    runs = submitted(tmp_path)
    assert sorted(runs[-1]) == sorted(first)


def test_cancel_dry_run_says_what_it_would_do_and_writes_nothing(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, kafka_version=V23, stuck_brokers=[6], latency=0.05)
    stopped_mid_batch(kadmin, box, tmp_path)
    znode = box.client.get(paths.REASSIGN_PARTITIONS)[0]
    moving = topic_doc(box.client, "t")

    run = kadmin("reassign", "--cancel", "--plan", "p.json", "-z", box.connect_string,
                 "--dry-run", "--json")

    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["dry_run"] is True and doc["kafka_release"] == "before 2.4"
    assert doc["steps"] == ["delete /admin/reassign_partitions",
                            "move the controller (delete /controller)",
                            "submit the original replicas", "wait for the controller",
                            "remove kadmin's throttles"]
    assert {(r["topic"], r["partition"]): r["to"] for r in doc["reverted"]} == {
        ("t", p): list(CLUSTER.topics["t"][p]) for _, p, _ in submitted(tmp_path)[0]}
    assert box.client.get(paths.REASSIGN_PARTITIONS)[0] == znode
    assert topic_doc(box.client, "t") == moving


def test_a_partition_whose_original_replica_died_is_named_and_kept_moving(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, stuck_brokers=[6], latency=0.05)
    write_plan(tmp_path / "p.json", {("t", 0): (6, 2, 3), ("t", 2): (5, 6, 4)})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "1")
    assert run.code == 1, run.err
    box.controller.kill_broker(1)  # an original replica of t-0, not of t-2

    run = kadmin("reassign", "--cancel", "-z", box.connect_string, "--yes")

    assert run.code == 1
    assert "t-0: not reverted: original replica(s) [1] not registered in /brokers/ids" in run.err
    # no plan given: the originals as the topic znode keeps them (target first)
    assert ("t-2: [5, 6, 4, 3] -> [5, 4, 3] (in the order the topic znode keeps: give --plan or "
            "--rollback for the order before the plan)") in run.out
    doc = topic_doc(box.client, "t")
    assert doc["partitions"]["2"] == [5, 4, 3]
    assert doc["partitions"]["0"] == [6, 2, 3, 1] and doc["adding_replicas"] == {"0": [6]}

    # --all-or-nothing: nothing is done at all
    box.controller.start_broker(CLUSTER.brokers[1])
    box.controller.kill_broker(2)
    run = kadmin("reassign", "--cancel", "-z", box.connect_string, "--yes", "--all-or-nothing")
    assert run.code == 1
    assert "cannot be reverted (--all-or-nothing): nothing was done" in run.err
    assert topic_doc(box.client, "t")["partitions"]["0"] == [6, 2, 3, 1]


def test_before_2_4_a_cancel_without_kadmins_records_is_refused(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, kafka_version=V23, stuck_brokers=[6], latency=0.05)
    stopped_mid_batch(kadmin, box, tmp_path)
    znode = box.client.get(paths.REASSIGN_PARTITIONS)[0]

    run = kadmin("reassign", "--cancel", "-z", box.connect_string, "--yes")

    assert run.code == 2
    assert ("before Kafka 2.4 the original replicas are not in ZooKeeper (the topic znode "
            "holds old and new together): give --plan P (its rollback file beside it) or "
            "--rollback FILE") in run.err
    assert box.client.get(paths.REASSIGN_PARTITIONS)[0] == znode

    # the rollback file given by hand is enough
    run = kadmin("reassign", "--cancel", "-z", box.connect_string, "--yes", "--rollback",
                 "p.rollback.json")
    assert run.code == 0, run.err
    assert topic_doc(box.client, "t")["partitions"] == {
        str(p): list(r) for p, r in CLUSTER.topics["t"].items()}


def test_the_release_unknown_from_zookeeper_needs_kafka_version(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    """A request the controller has not started shows no release: kadmin does not guess."""
    box = start_sandbox(CLUSTER, kafka_version=V23, latency=0.05)
    box.controller.resign()
    box.client.create(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(
        [PartitionMove("t", 0, (6, 2, 3))]))

    run = kadmin("reassign", "--cancel", "-z", box.connect_string, "--yes")
    assert run.code == 2
    assert "give --kafka-version" in run.err
    run = kadmin("reassign", "--cancel", "-z", box.connect_string, "--dry-run", "--json",
                 "--kafka-version", "2.8")
    assert run.code == 0, run.err
    assert json.loads(run.out)["steps"][0] == "delete /admin/reassign_partitions"
