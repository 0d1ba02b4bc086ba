"""min.insync.replicas read live (the topic's config, else the brokers' default, else Kafka's 1)
and kept: a plan whose target is shorter is refused by ``plan validate -z``, ``reassign`` and the
planners; a move that keeps too few in-sync replicas is named in the dry run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kadmin.sandbox import Sandbox
from kadmin.zk import paths
from tests.helpers import write_plan
from tests.integration.test_cancel import CLUSTER, topic_doc

pytestmark = pytest.mark.zk


def set_config(zk: KazooClient, entity: str, value: str) -> None:
    path = f"/config/{entity}"
    data = json.dumps({"version": 1, "config": {"min.insync.replicas": value}}).encode()
    if zk.exists(path):
        zk.set(path, data)
    else:
        zk.create(path, data, makepath=True)


@pytest.fixture
def box(start_sandbox: Callable[..., Sandbox]) -> Sandbox:
    box = start_sandbox(CLUSTER, latency=0.05)
    set_config(box.client, "topics/t", "3")
    set_config(box.client, "brokers/<default>", "2")
    return box


def test_a_plan_below_min_isr_is_refused_everywhere(
        kadmin: Callable[..., Any], box: Sandbox, tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", {("t", 0): (4, 5), ("other", 0): (4,)})
    before = topic_doc(box.client, "t")

    validate = kadmin("plan", "validate", "p.json", "-z", box.connect_string, "--allow-rf-change")
    assert validate.code == 2, (validate.out, validate.err)
    assert ("t-0: 2 target replica(s) [4, 5], fewer than min.insync.replicas 3 "
            "(/config/topics/t)") in validate.err
    assert ("other-0: 1 target replica(s) [4], fewer than min.insync.replicas 2 "
            "(/config/brokers/<default>)") in validate.err

    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--allow-rf-change")
    assert run.code == 2
    assert "fewer than min.insync.replicas 3 (/config/topics/t)" in run.err
    assert not box.client.exists(paths.REASSIGN_PARTITIONS)
    assert topic_doc(box.client, "t") == before

    planner = kadmin("plan", "generate", "-z", box.connect_string, "--topics", "other",
                     "--replication-factor", "1", "--out", "g.json")
    assert planner.code == 2, (planner.out, planner.err)
    assert "fewer than min.insync.replicas 2" in planner.out + planner.err
    assert not (tmp_path / "g.json").exists()


def test_the_dry_run_names_a_move_that_keeps_too_few_in_sync_replicas(
        kadmin: Callable[..., Any], box: Sandbox, tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", {("t", 0): (4, 5, 1), ("t", 3): (5, 3, 1)})

    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--dry-run")

    assert run.code == 0, run.err
    assert ("t-0: only 1 of its in-sync replicas [1, 2, 3] stay in the target [4, 5, 1], fewer "
            "than min.insync.replicas 3 (/config/topics/t)") in run.err
    assert "t-3" not in run.err  # a reorder adds and removes nothing
    assert not box.client.exists(paths.REASSIGN_PARTITIONS)
