"""Benchmark: `kadmin plan generate` on 1,000,000 partitions, end to end through the CLI.

Synthetic snapshot: 100,000 topics x 10 partitions, RF 3, 1,000 brokers. The floor is what merely
reading the snapshot (json.load) and writing a plan of the same size (json.dump) costs; the target
is at most 3x that floor with a peak RSS under 2 GB.

Run: python bench/bench_plan_generate.py [--topics 100000] [--partitions 10] [--brokers 1000]
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

from kadmin.snapshots import snapshot_to_document
from kadmin.synthetic import synthetic_cluster

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402


def floor_seconds(snapshot_file: Path, plan_file: Path) -> float:
    """json.load of the snapshot + json.dump of a plan of the same size: the unavoidable I/O."""
    plan = json.loads(plan_file.read_text())  # untimed: only the snapshot load and the dump count
    start = time.perf_counter()
    with snapshot_file.open() as f:
        json.load(f)
    with (plan_file.parent / "floor-dump.json").open("w") as f:
        json.dump(plan, f)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--brokers", type=int, default=1_000)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--strategy", default="roundrobin")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        work = Path(tmp)
        snapshot_file = work / "cluster.json"
        snapshot = synthetic_cluster(brokers=args.brokers, topics=args.topics,
                                     partitions=args.partitions,
                                     replication_factor=args.replication_factor, seed=1)
        with snapshot_file.open("w") as f:
            json.dump(snapshot_to_document(snapshot), f, separators=(",", ":"))
        del snapshot
        plan_file = work / "plan.json"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kadmin", "plan", "generate",
                        "--cluster", str(snapshot_file), "--all-topics",
                        "--strategy", args.strategy, "--out", str(plan_file)],
                       check=True, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        floor = floor_seconds(snapshot_file, plan_file)
        moved = len(json.loads(plan_file.read_text())["partitions"])
        size_mb = snapshot_file.stat().st_size / 1e6

    partitions = args.topics * args.partitions
    ratio = elapsed / floor
    verdict = "PASS" if ratio <= 3 and peak_mb < 2048 else "FAIL"
    lines = [
        f"- input: {args.topics:,} topics x {args.partitions} partitions = {partitions:,} "
        f"partitions, RF {args.replication_factor}, {args.brokers:,} brokers, strategy "
        f"{args.strategy}; snapshot {size_mb:.0f} MB; {moved:,} partitions in the plan",
        f"- `kadmin plan generate` end to end (process start to exit): {elapsed:.2f} s",
        f"- floor (json.load snapshot + json.dump plan): {floor:.2f} s",
        f"- ratio: {ratio:.2f}x (target <= 3x); peak RSS {peak_mb:.0f} MB (target < 2048 MB): "
        f"**{verdict}**",
    ]
    append_results("plan generate, 1M partitions", describe_machine(), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
