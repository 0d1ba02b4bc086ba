"""Two ``reassign`` runs of different plans with throttles: neither ever removes a throttle the
other added. Each window is forced through a hook: the other run sets its batch's throttles
(and, for the loser's case, creates its batch) right at the step named."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin import throttles
from kadmin.executor import plan_fingerprint
from kadmin.executor.common import ignore
from kadmin.executor.runner import set_throttles
from kadmin.model import Broker, ClusterSnapshot, PartitionMove, ReassignmentPlan
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths

pytestmark = pytest.mark.zk

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"alpha": {0: (0, 1), 1: (1, 2)}, "beta": {0: (2, 3)}},
    controller=0, controller_epoch=3)

OURS = PartitionMove("alpha", 0, (2, 3))
THEIRS = PartitionMove("alpha", 1, (3, 0))
"""The other run's move: the same topic config and the same brokers as ours."""
THEIR_OWNER = throttles.run_owner(plan_fingerprint(ReassignmentPlan((THEIRS,))))
THEIR_RATE = 20_000_000


def _config(box: Sandbox, entity: str) -> dict[str, str]:
    return codec.decode_config(box.client.get(paths.config(entity))[0])[1]


def _their_throttles_in_force(box: Sandbox) -> None:
    alpha = _config(box, "topics/alpha")
    assert set(throttles.entries(alpha.get(throttles.LEADER_REPLICAS))) >= {"1:1", "1:2"}, alpha
    assert set(throttles.entries(alpha.get(throttles.FOLLOWER_REPLICAS))) >= {"1:3", "1:0"}, alpha
    for broker in range(4):
        config = _config(box, f"brokers/{broker}")
        assert config.get(throttles.LEADER_RATE) == str(THEIR_RATE), (broker, config)
        assert config.get(throttles.FOLLOWER_RATE) == str(THEIR_RATE), (broker, config)


def _hook(monkeypatch: pytest.MonkeyPatch, target: str, act: Callable[[], None]) -> None:
    """``target`` (module:attribute) runs ``act`` once, before it runs."""
    module, name = target.split(":")
    original = getattr(__import__(module, fromlist=[name]), name)
    done: list[bool] = []

    def hooked(*args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            act()
        return original(*args, **kwargs)

    monkeypatch.setattr(f"{module}.{name}", hooked)


def _plan(tmp_path: Path) -> Path:
    plan = tmp_path / "run" / "plan.json"
    plan.parent.mkdir()
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": OURS.topic, "partition": OURS.partition, "replicas": list(OURS.replicas)}]}))
    return plan


def test_the_loser_of_a_race_takes_back_only_its_own_throttles(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Our throttles are set; before our create, the other run sets its throttles on the same
    configs and creates its batch: ours is refused (exit 3) and our cleanup leaves theirs."""
    box = start_sandbox(SNAPSHOT)
    box.controller.resign()  # their batch stays in flight

    def theirs() -> None:
        set_throttles(box.client, [THEIRS], THEIR_RATE, 1, ignore, THEIR_OWNER)
        box.client.create(paths.REASSIGN_PARTITIONS, codec.encode_reassignment([THEIRS]))

    _hook(monkeypatch, "kadmin.zk.admin:_creation_acl", theirs)
    run = kadmin("reassign", "--plan", str(_plan(tmp_path)), "-z", box.connect_string,
                 "--throttle", "10MB", "--no-health-gate", "--timeout", "10")

    assert run.code == 3, (run.code, run.err)
    _their_throttles_in_force(box)
    alpha = _config(box, "topics/alpha")
    assert "0:0" not in throttles.entries(alpha.get(throttles.LEADER_REPLICAS)), alpha
    assert "0:2" not in throttles.entries(alpha.get(throttles.FOLLOWER_REPLICAS)), alpha
    record = throttles.Records.from_json(json.loads(
        box.client.get(paths.throttle_record("topics/alpha"))[0]))
    assert list(record.owners) == [THEIR_OWNER]


@pytest.mark.parametrize("window", [
    # before our run's start, where it takes back what an interrupted run of its plan left
    "kadmin.executor.reassign:compose_run",
    # while our batch's throttles are merged in
    "kadmin.executor.runner:set_throttles",
])
def test_a_run_that_finishes_leaves_the_other_runs_throttles(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, window: str) -> None:
    """The other run has set its throttles (its batch not created yet) when ours starts or
    sets its own; ours runs to the end and removes its throttles, never theirs."""
    box = start_sandbox(SNAPSHOT, latency=0.0)
    _hook(monkeypatch, window,
          lambda: set_throttles(box.client, [THEIRS], THEIR_RATE, 1, ignore, THEIR_OWNER))
    run = kadmin("reassign", "--plan", str(_plan(tmp_path)), "-z", box.connect_string,
                 "--throttle", "10MB", "--no-health-gate", "--timeout", "30")

    assert run.code == 0, run.err
    assert codec.decode_topic(box.client.get(paths.topic("alpha"))[0])[0] == OURS.replicas
    _their_throttles_in_force(box)
    alpha = _config(box, "topics/alpha")
    assert "0:0" not in throttles.entries(alpha.get(throttles.LEADER_REPLICAS)), alpha
