"""``kadmin verify``: every partition of a plan is complete, in progress, not started or failed,
decided from the live cluster (/admin/reassign_partitions and the topic znodes) and from how far
runs of the plan got (its journal); a summary with counts, bounded lists, and exit 0 only when all
are complete (1 when some failed, 4 when the rest is only unfinished)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import LIST_LIMIT, Broker, ClusterSnapshot
from kadmin.sandbox import Sandbox
from kadmin.zk import paths
from tests.helpers import sandbox_fixture, write_plan

pytestmark = pytest.mark.zk

Run = Callable[..., Any]

STUCK = 5
CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(6)},
    topics={"a": {0: (0, 1, 2)}, "b": {0: (1, 2, 3)}, "c": {0: (2, 3, 4)}, "d": {0: (3, 4, 0)},
            "wide": {p: (p % 3, (p + 1) % 3) for p in range(LIST_LIMIT + 5)}},
    controller=0, controller_epoch=1)
PLAN = {("a", 0): [0, 1, 3],       # done quickly
        ("b", 0): [1, 2, STUCK],   # broker 5 never joins the ISR: stays in flight
        ("c", 0): [2, 3, 0],       # after the stuck batch: never submitted
        ("d", 0): [3, 4, 1]}


box = sandbox_fixture(CLUSTER, stuck_brokers={STUCK}, latency=0.0)


def test_a_plan_never_submitted_is_not_started_not_failed(kadmin: Run, box: Sandbox,
                                                          tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", {**PLAN, ("a", 0): [0, 1, 2]})  # a-0 already in place
    run = kadmin("verify", "--plan", "p.json", "-z", box.connect_string)
    assert run.code == 1, (run.out, run.err)
    assert run.err.splitlines() == [
        "kadmin: error: the plan is not complete yet: 0 in progress, 3 not started; wait, or run "
        "'kadmin reassign --plan p.json' to submit the rest"]
    assert run.out.splitlines() == [
        "complete: 1, in progress: 0, not started: 3, failed: 0 (of 4)",
        "not started: b-0, c-0, d-0"]


def test_with_nothing_left_to_submit_verify_says_to_wait(kadmin: Run, box: Sandbox,
                                                         tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", {("b", 0): PLAN[("b", 0)]})
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--timeout", "3")
    assert run.code == 1 and "timed out" in run.err  # b-0 stays in flight

    run = kadmin("verify", "--plan", "p.json", "-z", box.connect_string)
    assert run.code == 1, (run.out, run.err)
    assert run.err.splitlines() == [
        "kadmin: error: the plan is not complete yet: 1 in progress, 0 not started; every "
        "partition is submitted: wait for the controller (kadmin status shows what still moves)"]


def test_each_partition_in_its_state_after_an_interrupted_run(kadmin: Run, box: Sandbox,
                                                              tmp_path: Path) -> None:
    write_plan(tmp_path / "p.json", PLAN)
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--batch-size", "1",
                 "--timeout", "3")
    assert run.code == 1 and "timed out" in run.err  # on b-0, the second batch

    run = kadmin("verify", "--plan", "p.json", "-z", box.connect_string, "--json")
    assert run.code == 1 and "not complete yet: 1 in progress, 2 not started" in run.err
    assert json.loads(run.out) == {"complete": ["a-0"], "in_progress": ["b-0"],
                                   "not_started": ["c-0", "d-0"], "failed": [],
                                   "counts": {"complete": 1, "in_progress": 1,
                                              "not_started": 2, "failed": 0},
                                   "stuck": []}

    # someone moves a-0 away again, and c-0 elsewhere through the Admin API (topic znode only)
    box.client.set(paths.topic("a"), b'{"version":2,"partitions":{"0":[0,1,2]},'
                                     b'"adding_replicas":{},"removing_replicas":{}}')
    box.client.set(paths.topic("c"), b'{"version":2,"partitions":{"0":[2,3,1,4]},'
                                     b'"adding_replicas":{"0":[1]},"removing_replicas":{"0":[4]}}')
    run = kadmin("verify", "--plan", "p.json", "-z", box.connect_string)
    assert run.code == 1
    assert run.out.splitlines() == [
        "complete: 0, in progress: 1, not started: 1, failed: 2 (of 4)",
        "in progress: b-0", "not started: d-0"]
    assert run.err.splitlines() == [
        "failed: a-0: replicas [0, 1, 2], target [0, 1, 3]",
        "failed: c-0: being reassigned to [2, 3, 1] by another request, not to its target "
        "[2, 3, 0]",
        "kadmin: error: 2 partition(s) of the plan failed"]


def test_failures_are_counted_and_the_list_is_bounded(kadmin: Run, box: Sandbox,
                                                      tmp_path: Path) -> None:
    """Run a plan, then its rollback: every partition of the plan was submitted and is back
    where it started."""
    wide = {("wide", p): [(p + 1) % 3, (p + 2) % 3] for p in range(LIST_LIMIT + 5)}
    write_plan(tmp_path / "p.json", wide)
    zk = box.connect_string
    assert kadmin("reassign", "--plan", "p.json", "-z", zk, "--timeout", "60").code == 0
    undo = kadmin("reassign", "--plan", "p.rollback.json", "-z", zk, "--timeout", "60")
    assert undo.code == 0, undo.err

    run = kadmin("verify", "--plan", "p.json", "-z", zk)
    assert run.code == 1
    assert run.out.splitlines() == [
        f"complete: 0, in progress: 0, not started: 0, failed: {LIST_LIMIT + 5} "
        f"(of {LIST_LIMIT + 5})"]
    lines = run.err.splitlines()
    assert len(lines) == LIST_LIMIT + 2 and lines[-2] == "failed: (and 5 more)"
    assert lines[-1] == f"kadmin: error: {LIST_LIMIT + 5} partition(s) of the plan failed"
    assert lines[0] == "failed: wide-0: replicas [0, 1], target [1, 2]"
