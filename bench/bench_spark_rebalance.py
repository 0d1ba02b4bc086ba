"""Benchmark: `kadmin spark rebalance` on 1M and 10M partitions, end to end through the CLI.

Clusters: topics x 10 partitions, RF 3, 1,000 registered brokers of which the last 100 were just
added and hold nothing. Two variants of the other 900:
- ``new``: balanced (round-robin: every old broker holds the same number of replicas), so the
  plan fills the new brokers: moves = 10% of the replicas;
- ``skewed``: kadmin.synthetic's clusters (each topic created when the cluster had fewer brokers:
  low ids hold several times the average), so the plan also evens out the old brokers.
1M is 100,000 topics, 10M 1,000,000. Each is rebalanced by `kadmin spark rebalance --master
local[2]` and, up to ``--single-max``, by `kadmin plan rebalance` on one machine; both report
moves against the lower bound and the spreads. Target: 10M in under 15 minutes on 2 cores,
moves equal to the bound, spreads of at most 1.

Run: python bench/bench_spark_rebalance.py [--sizes 1m,10m] [--variants new,skewed] [--work DIR]
Snapshots are generated once into --work (default: a temp folder) and reused when present.
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from kadmin import snapshots
from kadmin.model import Broker, TopicAssignment
from kadmin.synthetic import write_synthetic_dir

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_spark import timed  # noqa: E402
from machine import append_results, describe_machine  # noqa: E402

SIZES = {"1m": 100_000, "10m": 1_000_000}
"""Topics of 10 partitions per size."""
PARTITIONS = 10
RF = 3
OLD, NEW = 900, 100
TARGET_10M_SECONDS = 15 * 60


def _round_robin(topics: int) -> Iterator[tuple[str, TopicAssignment, dict]]:
    counter = 0
    for i in range(topics):
        parts = {p: tuple((counter + p + j) % OLD for j in range(RF)) for p in range(PARTITIONS)}
        counter += PARTITIONS
        yield f"topic-{i:07d}", parts, {}


def snapshot_dir(work: Path, size: str, variant: str) -> tuple[Path, float | None]:
    """The snapshot folder, generated unless a previous run left it; generation time."""
    path = work / f"rebalance-{variant}-{size}"
    if (path / "topics.jsonl").exists():
        return path, None
    start = time.perf_counter()
    brokers = {b: Broker(b, host=f"broker-{b}", port=9092) for b in range(OLD + NEW)}
    if variant == "new":
        snapshots.write_snapshot_dir(path, brokers, _round_robin(SIZES[size]))
    else:  # the synthetic cluster of the old brokers, then every broker registered
        write_synthetic_dir(path, brokers=OLD, topics=SIZES[size], partitions=PARTITIONS,
                            replication_factor=RF, seed=1)
        doc = {str(b): {"host": x.host, "port": x.port} for b, x in brokers.items()}
        (path / "brokers.json").write_text(json.dumps(doc))
    return path, time.perf_counter() - start


def spark_run(cluster: Path, out: Path) -> tuple[float, float, dict]:
    shutil.rmtree(out, ignore_errors=True)
    seconds, peak = timed([sys.executable, "-m", "kadmin", "spark", "rebalance", "--cluster",
                           str(cluster), "--master", "local[2]", "--out", str(out)])
    manifest = json.loads((out / "manifest.json").read_text())
    shutil.rmtree(out, ignore_errors=True)
    return seconds, peak, manifest


def single_run(cluster: Path, plan: Path) -> tuple[float, float, dict]:
    """`kadmin plan rebalance --json`, timed the same way (its JSON summary kept in a file)."""
    summary = plan.with_suffix(".summary.json")
    with summary.open("wb") as handle:
        seconds, peak = timed([sys.executable, "-m", "kadmin", "plan", "rebalance", "--cluster",
                               str(cluster), "--out", str(plan), "--force", "--json"], handle)
    figures = json.loads(summary.read_text())
    for path in (plan, summary, plan.with_name(plan.stem + ".rollback.json")):
        path.unlink(missing_ok=True)
    return seconds, peak, figures


def describe(figures: dict) -> str:
    before, after = figures["before"], figures["after"]
    return (f"{figures['replica_moves']:,} moves (lower bound {figures['lower_bound']:,}), "
            f"{figures['leader_changes']:,} leader changes; replica spread "
            f"{before['replica_spread']:,} -> {after['replica_spread']}, leader spread "
            f"{before['leader_spread']:,} -> {after['leader_spread']}, worst topic spread "
            f"{before['worst_topic_spread']} -> {after['worst_topic_spread']}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1m,10m", help="comma-separated: 1m, 10m")
    parser.add_argument("--variants", default="new,skewed", help="comma-separated: new, skewed")
    parser.add_argument("--single-max", default="1m",
                        help="largest size also planned by `kadmin plan rebalance`")
    parser.add_argument("--work", type=Path, help="folder for the snapshots (kept; reused)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kadmin-bench-spark-rebalance-"))
    work.mkdir(parents=True, exist_ok=True)
    lines = []
    try:
        for size in args.sizes.split(","):
            for variant in args.variants.split(","):
                cluster, generated = snapshot_dir(work, size, variant)
                partitions = SIZES[size] * PARTITIONS
                seconds, peak, manifest = spark_run(cluster, work / "out")
                line = (f"- {size.upper()} {variant}: {SIZES[size]:,} topics x {PARTITIONS} = "
                        f"{partitions:,} partitions, RF {RF}, {OLD + NEW:,} brokers ({NEW} new)"
                        + (f"; snapshot generated in {generated:.0f} s" if generated else "")
                        + f"\n  - `kadmin spark rebalance` local[2]: {seconds:.1f} s, peak RSS "
                        f"of the process tree {peak:.0f} MB, {manifest['rounds']} rounds; "
                        + describe(manifest))
                if size == "10m":
                    ok = (seconds < TARGET_10M_SECONDS
                          and manifest["replica_moves"] == manifest["lower_bound"]
                          and manifest["after"]["replica_spread"] <= 1
                          and manifest["after"]["leader_spread"] <= 1)
                    line += " — target (< 15 min, moves = bound, spreads <= 1): " + (
                        "PASS" if ok else "FAIL")
                if SIZES[size] <= SIZES[args.single_max]:
                    single_s, single_mb, figures = single_run(cluster, work / "single.json")
                    line += (f"\n  - `kadmin plan rebalance` (one machine): {single_s:.1f} s, "
                             f"peak RSS {single_mb:.0f} MB; " + describe(figures)
                             + f"\n  - Spark / one machine: {seconds / single_s:.2f}x the time")
                print(line, flush=True)
                lines.append(line)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    append_results("kadmin spark rebalance", describe_machine(), lines)


if __name__ == "__main__":
    main()
