"""Faults: kadmin against a real ZooKeeper and the simulated controller while things go wrong.

Whatever happens - kadmin SIGKILLed at any moment, two kadmin processes racing, ZooKeeper down
for longer than ``--timeout``, the controller gone mid-run - the cluster must end with the plan
applied (after a rerun at most), no operation may be corrupted, duplicated or lost, and a failure
must be an exit code with a clear message. "Duplicated" is checked where it would show: the
controller's record of every *created* reassignment znode (``reassign_submitted``, once per
czxid), so a partition named in two of them really was submitted twice.

kadmin runs as ``python -m kadmin`` subprocesses, as an operator runs it, so it can be killed and
its JSON progress read while it runs.
"""

from __future__ import annotations

import json
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from kazoo.client import KazooClient

from kadmin import executor
from kadmin.embedded import EmbeddedZooKeeper
from kadmin.events import BatchDone, BatchSubmitted
from kadmin.executor import PlanFiles
from kadmin.model import (
    ClusterSnapshot,
    OperationFailed,
    PartitionMove,
    PartitionState,
    ReassignmentPlan,
    TopicAssignment,
    TopicPartition,
)
from kadmin.sandbox import Sandbox, read_events
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import admin, codec, paths
from kadmin.zk.reader import read_cluster
from kadmin.zk.session import ZkSettings, connect, session
from tests.helpers import KADMIN, frozen, kadmin_env, write_plan

pytestmark = pytest.mark.zk

_BARRIER_START = (
    "import os, sys, time\n"
    "from kadmin.cli.app import main\n"
    "barrier = sys.argv.pop(1)\n"
    "open(f'{barrier}.ready-{os.getpid()}', 'w').close()\n"
    "while not os.path.exists(barrier):\n"
    "    time.sleep(0.001)\n"
    "main(sys.argv[1:])\n"
)
"""``python -c`` source: kadmin imported, ``<barrier>.ready-<pid>`` written, then started by the
appearance of the barrier file, so two processes start their run within a millisecond or two of
each other (imports alone take a second or more)."""

_CONNECT_SLACK = 10.0
"""Seconds a failing run may take past its --timeout: interpreter start, connecting, the final
reads and closing the session."""

Layout = dict[str, TopicAssignment]
@pytest.fixture(autouse=True)
def _kill_leftover_kadmin() -> Iterator[None]:
    """A test that fails half-way must not leave kadmin running against the next test."""
    yield
    while _Kadmin.started_here:
        process = _Kadmin.started_here.pop()
        if process.poll() is None:
            process.kill()
            process.wait()


