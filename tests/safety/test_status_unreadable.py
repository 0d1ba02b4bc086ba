"""``kadmin status`` on a cluster with corrupt znodes: it names every znode it cannot decode and
still reports everything it can read (exit 0), in the table and in ``--json``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot
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


@pytest.fixture
def corrupted(zk_connect: str) -> Iterator[str]:
    """The snapshot loaded into this test's chroot, then damaged; yields the connect string.

    The simulated controller is stopped first: it has nothing to do here, and what it would make
    of the damage is not what this test is about."""
    hosts, chroot = zk_connect.split("/", 1)
    box = Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot).start()
    try:
        box.controller.stop()
        for path, data in CORRUPT.items():
            if box.client.exists(path):
                box.client.set(path, data)
            else:
                box.client.create(path, data)
        for child in ODD_BROKER_CHILDREN:
            box.client.create(f"{paths.BROKER_IDS}/{child}", b"{}")
        yield box.connect_string
    finally:
        box.stop()


def unreadable_paths() -> set[str]:
    return {*CORRUPT, *(f"{paths.BROKER_IDS}/{child}" for child in ODD_BROKER_CHILDREN)}


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
    assert re.search(r"live brokers\W+0, 1, 2\W", run.out), run.out
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
    assert [b["id"] for b in doc["brokers"]] == [0, 1, 2]
    assert doc["controller"] == 0 and doc["controller_epoch"] is None
    assert doc["reassignment_in_progress"] is None


def test_status_shows_a_hundred_unreadable_znodes_and_counts_the_rest(
        kadmin: Callable[..., Any], zk_connect: str) -> None:
    hosts, chroot = zk_connect.split("/", 1)
    with Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot) as box:
        box.controller.stop()
        for i in range(150):
            box.client.create(paths.topic(f"broken-{i:03d}"), b"{not json")
        run = kadmin("status", "-z", box.connect_string)
        as_json = kadmin("status", "-z", box.connect_string, "--json")
    assert run.code == 0, run.err
    lines = run.err.splitlines()
    assert len(lines) == 101, lines[-3:]
    assert lines[0].startswith(f"kadmin: warning: cannot decode {paths.topic('broken-000')}: ")
    assert lines[-1] == "kadmin: warning: (and 50 more) znode(s) that cannot be decoded"
    doc = json.loads(as_json.out)
    assert len(doc["unreadable"]) == 100 and doc["unreadable_count"] == 150
