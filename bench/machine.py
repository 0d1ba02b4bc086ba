"""Shared by every benchmark: describe the machine and append a dated section to RESULTS.md."""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def describe_machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2**30:.0f} GiB"
    except (ValueError, OSError):
        memory = "unknown memory"
    return (f"{os.cpu_count()} cores ({cpu}), {memory}, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}")


def append_results(title: str, machine: str, lines: list[str]) -> None:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if not RESULTS.exists():
        RESULTS.write_text("# Benchmark results\n\nNewest sections at the bottom. Each names the "
                           "machine and the date it ran.\n")
    with RESULTS.open("a") as f:
        f.write(f"\n## {title} — {stamp}\n\nMachine: {machine}\n\n" + "\n".join(lines) + "\n")


def publish(title: str, lines: list[str]) -> None:
    """Append a section of ``lines`` to RESULTS.md for this machine, and print them."""
    append_results(title, describe_machine(), lines)
    print("\n".join(lines))
