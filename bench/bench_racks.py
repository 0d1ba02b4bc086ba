"""Benchmark: `kadmin plan rebalance` with racks kept exactly, end to end through the CLI.

Three shapes, each planned rack-aware and with ``--disable-rack-aware`` on the same snapshot:

- ``expand``: 21 brokers in 3 racks (broker b in rack b % 3), broker 20 new, 100 topics of RF 3,
  each partition on three consecutive brokers of 0..19 (so a tenth span only two racks: every
  other partition may move only inside its racks, and the racks cost moves over the rack-free
  bound);
- ``unequal``: the same on 23 brokers, 20..22 new, racks of 8/8/7;
- ``new-rack``: 18 brokers in racks r0..r2 (b % 3), then a rack r3 of three new brokers;
- the mid-size clusters (20,000 partitions, 10 per topic) that an earlier round left "not
  proven" (``--mid``): kadmin's synthetic (skewed) cluster or Kafka's placement of it, in racks
  of 6/5/4; 5/5/5 and a new rack of one; RF 2 in racks 4/4/4 with one broker drained; RF 2 in
  racks 4/4/3; RF 2 in racks 5/5/5 with two new brokers.

Each row: moves, the printed lower bound (and the rack-free one), worst topic spread before ->
after, the least any plan of those moves reaches as proven, time rack-aware / rack-free and
their ratio (the target: within 2x at 50,000 and 1,000,000), peak RSS of the rack-aware run.

Run: python bench/bench_racks.py [--partitions 5000,50000] [--shapes expand,unequal,new-rack]
[--mid all|none|NAME;NAME].
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kadmin.model import Broker, ClusterSnapshot, PartitionState
from kadmin.placement import PlacementOptions, place
from kadmin.snapshots import snapshot_to_document
from kadmin.synthetic import synthetic_cluster

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

TOPICS = 100
SHAPES = {"expand": (20, 21, 3), "unequal": (20, 23, 3), "new-rack": (18, 21, 4)}
"""Per shape: the loaded brokers (0..n-1), all brokers, racks (broker b in rack b % 3 for the
first three racks; with four, brokers from 18 on form rack r3)."""


def cluster(shape: str, partitions: int) -> ClusterSnapshot:
    loaded, everyone, racks = SHAPES[shape]
    rnd = random.Random(partitions)
    topics = {}
    states = {}
    for t in range(TOPICS):
        offset = rnd.randrange(loaded)
        name = f"t{t:03d}"
        topics[name] = {p: tuple((offset + p + k) % loaded for k in range(3))
                        for p in range(partitions // TOPICS)}
        states[name] = {p: PartitionState(r[0], r) for p, r in topics[name].items()}
    brokers = {b: Broker(b, f"broker-{b}", 9092,
                         rack=f"r{3 if racks == 4 and b >= loaded else b % 3}")
               for b in range(everyone)}
    return ClusterSnapshot(brokers, topics, states, 0, 1)


def by_racks(sizes: list[int]) -> dict[int, str]:
    """Brokers numbered rack after rack: ``sizes[i]`` brokers in rack ``r{i}``."""
    return {b: f"r{i}" for i, size in enumerate(sizes)
            for b in range(sum(sizes[:i]), sum(sizes[:i]) + size)}


def interleaved(brokers: int) -> dict[int, str]:
    return {b: f"r{b % 3}" for b in range(brokers)}


def skewed(old: int, rf: int = 3) -> dict[str, dict[int, tuple[int, ...]]]:
    """kadmin's synthetic cluster on ``old`` brokers: 2,000 topics of 10 partitions."""
    return synthetic_cluster(brokers=old, topics=2_000, partitions=10, replication_factor=rf,
                             seed=1).topics


def placed(old: int, rack_of: dict[int, str], rf: int) -> dict[str, dict[int, tuple[int, ...]]]:
    """The synthetic cluster's topics placed again by Kafka's rule, rack-aware."""
    topics = synthetic_cluster(brokers=old, topics=2_000, partitions=10,
                               replication_factor=rf, seed=0).topics
    return place(topics, sorted(topics), [Broker(b, f"broker-{b}", 9092, rack=rack_of[b])
                                          for b in range(old)], PlacementOptions())


