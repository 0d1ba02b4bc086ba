"""Benchmark: modelled duration / lower bound (docs/execution.md) of consecutive slicing in plan
order against kadmin's composed schedule (``kadmin.schedule.compose``), on add / drain / skew /
random plans with long-tailed sizes, at 10k and 100k partitions.

Clusters are synthetic (30 brokers in 3 racks, RF 3, ``synthetic.synthetic_sizes``: each
topic's typical partition log-normal around 200 MB); plans come from ``synthetic.synthetic_moves``
(a quarter of the partitions move one replica each, or every replica of the drained brokers).
Senders are the current leaders (the first replica in these clusters). The ratio is pure
arithmetic, the same at any throttle; the time column is what composing took here.

Run: python bench/bench_schedule.py [--partitions 10000,100000] [--batch-size 1000]
     [--per-broker 6]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from kadmin import schedule, synthetic
from kadmin.executor.transfers import limits, transfers
from kadmin.sizes import snapshot_sizes

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

BROKERS, RACKS, PARTITIONS_PER_TOPIC, RF = 30, 3, 100, 3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", default="10000,100000")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--per-broker", type=int, default=6,
                        help="also compose with --max-moves-per-broker N (0: not)")
    args = parser.parse_args()
    rows = []
    for total in (int(p) for p in args.partitions.split(",")):
        cluster = synthetic.synthetic_cluster(brokers=BROKERS, topics=total // PARTITIONS_PER_TOPIC,
                                              partitions=PARTITIONS_PER_TOPIC,
                                              replication_factor=RF, racks=RACKS, seed=15)
        cluster = dataclasses.replace(cluster, sizes=synthetic.synthetic_sizes(cluster, seed=15))
        for kind in synthetic.MOVE_KINDS:
            snapshot, moves = synthetic.synthetic_moves(cluster, kind, total // 4, seed=15)
            ts = transfers(moves, snapshot, snapshot_sizes(snapshot))
            row = [f"{total:,}", kind, f"{len(moves):,}"]
            for cap in (None, args.per_broker or None) if args.per_broker else (None,):
                lim = limits(args.batch_size, 1_000_000, max_moves_per_broker=cap)
                base = schedule.consecutive(ts, lim)
                started = time.monotonic()
                composed = schedule.compose(ts, lim)
                seconds = time.monotonic() - started
                row += [f"{len(base.batches)}", f"{base.load / base.bound:.3f}x",
                        f"{len(composed.batches)}", f"**{composed.load / composed.bound:.3f}x**",
                        f"{seconds:.1f} s"]
            print(" | ".join(row), flush=True)
            rows.append(row)
    caps = [""] + ([f" (N={args.per_broker})"] if args.per_broker else [])
    head = ["partitions", "plan", "moves"]
    for cap in caps:
        head += [f"slicing batches{cap}", f"slicing / bound{cap}", f"composed batches{cap}",
                 f"composed / bound{cap}", f"compose time{cap}"]
    lines = [f"- clusters: {BROKERS} brokers in {RACKS} racks, RF {RF}, topics of "
             f"{PARTITIONS_PER_TOPIC} partitions, long-tailed synthetic sizes (seed 15); "
             f"batches of at most {args.batch_size:,} partitions and 1 MB znodes"
             + (f"; N = --max-moves-per-broker {args.per_broker}" if args.per_broker else ""),
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    append_results("schedule: slicing vs composed batches, modelled duration / bound",
                   describe_machine(), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
