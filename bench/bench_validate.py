"""Benchmark: `kadmin plan validate` on 1,000,000-entry plans of every kind of content.

Issue 9 found a plan of a million identical entries printing 999,999 error lines in 59 s, and
peaking at 11.9 GB with --json. Every list kadmin prints is now sampled (the first 100 and a
count), so validation costs the same whatever the file holds. Target for each content, as text
and as --json, end to end through the CLI: under 20 s and under 2 GB peak RSS.

Contents: all valid (offline); all identical (999,999 duplicates); all unknown partitions of a
cluster's one-partition topic (--cluster); all illegal topic names (each different); all schema
errors (an unknown key in every entry).

Run: python bench/bench_validate.py [--entries 1000000]
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import publish  # noqa: E402

TARGET_SECONDS = 20.0
TARGET_MB = 2048

Entry = Callable[[int], dict[str, object]]
CONTENTS: dict[str, tuple[Entry, bool]] = {
    "all valid": (lambda i: {"topic": f"t-{i // 10:05d}", "partition": i % 10,
                             "replicas": [i % 1000, (i + 1) % 1000, (i + 2) % 1000]}, False),
    "all identical (duplicates)": (lambda i: {"topic": "t", "partition": 0,
                                              "replicas": [0, 1, 2]}, False),
    "all unknown partitions (--cluster)": (lambda i: {"topic": "t", "partition": i + 1,
                                                      "replicas": [0, 1, 2]}, True),
    "all illegal topic names": (lambda i: {"topic": f"bad name {i}", "partition": 0,
                                           "replicas": [0, 1, 2]}, False),
    "all schema errors": (lambda i: {"topic": "t", "partition": i, "replicas": [0, 1, 2],
                                     "size": 1}, False),
}


def write_plan(path: Path, entries: int, entry: Entry) -> None:
    """One entry per line, written in chunks: the generator never holds the whole plan."""
    with path.open("w") as f:
        f.write('{"version":1,"partitions":[\n')
        for start in range(0, entries, 100_000):
            chunk = range(start, min(entries, start + 100_000))
            f.write(",\n".join(json.dumps(entry(i), separators=(",", ":")) for i in chunk))
            f.write(",\n" if chunk.stop < entries else "\n")
        f.write("]}\n")


def run(command: list[str]) -> tuple[float, float, float, int]:
    """Seconds, CPU seconds, peak RSS in MB (of this one process, from wait4) and the exit code.
    The CPU time is what the run costs whatever else shares the cores."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return (elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            process.returncode)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    args = parser.parse_args()

    lines = [f"- {args.entries:,} entries per plan; `kadmin plan validate FILE [--cluster C]` end "
             "to end (process start to exit), text and --json; load average before: "
             f"{os.getloadavg()[0]:.1f}"]
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        work = Path(tmp)
        cluster = work / "cluster.json"
        cluster.write_text(json.dumps({"version": 1, "brokers": {str(b): {} for b in range(3)},
                                       "topics": {"t": {"0": [0, 1, 2]}}}))
        for name, (entry, with_cluster) in CONTENTS.items():
            plan = work / "plan.json"
            write_plan(plan, args.entries, entry)
            size_mb = plan.stat().st_size / 1e6
            base = [sys.executable, "-m", "kadmin", "plan", "validate", str(plan),
                    *(["--cluster", str(cluster)] if with_cluster else [])]
            results = []
            for mode, extra in (("text", []), ("--json", ["--json"])):
                seconds, cpu, peak_mb, code = run([*base, *extra])
                ok = seconds < TARGET_SECONDS and peak_mb < TARGET_MB
                verdicts.append(ok)
                results.append(f"{mode} {seconds:.1f} s (CPU {cpu:.1f} s), {peak_mb:.0f} MB, "
                               f"exit {code}" + ("" if ok else " **over target**"))
            lines.append(f"- {name} ({size_mb:.0f} MB): " + "; ".join(results))
    verdict = "PASS" if all(verdicts) else "FAIL"
    lines.append(f"- target: every run under {TARGET_SECONDS:g} s and {TARGET_MB} MB peak RSS: "
                 f"**{verdict}**")
    publish("plan validate, 1M-entry plans of every content", lines)


if __name__ == "__main__":
    main()
