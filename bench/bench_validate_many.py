"""Benchmark: `kadmin plan validate` on 1,000 small plan files in one run.

A CI job or a pre-commit hook hands kadmin every plan of a repository at once. Start-up (Python,
Typer, jsonschema, reading the cluster) dominates a small plan, so checking a thousand in one
process must cost little more than checking one. Target: 1,000 files in at most 3x the time of
one file, end to end through the CLI (process start to exit), with and without --cluster, in
the text and github formats.

The floor is the same command on one of the files, measured in the same run. Each figure is the
best of --repeat runs (the machine is shared; the best is the least disturbed).

Run: python bench/bench_validate_many.py [--files 1000] [--entries 20] [--repeat 3]
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import publish  # noqa: E402

TARGET_RATIO = 3.0


def write_plans(folder: Path, files: int, entries: int) -> list[Path]:
    """``files`` reassignment plans of ``entries`` moves each, no partition in two plans (two
    would be warned about, which is not what is measured here)."""
    paths = []
    for f in range(files):
        path = folder / f"reassign-{f:05d}.json"
        moves = [{"topic": f"t{f % 50}", "partition": (f // 50) * entries + e,
                  "replicas": [(f + e) % 6, (f + e + 1) % 6, (f + e + 2) % 6]}
                 for e in range(entries)]
        path.write_text(json.dumps({"version": 1, "partitions": moves}, indent=1))
        paths.append(path)
    return paths


def timed(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """Seconds, CPU seconds (of the process, from wait4) and the exit code."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    return (time.perf_counter() - start, usage.ru_utime + usage.ru_stime,
            os.waitstatus_to_exitcode(status))


def best(command: list[str], cwd: Path, repeat: int) -> tuple[float, float, int]:
    runs = [timed(command, cwd) for _ in range(repeat)]
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    lines = [f"- {args.files:,} reassignment plans of {args.entries} moves each (about "
             f"{args.entries * 70 / 1000:.1f} KB a file); `python -m kadmin plan validate FILE...` "
             f"end to end, best of {args.repeat}; load average before: {os.getloadavg()[0]:.1f}"]
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        work = Path(tmp)
        (work / "plans").mkdir()
        paths = [p.relative_to(work) for p in write_plans(work / "plans", args.files,
                                                          args.entries)]
        topics = {f"t{t}": {str(p): [0, 1, 2] for p in range((args.files // 50 + 1)
                                                             * args.entries)}
                  for t in range(50)}
        (work / "cluster.json").write_text(json.dumps(
            {"version": 1, "brokers": {str(b): {} for b in range(6)}, "topics": topics}))
        base = [sys.executable, "-m", "kadmin", "plan", "validate"]
        for label, extra in (("offline, text", []),
                             ("--cluster, text", ["--cluster", "cluster.json"]),
                             ("--cluster, --format github", ["--cluster", "cluster.json",
                                                             "--format", "github"])):
            one = best([*base, str(paths[0]), *extra], work, args.repeat)
            many = best([*base, *map(str, paths), *extra], work, args.repeat)
            ratio = many[0] / one[0]
            ok = ratio <= TARGET_RATIO and one[2] == many[2] == 0
            verdicts.append(ok)
            lines.append(f"- {label}: one file {one[0]:.2f} s (CPU {one[1]:.2f} s); "
                         f"{args.files:,} files {many[0]:.2f} s (CPU {many[1]:.2f} s), exit "
                         f"{many[2]}: **{ratio:.2f}x** one file"
                         + ("" if ok else " **over target**"))
    lines.append(f"- target: {args.files:,} files within {TARGET_RATIO:g}x one file: "
                 f"**{'PASS' if all(verdicts) else 'FAIL'}**")
    publish("plan validate, many small plans in one run", lines)


if __name__ == "__main__":
    main()
