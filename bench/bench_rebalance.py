"""Benchmark: `kadmin plan rebalance` on 1,000,000 partitions, end to end through the CLI.

100,000 topics x 10 partitions, RF 3, 1,000 brokers of which 100 were just added (they hold
nothing), in two shapes: ``grow``, the 900 old brokers balanced (as a previous `plan generate`
leaves them), and ``skewed``, kadmin's synthetic cluster whose topics were created while the
cluster grew. Snapshots carry every partition's state, as `kadmin cluster snapshot` writes them.

The floor is what merely reading the snapshot (json.load) and writing a plan of the same size
(json.dump of all 1M partitions) costs; the target is at most 3x that floor, with a peak RSS under
2 GB, and moves equal to the lower bound.

Run: python bench/bench_rebalance.py [--topics 100000] [--shapes grow,skewed]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kadmin.model import Broker, ClusterSnapshot, PartitionState
from kadmin.placement import PlacementOptions, place
from kadmin.snapshots import snapshot_to_document
from kadmin.synthetic import synthetic_cluster

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

OLD, NEW = 900, 100


def cluster(shape: str, topics: int) -> ClusterSnapshot:
    """``OLD`` loaded brokers and ``NEW`` empty ones."""
    old = synthetic_cluster(brokers=OLD, topics=topics, partitions=10, replication_factor=3,
                            seed=1)
    assignment, states = old.topics, old.states
    if shape == "grow":
        assignment = place(old.topics, sorted(old.topics),
                           [old.brokers[b] for b in sorted(old.brokers)], PlacementOptions())
        states = {t: {p: PartitionState(r[0], r) for p, r in parts.items()}
                  for t, parts in assignment.items()}
    brokers = {**old.brokers, **{b: Broker(b, f"broker-{b}", 9092) for b in range(OLD, OLD + NEW)}}
    return ClusterSnapshot(brokers, assignment, states, old.controller, old.controller_epoch)


def floor_seconds(snapshot_file: Path, work: Path) -> float:
    """json.load of the snapshot + json.dump of a plan as large (every partition once)."""
    doc = json.loads(snapshot_file.read_text())  # untimed: only the load and the dump count
    plan = {"version": 1, "partitions": [{"topic": t, "partition": int(p), "replicas": r}
                                         for t, parts in doc["topics"].items()
                                         for p, r in parts.items()]}
    del doc
    start = time.perf_counter()
    with snapshot_file.open() as f:
        json.load(f)
    with (work / "floor-dump.json").open("w") as f:
        json.dump(plan, f)
    return time.perf_counter() - start


def run(shape: str, topics: int, work: Path) -> list[str]:
    snapshot_file = work / f"{shape}.json"
    with snapshot_file.open("w") as f:
        json.dump(snapshot_to_document(cluster(shape, topics)), f, separators=(",", ":"))
    plan_file = work / f"{shape}-plan.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kadmin", "plan", "rebalance", "--cluster",
                           str(snapshot_file), "--out", str(plan_file), "--json"],
                          check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    peak_mb = after.ru_maxrss / 1024  # the largest child so far: the runs grow in size
    summary = json.loads(done.stdout)
    floor = floor_seconds(snapshot_file, work)
    ratio = elapsed / floor
    exact = summary["replica_moves"] == summary["lower_bound"]
    verdict = "PASS" if ratio <= 3 and peak_mb < 2048 and exact else "FAIL"
    b, a = summary["before"], summary["after"]
    return [
        f"- {shape}: {topics * 10:,} partitions, RF 3, {OLD + NEW:,} brokers ({NEW} new); "
        f"snapshot {snapshot_file.stat().st_size / 1e6:.0f} MB with states",
        f"  - moves {summary['replica_moves']:,} (lower bound {summary['lower_bound']:,}), "
        f"leader changes {summary['leader_changes']:,}, {summary['partitions']:,} partitions "
        f"in the plan",
        f"  - spreads before -> after: replicas {b['replica_spread']} -> {a['replica_spread']}, "
        f"leaders {b['leader_spread']} -> {a['leader_spread']}, worst topic "
        f"{b['worst_topic_spread']} -> {a['worst_topic_spread']}",
        f"  - `kadmin plan rebalance` end to end: {elapsed:.1f} s ({cpu:.1f} s CPU); floor "
        f"(json.load snapshot + json.dump 1M-entry plan): {floor:.1f} s; ratio {ratio:.2f}x "
        f"(target <= 3x); peak RSS {peak_mb:.0f} MB (target < 2048 MB): **{verdict}**",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--shapes", default="grow,skewed")
    args = parser.parse_args()
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        for shape in args.shapes.split(","):
            lines += run(shape, args.topics, Path(tmp))
            print("\n".join(lines[-4:]), flush=True)
    with open("/proc/loadavg") as f:
        lines.append(f"- load average at the end: {f.read().split()[0]} (other jobs share the "
                     "2 cores; times include them)")
    append_results("plan rebalance, 1M partitions (issue 8)", describe_machine(), lines)


if __name__ == "__main__":
    main()