MID: dict[str, Callable[[], tuple[dict[str, dict[int, tuple[int, ...]]], dict[int, str],
                                    list[int]]]] = {
    "skewed, racks 6/5/4": lambda: (skewed(15), by_racks([6, 5, 4]), list(range(15))),
    "skewed, racks 5/5/5 + new rack of 1": lambda: (
        skewed(15), by_racks([5, 5, 5, 1]), list(range(16))),
    "placed RF 2, racks 4/4/4, one drained": lambda: (
        placed(12, interleaved(12), 2), interleaved(12), list(range(1, 12))),
    "skewed RF 2, racks 4/4/3": lambda: (skewed(11, 2), by_racks([4, 4, 3]), list(range(11))),
    "placed RF 2, racks 5/5/5 + 2 new": lambda: (
        placed(15, interleaved(15), 2), interleaved(17), list(range(17))),
}
"""The mid-size clusters: topics, the rack of every broker, the targets."""


def plan(snapshot_file: Path, work: Path, *flags: str) -> tuple[dict, float, float]:
    """One `kadmin plan rebalance` in a child process: its JSON summary, wall seconds and the
    largest child's peak RSS (MB) so far."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kadmin", "plan", "rebalance", "--cluster",
                           str(snapshot_file), "--out", str(work / "plan.json"), "--force",
                           "--json", *flags], check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    return (json.loads(done.stdout), elapsed,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)


def run(shape: str, partitions: int, work: Path, snapshot: ClusterSnapshot | None = None,
        flags: tuple[str, ...] = ()) -> str:
    snapshot_file = work / "cluster.json"
    with snapshot_file.open("w") as f:
        json.dump(snapshot_to_document(snapshot or cluster(shape, partitions)), f,
                  separators=(",", ":"))
    aware, aware_s, rss = plan(snapshot_file, work, *flags)
    free, free_s, _ = plan(snapshot_file, work, "--disable-rack-aware", *flags)
    goal = aware.get("topic_goal") or {}
    racks = aware.get("racks") or {}
    return (f"| {shape} | {partitions:,} | {aware['replica_moves']:,} | "
            f"{aware['lower_bound']:,} ({racks.get('rack_free_bound', '-')}) | "
            f"{aware['before']['worst_topic_spread']} -> {aware['after']['worst_topic_spread']}"
            f" | {goal.get('least', '-')}{'' if goal.get('exact') else ' (not proven)'} | "
            f"{free['replica_moves']:,} / {free['after']['worst_topic_spread']} | "
            f"{aware_s:.1f} s / {free_s:.1f} s ({aware_s / free_s:.2f}x) | {rss:,.0f} MB |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", default="5000,50000")
    parser.add_argument("--shapes", default="expand,unequal,new-rack")
    parser.add_argument("--mid", default="all", help="the mid-size clusters: all, none, or "
                        "names separated by ';'")
    args = parser.parse_args()
    mid = [] if args.mid == "none" else list(MID) if args.mid == "all" else args.mid.split(";")
    lines = ["| shape | partitions | moves | lower bound (rack-free) | worst topic spread "
             "before -> after | least reachable at those moves | rack-free moves / spread | "
             "time rack-aware / rack-free | peak RSS |", "|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        for shape in args.shapes.split(","):
            for n in (int(x) for x in args.partitions.split(",")):
                lines.append(run(shape, n, Path(tmp)))
                print(lines[-1], flush=True)
        for name in mid:
            topics, rack_of, targets = MID[name]()
            brokers = {b: Broker(b, f"broker-{b}", 9092, rack=r) for b, r in rack_of.items()}
            states = {t: {p: PartitionState(r[0], r) for p, r in parts.items()}
                      for t, parts in topics.items()}
            lines.append(run(name, sum(map(len, topics.values())), Path(tmp),
                             ClusterSnapshot(brokers, topics, states, 0, 1),
                             ("--brokers", ",".join(map(str, targets)))))
            print(lines[-1], flush=True)
    with open("/proc/loadavg") as f:
        lines.append(f"\nLoad average at the end: {f.read().split()[0]} (other jobs share the "
                     "2 cores; times include them).")
    append_results("plan rebalance with racks kept exactly (class program)", describe_machine(),
                   lines)


if __name__ == "__main__":
    main()
