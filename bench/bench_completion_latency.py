"""Benchmark: how soon kadmin reports a reassignment complete after the controller finishes it
.

The delay measured is from the controller deleting /admin/reassign_partitions to kadmin knowing,
over ``--runs`` small reassignments (3 partitions, replicas rotated by one) on a real embedded
ZooKeeper. The controller is this benchmark, on a second ZooKeeper session in the same process
(so both sides read the same ``time.monotonic()`` clock): once kadmin is waiting (its first
progress update has arrived, so its watches are armed) it applies the moves to the topic znodes
as Kafka's controller does, lets a random 20-60 ms pass, notes the time and deletes the znode.

Two paths are timed:
- ``kadmin.zk.admin``: ``submit_reassignment``, then ``wait_reassignment``; done when it returns;
- the executor (``kadmin reassign``'s path): ``execute_reassignment`` on a one-batch plan; done at
  its ``BatchDone`` event (before the final verification read, which is not part of the delay).

Each delay is counted from the moment the controller sent its delete and, as a lower bound, from
the moment its delete was acknowledged. A missed watch would show as a delay near the waiter's
5 s safety poll.

Run: python bench/bench_completion_latency.py [--runs 50]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from kadmin.embedded import EmbeddedZooKeeper
from kadmin.events import BatchDone, Event, Waiting
from kadmin.executor import ExecutionSettings, PlanFiles, execute_reassignment
from kadmin.files import atomic_write_json
from kadmin.model import PartitionMove, ReassignmentPlan
from kadmin.plans import plan_document
from kadmin.sandbox import load_cluster
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import admin, codec, paths, reader
from kadmin.zk.session import ZkSettings, session

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

TOPICS = 4
PARTITIONS_PER_MOVE = 3
WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class Run:
    sent: float
    """Monotonic time the controller sent its delete."""
    acked: float
    """Monotonic time the controller's delete was acknowledged."""
    done: float
    """Monotonic time kadmin reported completion."""


class Controller:
    """The controller's side of one run, on its own session."""

    def __init__(self, client: KazooClient, rng: random.Random) -> None:
        self._client = client
        self._rng = rng

    def finish(self, waiting: threading.Event) -> tuple[float, float]:
        """Once kadmin waits: final replicas to the topic znodes, then delete the request.
        Returns when the delete was sent and when it was acknowledged."""
        if not waiting.wait(WAIT_SECONDS):
            raise RuntimeError("kadmin never started waiting")
        data, stat = self._client.get(paths.REASSIGN_PARTITIONS)
        for move in codec.decode_reassignment(data):
            topic_data, topic_stat = self._client.get(paths.topic(move.topic))
            assignment = codec.decode_topic(topic_data)
            assignment[move.partition] = move.replicas
            self._client.set(paths.topic(move.topic), codec.encode_topic(assignment, 2),
                             version=topic_stat.version)
        time.sleep(self._rng.uniform(0.02, 0.06))
        sent = time.monotonic()
        self._client.delete(paths.REASSIGN_PARTITIONS, version=stat.version)
        return sent, time.monotonic()


def rotated_moves(client: KazooClient, topic: str) -> tuple[PartitionMove, ...]:
    """The first partitions of ``topic`` with their current replicas rotated by one, so every
    run changes the leader and the executor has something to do."""
    assignment = reader.read_assignments(client, [topic])[topic]
    return tuple(PartitionMove(topic, p, (*assignment[p][1:], assignment[p][0]))
                 for p in sorted(assignment)[:PARTITIONS_PER_MOVE])


def via_admin(client: KazooClient, moves: tuple[PartitionMove, ...], waiting: threading.Event,
              _: Path) -> float:
    def on_update(update: admin.WaitUpdate) -> None:
        if update.remaining and update.connected:
            waiting.set()

    admin.submit_reassignment(client, moves)
    left = admin.wait_reassignment(client, deadline=time.monotonic() + WAIT_SECONDS,
                                   on_update=on_update)
    done = time.monotonic()
    if left:
        raise RuntimeError(f"the wait ended with {len(left)} partitions left")
    return done


