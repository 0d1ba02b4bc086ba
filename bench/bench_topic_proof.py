"""Benchmark: is the default objective proven on mid-size clusters?

The default objective of `kadmin plan rebalance` is the fewest moves, then the least worst topic
spread among plans of those moves. Beyond the partition program's size (50,000 partition-broker
pairs) it is proven by the bounds of ``kadmin.balance.spreads`` or by the topic x broker program
of ``kadmin.balance.aggregate``; otherwise the summary says "not proven the least". This runs
``kadmin.balance.rebalance.rebalance`` in process (no JSON) on 20,000-30,000-partition clusters
of every shape: skewed (kadmin's synthetic cluster, brokers added), grown (placed evenly by
Kafka's rule, brokers added), drained (placed evenly, brokers removed), mixed replication
factors, and racks (of equal and unequal size, a new rack, a drained rack member). For each:
moves against the lower bound, the worst topic spread, the least any plan of those moves can
reach as far as kadmin proves, whether that is proven, and the wall and CPU time.

Run: python bench/bench_topic_proof.py [--only "NAME;..."] [--publish]. With ``--publish`` a
section is appended to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kadmin.balance.rebalance import rebalance
from kadmin.balance.table import PartitionTable
from kadmin.model import Broker
from kadmin.placement import PlacementOptions, place
from kadmin.synthetic import synthetic_cluster

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import publish  # noqa: E402

Case = tuple[PartitionTable, list[int], dict[int, str] | None]


def skewed(old: int, new: int, partitions: int, per_topic: int = 10, rf: int = 3) -> Case:
    """kadmin's synthetic cluster on ``old`` brokers, ``new`` empty ones added."""
    c = synthetic_cluster(brokers=old, topics=partitions // per_topic, partitions=per_topic,
                          replication_factor=rf, seed=1)
    return PartitionTable.from_topics(c.topics, sorted(c.topics)), list(range(old + new)), None


def placed(old: int, partitions: int, per_topic: int, rack_of: dict[int, str] | None = None,
           rf: int = 3) -> PartitionTable:
    """Topics placed evenly on ``old`` brokers by Kafka's rule (rack-aware with racks)."""
    c = synthetic_cluster(brokers=old, topics=partitions // per_topic, partitions=per_topic,
                          replication_factor=rf, seed=0)
    brokers = [Broker(b, f"broker-{b}", 9092, rack=None if rack_of is None else rack_of[b])
               for b in range(old)]
    grown = place(c.topics, sorted(c.topics), brokers, PlacementOptions())
    return PartitionTable.from_topics(grown, sorted(grown))


def mixed(old: int, new: int, partitions: int, drained: int = 0) -> Case:
    """Replication factors 1 to 5, a fifth of the partitions each (synthetic, skewed)."""
    grouped: dict[str, dict[int, tuple[int, ...]]] = {}
    for rf in range(1, 6):
        c = synthetic_cluster(brokers=old, topics=partitions // 50, partitions=10,
                              replication_factor=rf, seed=rf, topic_prefix=f"rf{rf}")
        grouped.update(c.topics)
    return (PartitionTable.from_topics(grouped, sorted(grouped)),
            list(range(drained, old + new)), None)


def racks_of(sizes: list[int]) -> dict[int, str]:
    """Brokers numbered rack after rack: ``sizes[i]`` brokers in rack ``r{i}``."""
    rack_of: dict[int, str] = {}
    for i, size in enumerate(sizes):
        rack_of.update({len(rack_of) + j: f"r{i}" for j in range(size)})
    return rack_of


def interleaved(brokers: int, racks: int) -> dict[int, str]:
    return {b: f"r{b % racks}" for b in range(brokers)}


