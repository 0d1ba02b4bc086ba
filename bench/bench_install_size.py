"""Benchmark: what the pre-commit hook installs, measured as a user gets it: a fresh virtualenv,
``pip install .`` of kadmin's source (the hook's install: no extra), then the size of the
virtualenv on disk; and the same with the planners' solvers (``.[plan]``) for comparison. The
README's figure for the hook is this measurement.

Run: python bench/bench_install_size.py   (needs the network to PyPI; appends to
bench/RESULTS.md)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_repo import hook_repo  # noqa: E402
from machine import publish  # noqa: E402


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def install(source: Path, target: str, where: Path) -> tuple[int, int, float]:
    """(bytes of the empty virtualenv, bytes after installing ``target``, seconds)."""
    venv.EnvBuilder(with_pip=True).create(where)
    empty = du(where)
    start = time.perf_counter()
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", target],
                   cwd=source, check=True, env={**os.environ, "PIP_NO_CACHE_DIR": "1"})
    return empty, du(where), time.perf_counter() - start


def main() -> None:
    lines = [f"- a fresh virtualenv, `pip install` from kadmin's source with pip's cache off; "
             f"load average before: {os.getloadavg()[0]:.1f}"]
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        work = Path(tmp)
        hook_repo(work / "src")
        for label, target in (("the hook's install, `pip install .`", "."),
                              ("with the planners' solvers, `pip install '.[plan]'`", ".[plan]")):
            name = "plan" if "plan" in target else "plain"
            empty, full, seconds = install(work / "src", target, work / f"venv-{name}")
            lines.append(f"- {label}: **{(full - empty) / 2**20:.0f} MB** over an empty "
                         f"virtualenv ({full / 2**20:.0f} MB in all), installed in {seconds:.0f} s")
    publish("pre-commit hook install size (fresh virtualenv, pip install .)", lines)


if __name__ == "__main__":
    main()