class _Kadmin:
    """One kadmin subprocess; its JSON progress lines (stdout) and stderr are collected as they
    come, so a test can act on an event while kadmin runs and never blocks on a full pipe."""

    started_here: ClassVar[list[subprocess.Popen[str]]] = []
    """Every process started, so that a failed test leaves none running (see the fixture)."""

    def __init__(self, *args: str, prefix: tuple[str, ...] = KADMIN) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen([*prefix, *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=kadmin_env())
        self.started_here.append(self.process)
        self.events: list[dict[str, Any]] = []
        self._incoming: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._err: list[str] = []
        self._readers = [threading.Thread(target=self._read_events, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_events(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                self._incoming.put(json.loads(line))
        self._incoming.put(None)

    def _read_err(self) -> None:
        assert self.process.stderr is not None
        self._err.extend(self.process.stderr)

    def next_event(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 60.0
                   ) -> dict[str, Any]:
        """The next progress event ``wanted`` accepts; fails if kadmin ends first."""
        until = time.monotonic() + timeout
        while True:
            try:
                event = self._incoming.get(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no such event within {timeout}s; events so far: {self.events}")
            if event is None:
                pytest.fail(f"kadmin ended (exit {self.process.wait()}) without such an event; "
                            f"events: {self.events}; stderr: {self.stderr}")
            self.events.append(event)
            if wanted(event):
                return event

    def wait(self, timeout: float = 120.0) -> int:
        """The exit code, once both output streams are read to the end; a run still going
        after ``timeout`` is killed and fails the test."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"kadmin still running after {timeout}s; events: {self.events}; "
                        f"stderr: {self.stderr}")
        for reader in self._readers:
            reader.join(timeout=10)
        while not self._incoming.empty():
            event = self._incoming.get_nowait()
            if event is not None:
                self.events.append(event)
        return code

    def kill(self) -> int:
        self.process.send_signal(signal.SIGKILL)
        return self.wait()

    @property
    def stderr(self) -> str:
        return "".join(self._err)


def _named(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda event: event["event"] == name


def _layout(client: KazooClient, topics: Iterable[str]) -> Layout:
    return {t: codec.decode_topic(client.get(paths.topic(t))[0]) for t in topics}


def _rotated(layout: Mapping[str, TopicAssignment], brokers: int, shift: int) -> Layout:
    """Every replica on the broker ``shift`` places up: every partition moves, replication
    factor and distinct replicas kept."""
    return {t: {p: tuple((r + shift) % brokers for r in replicas)
                for p, replicas in assignment.items()}
            for t, assignment in layout.items()}


def _write_plan(path: Path, layout: Mapping[str, TopicAssignment]) -> Path:
    return write_plan(path, {(t, p): r for t, a in layout.items() for p, r in a.items()})


def _reassign(plan: Path, zk: str, *options: str) -> tuple[str, ...]:
    return ("reassign", "--plan", str(plan), "-z", zk, "--json", *options)


def _submissions(record: Path, since: int = 0) -> list[dict[TopicPartition, tuple[int, ...]]]:
    """Each reassignment znode created after the first ``since`` controller events, as the
    controller read it: partition -> target replicas."""
    return [{TopicPartition(e["topic"], e["partition"]): tuple(e["replicas"])
             for e in event.detail["partitions"]}
            for event in read_events(record)[since:] if event.kind == "reassign_submitted"]


def _assert_submitted_once(submissions: list[dict[TopicPartition, tuple[int, ...]]],
                           target: Layout) -> None:
    """Every partition of ``target`` reached the controller exactly once, with its target."""
    every = Counter(tp for znode in submissions for tp in znode)
    twice = sorted(str(tp) for tp, n in every.items() if n > 1)
    assert not twice, f"submitted more than once: {twice}"
    expected = {TopicPartition(t, p): r for t, a in target.items() for p, r in a.items()}
    assert {tp: r for znode in submissions for tp, r in znode.items()} == expected


def _assert_applied(client: KazooClient, target: Layout) -> None:
    assert _layout(client, list(target)) == target
    assert not client.exists(paths.REASSIGN_PARTITIONS)


def _event_count(record: Path) -> int:
    return len(read_events(record)) if record.exists() else 0


# --- 1. SIGKILL at random points ------------------------------------------------------------


def test_sigkill_at_twenty_random_points_never_loses_or_duplicates(start_sandbox, tmp_path):
    snapshot = synthetic_cluster(brokers=6, topics=10, partitions=30, replication_factor=3,
                                 seed=2026)  # 300 partitions, 10 batches of 30
    box = start_sandbox(snapshot, latency=0.02, parallelism=100)
    record = tmp_path / "controller.jsonl"
    original = _layout(box.client, sorted(snapshot.topics))
    layouts = (original, _rotated(original, 6, 1))
    options = ("--batch-size", "30", "--timeout", "120")

    # uninterrupted runs first, to layout 1 and back: how long a run takes (the faster of two:
    # the first may pay for a cold ZooKeeper JVM)
    durations = []
    for run_, target in enumerate((layouts[1], layouts[0])):
        since = _event_count(record)
        calibration = _Kadmin(*_reassign(_write_plan(tmp_path / f"calibration-{run_}.json",
                                                     target), box.connect_string, *options))
        assert calibration.wait() == 0, calibration.stderr
        durations.append(time.monotonic() - calibration.started)
        _assert_applied(box.client, target)
        _assert_submitted_once(_submissions(record, since), target)
    expected_run = min(durations)

    rng = random.Random(2026)
    killed_mid_run = 0
    for point in range(20):
        target = layouts[(point + 1) % 2]
        since = _event_count(record)
        command = _reassign(_write_plan(tmp_path / f"kill-{point:02d}.json", target),
                            box.connect_string, *options)
        victim = _Kadmin(*command)
        time.sleep(max(0.0, victim.started + rng.uniform(0, expected_run) - time.monotonic()))
        killed_mid_run += victim.process.poll() is None
        code = victim.kill()
        assert code in (0, -signal.SIGKILL), victim.stderr

        reruns: list[int] = []
        while not reruns or reruns[-1] != 0:
            assert len(reruns) < 3, f"kill point {point}: reruns exited {reruns}"
            rerun = _Kadmin(*command)
            reruns.append(rerun.wait())
            assert reruns[-1] in (0, 1), rerun.stderr  # only a timeout may call for another go
        _assert_applied(box.client, target)
        _assert_submitted_once(_submissions(record, since), target)
        journal = json.loads((tmp_path / f"kill-{point:02d}.journal.json").read_text())
        assert journal["partitions_done"] == journal["partitions"] == 300
        assert journal["in_flight"] == 0
    assert killed_mid_run >= 10, "most kill points must land while kadmin runs"


def test_a_rerun_reading_while_partitions_complete_resubmits_none(start_sandbox, tmp_path):
    """The rerun after a kill reads the cluster while the controller is finishing the killed
    run's batch: one partition every few milliseconds leaves the reassignment znode and gets its
    final replicas. A partition must never look unfinished in its topic znode and absent from
    the reassignment znode at once, or the rerun submits it a second time."""
    snapshot = synthetic_cluster(brokers=6, topics=300, partitions=1, replication_factor=3,
                                 seed=17)
    # one partition finishes per controller tick (50 ms): one 300-partition batch takes ~15 s,
    # time enough for the rerun to start and read while it runs even on a busy machine
    box = start_sandbox(snapshot, latency=0.01, parallelism=1)
    record = tmp_path / "controller.jsonl"
    original = _layout(box.client, sorted(snapshot.topics))
    layouts = (_rotated(original, 6, 1), original)
    for round_ in range(3):
        target = layouts[round_ % 2]
        since = _event_count(record)
        command = _reassign(_write_plan(tmp_path / f"plan-{round_}.json", target),
                            box.connect_string, "--batch-size", "300", "--timeout", "120")
        victim = _Kadmin(*command)
        victim.next_event(_named("batch_submitted"))
        victim.kill()
        rerun = _Kadmin(*command)
        assert rerun.wait() == 0, rerun.stderr
        assert rerun.events[1]["event"] == "batch_resumed", rerun.events[:3]
        _assert_applied(box.client, target)
        _assert_submitted_once(_submissions(record, since), target)


# --- 2. two kadmin processes at once --------------------------------------------------------


def test_two_processes_at_once_exactly_one_submits(start_sandbox, tmp_path):
    snapshot = synthetic_cluster(brokers=6, topics=6, partitions=20, replication_factor=3,
                                 seed=5)
    box = start_sandbox(snapshot, latency=0.01, parallelism=100)
    record = tmp_path / "controller.jsonl"
    topics = sorted(snapshot.topics)
    groups = (topics[:3], topics[3:])
    paths_taken: Counter[bool] = Counter()
    for round_ in range(4):
        before = _layout(box.client, topics)
        targets = [_rotated({t: before[t] for t in group}, 6, 1 + round_ % 5)
                   for group in groups]
        plans = [_write_plan(tmp_path / f"round-{round_}" / side / "plan.json", target)
                 for side, target in zip("ab", targets, strict=True)]
        since = _event_count(record)
        box.controller.resign()
        runs = _started_together(tmp_path / f"round-{round_}" / "go", *(
            _reassign(plan, box.connect_string, "--batch-size", "20", "--timeout", "60")
            for plan in plans))
        first, lost, _, won = _loser_then_winner(box, runs)
        assert (lost, won) == (3, 0), [run.stderr for run in runs]
        loser = runs.index(first)
        winner = 1 - loser
        # lost before or at the create: it had announced a plan only if it got to the create
        paths_taken[bool(runs[loser].events)] += 1

        loser_err = runs[loser].stderr.strip().splitlines()
        assert len(loser_err) == 1, loser_err
        assert loser_err[0].startswith("kadmin: error: a reassignment is already in progress in "
                                       "/admin/reassign_partitions"), loser_err
        # the loser left nothing: no rollback, no journal, no temporary file next to its plan
        assert [p.name for p in plans[loser].parent.iterdir()] == ["plan.json"]
        assert (plans[winner].parent / "plan.rollback.json").exists()
        # and nothing in ZooKeeper: only the winner's partitions reached the controller
        _assert_submitted_once(_submissions(record, since), targets[winner])
        _assert_applied(box.client, targets[winner])
        assert _layout(box.client, groups[loser]) == {t: before[t] for t in groups[loser]}
    print(f"losers refused at the create: {paths_taken[True]}, before it: {paths_taken[False]}")


def _started_together(barrier: Path, *commands: tuple[str, ...]) -> list[_Kadmin]:
    """kadmin processes released by one barrier file, once every one has imported kadmin."""
    runs = [_Kadmin(str(barrier), *command, prefix=(sys.executable, "-c", _BARRIER_START))
            for command in commands]
    ready_by = time.monotonic() + 60
    while len(list(barrier.parent.glob(f"{barrier.name}.ready-*"))) < len(commands):
        assert time.monotonic() < ready_by, "kadmin did not start"
        time.sleep(0.01)
    barrier.touch()
    return runs


def _loser_then_winner(box: Sandbox, runs: list[_Kadmin], timeout: float = 120.0
                       ) -> tuple[_Kadmin, int, _Kadmin, int]:
    """Two runs started against a resigned controller: the winner's first batch stays in
    ZooKeeper until the loser has ended (however slowly it got there), then a controller is
    elected and the winner finishes. Returns (loser, its exit code, winner, its exit code)."""
    until = time.monotonic() + timeout
    while all(run.process.poll() is None for run in runs):
        assert time.monotonic() < until, "neither run ended"
        time.sleep(0.05)
    loser = next(run for run in runs if run.process.poll() is not None)
    winner = runs[1 - runs.index(loser)]
    lost = loser.wait()
    box.controller.elect(box.controller_id)
    return loser, lost, winner, winner.wait()


def test_two_runs_of_the_same_plan_one_refused_and_the_rollback_kept(start_sandbox, tmp_path):
    """The second run of one plan file is refused (exit 3) before it reads or writes anything:
    before the lock, the loser could delete the rollback file the winner relied on."""
    snapshot = synthetic_cluster(brokers=6, topics=3, partitions=10, replication_factor=3,
                                 seed=6)
    box = start_sandbox(snapshot, latency=0.01, parallelism=100)
    topics = sorted(snapshot.topics)
    for round_ in range(4):
        before = _layout(box.client, topics)
        target = _rotated(before, 6, 1)
        plan = _write_plan(tmp_path / f"round-{round_}" / "plan.json", target)
        command = _reassign(plan, box.connect_string, "--batch-size", "10", "--timeout", "60")
        box.controller.resign()
        loser, lost, winner, won = _loser_then_winner(
            box, _started_together(plan.parent / "go", command, command))
        assert (lost, won) == (3, 0), (loser.stderr, winner.stderr)
        assert loser.stderr.splitlines() == [
            f"kadmin: error: {plan} is being run by another kadmin process; run it again once "
            "that one has ended"], loser.stderr
        rollback = json.loads((plan.parent / "plan.rollback.json").read_text())["partitions"]
        assert {(e["topic"], e["partition"]): tuple(e["replicas"]) for e in rollback} == {
            (t, p): r for t in topics for p, r in before[t].items()}
        _assert_applied(box.client, target)


def test_a_batch_another_run_of_the_plan_applied_meanwhile_is_not_submitted_again(
        start_sandbox, tmp_path):
    """A second run of the same plan, started late, may apply the batches this run planned next
    (it planned from what it read then). Each batch is read again right before its create."""
    snapshot = synthetic_cluster(brokers=6, topics=3, partitions=10, replication_factor=3, seed=8)
    box = start_sandbox(snapshot, latency=0.01, parallelism=100)
    record = tmp_path / "controller.jsonl"
    target = _rotated(_layout(box.client, sorted(snapshot.topics)), 6, 1)
    moves = [PartitionMove(t, p, r) for t in sorted(target) for p, r in sorted(target[t].items())]
    events: list[object] = []
    plan_file = _write_plan(tmp_path / "plan.json", target)

    def emit(event: object) -> None:
        events.append(event)
        if isinstance(event, BatchDone) and event.batch == 1:  # the other run, one batch ahead
            # the schedule's second batch, as the journal (the same for both runs) holds it
            schedule = json.loads((tmp_path / "plan.journal.json").read_text())["batches"]
            second_batch = [moves[i] for i in schedule[1]]
            admin.submit_reassignment(box.client, second_batch)
            assert admin.wait_reassignment(box.client, deadline=time.monotonic() + 60) == ()

    with session(ZkSettings(box.connect_string)) as client:
        outcome = executor.execute_reassignment(
            client, ReassignmentPlan(tuple(moves)), PlanFiles(plan_file),
            executor.ExecutionSettings(batch_size=10, timeout=60), emit)

    assert outcome.ok, outcome
    assert [(type(e).__name__, e.batch) for e in events
            if isinstance(e, (BatchSubmitted, BatchDone))] == [
        ("BatchSubmitted", 1), ("BatchDone", 1), ("BatchDone", 2),  # read again: nothing to do
        ("BatchSubmitted", 3), ("BatchDone", 3)]
    assert [e.done for e in events if isinstance(e, BatchDone)] == [10, 20, 30]
    _assert_submitted_once(_submissions(record), target)  # the other run's batch included
    _assert_applied(box.client, target)


# --- 3. ZooKeeper down for longer than --timeout --------------------------------------------


@pytest.mark.parametrize("stop_after", ["batch_submitted", "waiting"])
def test_zookeeper_down_past_the_timeout_exits_1_then_resumes(own_zk_server: EmbeddedZooKeeper,
                                                             tmp_path, stop_after):
    """Stopped right after the create (kadmin may not have read the znode back yet) or once
    kadmin has seen the batch in flight (it then has entries left to report at the deadline).
    The controller has resigned until the rerun: the first batch is in flight when ZooKeeper
    stops, however late this test reads the event."""
    snapshot = synthetic_cluster(brokers=6, topics=4, partitions=20, replication_factor=3, seed=9)
    record = tmp_path / "controller.jsonl"
    timeout = 6.0
    with Sandbox(snapshot, zookeeper=own_zk_server.connect_string, chroot="/kafka",
                 latency=0.01, parallelism=100, record_path=record) as box:
        box.controller.resign()
        target = _rotated(_layout(box.client, sorted(snapshot.topics)), 6, 2)
        command = _reassign(_write_plan(tmp_path / "plan.json", target), box.connect_string,
                            "--batch-size", "20", "--timeout", f"{timeout:g}",
                            "--connect-timeout", "3")
        run = _Kadmin(*command)
        run.next_event(_named(stop_after))
        own_zk_server.stop()
        down_since = time.monotonic()

        code = run.wait(timeout=120)
        took = time.monotonic() - run.started
        assert code == 1, run.stderr
        assert took < timeout + _CONNECT_SLACK, f"kadmin took {took:.1f}s to give up"
        message = run.stderr.splitlines()[0]
        assert message.startswith("kadmin: error: "), run.stderr
        assert "timed out" in message or "ZooKeeper" in message, run.stderr
        assert "internal error" not in run.stderr and "Traceback" not in run.stderr
        if stop_after == "waiting":  # the batch was seen in flight: it is named, not read again
            lines = run.stderr.splitlines()
            assert message.startswith("kadmin: error: reassign: timed out after 6s (--timeout); "
                                      "20 still in flight")
            assert len(lines) == 21 and all(
                line.startswith("  ") and line.endswith("ISR unknown (ZooKeeper did not answer)")
                for line in lines[1:]), lines

        time.sleep(max(0.0, down_since + timeout + 1 - time.monotonic()))  # down past --timeout
        own_zk_server.start()
        box.controller.elect(box.controller_id)
        rerun = _Kadmin(*command)
        assert rerun.wait() == 0, rerun.stderr
        assert rerun.events[0]["event"] == "execution_planned" and rerun.events[0]["resumed"]
        _assert_applied(box.client, target)
        # the batch in flight during the outage was waited on, never created again
        _assert_submitted_once(_submissions(record), target)


# --- 4. the controller disappears -----------------------------------------------------------


def _controller_outage(start_sandbox: Callable[..., Sandbox], tmp_path: Path, *options: str
                       ) -> tuple[Sandbox, _Kadmin, Layout, tuple[str, ...]]:
    """A run whose controller is gone when its first batch is submitted; returns once kadmin has
    reported that there is no controller. (Resigned before the run, not after the submission:
    a controller that had a moment would have finished the batch on a loaded machine.)"""
    snapshot = synthetic_cluster(brokers=6, topics=3, partitions=20, replication_factor=3, seed=4)
    box = start_sandbox(snapshot, latency=0.01, parallelism=100)
    box.controller.resign()
    target = _rotated(_layout(box.client, sorted(snapshot.topics)), 6, 1)
    command = _reassign(_write_plan(tmp_path / "plan.json", target), box.connect_string,
                        "--batch-size", "20", *options)
    run = _Kadmin(*command)
    run.next_event(_named("batch_submitted"))
    waiting = run.next_event(lambda e: e["event"] == "waiting" and e["controller"] is None)
    assert waiting["connected"] is True and waiting["remaining"] > 0
    return box, run, target, command


def test_controller_outage_is_waited_out(start_sandbox, tmp_path):
    box, run, target, _ = _controller_outage(start_sandbox, tmp_path, "--timeout", "60")
    # kadmin has reported the controller gone (the event _controller_outage waits for): it must
    # still be waiting when one is elected, and report that one before it finishes
    assert run.process.poll() is None, "kadmin must keep waiting while there is no controller"
    assert box.client.exists(paths.REASSIGN_PARTITIONS)
    new_controller = (box.controller_id + 1) % 6
    box.controller.elect(new_controller)

    assert run.wait() == 0, run.stderr
    assert any(e["event"] == "waiting" and e["controller"] == new_controller for e in run.events)
    assert run.events[-1] == {"event": "finished", "operation": "reassign", "ok": True,
                              "failed": 0}
    _assert_applied(box.client, target)
    _assert_submitted_once(_submissions(tmp_path / "controller.jsonl"), target)


def test_controller_outage_longer_than_the_timeout_exits_1(start_sandbox, tmp_path):
    timeout = 3.0
    box, run, target, command = _controller_outage(start_sandbox, tmp_path,
                                                   "--timeout", f"{timeout:g}")
    code = run.wait(timeout=60)
    took = time.monotonic() - run.started
    assert code == 1, run.stderr
    assert took < timeout + _CONNECT_SLACK
    lines = run.stderr.splitlines()
    assert lines[0].startswith("kadmin: error: reassign: timed out after 3s (--timeout); 20 still "
                               "in flight"), lines
    assert all(line.startswith("  ") and "not yet in ISR" in line for line in lines[1:]), lines
    assert box.client.exists(paths.REASSIGN_PARTITIONS), "the znode is left for the controller"

    # a controller again, and the same command finishes the job without resubmitting
    box.controller.elect(box.controller_id)
    rerun = _Kadmin(*command)
    assert rerun.wait() == 0, rerun.stderr
    _assert_applied(box.client, target)
    _assert_submitted_once(_submissions(tmp_path / "controller.jsonl"), target)


# --- 5. limits that hold against a server that stops answering --------------------------------


def _elect_needed(snapshot: ClusterSnapshot) -> ClusterSnapshot:
    """The snapshot with topic-000000-0 led by its second replica, so an election has work."""
    replicas = snapshot.topics["topic-000000"][0]
    states = {t: dict(s) for t, s in snapshot.states.items()}
    states["topic-000000"][0] = PartitionState(replicas[1], replicas)
    return ClusterSnapshot(snapshot.brokers, snapshot.topics, states, snapshot.controller,
                           snapshot.controller_epoch)


@pytest.mark.parametrize("command", ["reassign", "elect", "delete"])
def test_timeout_holds_against_a_frozen_zookeeper(own_zk_server: EmbeddedZooKeeper, tmp_path,
                                                  command):
    """ZooKeeper frozen while kadmin waits for the controller: --timeout holds within a second
    or two (the last reads and the session's close included) and the message names it. The
    controller has resigned first, so the batch is still in ZooKeeper when it freezes."""
    snapshot = _elect_needed(synthetic_cluster(brokers=6, topics=3, partitions=10,
                                               replication_factor=3, seed=12))
    timeout = 6.0
    with Sandbox(snapshot, zookeeper=own_zk_server.connect_string, chroot="/kafka",
                 latency=0.01) as box:
        box.controller.resign()
        target = _rotated(_layout(box.client, sorted(snapshot.topics)), 6, 1)
        args = {"reassign": _reassign(_write_plan(tmp_path / "plan.json", target),
                                      box.connect_string, "--batch-size", "10"),
                "elect": ("elect", "--topics", "topic-000000", "-z", box.connect_string,
                          "--json"),
                "delete": ("topics", "delete", "topic-000001", "-z", box.connect_string, "--yes",
                           "--json")}[command]
        run = _Kadmin(*args, "--timeout", f"{timeout:g}")
        run.next_event(_named("execution_planned"))
        planned = time.monotonic()  # the deadline started at most this long ago
        run.next_event(_named("batch_submitted"))
        with frozen(own_zk_server):
            code = run.wait(timeout=120)
            took = time.monotonic() - planned
    assert code == 1, run.stderr
    assert took < timeout + 5, f"kadmin took {took:.1f}s past a --timeout of {timeout:g}s"
    message = run.stderr.splitlines()[0]
    assert message.startswith("kadmin: error: ") and "--timeout" in message, run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr


def test_a_read_gives_up_at_its_limit_on_a_frozen_zookeeper(own_zk_server: EmbeddedZooKeeper,
                                                            monkeypatch: pytest.MonkeyPatch):
    """A read that a frozen server never answers ends at kadmin's limit for one request (60 s,
    3 s here), the message naming it; closing the session does not wait for the server."""
    monkeypatch.setattr("kadmin.zk.session.DEFAULT_RETRY_SECONDS", 3.0)
    snapshot = synthetic_cluster(brokers=3, topics=5, partitions=10, replication_factor=3, seed=2)
    with Sandbox(snapshot, zookeeper=own_zk_server.connect_string, chroot="/kafka") as box:
        with session(ZkSettings(box.connect_string)) as client, frozen(own_zk_server):
            started = time.monotonic()
            with pytest.raises(OperationFailed, match=r"^ZooKeeper did not answer within 3s, "
                                                      r"kadmin's limit for one request"):
                read_cluster(client)
        took = time.monotonic() - started  # the session closed too
    assert took < 3.0 + 5


def test_connect_timeout_holds_against_a_frozen_zookeeper(own_zk_server: EmbeddedZooKeeper):
    """The kernel completes the TCP handshake for a stopped JVM; the session never comes."""
    with frozen(own_zk_server):
        started = time.monotonic()
        with pytest.raises(OperationFailed, match=r"^cannot reach ZooKeeper at .* within 2s, the "
                                                  r"--connect-timeout$"):
            connect(ZkSettings(own_zk_server.connect_string, connect_timeout=2))
        took = time.monotonic() - started
    assert took < 2 + 5
