"""Benchmark: `kadmin plan rebalance` on 1,000,000 partitions, end to end through the CLI.

100,000 topics x 10 partitions, RF 3, 1,000 brokers of which 100 were just added (they hold
nothing), in three shapes: ``grow``, the 900 old brokers balanced (as a previous `plan generate`
leaves them); ``skewed``, kadmin's synthetic cluster whose topics were created while the
cluster grew; ``racks``, the skewed cluster with broker b in rack b % 3, so the new brokers
leave the racks unequal (334/333/333): rack-aware planning, balanced across the racks where
no partition loses a rack. Snapshots carry every partition's state, as `kadmin cluster
snapshot` writes them. Each shape runs with the goals on (the default objective: fewest moves,
then least worst topic spread) and off (``--no-even-topics``: fewest moves and balanced brokers
only).

The floor is what merely reading the snapshot (json.load) and writing a plan of the same size
(json.dump of all 1M partitions) costs. Targets, for every shape and both goals: at most 3x that
floor, a peak RSS under 2 GB, and moves equal to the lower bound.

``racks-50k``: 50,000 partitions on 21 brokers in 3 racks of 7, one broker added
(racks of 8/7/7), planned rack-aware and with ``--disable-rack-aware``; the target is the
rack-aware plan within 3x the time of the rack-free one (it was 462 s against 4.8 s), moves at
the bound.

Run: python bench/bench_rebalance.py [--topics 100000] [--shapes grow,skewed,racks,racks-50k]
[--goals on,off]. Appends a section to bench/RESULTS.md.
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


RACKS = 3


def cluster(shape: str, topics: int, old_count: int = OLD, new_count: int = NEW
            ) -> ClusterSnapshot:
    """``old_count`` loaded brokers and ``new_count`` empty ones (with racks, broker b in rack
    ``r{b % 3}``)."""
    racks = RACKS if shape.startswith("racks") else 0
    old = synthetic_cluster(brokers=old_count, topics=topics, partitions=10,
                            replication_factor=3, racks=racks, seed=1)
    assignment, states = old.topics, old.states
    if shape == "grow":
        assignment = place(old.topics, sorted(old.topics),
                           [old.brokers[b] for b in sorted(old.brokers)], PlacementOptions())
        states = {t: {p: PartitionState(r[0], r) for p, r in parts.items()}
                  for t, parts in assignment.items()}
    brokers = {**old.brokers, **{
        b: Broker(b, f"broker-{b}", 9092, rack=f"r{b % racks}" if racks else None)
        for b in range(old_count, old_count + new_count)}}
    return ClusterSnapshot(brokers, assignment, states, old.controller, old.controller_epoch)


def floor_seconds(snapshot_file: Path, work: Path) -> tuple[float, float]:
    """json.load of the snapshot + json.dump of a plan as large (every partition once): wall
    and CPU seconds (the CPU ratio is the one the other jobs sharing the cores disturb least)."""
    doc = json.loads(snapshot_file.read_text())  # untimed: only the load and the dump count
    plan = {"version": 1, "partitions": [{"topic": t, "partition": int(p), "replicas": r}
                                         for t, parts in doc["topics"].items()
                                         for p, r in parts.items()]}
    del doc
    start, cpu = time.perf_counter(), time.process_time()
    with snapshot_file.open() as f:
        json.load(f)
    with (work / "floor-dump.json").open("w") as f:
        json.dump(plan, f)
    return time.perf_counter() - start, time.process_time() - cpu


def plan(snapshot_file: Path, plan_file: Path, *flags: str) -> tuple[dict, float, float, float]:
    """One `kadmin plan rebalance` in a child process: its summary, wall and CPU seconds, and
    the peak RSS (MB) of the largest child so far (the runs grow in size)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kadmin", "plan", "rebalance", "--cluster",
                           str(snapshot_file), "--out", str(plan_file), "--force", "--json",
                           *flags], check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return json.loads(done.stdout), elapsed, cpu, after.ru_maxrss / 1024


GOAL_FLAGS = {"on": (), "off": ("--no-even-topics",)}


def write_snapshot(snapshot: ClusterSnapshot, path: Path) -> Path:
    with path.open("w") as f:
        json.dump(snapshot_to_document(snapshot), f, separators=(",", ":"))
    return path


def spreads(summary: dict) -> str:
    b, a = summary["before"], summary["after"]
    return (f"spreads before -> after: replicas {b['replica_spread']} -> {a['replica_spread']}, "
            f"leaders {b['leader_spread']} -> {a['leader_spread']}, worst topic "
            f"{b['worst_topic_spread']} -> {a['worst_topic_spread']}")


