"""Benchmark: a sandbox rehearsal of a 100,000-partition rebalance with partition sizes at three
replication throttles - the duration the rehearsal measures against bytes / rate, and
against what ``reassign --dry-run`` predicted before it started.

The cluster is synthetic (1,000 topics x 100 partitions, RF 3, 30 brokers in 3 racks) with
long-tailed sizes (``synthetic.synthetic_sizes``: each topic's typical partition log-normal
around 200 MB, its partitions log-normal around that). The plan comes from ``PLAN_SOURCE``:
``plan rebalance --balance bytes``, the disk-balancing rebalance an operator would run on it.
For each rate a fresh sandbox (embedded ZooKeeper + simulated controller moving every partition
of a batch at once, as Kafka does) runs ``execute_reassignment`` with ``--throttle RATE``: the
simulated brokers copy each new replica from its leader at the throttle they read from the
config znodes kadmin writes, at most ``BANDWIDTH`` per broker and direction.

Time: the sandbox's clock runs ``scale`` times faster than real time, ``scale`` chosen per rate
so a run takes about ``--target`` real seconds. The predicted duration is the simulated time
from each batch's submission to its completion, summed over the batches; kadmin's own work
between batches (a second or so of real time, which would be multiplied by ``scale``) is left
out, as it is negligible next to copying on a real cluster.

bytes / rate: with a throttle of R bytes/s per broker and direction, no schedule can finish
before the busiest broker has sent or received its bytes: ``max over brokers of max(bytes in,
bytes out) / R``. The ratio measured / bound is what batching costs: a batch ends only when its
busiest broker is done, while the others wait idle; kadmin composes its batches (docs/execution.md)
so that the broker bounding the plan bounds every batch. The dry run's prediction is that model
of the batches the run then submits (``executor.dry_run_reassignment``, computed on the sandbox
before the run); measured / predicted shows how well the model matches the simulated copying.

Run: python bench/bench_throttle_rehearsal.py [--rates 20MB,40MB,80MB] [--target 90] [--topics 1000]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from kadmin import snapshots, synthetic
from kadmin.executor import (
    ExecutionSettings,
    PlanFiles,
    dry_run_reassignment,
    execute_reassignment,
)
from kadmin.model import ClusterSnapshot, PartitionMove, ReassignmentPlan, TopicPartition
from kadmin.sandbox import Sandbox, ScaledClock
from kadmin.sizes import snapshot_sizes
from kadmin.units import human_bytes, human_duration, parse_rate
from kadmin.zk import reader
from kadmin.zk.session import ZkSettings, session

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

PLAN_SOURCE = ["plan", "rebalance", "--balance", "bytes"]
"""The kadmin command that makes the plan from the snapshot (``--cluster`` and ``--out`` are
added; the snapshot carries the sizes)."""

BROKERS, RACKS, TOPICS, PARTITIONS, RF = 30, 3, 1000, 100, 3
BANDWIDTH = 100e6
BATCH_SIZE = 2000


def make_snapshot(path: Path, topics: int) -> ClusterSnapshot:
    cluster = synthetic.synthetic_cluster(brokers=BROKERS, topics=topics, partitions=PARTITIONS,
                                          replication_factor=RF, racks=RACKS, seed=10)
    cluster = dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=10))
    snapshots.write_snapshot(cluster, path, fmt="json", force=True)
    return cluster


def make_plan(snapshot_path: Path, plan_path: Path) -> tuple[ReassignmentPlan, float]:
    """The plan, and the seconds the CLI took to make it (snapshot read to plan written)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "kadmin", *PLAN_SOURCE, "--cluster", str(snapshot_path),
                    "--out", str(plan_path), "--force"], check=True, capture_output=True)
    seconds = time.monotonic() - started
    print(f"plan made in {seconds:.1f} s", flush=True)
    doc = json.loads(plan_path.read_text())
    return ReassignmentPlan(tuple(PartitionMove(e["topic"], e["partition"], tuple(e["replicas"]))
                                  for e in doc["partitions"])), seconds


def busiest_broker_bytes(cluster: ClusterSnapshot, plan: ReassignmentPlan) -> tuple[int, int]:
    """Bytes moved in all, and the most bytes one broker sends or receives (new replicas copy
    from the current leader, the first replica: every synthetic partition is led by it)."""
    sizes = snapshot_sizes(cluster)
    assert sizes is not None
    sent: Counter[int] = Counter()
    received: Counter[int] = Counter()
    for move in plan.moves:
        current = cluster.replicas(move.tp) or ()
        size = sizes[TopicPartition(move.topic, move.partition)]
        for replica in move.replicas:
            if replica not in current:
                received[replica] += size
                sent[current[0]] += size
    return sum(received.values()), max(max(sent.values()), max(received.values()))


