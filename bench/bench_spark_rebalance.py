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

``--count-step``: instead, the driver's count step of ``--topic-spread`` at that size
(:func:`kadmin.balance.chunk_topics.least_compatible`: counts per chunk and broker within the chunks'
windows and the brokers' ranges, a circulation over chunks x brokers), in this process: the
cluster cut into the chunks ``spark rebalance --topic-spread`` makes (whole topics, at most
``LIMIT / brokers`` partitions each: 2,500 chunks of 400 at 1M on 1,000 brokers), the replica
rounds run over them with the same functions the tasks run (:class:`kadmin.balance.chunks.Listed`),
then each chunk's windows, then the count step, wall and CPU, next to the replica rounds as a
floor. The tasks' exact programs that follow are timed on a sample of chunks only (2,500 of
them do not fit a shared 2-core machine).
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
from bench_spark import timed, timed_cpu  # noqa: E402
from machine import append_results, describe_machine  # noqa: E402

SIZES = {"100k": 10_000, "1m": 100_000, "10m": 1_000_000}
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


def spark_run(cluster: Path, out: Path) -> tuple[float, float, float, dict]:
    """Wall seconds, peak RSS (MB), CPU seconds of the process tree, and the manifest."""
    shutil.rmtree(out, ignore_errors=True)
    seconds, peak, cpu = timed_cpu([sys.executable, "-m", "kadmin", "spark", "rebalance",
                                    "--cluster", str(cluster), "--master", "local[2]", "--out",
                                    str(out)])
    manifest = json.loads((out / "manifest.json").read_text())
    shutil.rmtree(out, ignore_errors=True)
    return seconds, peak, cpu, manifest


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


