"""Reassignments that cannot finish, named by ``status``, ``reassign`` and ``verify`` with the
command that repairs them, and ``reassign --repair-stale`` removing a stale admin znode - against
a real ZooKeeper and the sandbox playing Kafka 2.3 and 2.8."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin.kafka_version import KafkaVersion, parse_kafka_version
from kadmin.model import PartitionMove
from kadmin.sandbox import ManualClock, Sandbox
from kadmin.zk import codec, paths
from tests.helpers import eventually, write_plan
from tests.integration.test_cancel import CLUSTER, topic_doc

pytestmark = pytest.mark.zk

V23, V28 = parse_kafka_version("2.3"), parse_kafka_version("2.8")

DEAD = ("t-0: stuck: target replica(s) [6] on broker(s) not registered in /brokers/ids: it "
        "cannot finish until they are back (repair: kadmin reassign --cancel)")


def test_a_target_broker_killed_mid_move_is_named_stuck(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, clock=ManualClock(), latency=1.0)  # nothing completes
    write_plan(tmp_path / "p.json", {("t", 0): (6, 2, 3)})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "1")
    assert run.code == 1 and DEAD not in run.err  # broker 6 is alive: only slow so far

    box.controller.kill_broker(6)

    status = kadmin("status", "-z", box.connect_string, "--json")
    assert status.code == 0, status.err
    assert json.loads(status.out)["stuck"] == [{
        "partition": "t-0", "cause": DEAD.split("stuck: ")[1].split(" (repair")[0],
        "repair": "kadmin reassign --cancel"}]
    human = kadmin("status", "-z", box.connect_string)
    assert "stuck" in human.out and "t-0: stuck: target replica(s) [6]" in human.out
    verify = kadmin("verify", "--plan", "p.json", "-z", box.connect_string, "--json")
    assert verify.code == 1
    assert json.loads(verify.out)["stuck"] == [DEAD]
    rerun = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "1")
    assert rerun.code == 1 and DEAD in rerun.err


@pytest.mark.parametrize("version", [V23, V28], ids=str)
def test_a_stale_admin_znode_is_found_and_repaired(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        version: KafkaVersion) -> None:
    box = start_sandbox(CLUSTER, kafka_version=version, latency=0.05)
    zk = box.client
    stale = [PartitionMove("t", p, r) for p, r in sorted(CLUSTER.topics["t"].items())]
    box.controller.leave_stale(stale)
    epoch = codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0])

    status = json.loads(kadmin("status", "-z", box.connect_string, "--json").out)
    assert [(s["partition"], s["repair"]) for s in status["stuck"]] == [
        (None, "kadmin reassign --repair-stale")]
    write_plan(tmp_path / "p.json", {("other", 0): (4, 2, 1)})
    blocked = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "5")
    assert blocked.code == 3  # nothing new can be submitted

    repair = ["reassign", "--repair-stale", "-z", box.connect_string, "--json"]
    if version == V23:  # its topic znodes (version 1) do not tell the release
        refused = kadmin(*repair)
        assert refused.code == 2 and "give --kafka-version" in refused.err
        repair += ["--kafka-version", "2.3"]
    dry = kadmin(*repair, "--dry-run")
    assert dry.code == 0, dry.err
    assert json.loads(dry.out)["controller_move_needed"] is (version == V23)
    assert zk.exists(paths.REASSIGN_PARTITIONS)

    run = kadmin(*repair)

    assert run.code == 0, run.err
    assert json.loads(run.out)["controller_moved"] is (version == V23)
    assert not zk.exists(paths.REASSIGN_PARTITIONS)
    new_epoch = codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0])
    assert (new_epoch > epoch) is (version == V23)
    assert topic_doc(zk, "t")["partitions"] == {
        str(p): list(r) for p, r in CLUSTER.topics["t"].items()}  # nothing moved
    again = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "30")
    assert again.code == 0, again.err
    eventually(lambda: topic_doc(zk, "other")["partitions"]["0"] == [4, 2, 1], "the plan done")


def test_repair_refuses_a_znode_that_is_not_stale(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, stuck_brokers=[6], latency=0.05)
    write_plan(tmp_path / "p.json", {("t", 0): (6, 2, 3)})
    assert kadmin("reassign", "--plan", "p.json", "-z", box.connect_string,
                  "--timeout", "1").code == 1
    data = box.client.get(paths.REASSIGN_PARTITIONS)[0]

    run = kadmin("reassign", "--repair-stale", "-z", box.connect_string)

    assert run.code == 3
    assert "/admin/reassign_partitions is not stale: t-0 not at their targets yet" in run.err
    assert box.client.get(paths.REASSIGN_PARTITIONS)[0] == data
