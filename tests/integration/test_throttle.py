"""Replication throttles against a real ZooKeeper: the exact config znodes `reassign --throttle`
writes (docs/execution.md), merged with what was there, their notifications, their removal after
the batch (and after a SIGKILL and a rerun), `throttle show/clear/set`, the health gate, byte
progress - and the sandbox copying partition bytes at the throttle rate it reads from those
znodes. The sandbox runs on a manual clock: nothing completes until the test moves time, so
no assertion depends on how fast this machine is."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kadmin import executor, throttles
from kadmin.events import BatchSubmitted, Event, HealthWait, ThrottleCleared, ThrottleSet, Waiting
from kadmin.model import Broker, ClusterSnapshot, PartitionMove, PartitionState, ReassignmentPlan
from kadmin.sandbox import ManualClock, Sandbox
from kadmin.throttles import Config
from kadmin.zk import codec, config, paths
from kadmin.zk.session import ZkSettings, session
from tests.helpers import KadminProcesses, eventually, write_plan

pytestmark = pytest.mark.zk

MB = 10**6
CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in (1, 2, 3, 4)},
    topics={"orders": {0: (1, 2), 1: (2, 3), 2: (3, 4)}, "web-logs": {0: (1, 2)}},
    controller=1, controller_epoch=1,
    sizes={"orders": {0: 100 * MB, 1: 10 * MB, 2: 10 * MB}, "web-logs": {0: 10 * MB}})
MOVE = PartitionMove("orders", 0, (3, 2))
"""Copies orders-0 (100 MB) from leader 1 to the new replica 3."""
TIMEOUT = 60.0

RATES = {"leader.replication.throttled.rate": "50000000",
         "follower.replication.throttled.rate": "50000000"}


def config_doc(zk: KazooClient, entity: str) -> dict[str, Any] | None:
    stat = zk.exists(paths.config(entity))
    return None if stat is None else json.loads(zk.get(paths.config(entity))[0])


def notifications(zk: KazooClient) -> list[str]:
    return [codec.decode_config_change(zk.get(f"{paths.CONFIG_CHANGES}/{name}")[0])
            for name in sorted(zk.get_children(paths.CONFIG_CHANGES))]


def operator_configs(zk: KazooClient) -> None:
    """What an operator set before kadmin: a topic config with an entry of its own, and a
    broker rate with another key."""
    zk.set(paths.config("topics/orders"), codec.dumps({"version": 1, "config": {
        "retention.ms": "86400000", "leader.replication.throttled.replicas": "2:3"}}))
    zk.ensure_path(paths.CONFIG_BROKERS)
    zk.create(paths.config("brokers/1"), codec.dumps({"version": 1, "config": {
        "leader.replication.throttled.rate": "1000", "log.cleaner.threads": "2"}}))


@pytest.fixture
def box(start_sandbox: Callable[..., Sandbox]) -> Iterator[tuple[Sandbox, ManualClock]]:
    clock = ManualClock()
    yield start_sandbox(CLUSTER, latency=0.0, clock=clock, bandwidth=100 * MB), clock


class Run:
    """``execute_reassignment`` on a thread of its own, with the events it emitted."""

    def __init__(self, connect: str, plan_file: Path, settings: executor.ExecutionSettings,
                 moves: tuple[PartitionMove, ...] = (MOVE,), sized: bool = True) -> None:
        self.events: list[Event] = []
        self.outcome: executor.Outcome | None = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                with session(ZkSettings(connect)) as client:
                    sizes = {tp: CLUSTER.sizes[tp.topic][tp.partition] for tp in
                             (m.tp for m in moves)} if sized else None
                    self.outcome = executor.execute_reassignment(
                        client, ReassignmentPlan(moves), executor.PlanFiles(plan_file),
                        settings, self.events.append, sizes)
            except BaseException as exc:
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def result(self) -> executor.Outcome:
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "the reassignment did not finish"
        assert self.error is None, self.error
        assert self.outcome is not None
        return self.outcome


def copy_rate(box: Sandbox) -> float:
    return box.controller.copies()[(MOVE.tp, 3)][2]


def test_throttle_configs_are_spec_section_5_merged_and_removed_after_the_batch(
        box: tuple[Sandbox, ManualClock], zk: KazooClient, tmp_path: Path) -> None:
    sandbox, clock = box
    operator_configs(zk)
    run = Run(sandbox.connect_string, write_plan(tmp_path / "p.json", [MOVE]),
              executor.ExecutionSettings(throttle=50 * MB, timeout=TIMEOUT))
    eventually(lambda: zk.exists(paths.REASSIGN_PARTITIONS), "the batch submitted")

    assert config_doc(zk, "topics/orders") == {"version": 1, "config": {
        "retention.ms": "86400000",
        "leader.replication.throttled.replicas": "2:3,0:1,0:2",
        "follower.replication.throttled.replicas": "0:3"}}
    assert config_doc(zk, "brokers/1") == {"version": 1, "config": {
        **RATES, "log.cleaner.threads": "2"}}
    assert config_doc(zk, "brokers/2") == config_doc(zk, "brokers/3") == {
        "version": 1, "config": RATES}
    assert config_doc(zk, "brokers/4") is None and config_doc(zk, "topics/web-logs") == {
        "version": 1, "config": {}}
    assert sorted(notifications(zk)) == ["brokers/1", "brokers/2", "brokers/3", "topics/orders"]
    journal = json.loads((tmp_path / "p.journal.json").read_text())
    assert journal["throttle"] == {"rate": 50 * MB, "entities": [
        "topics/orders", "brokers/1", "brokers/2", "brokers/3"]}

    # the simulated brokers copy at the throttle they read: 100 MB at 50 MB/s takes 2 s
    assert eventually(lambda: sandbox.controller.copies() and copy_rate(sandbox),
                      "the copy started") == 50 * MB
    clock.advance(1.9)
    assert sandbox.controller.copies()[(MOVE.tp, 3)][0] == pytest.approx(95 * MB)
    assert zk.exists(paths.REASSIGN_PARTITIONS)  # time stands still: it cannot be done yet
    clock.advance(0.2)

    assert run.result().ok
    assert config_doc(zk, "topics/orders") == {"version": 1, "config": {
        "retention.ms": "86400000", "leader.replication.throttled.replicas": "2:3"}}
    assert config_doc(zk, "brokers/1") == {"version": 1, "config": {
        "leader.replication.throttled.rate": "1000", "log.cleaner.threads": "2"}}
    assert config_doc(zk, "brokers/2") == config_doc(zk, "brokers/3") == {
        "version": 1, "config": {}}
    assert sorted(notifications(zk)[4:]) == ["brokers/1", "brokers/2", "brokers/3",
                                             "topics/orders"]
    assert zk.get_children(paths.throttle_record("topics")) == []
    assert zk.get_children(paths.throttle_record("brokers")) == []
    names = [type(e) for e in run.events]
    assert names.index(ThrottleSet) < names.index(BatchSubmitted) < names.index(ThrottleCleared)
    submitted = next(e for e in run.events if isinstance(e, BatchSubmitted))
    assert submitted.bytes == 100 * MB
    last = [e for e in run.events if isinstance(e, Waiting)][-1]
    assert (last.bytes_done, last.bytes_total, last.batch_bytes_done, last.eta) == (
        100 * MB, 100 * MB, 100 * MB, 0.0)


def test_a_throttle_slows_the_sandbox_and_clearing_it_speeds_it_up(
        box: tuple[Sandbox, ManualClock], zk: KazooClient, tmp_path: Path,
        kadmin: Callable[..., Any]) -> None:
    sandbox, clock = box
    run = Run(sandbox.connect_string, write_plan(tmp_path / "p.json", [MOVE]),
              executor.ExecutionSettings(throttle=10 * MB, timeout=TIMEOUT))
    assert eventually(lambda: sandbox.controller.copies() and copy_rate(sandbox),
                      "the copy started") == 10 * MB
    clock.advance(5.0)  # 50 MB of 100 copied; unthrottled it would have been done at 1 s
    assert sandbox.controller.copies()[(MOVE.tp, 3)][:2] == (50 * MB, 100 * MB)
    assert zk.exists(paths.REASSIGN_PARTITIONS)

    cleared = kadmin("throttle", "clear", "-z", sandbox.connect_string)
    assert cleared.code == 0, cleared.err
    assert "throttles removed from 4 config(s)" in cleared.out
    # the brokers see the notification and copy at the full 100 MB/s: 50 MB left takes 0.5 s
    eventually(lambda: copy_rate(sandbox) == 100 * MB, "the throttle lifted")
    clock.advance(0.5)
    assert run.result().ok


def test_throttles_are_removed_after_a_sigkill_and_a_rerun(
        box: tuple[Sandbox, ManualClock], zk: KazooClient, tmp_path: Path,
        kadmin: Callable[..., Any], kadmin_process: KadminProcesses) -> None:
    sandbox, clock = box
    operator_configs(zk)
    plan = write_plan(tmp_path / "p.json", [MOVE])
    first = kadmin_process("reassign", "--plan", str(plan), "-z", sandbox.connect_string,
                           "--throttle", "50MB", "--json", env={"KADMIN_DEBUG": "1"}, stderr=None)
    assert first.stdout is not None
    for line in first.stdout:
        if json.loads(line)["event"] == "batch_submitted":
            first.send_signal(signal.SIGKILL)
            break
    first.wait(timeout=30)
    assert config_doc(zk, "brokers/2") == {"version": 1, "config": RATES}  # left behind
    assert json.loads((tmp_path / "p.journal.json").read_text())["throttle"]["rate"] == 50 * MB

    eventually(lambda: sandbox.controller.copies(), "the copy started")
    clock.advance(10.0)  # the controller finishes the batch while no kadmin runs
    eventually(lambda: not zk.exists(paths.REASSIGN_PARTITIONS), "the batch done")
    rerun = kadmin("reassign", "--plan", str(plan), "-z", sandbox.connect_string)
    assert rerun.code == 0, rerun.err

    assert config_doc(zk, "topics/orders") == {"version": 1, "config": {
        "retention.ms": "86400000", "leader.replication.throttled.replicas": "2:3"}}
    assert config_doc(zk, "brokers/1") == {"version": 1, "config": {
        "leader.replication.throttled.rate": "1000", "log.cleaner.threads": "2"}}
    assert config_doc(zk, "brokers/2") == {"version": 1, "config": {}}
    assert json.loads((tmp_path / "p.journal.json").read_text())["throttle"] is None


def test_throttle_show_set_and_clear_all(box: tuple[Sandbox, ManualClock], zk: KazooClient,
                                         kadmin: Callable[..., Any]) -> None:
    sandbox, _ = box
    operator_configs(zk)
    zk_connect = sandbox.connect_string
    changed = kadmin("throttle", "set", "--throttle", "10MiB", "--brokers", "1,4", "-z",
                     zk_connect, "--json")
    assert changed.code == 0, changed.err
    assert json.loads(changed.out) == {"rate": 10485760, "brokers": 2,
                                       "changed": ["brokers/1", "brokers/4"]}
    assert config_doc(zk, "brokers/4") == {"version": 1, "config": {
        "leader.replication.throttled.rate": "10485760",
        "follower.replication.throttled.rate": "10485760"}}

    shown = kadmin("throttle", "show", "-z", zk_connect, "--json")
    assert shown.code == 0, shown.err
    by_config = {t["config"]: t for t in json.loads(shown.out)["throttles"]}
    assert sorted(by_config) == ["/config/brokers/1", "/config/brokers/4", "/config/topics/orders"]
    assert by_config["/config/topics/orders"]["kadmin"] is None  # the operator's
    assert by_config["/config/brokers/1"]["kadmin"]["owners"]["throttle-set"]["rates"][
        "leader.replication.throttled.rate"] == {"value": "10485760", "previous": "1000"}
    status = kadmin("status", "-z", zk_connect, "--json")
    assert len(json.loads(status.out)["throttles"]) == 3

    own = kadmin("throttle", "clear", "-z", zk_connect, "--json")
    assert own.code == 0, own.err
    assert json.loads(own.out) == {"cleared": ["brokers/1", "brokers/4"]}
    assert config_doc(zk, "brokers/1")["config"]["leader.replication.throttled.rate"] == "1000"
    everything = kadmin("throttle", "clear", "--all-throttles", "-z", zk_connect)
    assert everything.code == 0 and "from 2 config(s)" in everything.out
    assert config_doc(zk, "topics/orders") == {"version": 1, "config": {
        "retention.ms": "86400000"}}
    assert config_doc(zk, "brokers/1") == {"version": 1, "config": {"log.cleaner.threads": "2"}}


def test_the_health_gate_waits_while_partitions_outside_the_plan_are_under_replicated(
        box: tuple[Sandbox, ManualClock], zk: KazooClient, tmp_path: Path) -> None:
    sandbox, clock = box
    under = paths.partition_state("web-logs", 0)
    zk.set(under, codec.encode_state(PartitionState(1, (1,), 0, 1)))
    run = Run(sandbox.connect_string, write_plan(tmp_path / "p.json", [MOVE]),
              executor.ExecutionSettings(timeout=TIMEOUT))
    waiting = eventually(lambda: [e for e in run.events if isinstance(e, HealthWait)],
                         "the gate closed")
    assert waiting[0] == HealthWait(1, 1, 0, ("web-logs-0",))
    assert not zk.exists(paths.REASSIGN_PARTITIONS)

    zk.set(under, codec.encode_state(PartitionState(1, (1, 2), 0, 1)))  # caught up
    eventually(lambda: sandbox.controller.copies(), "the copy started")
    clock.advance(1.0)
    assert run.result().ok


@pytest.mark.parametrize(("args", "message"), [
    (["--throttle", "fast"], "kadmin: error: --throttle: 'fast' is not a byte rate"),
    (["--throttle", "0"], "kadmin: error: --throttle: '0' is less than one byte/s"),
    (["--max-batch-bytes", "1GB"], "kadmin: error: --max-batch-bytes needs partition sizes"),
    (["--sizes", "sizes.txt"], "kadmin: error: sizes.txt: not valid JSON"),
])
def test_bad_rates_and_size_files_exit_2_and_write_nothing(
        box: tuple[Sandbox, ManualClock], zk: KazooClient, tmp_path: Path,
        kadmin: Callable[..., Any], args: list[str], message: str) -> None:
    sandbox, _ = box
    write_plan(tmp_path / "p.json", [MOVE])
    (tmp_path / "sizes.txt").write_text('Querying brokers for log directories information\n'
                                        '{"version":1,"brokers":[')
    run = kadmin("reassign", "--plan", "p.json", "-z", sandbox.connect_string, *args)
    assert run.code == 2
    assert run.err.startswith(message) and run.err.count("\n") == 1
    assert not zk.exists(paths.REASSIGN_PARTITIONS) and not zk.exists(paths.KADMIN_THROTTLES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["controller.jsonl", "p.json",
                                                          "sizes.txt"]


def test_a_config_changed_between_read_and_write_is_read_and_merged_again(
        box: tuple[Sandbox, ManualClock], zk: KazooClient) -> None:
    sandbox, _ = box
    seen: list[dict[str, str]] = []

    def edit(current: Config, record: throttles.Records
             ) -> tuple[dict[str, str], throttles.Records]:
        seen.append(dict(current))
        if len(seen) == 1:  # a broker or an operator writes the config right after kadmin read it
            zk.set(paths.config("topics/orders"),
                   codec.dumps({"version": 1, "config": {"retention.ms": "5"}}))
        return throttles.add_for("test", {throttles.LEADER_REPLICAS: ["0:1"]}, {})(current, record)

    with session(ZkSettings(sandbox.connect_string)) as client:
        assert config.update(client, {"topics/orders": edit}) == ["topics/orders"]

    assert seen == [{}, {"retention.ms": "5"}]
    assert config_doc(zk, "topics/orders") == {"version": 1, "config": {
        "retention.ms": "5", "leader.replication.throttled.replicas": "0:1"}}
    assert notifications(zk) == ["topics/orders"]


def test_reassign_with_sizes_shows_bytes_and_batches_by_bytes(
        start_sandbox: Callable[..., Sandbox], tmp_path: Path,
        kadmin: Callable[..., Any]) -> None:
    sandbox = start_sandbox(CLUSTER, latency=0.0, bandwidth=1e15)  # copies in no time
    log_dirs = {"version": 1, "brokers": [{"broker": 1, "logDirs": [{
        "logDir": "/d", "error": None, "partitions": [
            {"partition": f"{t}-{p}", "size": size, "offsetLag": 0, "isFuture": False}
            for t, parts in CLUSTER.sizes.items() for p, size in parts.items()]}]}]}
    (tmp_path / "sizes.txt").write_text("Querying brokers for log directories information\n"
                                        "Received log directory information from brokers 1\n"
                                        + json.dumps(log_dirs) + "\n")
    write_plan(tmp_path / "p.json", [MOVE, PartitionMove("orders", 1, (4, 3)),
                                     PartitionMove("orders", 2, (1, 4))])
    common = ["--plan", "p.json", "-z", sandbox.connect_string, "--sizes", "sizes.txt",
              "--max-batch-bytes", "25MB"]

    dry = kadmin("reassign", *common, "--dry-run", "--json")
    assert dry.code == 0, dry.err
    batches = json.loads(dry.out[:dry.out.index("\n}\n") + 2])["batches"]
    assert [(b["partitions"], b["bytes"]) for b in batches] == [(1, 100 * MB), (2, 20 * MB)]

    run = kadmin("reassign", *common, "--throttle", "1GB", "--timeout", "60")
    assert run.code == 0, run.err
    assert "3 partition(s), 0 need nothing, 0 already done, 2 batch(es) to run, 120 MB to copy" \
        in run.err
    assert "batch 1: throttle 1 GB/s set on 3 broker(s), 1 topic(s)" in run.err
    assert "reassign: all 3 done" in run.out
    assert not sandbox.client.get_children(paths.throttle_record("brokers"))