@dataclasses.dataclass(frozen=True)
class Result:
    rate: int
    batches: int
    predicted: float
    """Simulated seconds the rehearsal measured (the name kept from the table)."""
    real: float
    scale: float
    dry_run: float
    """Seconds the dry run predicted before the run."""


def rehearse(cluster: ClusterSnapshot, plan: ReassignmentPlan, rate: int, scale: float,
             work: Path) -> Result:
    """One throttled run; the predicted duration is, per batch, the simulated time from its
    first move's start to its last move's replicas being in sync (the controller records
    both), summed over the batches."""
    plan_file = work / f"plan-{rate}.json"
    plan_file.write_text("{}")  # PlanFiles puts the rollback and journal next to it
    settings = ExecutionSettings(batch_size=BATCH_SIZE, throttle=rate, health_gate=False)
    with Sandbox(cluster, latency=0.0, parallelism=BATCH_SIZE, bandwidth=BANDWIDTH,
                 clock=ScaledClock(scale)) as box, \
            session(ZkSettings(box.connect_string)) as client:
        live = reader.read_for_operation(client, {m.topic for m in plan.moves})
        dry = dry_run_reassignment(client, plan, PlanFiles(plan_file), settings,
                                   snapshot_sizes(cluster), cluster=live)
        predicted_by_dry_run = dry.scheduled.prediction(rate).seconds
        started = time.monotonic()
        outcome = execute_reassignment(client, plan, PlanFiles(plan_file), settings,
                                       sizes=snapshot_sizes(cluster))
        real = time.monotonic() - started
        events = box.controller.events
    if not outcome.ok:
        raise RuntimeError(f"the rehearsal failed: {outcome.failures[:3]}")
    done = {(e.detail["topic"], e.detail["partition"]): e.detail for e in events
            if e.kind == "partition_reassigned"}
    batches = [[(p["topic"], p["partition"]) for p in e.detail["partitions"]]
               for e in events if e.kind == "reassign_submitted"]
    predicted = sum(max(done[tp]["in_sync"] for tp in batch)
                    - min(done[tp]["started"] for tp in batch) for batch in batches)
    return Result(rate, len(batches), predicted, real, scale, predicted_by_dry_run)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rates", default="20MB,40MB,80MB")
    parser.add_argument("--topics", type=int, default=TOPICS, help="of 100 partitions each")
    parser.add_argument("--target", type=float, default=90.0,
                        help="real seconds one rehearsal should take (sets the time scale)")
    args = parser.parse_args()
    rates = [parse_rate(r, "--rates") for r in args.rates.split(",")]

    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        work = Path(tmp)
        cluster = make_snapshot(work / "cluster.json", args.topics)
        plan, plan_seconds = make_plan(work / "cluster.json", work / "plan.json")
        moved, busiest = busiest_broker_bytes(cluster, plan)
        total = sum(sum(p.values()) for p in cluster.sizes.values())
        print(f"{len(plan.moves):,} partitions to move, {human_bytes(moved)} of "
              f"{human_bytes(total)}", flush=True)
        results = []
        for rate in rates:
            bound = busiest / rate
            result = rehearse(cluster, plan, rate, bound / args.target, work)
            print(result, flush=True)
            results.append((result, bound))

    lines = [f"- cluster: {args.topics:,} topics x {PARTITIONS} partitions = "
             f"{args.topics * PARTITIONS:,} partitions, RF {RF}, {BROKERS} brokers in {RACKS} racks, "
             f"{human_bytes(total)} (long-tailed synthetic sizes, seed 10); plan: "
             f"`kadmin {' '.join(PLAN_SOURCE)}` (made in {plan_seconds:.1f} s), "
             f"{len(plan.moves):,} partitions, "
             f"{human_bytes(moved)} to copy, the busiest broker sends or receives "
             f"{human_bytes(busiest)}",
             f"- sandbox: brokers copy at most {human_bytes(BANDWIDTH)}/s each way; batches of "
             f"{BATCH_SIZE:,} partitions, all of a batch moving at once; health gate off",
             "",
             "| throttle | batches | bytes / rate (busiest broker) | dry-run prediction "
             "| measured by the rehearsal | measured / bound | measured / prediction "
             "| time scale | real time |",
             "|---|---|---|---|---|---|---|---|---|"]
    for result, bound in results:
        lines.append(f"| {human_bytes(result.rate)}/s | {result.batches} | "
                     f"{human_duration(bound)} | {human_duration(result.dry_run)} | "
                     f"**{human_duration(result.predicted)}** | "
                     f"{result.predicted / bound:.3f}x | "
                     f"{result.predicted / result.dry_run:.3f}x | {result.scale:,.0f} | "
                     f"{result.real:.0f} s |")
    append_results("throttled rehearsal with composed batches, 100k partitions",
                   describe_machine(), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
