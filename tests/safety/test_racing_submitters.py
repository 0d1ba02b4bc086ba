"""Two ``reassign`` runs of different plans started together: the loser exits 3 (conflict),
whatever the timing. Each window is forced, not hoped for: the other run's reassignment is
created in ZooKeeper at the step named, through a hook on that step."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot, PartitionMove, PartitionState
from kadmin.sandbox import Sandbox
from kadmin.zk import admin, codec, paths

pytestmark = pytest.mark.zk

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"alpha": {0: (0, 1), 1: (1, 2)}, "beta": {0: (2, 3), 1: (3, 0)}},
    controller=0, controller_epoch=3)

OURS = {"version": 1, "partitions": [{"topic": "alpha", "partition": 0, "replicas": [2, 3]}]}
THEIRS = codec.encode_reassignment([PartitionMove("beta", 0, (0, 1))])
"""The other run's batch: beta-0, which our plan does not touch."""


def _theirs_now(box: Sandbox) -> None:
    """The other run's create lands now; the controller has resigned, so it stays in flight
    and beta-0 stays behind (its new replicas out of the ISR)."""
    box.client.create(paths.REASSIGN_PARTITIONS, THEIRS)
    box.client.set(paths.partition_state("beta", 0),
                   codec.encode_state(PartitionState(2, (2, 3))))
    box.client.set(paths.topic("beta"), codec.encode_topic(
        {0: (0, 1, 2, 3), 1: (3, 0)}, 2, reassigning={}))


def _hooked(monkeypatch: pytest.MonkeyPatch, target: str, box: Sandbox) -> None:
    """``target`` (module:attribute) creates the other run's znode before it runs."""
    module, name = target.split(":")
    original = getattr(__import__(module, fromlist=[name]), name)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        if not box.client.exists(paths.REASSIGN_PARTITIONS):
            _theirs_now(box)
        return original(*args, **kwargs)

    monkeypatch.setattr(f"{module}.{name}", hooked)


WINDOWS = [
    # between the last check and the create: the create meets NodeExists
    ("kadmin.zk.admin:_creation_acl", ("--no-health-gate",)),
    # while the rollback is composed, after the in-flight check
    ("kadmin.executor.reassign:compose_run", ("--no-health-gate",)),
    # while the health gate waits: beta-0 lags because of the other run, until --timeout
    ("kadmin.health_gate:HealthGate.wait", ()),
    # while the batch's throttles are set
    ("kadmin.executor.runner:set_throttles", ("--throttle", "10MB", "--no-health-gate")),
]


@pytest.mark.parametrize(("target", "options"), WINDOWS, ids=[w[0] for w in WINDOWS])
def test_the_loser_of_a_race_exits_3_whatever_the_window(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, target: str, options: tuple[str, ...]) -> None:
    box = start_sandbox(SNAPSHOT)
    box.controller.resign()
    (tmp_path / "run").mkdir()
    plan = tmp_path / "run" / "plan.json"
    plan.write_text(json.dumps(OURS))
    if target.endswith("HealthGate.wait"):
        module, name = "kadmin.health_gate", "HealthGate"
        original = getattr(__import__(module, fromlist=[name]), name).wait

        def wait(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not box.client.exists(paths.REASSIGN_PARTITIONS):
                _theirs_now(box)
            return original(self, *args, **kwargs)

        monkeypatch.setattr("kadmin.health_gate.HealthGate.wait", wait)
    else:
        _hooked(monkeypatch, target, box)

    run = kadmin("reassign", "--plan", str(plan), "-z", box.connect_string, "--timeout", "5",
                 *options)

    assert run.code == 3, (run.code, run.out, run.err)
    assert "already in progress in /admin/reassign_partitions" in run.err, run.err
    assert "beta-0" in run.err, run.err
    assert box.client.get(paths.REASSIGN_PARTITIONS)[0] == THEIRS, "theirs is left alone"
    assert sorted(p.name for p in plan.parent.iterdir()) == ["plan.json"], "nothing of ours left"
    assert codec.decode_topic(box.client.get(paths.topic("alpha"))[0])[0] == (0, 1)


def test_in_progress_never_raises_and_says_nothing_of_an_unreadable_znode(
        start_sandbox: Callable[..., Sandbox]) -> None:
    box = start_sandbox(SNAPSHOT)
    box.controller.resign()
    assert admin.in_progress(box.client, admin.PlanKind.REASSIGN) is None
    box.client.create(paths.REASSIGN_PARTITIONS, b"{not json")
    assert admin.in_progress(box.client, admin.PlanKind.REASSIGN) is None
    box.client.set(paths.REASSIGN_PARTITIONS, THEIRS)
    assert "beta-0" in (admin.in_progress(box.client, admin.PlanKind.REASSIGN) or "")
