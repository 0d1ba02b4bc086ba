"""``plan replace`` end to end: the plan moves exactly the replaced broker's replicas to its
replacement, in place; ``reassign --elect`` carries it out and the replacement leads what the
replaced broker led."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths
from tests.integration.test_cancel import topic_doc

pytestmark = pytest.mark.zk

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, host=f"kafka-{b}", port=9092, rack=f"r{b % 2}") for b in range(1, 8)},
    topics={"t": {0: (3, 1, 2), 1: (1, 3, 4), 2: (2, 4, 5), 3: (3, 5, 1)},
            "other": {0: (4, 5, 6)}},
    controller=1, controller_epoch=3)


def test_replace_broker_end_to_end_with_elect(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.05)
    zk = box.connect_string

    run = kadmin("plan", "replace", "--broker", "3", "--with", "7", "-z", zk, "-o", "r.json",
                 "--json")

    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["pairs"] == [{"broker": 3, "with": 7, "replicas": 3, "preferred_leader": 2}]
    assert (doc["plan"], doc["rollback"]) == ("r.json", "r.rollback.json")
    plan = json.loads((tmp_path / "r.json").read_text())["partitions"]
    assert [(e["topic"], e["partition"], e["replicas"]) for e in plan] == [
        ("t", 0, [7, 1, 2]), ("t", 1, [1, 7, 4]), ("t", 3, [7, 5, 1])]
    rollback = json.loads((tmp_path / "r.rollback.json").read_text())["partitions"]
    assert [e["replicas"] for e in rollback] == [[3, 1, 2], [1, 3, 4], [3, 5, 1]]
    assert kadmin("plan", "validate", "r.json", "-z", zk).code == 0

    done = kadmin("reassign", "--plan", "r.json", "-z", zk, "--elect", "--timeout", "60")

    assert done.code == 0, done.err
    assert topic_doc(box.client, "t")["partitions"] == {
        "0": [7, 1, 2], "1": [1, 7, 4], "2": [2, 4, 5], "3": [7, 5, 1]}
    assert topic_doc(box.client, "other")["partitions"] == {"0": [4, 5, 6]}
    for partition in (0, 3):  # 3 led them: 7 does now
        state = codec.decode_state(box.client.get(paths.partition_state("t", partition))[0])
        assert state.leader == 7


def test_replace_refuses_an_unregistered_replacement_and_warns_of_another_rack(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.05)
    zk = box.connect_string

    refused = kadmin("plan", "replace", "--broker", "3", "--with", "9", "-z", zk, "-o", "r.json")
    assert refused.code == 2
    assert "--with: broker(s) [9] not registered in /brokers/ids" in refused.err
    assert not (tmp_path / "r.json").exists()

    allowed = kadmin("plan", "replace", "--broker", "3", "--with", "9", "-z", zk, "-o", "r.json",
                     "--allow-unregistered")
    assert allowed.code == 0, allowed.err
    assert "broker(s) 9 not registered: the moves wait for them" in allowed.err

    rack = kadmin("plan", "replace", "--broker", "3", "--with", "6", "-z", zk, "-o", "s.json")
    assert rack.code == 0, rack.err
    assert "broker 6 is in rack 'r0', broker 3 is in rack 'r1'" in rack.err
    assert rack.out.splitlines()[-2:] == ["plan s.json, rollback s.rollback.json (the way back)",
                                          "next: kadmin reassign --plan s.json --elect"]

    clash = kadmin("plan", "replace", "--broker", "4", "--with", "5", "-z", zk, "-o", "c.json")
    assert clash.code == 2
    assert "already hold a replacement broker" in clash.err and "t-2: [2, 4, 5]" in clash.err
    assert not (tmp_path / "c.json").exists()
