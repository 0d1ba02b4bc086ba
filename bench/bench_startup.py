"""Benchmark: how long kadmin takes to answer the calls a person at a prompt and a CI hook make
most, against the interpreter's own start-up measured in the same run (``python -c pass``).

Each command runs REPEAT times in a fresh interpreter (``python -m kadmin ...``, stdout a pipe),
interleaved with the floor so that a load change hits both alike; reported: the median wall
time of each, and its ratio to the floor's median. Targets: ``--help``, ``--version`` and
validating a small plan offline within 0.3 s where ``python -c pass`` takes about 25 ms (a
ratio of about 12), with neither kazoo nor numpy, scipy or PySpark imported
(tests/cli/test_cli_startup.py holds the imports).

Run: python bench/bench_startup.py   (from the repository root; appends to bench/RESULTS.md)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import publish  # noqa: E402

REPEAT = 10
PLAN = '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}]}\n'
CALLS = {
    "python -c pass": ["-c", "pass"],
    "kadmin --help": ["-m", "kadmin", "--help"],
    "kadmin --version": ["-m", "kadmin", "--version"],
    "kadmin plan validate small.json": ["-m", "kadmin", "plan", "validate", "small.json"],
    "kadmin plan --help": ["-m", "kadmin", "plan", "--help"],
    "kadmin reassign --help": ["-m", "kadmin", "reassign", "--help"],
    "kadmin status --help": ["-m", "kadmin", "status", "--help"],
}


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        (Path(tmp) / "small.json").write_text(PLAN)
        for _ in range(REPEAT):
            for name, args in CALLS.items():
                start = time.perf_counter()
                subprocess.run([sys.executable, *args], cwd=tmp, env=env, check=True,
                               capture_output=True)
                times[name].append(time.perf_counter() - start)
    floor = statistics.median(times["python -c pass"])
    lines = [f"- median of {REPEAT} runs each, interleaved; load average before: {load:.1f}",
             "", "| call | median | x `python -c pass` |", "|---|---|---|"]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| `{name}` | {median * 1000:.0f} ms | {median / floor:.1f}x |")
    publish("Start-up per command, against python -c pass", lines)


if __name__ == "__main__":
    main()
