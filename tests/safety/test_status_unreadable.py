"""A cluster with corrupt znodes. ``kadmin status`` names every znode it cannot decode and still
reports everything it can read (exit 0), in the table and in ``--json``. Every command that plans
or snapshots from ZooKeeper stops instead (exit 1, naming them, nothing written), unless told to
go on without them with ``--skip-unreadable``; a broker whose registration is unreadable is live
all the same, and is never planned away."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kadmin import snapshots
from kadmin.model import LIST_LIMIT, Broker, ClusterSnapshot
from kadmin.sandbox import Sandbox
from kadmin.zk import paths

pytestmark = pytest.mark.zk

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"alpha": {0: (0, 1), 1: (1, 2), 2: (2, 3)},
            "beta": {0: (3, 0), 1: (0, 1)},
            "gamma": {0: (1, 2), 1: (2, 3), 2: (3, 0), 3: (0, 1)},
            "delta": {0: (1, 0)}},
    controller=0, controller_epoch=7)

CORRUPT = {
    paths.topic("beta"): b'{"version":1,"partitions":{"0":[3,0],"x":[0,1]}}',
    paths.partition_state("gamma", 2): b'{"controller_epoch":7,"leader":3,"isr":',
    paths.broker(3): b"\xff\xfe not a broker registration",
    paths.CONTROLLER_EPOCH: b"seven",
    paths.REASSIGN_PARTITIONS: b'{"version":1,"partitions":[{"topic":"alpha","partition":-4,'
                               b'"replicas":[0]}]}',
}
ODD_BROKER_CHILDREN = ("²", "broker-x")
"""Znode names under /brokers/ids that are no broker id at all ("²" passes ``str.isdigit``)."""

READABLE_TOPICS = 3  # alpha, gamma, delta
READABLE_PARTITIONS = 3 + 4 + 1


def damage(zk_connect: str, corrupt: dict[str, bytes], odd_children: tuple[str, ...] = ()
           ) -> Iterator[str]:
    """SNAPSHOT loaded into this test's chroot, then damaged; yields the connect string.

    The simulated controller is stopped first: it has nothing to do here, and what it would make
    of the damage is not what these tests are about."""
    hosts, chroot = zk_connect.split("/", 1)
    box = Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot).start()
    try:
        box.controller.stop()
        for path, data in corrupt.items():
            if box.client.exists(path):
                box.client.set(path, data)
            else:
                box.client.create(path, data, makepath=True)
        for child in odd_children:
            box.client.create(f"{paths.BROKER_IDS}/{child}", b"{}")
        yield box.connect_string
    finally:
        box.stop()


@pytest.fixture
def corrupted(zk_connect: str) -> Iterator[str]:
    yield from damage(zk_connect, CORRUPT, ODD_BROKER_CHILDREN)


@pytest.fixture
def corrupted_but_admin(zk_connect: str) -> Iterator[str]:
    """All the damage but /admin/reassign_partitions, which would stop every operation first
    (what moves is unknown: tests/safety/test_cluster_oddities.py)."""
    yield from damage(zk_connect, {p: d for p, d in CORRUPT.items()
                                   if p != paths.REASSIGN_PARTITIONS}, ODD_BROKER_CHILDREN)


def unreadable_paths(*, states: bool = True) -> set[str]:
    every = {*CORRUPT, *(f"{paths.BROKER_IDS}/{child}" for child in ODD_BROKER_CHILDREN)}
    return every if states else {p for p in every if not p.endswith("/state")}


def test_status_names_every_unreadable_znode_and_shows_the_rest(
        kadmin: Callable[..., Any], corrupted: str) -> None:
    run = kadmin("status", "-z", corrupted)
    assert run.code == 0, run.err
    assert "Traceback" not in run.err and "internal error" not in run.err
    warnings = [line for line in run.err.splitlines() if line.startswith("kadmin: warning: ")]
    assert len(warnings) == len(run.err.splitlines()), run.err  # one line per znode, no more
    named = {re.match(r"kadmin: warning: cannot decode (\S+): .+", line).group(1)  # type: ignore[union-attr]
             for line in warnings}
    assert named == unreadable_paths()
    # the readable rest: brokers 0-2, three topics and their partitions, the controller
    assert re.search(rf"topics / partitions\W+{READABLE_TOPICS} / {READABLE_PARTITIONS}\b", run.out)
    # broker 3's registration is unreadable, but it is registered: alive
    assert re.search(r"live brokers\W+0, 1, 2, 3\W", run.out), run.out
    assert re.search(r"controller\W+0 \(epoch None\)", run.out), run.out
    # an admin request that cannot be read is not reported as absent
    assert re.search(r"reassignment\W+unreadable", run.out), run.out


def test_status_json_lists_the_unreadable_znodes(kadmin: Callable[..., Any],
                                                 corrupted: str) -> None:
    run = kadmin("status", "-z", corrupted, "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)  # stdout is the JSON document and nothing else
    assert {entry["path"] for entry in doc["unreadable"]} == unreadable_paths()
    assert all(entry["reason"] and "\n" not in entry["reason"] for entry in doc["unreadable"])
    reasons = {entry["path"]: entry["reason"] for entry in doc["unreadable"]}
    assert "partition id" in reasons[paths.topic("beta")]
    assert "not JSON" in reasons[paths.partition_state("gamma", 2)]
    assert "not UTF-8" in reasons[paths.broker(3)]
    assert "controller epoch" in reasons[paths.CONTROLLER_EPOCH]
    assert "partitions[0].partition -4" in reasons[paths.REASSIGN_PARTITIONS]
    assert doc["topics"] == READABLE_TOPICS and doc["partitions"] == READABLE_PARTITIONS
    assert [b["id"] for b in doc["brokers"]] == [0, 1, 2, 3]
    assert doc["controller"] == 0 and doc["controller_epoch"] is None
    assert doc["reassignment_in_progress"] is None


PLAN = {"version": 1, "partitions": [{"topic": "alpha", "partition": 0, "replicas": [1, 0]}]}

# (command line, whether it reads partition states); {plan} is a valid reassignment plan
PLANNING_COMMANDS = [
    (["cluster", "snapshot", "--out", "snap.json"], True),
    (["cluster", "snapshot", "--out", "snap", "--format", "dir"], True),
    (["plan", "generate", "--all-topics", "--out", "out.json"], False),
    (["plan", "validate", "{plan}"], True),
    (["plan", "stats", "{plan}"], False),
    (["plan", "election", "--all-topics", "--out", "out.json"], True),
    (["plan", "deletion", "--topics", "alpha", "--out", "out.json"], True),
]


def named_paths(lines: list[str]) -> set[str]:
    """The znode paths of ``  /path: reason`` detail lines."""
    return {line.strip().split(": ", 1)[0] for line in lines if line.startswith("  /")}


@pytest.mark.parametrize(("command", "states"), PLANNING_COMMANDS,
                         ids=[" ".join(c[:2]) + ("-dir" if "dir" in c else "")
                              for c, _ in PLANNING_COMMANDS])
def test_planning_and_snapshots_stop_on_unreadable_znodes(
        kadmin: Callable[..., Any], corrupted: str, tmp_path: Path, command: list[str],
        states: bool) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    before = sorted(tmp_path.iterdir())
    args = [a.replace("{plan}", "plan.json") for a in command]

    run = kadmin(*args, "-z", corrupted)

    assert run.code == 1, (run.out, run.err)
    lines = run.err.splitlines()
    expected = unreadable_paths(states=states)
    assert lines[0] == (f"kadmin: error: cannot decode {len(expected)} znode(s) of the cluster; "
                        "nothing was planned or written (--skip-unreadable goes on without them)")
    assert named_paths(lines[1:]) == expected
    assert sorted(tmp_path.iterdir()) == before, "nothing may be written"


def test_plan_generate_skipping_unreadable_znodes_says_what_it_skipped(
        kadmin: Callable[..., Any], corrupted: str, tmp_path: Path) -> None:
    run = kadmin("plan", "generate", "-z", corrupted, "--all-topics", "--out", "plan.json",
                 "--skip-unreadable")

    assert run.code == 0, run.err
    lines = run.err.splitlines()
    expected = unreadable_paths(states=False)
    assert lines[0] == (f"kadmin: warning: skipped {len(expected)} znode(s) that cannot be "
                        "decoded (--skip-unreadable):")
    assert named_paths(lines[1:]) == expected
    plan = json.loads((tmp_path / "plan.json").read_text())["partitions"]
    # beta could not be read, so it is not planned; broker 3 is alive, so it is not drained
    assert {e["topic"] for e in plan} <= {"alpha", "gamma", "delta"}
    assert any(3 in e["replicas"] for e in plan)


def test_a_snapshot_skipping_unreadable_znodes_keeps_the_live_broker_and_reads_back(
        kadmin: Callable[..., Any], corrupted: str, tmp_path: Path) -> None:
    run = kadmin("cluster", "snapshot", "-z", corrupted, "--out", "snap.json",
                 "--skip-unreadable")

    assert run.code == 0, run.err
    written = snapshots.read_snapshot(tmp_path / "snap.json")
    assert written.brokers[3] == Broker(3)  # registered: kept, with nothing else known
    assert set(written.topics) == {"alpha", "gamma", "delta"}
    assert 2 not in written.states["gamma"]


@pytest.fixture
def badly_corrupted(zk_connect: str) -> Iterator[str]:
    """More unreadable topics than a message lists."""
    yield from damage(zk_connect, {paths.topic(f"junk-{i:03d}"): b"{"
                                   for i in range(LIST_LIMIT + 3)})


def test_the_list_of_unreadable_znodes_is_bounded(kadmin: Callable[..., Any],
                                                  badly_corrupted: str) -> None:
    run = kadmin("plan", "generate", "-z", badly_corrupted, "--all-topics", "--out", "p.json")
    assert run.code == 1
    lines = run.err.splitlines()
    assert lines[0].startswith(f"kadmin: error: cannot decode {LIST_LIMIT + 3} znode(s)")
    assert len(named_paths(lines)) == LIST_LIMIT and lines[-1] == "  (and 3 more)"
    status = kadmin("status", "-z", badly_corrupted)
    assert status.code == 0
    assert status.err.splitlines()[-1] == "kadmin: warning: (and 3 more)"
    assert len(status.err.splitlines()) == LIST_LIMIT + 1
    doc = json.loads(kadmin("status", "-z", badly_corrupted, "--json").out)
    assert len(doc["unreadable"]) == LIST_LIMIT and doc["unreadable_count"] == LIST_LIMIT + 3


# --- commands that change the cluster read only what they act on --------------------------------


@pytest.fixture
def state_without_isr(zk_connect: str) -> Iterator[str]:
    yield from damage(zk_connect, {
        paths.partition_state("alpha", 0): b'{"controller_epoch":7,"leader":1,"leader_epoch":3}'})


def test_elect_names_a_partition_state_without_isr(kadmin: Callable[..., Any],
                                                   state_without_isr: str) -> None:
    """Not "preferred replica 0 is not in the ISR []": the ISR is unknown, and nothing is
    submitted."""
    run = kadmin("elect", "--topics", "alpha", "-z", state_without_isr, "--timeout", "5")
    assert run.code == 1, (run.out, run.err)
    assert run.err.splitlines() == [
        "kadmin: error: cannot decode 1 znode(s) of the cluster; nothing was written",
        "  /brokers/topics/alpha/partitions/0/state: missing isr"]


@pytest.mark.parametrize("command", [
    ["reassign", "--plan", "plan.json", "--timeout", "5"],
    ["reassign", "--plan", "plan.json", "--dry-run"],
    ["verify", "--plan", "plan.json"],
    ["topics", "delete", "beta", "--yes", "--timeout", "5"],
])
def test_operations_on_an_unreadable_topic_stop_before_writing(
        kadmin: Callable[..., Any], corrupted_but_admin: str, tmp_path: Path,
        command: list[str]) -> None:
    """The topic would otherwise look deleted: "unknown topic" (exit 2) or, for verify,
    "partition no longer exists"."""
    (tmp_path / "plan.json").write_text(json.dumps(
        {"version": 1, "partitions": [{"topic": "beta", "partition": 0, "replicas": [0, 1]}]}))
    before = sorted(tmp_path.iterdir())
    run = kadmin(*command, "-z", corrupted_but_admin)
    assert run.code == 1, (run.out, run.err)
    assert run.err.splitlines()[:2] == [
        "kadmin: error: cannot decode 1 znode(s) of the cluster; nothing was written",
        "  /brokers/topics/beta: partition id \"x\" is not a non-negative integer up to "
        "2147483647"]
    assert sorted(tmp_path.iterdir()) == before


def test_a_broker_with_an_unreadable_registration_is_a_valid_target(
        kadmin: Callable[..., Any], corrupted_but_admin: str, tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(
        {"version": 1, "partitions": [{"topic": "alpha", "partition": 0, "replicas": [3, 0]}]}))
    run = kadmin("reassign", "--plan", "plan.json", "-z", corrupted_but_admin, "--dry-run")
    assert run.code == 0, run.err
    assert "alpha-0" in run.out


def test_status_of_topics_with_no_registered_broker_reports_them_all_offline(
        kadmin: Callable[..., Any], zk_connect: str) -> None:
    """Every broker gone (a full outage, or a cluster being rebuilt): status still reports the
    topics and says no broker is live, instead of failing on an empty broker list."""
    hosts, chroot = zk_connect.split("/", 1)
    box = Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot).start()
    try:
        box.controller.stop()
        for b in SNAPSHOT.brokers:
            box.client.delete(paths.broker(b))
        text = kadmin("status", "-z", box.connect_string)
        as_json = kadmin("status", "-z", box.connect_string, "--json")
    finally:
        box.stop()
    assert text.code == 0, text.err
    assert "internal error" not in text.err and "Traceback" not in text.err
    assert re.search(r"topics / partitions\W+4 / 10\b", text.out), text.out
    assert as_json.code == 0, as_json.err
    report = json.loads(as_json.out)
    assert report["brokers"] == [], report
    assert report["topics"] == 4 and report["partitions"] == 10, report