def count_step(size: str, variant: str, asked: int, sample: int) -> str:
    """The driver's count step of ``--topic-spread asked`` at ``size`` (see the module
    docstring), as one line for RESULTS.md."""
    from kadmin.balance import evenness
    from kadmin.balance.chunk_topics import least_compatible
    from kadmin.balance.chunks import Listed, plan
    from kadmin.balance.objective import Objective
    from kadmin.balance.part import PRICE_ROUNDS, Context, Even, Price, balanced_ranges
    from kadmin.balance.table import PartitionTable
    from kadmin.synthetic import synthetic_cluster
    assert variant == "skewed", "the count step is measured on the skewed cluster"
    topics = dict(synthetic_cluster(OLD, SIZES[size], PARTITIONS, RF, seed=1).topics)
    targets = tuple(range(OLD + NEW))
    per_chunk = max(1, evenness.LIMIT // len(targets) // PARTITIONS)  # topics per chunk
    names = sorted(topics)
    tables = [PartitionTable.from_topics(topics, names[a:a + per_chunk])
              for a in range(0, len(names), per_chunk)]
    context = Context(targets, Objective(leaders=False))
    parts = Listed(tables, context)
    wall, cpu = time.perf_counter(), time.process_time()
    planned = plan(parts, [p.counts() for p in parts.parts], context, exact_topics=False,
                   certify=False)
    rounds = time.perf_counter() - wall, time.process_time() - cpu
    counts = [p.counts() for p in parts.parts]
    near = [{b: c.replicas.get(b, 0) for b in targets} for c in counts]
    wall, cpu = time.perf_counter(), time.process_time()
    windows = [p.windowed(asked, len(targets)) for p in parts.parts]
    windowed = time.perf_counter() - wall, time.process_time() - cpu
    total: dict[int, int] = {}
    for c in counts:
        for b, n in c.replicas.items():
            total[b] = total.get(b, 0) + n
    wall, cpu = time.perf_counter(), time.process_time()
    spread, chosen = least_compatible(near, windows, balanced_ranges(total, context), asked)
    step = time.perf_counter() - wall, time.process_time() - cpu
    moved = sum(abs(chosen[c][b] - near[c][b]) for c in range(len(near)) for b in targets) // 2
    wall, cpu = time.perf_counter(), time.process_time()
    for c in range(min(sample, len(tables))):
        parts.parts[c].step(Even(spread, chosen[c]), context)
    programs = (time.perf_counter() - wall) / max(1, sample), \
        (time.process_time() - cpu) / max(1, sample)
    prices = {b: 0.01 * (b % 7 - 3) for b in targets}  # some prices, as a round would have
    wall, cpu = time.perf_counter(), time.process_time()
    for c in range(min(sample, len(tables))):
        parts.parts[c].answer(Price(spread, prices), context)
    priced = (time.perf_counter() - wall) / max(1, sample), \
        (time.process_time() - cpu) / max(1, sample)
    return (f"- {size.upper()} {variant}, `--topic-spread {asked}`: {len(names):,} topics x "
            f"{PARTITIONS} partitions, RF {RF}, {len(targets):,} brokers, {len(tables):,} "
            f"chunks of {per_chunk * PARTITIONS} partitions\n"
            f"  - replica rounds over the chunks (in process, the floor): {rounds[0]:.1f} s "
            f"wall, {rounds[1]:.1f} s CPU; {planned.lower_bound:,} moves (lower bound)\n"
            f"  - windows (tasks' work): {windowed[0]:.1f} s wall, {windowed[1]:.1f} s CPU\n"
            f"  - the driver's count step: {step[0]:.2f} s wall, {step[1]:.2f} s CPU "
            f"({step[1] / rounds[1]:.2f}x the rounds' CPU); spread {spread} admitted, "
            f"{moved:,} unit(s) of the rounds' counts moved between chunks\n"
            f"  - each chunk's exact program (sample of {sample}): {programs[0]:.1f} s wall, "
            f"{programs[1]:.1f} s CPU a chunk, so about {programs[1] * len(tables) / 3600:.1f} "
            f"CPU-hours for the {len(tables):,} chunks on the executors\n"
            f"  - one round of prices (sample of {sample}): {priced[0]:.1f} s wall, "
            f"{priced[1]:.1f} s CPU a chunk; at most {PRICE_ROUNDS} rounds where the moves "
            f"exceed the bound: up to {priced[1] * len(tables) * PRICE_ROUNDS / 3600:.1f} "
            f"CPU-hours more")


def certified(manifest: dict) -> str:
    """What the default objective's certificate over the chunks proved (empty without it)."""
    goal = manifest.get("topic_goal") or {}
    if not goal.get("certified"):
        return ""
    return (f"; certificate: no plan of these moves goes below worst topic spread "
            f"{goal['least']} ({'proven' if goal['exact'] else 'not proven'}), "
            f"{goal['chunks_proven']:,} of {goal['chunks']:,} chunks and "
            f"{goal['topics_proven']:,} of {goal['topics']:,} topics at their own bound")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1m,10m", help="comma-separated: 1m, 10m")
    parser.add_argument("--variants", default="new,skewed", help="comma-separated: new, skewed")
    parser.add_argument("--single-max", default="1m",
                        help="largest size also planned by `kadmin plan rebalance`")
    parser.add_argument("--work", type=Path, help="folder for the snapshots (kept; reused)")
    parser.add_argument("--count-step", action="store_true",
                        help="measure the driver's count step of --topic-spread instead")
    parser.add_argument("--topic-spread", type=int, default=1, help="with --count-step")
    parser.add_argument("--sample", type=int, default=3,
                        help="with --count-step: chunks whose exact program is timed")
    args = parser.parse_args()
    if args.count_step:
        lines = [count_step(size, variant, args.topic_spread, args.sample)
                 for size in args.sizes.split(",") for variant in args.variants.split(",")]
        print("\n".join(lines), flush=True)
        append_results("kadmin spark rebalance --topic-spread: the driver's count step",
                       describe_machine(), lines)
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="kadmin-bench-spark-rebalance-"))
    work.mkdir(parents=True, exist_ok=True)
    lines = []
    try:
        for size in args.sizes.split(","):
            for variant in args.variants.split(","):
                cluster, generated = snapshot_dir(work, size, variant)
                partitions = SIZES[size] * PARTITIONS
                seconds, peak, cpu, manifest = spark_run(cluster, work / "out")
                line = (f"- {size.upper()} {variant}: {SIZES[size]:,} topics x {PARTITIONS} = "
                        f"{partitions:,} partitions, RF {RF}, {OLD + NEW:,} brokers ({NEW} new)"
                        + (f"; snapshot generated in {generated:.0f} s" if generated else "")
                        + f"\n  - `kadmin spark rebalance` local[2]: {seconds:.1f} s "
                        f"({cpu:.0f} s CPU), peak RSS of the process tree {peak:.0f} MB, "
                        f"{manifest['rounds']} rounds; " + describe(manifest)
                        + certified(manifest))
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
