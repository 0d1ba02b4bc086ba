"""Config znodes and kadmin's own throttle records that cannot be decoded, against a real
ZooKeeper with the simulated controller.

- a record under /kadmin/throttles kadmin cannot read is named, never taken for "not kadmin's":
  ``throttle show`` says so, ``throttle clear`` clears the rest and exits 1 naming it (its
  throttle stays in force), ``throttle clear --all`` is the way out;
- ``status``, ``status --json`` and ``throttle show`` list every unreadable ``/config/topics/*``
  and ``/config/brokers/*`` znode (bounded) and report the rest;
- a ``reassign`` refused before anything reached the controller leaves no rollback or journal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kadmin.model import LIST_LIMIT, Broker, ClusterSnapshot
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths
from tests.helpers import write_plan

pytestmark = pytest.mark.zk

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in (1, 2, 3, 4)},
    topics={"orders": {0: (1, 2), 1: (2, 3)}, "web-logs": {0: (1, 2)}},
    controller=1, controller_epoch=1)
RATE = "leader.replication.throttled.rate"

BAD_RECORDS = {
    "not JSON": b"{not json",
    "not UTF-8": b"\xff\xfe",
    "a list": b"[1, 2]",
    "another version": b'{"version": 9, "replicas": {}, "rates": {}}',
    "a rate without its value": b'{"version": 1, "replicas": {}, "rates": '
                                b'{"leader.replication.throttled.rate": {"previous": null}}}',
    "replicas of the wrong type": b'{"version": 1, "replicas": {'
                                  b'"leader.replication.throttled.replicas": "0:1"}, "rates": {}}',
}
BAD_CONFIGS = {
    "not JSON": b"{",
    "config not an object": b'{"version": 1, "config": [1]}',
    "a number value": b'{"version": 1, "config": {"retention.ms": 5}}',
    "a repeated key": b'{"version": 1, "config": {"a": "1", "a": "2"}}',
}

Run = Callable[..., Any]


@pytest.fixture
def box(start_sandbox: Callable[..., Sandbox]) -> Iterator[Sandbox]:
    yield start_sandbox(CLUSTER, latency=0.0)


def config_of(zk: KazooClient, entity: str) -> dict[str, str]:
    return json.loads(zk.get(paths.config(entity))[0])["config"]


def throttle_two_brokers(kadmin: Run, box: Sandbox) -> None:
    done = kadmin("throttle", "set", "--rate", "10MB", "--brokers", "1,4", "-z",
                  box.connect_string)
    assert done.code == 0, done.err


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_an_unreadable_record_is_named_by_show_and_clear_and_cleared_by_clear_all(
        case: str, box: Sandbox, zk: KazooClient, kadmin: Run) -> None:
    throttle_two_brokers(kadmin, box)
    record = paths.throttle_record("brokers/1")
    zk.set(record, BAD_RECORDS[case])

    shown = kadmin("throttle", "show", "-z", box.connect_string)
    assert shown.code == 0, shown.err
    assert f"cannot decode {record}" in shown.err
    assert "unreadable record" in shown.out
    as_json = kadmin("throttle", "show", "-z", box.connect_string, "--json")
    doc = json.loads(as_json.out)
    by_config = {t["config"]: t for t in doc["throttles"]}
    assert by_config["/config/brokers/1"]["kadmin"] is None
    assert by_config["/config/brokers/1"]["kadmin_record_error"]
    assert [u["path"] for u in doc["unreadable"]] == [record] and doc["unreadable_count"] == 1

    cleared = kadmin("throttle", "clear", "-z", box.connect_string)
    assert cleared.code == 1, (cleared.out, cleared.err)
    assert cleared.err.startswith("kadmin: error: cannot decode 1 throttle config or kadmin "
                                  "record znode(s), left as they are (1 other config(s) changed)")
    assert f"  {record}: " in cleared.err and "--all-throttles" in cleared.err
    assert config_of(zk, "brokers/1")[RATE] == "10000000"  # still in force: not a guess
    assert zk.get(record)[0] == BAD_RECORDS[case]  # nor rewritten
    assert RATE not in config_of(zk, "brokers/4")  # the readable one was cleared
    assert not zk.exists(paths.throttle_record("brokers/4"))

    everything = kadmin("throttle", "clear", "--all-throttles", "-z", box.connect_string)
    assert everything.code == 0, everything.err
    assert RATE not in config_of(zk, "brokers/1")
    assert not zk.exists(record)
    assert kadmin("throttle", "clear", "-z", box.connect_string).code == 0


def test_a_reassign_with_an_unreadable_record_stops_before_anything_and_leaves_no_files(
        box: Sandbox, zk: KazooClient, kadmin: Run, tmp_path: Path) -> None:
    throttle_two_brokers(kadmin, box)
    zk.set(paths.throttle_record("brokers/4"), b"garbage")
    plan = write_plan(tmp_path / "move.json", {("orders", 0): [3, 2]})
    before = sorted(p.name for p in tmp_path.iterdir())
    run = kadmin("reassign", "--plan", plan.name, "-z", box.connect_string, "--timeout", "30")
    assert run.code == 1, run.err
    assert paths.throttle_record("brokers/4") in run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no rollback, no journal
    assert not zk.exists(paths.REASSIGN_PARTITIONS)


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_a_reassign_refused_by_an_unreadable_config_leaves_no_rollback(
        case: str, box: Sandbox, zk: KazooClient, kadmin: Run, tmp_path: Path) -> None:
    zk.set(paths.config("topics/orders"), BAD_CONFIGS[case])
    plan = write_plan(tmp_path / "move.json", {("orders", 0): [3, 2]})
    before = sorted(p.name for p in tmp_path.iterdir())
    run = kadmin("reassign", "--plan", plan.name, "-z", box.connect_string, "--throttle", "1MB",
                 "--timeout", "30")
    assert run.code == 1, run.err
    assert "\nkadmin: error: cannot decode 1 throttle config" in run.err, run.err
    assert f"  {paths.config('topics/orders')}: " in run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not zk.exists(paths.REASSIGN_PARTITIONS)
    assert zk.get(paths.config("topics/orders"))[0] == BAD_CONFIGS[case]
    for broker in (1, 2, 3):  # no throttle was left half set either
        stat = zk.exists(paths.config(f"brokers/{broker}"))
        assert stat is None or RATE not in config_of(zk, f"brokers/{broker}")


def test_status_and_throttle_show_list_every_unreadable_config_bounded_and_go_on(
        box: Sandbox, zk: KazooClient, kadmin: Run) -> None:
    throttle_two_brokers(kadmin, box)
    bad = [paths.config("topics/web-logs"), paths.config("brokers/2")]
    zk.set(bad[0], BAD_CONFIGS["not JSON"])
    zk.create(bad[1], BAD_CONFIGS["a number value"], makepath=True)
    extra = LIST_LIMIT + 7
    for i in range(extra):  # configs of topics no longer there: still read, still named
        zk.create(paths.config(f"topics/zz-gone-{i:03}"), b"\x00", makepath=True)

    for args in (["status"], ["throttle", "show"]):
        run = kadmin(*args, "-z", box.connect_string)
        assert run.code == 0, run.err
        warned = [line for line in run.err.splitlines() if "cannot decode /config/" in line]
        assert len(warned) == LIST_LIMIT, run.err
        assert f"(and {len(bad) + extra - LIST_LIMIT} more)" in run.err
        assert "/config/brokers/1" in run.out  # the throttles it could read are shown

        as_json = kadmin(*args, "-z", box.connect_string, "--json")
        assert as_json.code == 0, as_json.err
        doc = json.loads(as_json.out)
        paths_listed = {u["path"] for u in doc["unreadable"]}
        assert len(doc["unreadable"]) == LIST_LIMIT
        assert doc["unreadable_count"] == len(bad) + extra
        assert set(bad) <= paths_listed  # sorted: brokers and web-logs come before zz-gone-*
        assert {t["config"] for t in doc["throttles"]} == {"/config/brokers/1",
                                                           "/config/brokers/4"}
    status = json.loads(kadmin("status", "-z", box.connect_string, "--json").out)
    assert status["topics"] == 2 and status["partitions"] == 3


def test_unreadable_configs_with_a_corrupt_cluster_znode_are_all_listed(
        box: Sandbox, zk: KazooClient, kadmin: Run) -> None:
    zk.set(paths.config("topics/orders"), b"[")
    zk.set(paths.topic("web-logs"), b"{")
    run = kadmin("status", "-z", box.connect_string, "--json")
    assert run.code == 0, run.err
    assert {u["path"] for u in json.loads(run.out)["unreadable"]} == {
        paths.config("topics/orders"), paths.topic("web-logs")}
    assert codec.decode_config(zk.get(paths.config("topics/web-logs"))[0])  # untouched
