"""Benchmark: racks that cannot be balanced as one cluster.

Racks a {0..4}, b {5,6} and a new rack c {7} with one broker; every partition (RF 2) has one
replica in a and one in b, placed at random. A replica may leave a or b for c (the partition
keeps two racks), never go between a and b (it would lose one), so rack a cannot gain its
share and no plan balances every broker. What the rack-aware plan reaches is held to the
rack-level program's least spread and fewest moves (``kadmin.balance.racks.rack_level``), and
timed against the same cluster planned without racks (its floor here: the fastest plan of the
same size). In process (``kadmin.balance.rebalance.rebalance``), goals off and on.

Run: python bench/bench_racks_blocked.py [--partitions 20000,200000]. Appends a section to
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from bench.machine import publish
from kadmin.balance.rebalance import Rebalance, rebalance
from kadmin.balance.table import PartitionTable
from kadmin.model import Replicas

RACKS = {b: "a" for b in range(5)} | {5: "b", 6: "b", 7: "c"}


def blocked(partitions: int) -> PartitionTable:
    """The cluster of the module docstring, 100 partitions a topic."""
    rnd = random.Random(partitions)
    topics: list[tuple[str, dict[int, Replicas]]] = [
        (f"t{t:05d}", {p: (rnd.randrange(5), 5 + rnd.randrange(2)) for p in range(100)})
        for t in range(partitions // 100)]
    return PartitionTable.of(topics)


def timed(table: PartitionTable, racks: dict[int, str] | None, even: bool
          ) -> tuple[float, float, Rebalance]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = rebalance(table, list(RACKS), racks, even_topics=even)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def run(partitions: int) -> list[str]:
    table = blocked(partitions)
    lines = [f"- {partitions:,} partitions (RF 2) over racks a 5 / b 2 / c 1 (new), every "
             "partition on a and b"]
    for even in (False, True):
        wall, cpu, result = timed(table, RACKS, even)
        free_wall, free_cpu, _ = timed(table, None, even)
        after = Counter(b for i, r in enumerate(table.replicas)
                        for b in result.final.get(i, r))
        racks = result.racks
        assert racks is not None
        lines.append(
            f"  - goals {'on' if even else 'off'}: moves {result.replica_moves:,} (lower bound "
            f"{result.lower_bound:,}, rack-free bound {racks.rack_free_bound:,}); balanced "
            f"across racks: {racks.across}, spread {max(after.values()) - min(after.values())}"
            f" (the rule's least: {racks.spread}, proven: {racks.proven}); broker 7 ends with "
            f"{after[7]:,}; per broker {[after[b] for b in sorted(RACKS)]}\n"
            f"    rack-aware {wall:.1f} s ({cpu:.1f} s CPU) against without racks {free_wall:.1f}"
            f" s ({free_cpu:.1f} s CPU): ratio {wall / free_wall:.2f}x (CPU "
            f"{cpu / free_cpu:.2f}x)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", default="20000,200000")
    args = parser.parse_args()
    lines: list[str] = []
    for n in (int(x) for x in args.partitions.split(",")):
        lines += run(n)
    publish("racks that cannot balance as one cluster", lines)


if __name__ == "__main__":
    main()