CASES: dict[str, Callable[[], Case]] = {
    "skewed 20+4, 20k": lambda: skewed(20, 4, 20_000),
    "skewed 50+5, 20k": lambda: skewed(50, 5, 20_000),
    "skewed 36+4, 30k": lambda: skewed(36, 4, 30_000),
    "skewed 100+10, 30k": lambda: skewed(100, 10, 30_000),
    "skewed 24-2 drained, 20k": lambda: (skewed(24, 0, 20_000)[0], list(range(2, 24)), None),
    "mixed RF 30+6, 20k": lambda: mixed(30, 6, 20_000),
    "mixed RF 50+5, 20k": lambda: mixed(50, 5, 20_000),
    "mixed RF 40-2 drained, 20k": lambda: mixed(40, 0, 20_000, drained=2),
    "grown 20+4, 20k": lambda: (placed(20, 20_000, 10), list(range(24)), None),
    "grown 50+5, 20k": lambda: (placed(50, 20_000, 10), list(range(55)), None),
    "grown 30+6, 24k, 20 per topic": lambda: (placed(30, 24_000, 20), list(range(36)), None),
    "grown 100+10, 30k": lambda: (placed(100, 30_000, 10), list(range(110)), None),
    "drained 20-2, 20k": lambda: (placed(20, 20_000, 10), list(range(18)), None),
    "drained 50-2, 20k": lambda: (placed(50, 20_000, 10), list(range(48)), None),
    "drained 50-2, 20k, 20 per topic": lambda: (placed(50, 20_000, 20), list(range(48)), None),
    "drained 30-3, 24k, 20 per topic": lambda: (placed(30, 24_000, 20), list(range(27)), None),
    "drained 100-2, 30k": lambda: (placed(100, 30_000, 10), list(range(98)), None),
    # racks
    "racks 7/7/7 + 1 new (8/7/7), skewed 20k": lambda: (
        skewed(21, 1, 20_000)[0], list(range(22)), interleaved(22, 3)),
    "racks 7/7/7 + 1 new (8/7/7), placed 21k": lambda: (
        placed(21, 21_000, 10, interleaved(21, 3)), list(range(22)), interleaved(22, 3)),
    "racks 8/8/8, one drained (7/8/8), placed 24k": lambda: (
        placed(24, 24_000, 10, interleaved(24, 3)), list(range(1, 24)), interleaved(24, 3)),
    "racks 6/6 + new rack of 1, placed 12k": lambda: (
        placed(12, 12_000, 10, racks_of([6, 6])), list(range(13)), racks_of([6, 6, 1])),
    "racks 10x5 + 5 new (11 each), skewed 20k": lambda: (
        skewed(50, 5, 20_000)[0], list(range(55)), interleaved(55, 5)),
    "racks 10/10/10 drained 2 (9/9/10), placed 20k, 20 per topic": lambda: (
        placed(30, 20_000, 20, interleaved(30, 3)), list(range(2, 30)), interleaved(30, 3)),
}


def run(name: str) -> str:
    table, targets, rack_of = CASES[name]()
    wall, cpu = time.perf_counter(), time.process_time()
    result = rebalance(table, targets, rack_of)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    goal = result.topics
    if goal is None:
        verdict, spread, least = "no goal", "-", "-"
    else:
        verdict = "**yes**" if goal.exact else "no"
        spread, least = str(goal.spread), str(goal.least)
    racks = "" if result.racks is None else f" (across racks: {result.racks.across})"
    return (f"| {name} | {len(table):,} | {len(targets)} | {result.replica_moves:,} "
            f"(bound {result.lower_bound:,}){racks} | {spread} | {least} | {verdict} | "
            f"{wall:.1f} s ({cpu:.1f} s CPU) |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="", help="case names separated by ; (default: all)")
    parser.add_argument("--publish", action="store_true",
                        help="append the table to bench/RESULTS.md")
    args = parser.parse_args()
    names = [n for n in CASES if not args.only or n in args.only.split(";")]
    lines = ["| cluster | partitions | targets | moves | worst topic spread | least proven "
             "possible | proven? | time |", "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in names:
        lines.append(run(name))
        print(lines[-1], flush=True)
    with open("/proc/loadavg") as f:
        lines.append(f"\nLoad average at the end: {f.read().split()[0]} (other helpers share "
                     "the 2 cores).")
    if args.publish:
        publish("default objective proven on mid-size clusters",
                lines)


if __name__ == "__main__":
    main()
