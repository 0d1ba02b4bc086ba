"""``reassign --dry-run`` predicts the real run: for each way a real run refuses, fails or
conflicts, the dry run then the real run against the same cluster, with the same exit code and,
where the run gets as far as counting, the same counts (partitions, need nothing, already done,
batches, partitions submitted and waited on, partitions failed)."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kadmin.executor.runner import BatchRunner
from kadmin.model import Broker, ClusterSnapshot, PartitionMove, Reassignment
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths, reader
from tests.helpers import write_plan

pytestmark = pytest.mark.zk

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"alpha": {0: (0, 1), 1: (1, 2)}, "beta": {0: (2, 3), 1: (3, 0)},
            "gamma": {0: (3, 0)}},
    controller=0, controller_epoch=3)

PLAN = {("alpha", 0): (2, 3), ("alpha", 1): (1, 2), ("beta", 0): (0, 1)}
"""alpha-1 needs nothing; alpha-0 and beta-0 move."""

Setup = Callable[[Sandbox, Path], Any]


def _theirs_in_flight(box: Sandbox, _: Path) -> None:
    box.controller.resign()
    box.client.create(paths.REASSIGN_PARTITIONS,
                      codec.encode_reassignment([PartitionMove("gamma", 0, (0, 1))]))


def _unreadable_admin(box: Sandbox, _: Path) -> None:
    box.client.create(paths.REASSIGN_PARTITIONS, b"{not json")


def _undecodable_state(box: Sandbox, _: Path) -> None:
    box.client.set(paths.partition_state("alpha", 0), b"\xff not a state")


def _moving(box: Sandbox, _: Path) -> None:
    box.controller.resign()
    box.client.set(paths.topic("alpha"), codec.encode_topic(
        {0: (0, 1, 2), 1: (1, 2)}, 2, reassigning={0: Reassignment((0, 1), (0, 1, 2))}))


def _put(box: Sandbox, path: str, data: bytes) -> None:
    box.client.ensure_path(path)
    box.client.set(path, data)


def _min_insync(box: Sandbox, _: Path) -> None:
    _put(box, paths.config("topics/alpha"), codec.encode_config(None, {"min.insync.replicas": "3"}))


def _deleting(box: Sandbox, _: Path) -> None:
    # gamma stays queued: a topic is deleted only once every replica's broker is alive
    box.controller.kill_broker(3)
    box.client.create(paths.delete_topic("gamma"), makepath=True)


def _unreadable_throttle_record(box: Sandbox, _: Path) -> None:
    _put(box, paths.throttle_record("topics/alpha"), b"garbage")


def _unreadable_config(box: Sandbox, _: Path) -> None:
    _put(box, paths.config("topics/beta"), b"{broken")


def _ours_in_flight(box: Sandbox, _: Path) -> Iterator[None]:
    """An interrupted run's batch (alpha-0) still in ZooKeeper; the controller comes back once
    the real run waits on it (before, it could finish the batch first: another cluster)."""
    box.controller.resign()
    box.client.create(paths.REASSIGN_PARTITIONS,
                      codec.encode_reassignment([PartitionMove("alpha", 0, (2, 3))]))
    yield
    wait = BatchRunner.wait

    def elected_then_wait(runner: BatchRunner, *args: Any, **kwargs: Any) -> Any:
        if not box.client.exists(paths.CONTROLLER):
            box.controller.elect(0)
        return wait(runner, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchRunner, "wait", elected_then_wait)
        yield


def _plan_locked(_: Sandbox, plan: Path) -> Iterator[None]:
    """Another kadmin process runs this plan: it holds the plan file's lock."""
    with plan.open() as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
        yield


CASES: dict[str, tuple[Setup, dict[tuple[str, int], tuple[int, ...]], tuple[str, ...], int]] = {
    # name: (setup, plan, options, the exit code both give)
    "nothing wrong": (lambda box, plan: None, PLAN, (), 0),
    "another reassignment in flight": (_theirs_in_flight, PLAN, (), 3),
    "unreadable /admin/reassign_partitions": (_unreadable_admin, PLAN, (), 1),
    "undecodable state of a partition to move": (_undecodable_state, PLAN, (), 1),
    "a partition already moving": (_moving, PLAN, (), 3),
    "target broker not registered": (lambda box, plan: None,
                                     {**PLAN, ("beta", 0): (0, 9)}, (), 2),
    "target shorter than min.insync.replicas": (_min_insync, PLAN, (), 2),
    "dead target broker": (lambda box, plan: box.controller.kill_broker(3), PLAN, (), 2),
    "topic queued for deletion": (_deleting, {("alpha", 0): (1, 2), ("gamma", 0): (0, 1)},
                                  (), 1),
    "unreadable throttle record": (_unreadable_throttle_record, PLAN, (), 1),
    "undecodable config of a topic to throttle": (_unreadable_config, PLAN,
                                                  ("--throttle", "10MB"), 1),
    "our batch in flight": (_ours_in_flight, PLAN, (), 0),
    "the plan run by another process": (_plan_locked, PLAN, (), 3),
}


