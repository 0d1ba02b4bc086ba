"""Benchmark: `kadmin plan demote` on 1,000,000 partitions, end to end through the CLI.

100,000 topics x 10 partitions, RF 3, 1,000 brokers, in three shapes: ``kafka`` (placed by
Kafka's rule: balanced, followers spread, a spread of 1 reachable in one flow), ``ring`` (the
round-robin rule, each broker's followers always the next two: a spread of 1 takes handovers
all around the ring, the worst case) and ``skewed`` (kadmin's synthetic cluster: a spread of 1
is out of reach, so the least spread is searched for). Two brokers are demoted.

The floor is what merely reading the snapshot (json.load) and writing a plan of the same size
costs; the target is at most 3x that floor, with a peak RSS under 2 GB.

Run: python bench/bench_demote.py [--topics 100000] [--shapes kafka,skewed,ring]
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
from kadmin.placement import PlacementOptions, Strategy, place
from kadmin.snapshots import snapshot_to_document
from kadmin.synthetic import synthetic_cluster

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_rebalance import floor_seconds  # noqa: E402
from machine import append_results, describe_machine  # noqa: E402

DEMOTED = "0,517"
BROKERS = 1000


def cluster(shape: str, topics: int) -> ClusterSnapshot:
    base = synthetic_cluster(brokers=BROKERS, topics=topics, partitions=10, replication_factor=3,
                             seed=1)
    if shape == "skewed":
        return base
    strategy = Strategy.KAFKA if shape == "kafka" else Strategy.ROUNDROBIN
    brokers = [Broker(b, f"broker-{b}", 9092) for b in range(BROKERS)]
    assignment = place(base.topics, sorted(base.topics), brokers,
                       PlacementOptions(strategy=strategy))
    states = {t: {p: PartitionState(r[0], r) for p, r in parts.items()}
              for t, parts in assignment.items()}
    return ClusterSnapshot({b.id: b for b in brokers}, assignment, states, base.controller,
                           base.controller_epoch)


def run(shape: str, topics: int, work: Path, minimal: list[str]) -> list[str]:
    snapshot_file = work / f"{shape}.json"
    with snapshot_file.open("w") as f:
        json.dump(snapshot_to_document(cluster(shape, topics)), f, separators=(",", ":"))
    plan_file = work / f"{shape}-demote{len(minimal)}.json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kadmin", "plan", "demote", "--brokers", DEMOTED,
                           "--cluster", str(snapshot_file), "--out", str(plan_file), "--json",
                           *minimal], check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    peak_mb = after.ru_maxrss / 1024
    summary = json.loads(done.stdout)
    floor = floor_seconds(snapshot_file, work)
    ratio = elapsed / floor
    off = sum(d["leaders_after"] for d in summary["demoted_leaders"])
    verdict = "PASS" if ratio <= 3 and peak_mb < 2048 and off == 0 else "FAIL"
    return [
        f"- {shape}{' ' + minimal[0] if minimal else ''}: {topics * 10:,} partitions, RF 3, "
        f"demoting {DEMOTED}; "
        f"{len(summary['targets']):,} other brokers hold replicas",
        f"  - leader changes {summary['leader_changes']:,}; leader spread over the others "
        f"{summary['leader_spread_before']} -> {summary['leader_spread_after']} (least "
        f"reachable {summary['least_spread']}); leaderships left on the demoted brokers {off}",
        f"  - `kadmin plan demote` end to end: {elapsed:.1f} s ({cpu:.1f} s CPU); floor "
        f"(json.load snapshot + json.dump 1M-entry plan): {floor:.1f} s; ratio {ratio:.2f}x "
        f"(target <= 3x); peak RSS {peak_mb:.0f} MB (target < 2048 MB): **{verdict}**",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--shapes", default="kafka,skewed")
    args = parser.parse_args()
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        for shape in args.shapes.split(","):
            for minimal in ([], ["--minimal"]):
                lines += run(shape, args.topics, Path(tmp), minimal)
                print("\n".join(lines[-3:]), flush=True)
    with open("/proc/loadavg") as f:
        lines.append(f"- load average at the end: {f.read().split()[0]} (other jobs share the "
                     "2 cores; times include them)")
    append_results("plan demote, 1M partitions", describe_machine(), lines)


if __name__ == "__main__":
    main()
