"""Benchmark: `kadmin spark plan` on 1M, 3M and 10M partitions, end to end through the CLI.

Synthetic snapshot folders (``write_synthetic_dir``): topics x 10 partitions, RF 3, 1,000
brokers; 1M is 100,000 topics, 3M 300,000 and 10M 1,000,000. Each size is planned by
`kadmin spark plan` (local[*], Spark's default driver memory) and, up to ``--single-max``, by
the single-machine `kadmin plan generate`; when both ran, the concatenated Spark batches must
be exactly the single-machine plan. Target: 10M partitions in under 15 minutes on 2 cores.

Run: python bench/bench_spark.py [--sizes 1m,3m,10m] [--work DIR] [--strategy kafka --racks 10]
Snapshots are generated once into --work (default: a temp folder) and reused when present.
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from kadmin.model import PartitionMove
from kadmin.synthetic import write_synthetic_dir
from kadmin.zk import codec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import append_results, describe_machine  # noqa: E402

SIZES = {"1m": 100_000, "3m": 300_000, "10m": 1_000_000}
"""Topics of 10 partitions per size."""
PARTITIONS = 10
TARGET_10M_SECONDS = 15 * 60


def snapshot_dir(work: Path, size: str, brokers: int, rf: int, racks: int
                 ) -> tuple[Path, float | None]:
    """The snapshot folder of a size, generated unless a previous run left it; generation time."""
    path = work / (f"snapshot-{size}-b{brokers}-rf{rf}" + (f"-racks{racks}" if racks else ""))
    if (path / "topics.jsonl").exists():
        return path, None
    start = time.perf_counter()
    write_synthetic_dir(path, brokers=brokers, topics=SIZES[size], partitions=PARTITIONS,
                        replication_factor=rf, racks=racks, seed=1)
    return path, time.perf_counter() - start


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants (driver, JVM, Python workers), MB."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid = int(entry.name)
        children.setdefault(int(fields["PPid"]), []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total / 1024


def timed(cmd: list[str], stdout: IO[bytes] | int = subprocess.DEVNULL) -> tuple[float, float]:
    """Wall seconds and the peak resident memory (MB) of the whole process tree, sampled twice a
    second: for Spark in local mode that is the CLI, the JVM (driver and executor) and its Python
    workers together."""
    elapsed, peak, _ = timed_cpu(cmd, stdout)
    return elapsed, peak


def timed_cpu(cmd: list[str], stdout: IO[bytes] | int = subprocess.DEVNULL
              ) -> tuple[float, float, float]:
    """:func:`timed`, and the CPU seconds of the process tree: each process's own user and
    system time at its last sample (a worker that lives less than half a second is missed;
    Spark reuses its Python workers)."""
    start = time.perf_counter()
    process = subprocess.Popen(cmd, stdout=stdout)
    peak = 0.0
    cpu: dict[int, float] = {}
    while process.poll() is None:
        peak = max(peak, tree_rss_mb(process.pid))
        cpu.update(tree_cpu(process.pid))
        time.sleep(0.5)
    elapsed = time.perf_counter() - start
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, cmd)
    return elapsed, peak, sum(cpu.values())


def tree_cpu(root: int) -> dict[int, float]:
    """User and system CPU seconds of ``root`` and each descendant, by pid, now."""
    parent: dict[int, int] = {}
    used: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(entry.name)
        parent[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / tick
    out, stack = {}, [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while stack:
        pid = stack.pop()
        if pid in used:
            out[pid] = used[pid]
        stack.extend(children.get(pid, ()))
    return out


def spark_moves(out: Path) -> Iterator[PartitionMove]:
    manifest = json.loads((out / "manifest.json").read_text())
    for batch in manifest["batches"]:
        yield from codec.decode_reassignment((out / batch["file"]).read_bytes())


def same_plan(spark_out: Path, plan_file: Path) -> bool:
    expected = json.loads(plan_file.read_text())["partitions"]
    got = spark_moves(spark_out)
    count = 0
    for entry, move in zip(expected, got, strict=False):
        if (entry["topic"], entry["partition"], tuple(entry["replicas"])) != move[:3]:
            return False
        count += 1
    return count == len(expected) and next(got, None) is None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1m", help="comma-separated: 1m, 3m, 10m")
    parser.add_argument("--brokers", type=int, default=1_000)
    parser.add_argument("--replication-factor", type=int, default=3)
    parser.add_argument("--strategy", default="roundrobin")
    parser.add_argument("--racks", type=int, default=0,
                        help="brokers on this many racks (kafka then places rack-aware)")
    parser.add_argument("--single-max", default="3m",
                        help="largest size also planned by `kadmin plan generate`")
    parser.add_argument("--work", type=Path, help="folder for the snapshots (kept; reused)")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    single_limit = SIZES[args.single_max]

    work = args.work or Path(tempfile.mkdtemp(prefix="kadmin-bench-spark-"))
    work.mkdir(parents=True, exist_ok=True)
    lines = []
    try:
        for size in sizes:
            cluster, generated = snapshot_dir(work, size, args.brokers, args.replication_factor,
                                              args.racks)
            topics_mb = (cluster / "topics.jsonl").stat().st_size / 1e6
            out = work / f"spark-plan-{size}"
            shutil.rmtree(out, ignore_errors=True)
            spark_s, spark_mb = timed([
                sys.executable, "-m", "kadmin", "spark", "plan", "--cluster", str(cluster),
                "--all-topics", "--strategy", args.strategy, "--out", str(out)])
            manifest = json.loads((out / "manifest.json").read_text())
            partitions = SIZES[size] * PARTITIONS
            line = (f"- {size.upper()}: {SIZES[size]:,} topics x {PARTITIONS} = {partitions:,} "
                    f"partitions, RF {args.replication_factor}, {args.brokers:,} brokers, "
                    f"{args.strategy}" + (f", {args.racks} racks" if args.racks else "")
                    + f"; topics.jsonl {topics_mb:.0f} MB"
                    + (f" (generated in {generated:.0f} s)" if generated else "")
                    + f"\n  - `kadmin spark plan` local[*]: {spark_s:.1f} s "
                    f"({partitions / spark_s / 1e3:.0f}k partitions/s), peak RSS of the process "
                    f"tree {spark_mb:.0f} MB"
                    f", {manifest['partitions']:,} moves in {len(manifest['batches']):,} batches,"
                    f" {manifest['unchanged']:,} unchanged")
            if size == "10m":
                line += (" — target < 15 min: "
                         + ("PASS" if spark_s < TARGET_10M_SECONDS else "FAIL"))
            if SIZES[size] <= single_limit:
                plan_file = work / f"single-plan-{size}.json"
                plan_file.unlink(missing_ok=True)
                single_s, single_mb = timed([
                    sys.executable, "-m", "kadmin", "plan", "generate", "--cluster", str(cluster),
                    "--all-topics", "--strategy", args.strategy, "--out", str(plan_file),
                    "--force"])
                identical = same_plan(out, plan_file)
                line += (f"\n  - `kadmin plan generate` (one machine): {single_s:.1f} s, "
                         f"peak RSS of the process tree {single_mb:.0f} MB; plans identical: "
                         f"{identical}")
                plan_file.unlink()
                plan_file.with_name(plan_file.name.replace(".json", ".rollback.json")).unlink(
                    missing_ok=True)
            shutil.rmtree(out, ignore_errors=True)
            print(line, flush=True)
            lines.append(line)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    append_results("kadmin spark plan", describe_machine(), lines)


if __name__ == "__main__":
    main()