def _counts_of_run(lines: str) -> dict[str, int] | None:
    """The counts a real run's JSON events report (None: it stopped before planning)."""
    events = [json.loads(line) for line in lines.splitlines() if line.strip()]
    planned = [e for e in events if e["event"] == "execution_planned"]
    if not planned:
        return None
    finished = [e for e in events if e["event"] == "finished"]
    return {"total": planned[0]["total"], "need_nothing": planned[0]["unchanged"],
            "already_done": planned[0]["already_done"], "batches": planned[0]["batches"],
            "submitted": sum(e["size"] for e in events if e["event"] == "batch_submitted"),
            "waited_on": sum(e["size"] for e in events if e["event"] == "batch_resumed"),
            "failed": finished[0]["failed"] if finished else 0}


def _counts_of_dry_run(doc: dict[str, Any]) -> dict[str, int]:
    return {"total": doc["total"], "need_nothing": doc["need_nothing"],
            "already_done": doc["already_done"], "batches": doc["batch_count"],
            "submitted": doc["partitions"], "waited_on": doc["in_flight"],
            "failed": doc["would_fail_count"]}


@contextmanager
def _set_up(setup: Setup, box: Sandbox, plan: Path) -> Iterator[Callable[[], None]]:
    """The case's state; a generator setup yields once after the dry run (to change what it
    must before the real run) and may yield again while that runs."""
    steps = setup(box, plan)
    if steps is None:
        yield lambda: None
        return
    next(steps)
    yield lambda: next(steps, None)
    next(steps, None)


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_the_dry_run_predicts_the_real_runs_exit_code_and_counts(
        case: str, kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    setup, moves, options, code = CASES[case]
    box = start_sandbox(SNAPSHOT)
    plan = write_plan(tmp_path / "run" / "plan.json", moves)
    args = ("reassign", "--plan", str(plan), "-z", box.connect_string, "--no-health-gate",
            "--timeout", "30", "--json", *options)
    with _set_up(setup, box, plan) as between:
        dry = kadmin(*args, "--dry-run")
        between()
        real = kadmin(*args)

    assert (dry.code, real.code) == (code, code), (dry.err, real.err)
    counts = _counts_of_run(real.out)
    if dry.out:
        # the dry run got as far as the schedule: so did the run, with the same counts
        assert counts is not None and _counts_of_dry_run(json.loads(dry.out)) == counts, (
            dry.out, real.out)
    elif counts is not None:
        # a refusal predicted: the run too refused before submitting anything
        assert counts["submitted"] == counts["waited_on"] == 0, real.out
    if code:
        # the same refusal, named alike (the dry run's own words where it predicts a failure)
        assert dry.err.splitlines()[0].split(":")[0] == real.err.splitlines()[0].split(":")[0], (
            dry.err, real.err)


def test_the_dry_run_reads_the_plans_topics_once(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The operation's read of the plan's topics (partition sizes, min.insync.replicas) is the
    one the dry run's checks and schedule use: each topic znode is read once."""
    box = start_sandbox(SNAPSHOT)
    plan = write_plan(tmp_path / "run" / "plan.json", PLAN)
    read: list[str] = []
    assignments = reader._assignments

    def counted(client: Any, topics: Iterable[str], decoder: Any) -> Iterator[Any]:
        names = list(topics)
        read.extend(names)
        return assignments(client, names, decoder)

    monkeypatch.setattr(reader, "_assignments", counted)
    dry = kadmin("reassign", "--plan", str(plan), "-z", box.connect_string, "--json",
                 "--dry-run")

    assert dry.code == 0, dry.err
    assert json.loads(dry.out)["partitions"] == 2
    assert sorted(read) == ["alpha", "beta"]


def test_the_text_dry_run_counts_the_plans_partitions(
        kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
        tmp_path: Path) -> None:
    """Without --json: the plan's partitions in the summary line and in the would-fail error."""
    box = start_sandbox(SNAPSHOT)
    plan = write_plan(tmp_path / "run" / "plan.json", {("alpha", 0): (1, 2), ("gamma", 0): (0, 1)})
    _deleting(box, plan)
    dry = kadmin("reassign", "--plan", str(plan), "-z", box.connect_string, "--dry-run")

    assert dry.code == 1, dry.err
    assert "reassign --dry-run: 2 partition(s), 0 need nothing" in dry.out
    assert "kadmin: error: reassign: 1 of 2 would fail" in dry.err.splitlines(), dry.err
