"""Benchmark: the time and memory of composing a plan's batches (``kadmin.schedule.compose``,
what ``reassign`` and ``plan report`` run) at 100,000 and 1,000,000 partitions to move over
1,000 brokers, against a floor measured in the same run: sorting the transfers the way the
composer's greedy pass orders them (heaviest first), which no composition can skip.

Target: 1,000,000 partitions composed in a minute or less, memory proportional to the plan.
Cluster and plan as bench/bench_plan_report.py builds them: 10 partitions a topic, RF 3,
1,000 brokers in 10 racks, long-tailed synthetic sizes, one replica of every partition moved
(``synthetic_moves(..., "random")``); batches of 1,000 partitions and 1 MB znodes. Times are
CPU seconds of this process (the machine may be shared); building the plan is not timed.

Run: python bench/bench_compose.py [--partitions 100000,1000000]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from machine import publish  # noqa: E402

from kadmin import schedule, synthetic  # noqa: E402
from kadmin.executor.transfers import limits, transfers  # noqa: E402
from kadmin.sizes import snapshot_sizes  # noqa: E402

TARGET_SECONDS = 60.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", default="100000,1000000")
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    rows = []
    for total in (int(p) for p in args.partitions.split(",")):
        made = time.perf_counter()
        cluster = synthetic.synthetic_cluster(brokers=1000, topics=total // 10, partitions=10,
                                              replication_factor=3, racks=10, seed=1)
        cluster = dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=1))
        cluster, moves = synthetic.synthetic_moves(cluster, "random", total, seed=1)
        ts = transfers(sorted(moves), cluster, snapshot_sizes(cluster))
        del cluster, moves
        made = time.perf_counter() - made
        lim = limits(args.batch_size, 1_000_000)

        start = time.process_time()
        sorted(ts, key=lambda t: (-t.work, -t.size, t.tp))
        floor = time.process_time() - start

        before = peak_mb()
        start, wall = time.process_time(), time.perf_counter()
        composed = schedule.compose(ts, lim)
        seconds, wall = time.process_time() - start, time.perf_counter() - wall
        grown = peak_mb() - before
        verdict = "PASS" if seconds <= TARGET_SECONDS else "FAIL"
        rows.append(f"| {len(ts):,} | {len(composed.batches):,} | "
                    f"{composed.load / composed.bound:.3f}x | {composed.composed} | "
                    f"{floor:.2f} s | **{seconds:.1f} s** ({wall:.1f} s wall) | "
                    f"{seconds / floor:.0f}x | {grown:.0f} MB | {verdict} | {made:.0f} s |")
        print(rows[-1], flush=True)
    publish("schedule.compose at scale, 1,000 brokers", [
        f"- 1,000 brokers in 10 racks, RF 3, 10 partitions a topic, long-tailed synthetic sizes "
        f"(seed 1), one replica of every partition moved; batches of at most "
        f"{args.batch_size:,} partitions and 1 MB znodes; times in CPU seconds of the process; "
        f"floor: sorting the transfers heaviest first (the greedy pass's order); target "
        f"{TARGET_SECONDS:.0f} s at any size",
        "",
        "| partitions to move | batches | duration / bound | composed | floor | compose | "
        "ratio | peak RSS growth | target | plan built in |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows])


if __name__ == "__main__":
    main()