def run(shape: str, topics: int, goals: list[str], work: Path) -> list[str]:
    snapshot_file = write_snapshot(cluster(shape, topics), work / f"{shape}.json")
    lines = [f"- {shape}: {topics * 10:,} partitions, RF 3, {OLD + NEW:,} brokers ({NEW} new"
             + (", racks of 334/333/333" if shape == "racks" else "")
             + f"); snapshot {snapshot_file.stat().st_size / 1e6:.0f} MB with states"]
    runs = [(goal, *plan(snapshot_file, work / f"{shape}-{goal}-plan.json", *GOAL_FLAGS[goal]))
            for goal in goals]
    floor, floor_cpu = floor_seconds(snapshot_file, work)
    for goal, summary, elapsed, cpu, peak_mb in runs:
        ratio = elapsed / floor
        exact = summary["replica_moves"] == summary["lower_bound"]
        verdict = "PASS" if ratio <= 3 and peak_mb < 2048 and exact else "FAIL"
        racks = summary.get("racks")
        lines += [
            f"  - goals {goal}: moves {summary['replica_moves']:,} (lower bound "
            f"{summary['lower_bound']:,}), leader changes {summary['leader_changes']:,}, "
            f"{summary['partitions']:,} partitions in the plan; {spreads(summary)}"
            + ("" if racks is None else f"; racks balanced across: {racks['across']}"),
            f"    `kadmin plan rebalance` end to end: {elapsed:.1f} s ({cpu:.1f} s CPU); floor "
            f"(json.load snapshot + json.dump 1M-entry plan): {floor:.1f} s ({floor_cpu:.1f} s "
            f"CPU); ratio {ratio:.2f}x (CPU {cpu / floor_cpu:.2f}x; target <= 3x); peak RSS "
            f"{peak_mb:.0f} MB (target < 2048 MB): **{verdict}**"]
    return lines


def run_racks_50k(goals: list[str], work: Path) -> list[str]:
    """50,000 partitions, 21 brokers in 3 racks of 7 plus one new: rack-aware against
    ``--disable-rack-aware`` on the same cluster."""
    snapshot_file = write_snapshot(cluster("racks-50k", 5000, 21, 1), work / "racks-50k.json")
    lines = ["- racks-50k: 50,000 partitions, RF 3, 22 brokers in racks of 8/7/7 (one new)"]
    for goal in goals:
        aware = plan(snapshot_file, work / "r50k-aware.json", *GOAL_FLAGS[goal])
        free = plan(snapshot_file, work / "r50k-free.json", *GOAL_FLAGS[goal],
                    "--disable-rack-aware")
        ratio = aware[1] / free[1]
        cpu_ratio = aware[2] / free[2]
        summary = aware[0]
        exact = summary["replica_moves"] == summary["lower_bound"]
        verdict = "PASS" if ratio <= 3 and exact else "FAIL"
        racks = summary.get("racks") or {}
        lines += [
            f"  - goals {goal}: rack-aware moves {summary['replica_moves']:,} (lower bound "
            f"{summary['lower_bound']:,}, rack-free bound {racks.get('rack_free_bound')}, "
            f"balanced across racks: {racks.get('across')}), {spreads(summary)}; without "
            f"racks moves {free[0]['replica_moves']:,}",
            f"    rack-aware {aware[1]:.1f} s ({aware[2]:.1f} s CPU) against "
            f"--disable-rack-aware {free[1]:.1f} s ({free[2]:.1f} s CPU): ratio {ratio:.2f}x "
            f"(CPU {cpu_ratio:.2f}x; target <= 3x): **{verdict}**"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--shapes", default="grow,skewed,racks,racks-50k")
    parser.add_argument("--goals", default="on,off",
                        help="on: the default objective (topics evened); off: --no-even-topics")
    args = parser.parse_args()
    goals = args.goals.split(",")
    if not set(goals) <= set(GOAL_FLAGS):
        parser.error(f"--goals: on, off or both, got {args.goals}")
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        for shape in args.shapes.split(","):
            found = (run_racks_50k(goals, Path(tmp)) if shape == "racks-50k"
                     else run(shape, args.topics, goals, Path(tmp)))
            lines += found
            print("\n".join(found), flush=True)
    with open("/proc/loadavg") as f:
        lines.append(f"- load average at the end: {f.read().split()[0]} (other jobs share the "
                     "2 cores; times include them)")
    append_results("plan rebalance, 1M partitions, goals on and off, racks",
                   describe_machine(), lines)


if __name__ == "__main__":
    main()