def via_executor(client: KazooClient, moves: tuple[PartitionMove, ...], waiting: threading.Event,
                 plan_file: Path) -> float:
    done: list[float] = []

    def emit(event: Event) -> None:
        if isinstance(event, Waiting) and event.remaining and event.connected:
            waiting.set()
        elif isinstance(event, BatchDone):
            done.append(time.monotonic())

    plan = ReassignmentPlan(moves)
    atomic_write_json(plan_file, plan_document(plan))
    outcome = execute_reassignment(client, plan, PlanFiles(plan_file),
                                   ExecutionSettings(timeout=WAIT_SECONDS), emit)
    if not outcome.ok or len(done) != 1:
        raise RuntimeError(f"the execution failed: {outcome}")
    return done[0]


KadminSide = Callable[[KazooClient, tuple[PartitionMove, ...], threading.Event, Path], float]


def measure(path: KadminSide, kadmin_client: KazooClient, controller: Controller, runs: int,
            work: Path) -> list[Run]:
    out = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-controller") as pool:
        for i in range(runs):
            moves = rotated_moves(kadmin_client, f"topic-{i % TOPICS:06d}")
            waiting = threading.Event()
            controller_side = pool.submit(controller.finish, waiting)
            try:
                done = path(kadmin_client, moves, waiting, work / f"plan-{i}.json")
            finally:
                waiting.set()  # a failed run must not leave the controller thread waiting
            sent, acked = controller_side.result(WAIT_SECONDS)
            out.append(Run(sent, acked, done))
    return out


def summary(label: str, delays_ms: list[float]) -> str:
    p99 = statistics.quantiles(delays_ms, n=100, method="inclusive")[98]
    return (f"median **{statistics.median(delays_ms):.2f} ms**, p99 **{p99:.2f} ms**, "
            f"max **{max(delays_ms):.2f} ms**, min {min(delays_ms):.2f} ms ({label})")


def round_trip_ms(client: KazooClient, count: int = 200) -> float:
    """Median of one synchronous ZooKeeper request, the unit the wait's delay is made of."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        client.exists(paths.CONTROLLER)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    snapshot = synthetic_cluster(brokers=6, topics=TOPICS, partitions=10, replication_factor=3,
                                 seed=args.seed)
    rng = random.Random(args.seed)
    results: dict[str, list[Run]] = {}
    with EmbeddedZooKeeper() as server, tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        controller_client = KazooClient(hosts=server.connect_string, timeout=30)
        controller_client.start(timeout=30)
        try:
            load_cluster(controller_client, snapshot)  # brokers and /controller live on it
            controller = Controller(controller_client, rng)
            with session(ZkSettings(server.connect_string)) as client:
                rtt = round_trip_ms(client)
                for name, path in (("admin", via_admin), ("executor", via_executor)):
                    work = Path(tmp) / name
                    work.mkdir()
                    results[name] = measure(path, client, controller, args.runs, work)
        finally:
            controller_client.stop()
            controller_client.close()

    lines = [f"- {args.runs} runs per path, {PARTITIONS_PER_MOVE} partitions each, on an embedded "
             f"ZooKeeper (loopback; one synchronous request: median {rtt:.2f} ms); the controller "
             f"deletes /admin/reassign_partitions 20-60 ms after kadmin starts waiting"]
    for name, label in (("admin", "`wait_reassignment` returns"),
                        ("executor", "`execute_reassignment` emits `BatchDone`")):
        runs = results[name]
        lines.append(f"- delete sent -> {label}: "
                     + summary("from the delete sent", [(r.done - r.sent) * 1000 for r in runs]))
        lines.append("  - from the delete acknowledged to the controller: "
                     + summary("lower bound", [(r.done - r.acked) * 1000 for r in runs]))
    append_results("reassignment completion latency", describe_machine(), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
