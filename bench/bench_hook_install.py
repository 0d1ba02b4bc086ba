"""Benchmark: how long the pre-commit hook takes to install, with and without PySpark.

pre-commit builds a hook's environment the first time it runs it (and again whenever the hook's
rev changes, and on every CI runner without a cache). The hook only validates plans, so PySpark
(Spark and the embedded ZooKeeper's jars) is an extra, ``kadmin[spark]``. This measures why:
kadmin's source as it is now is committed to a scratch hook repository twice, as it is and with
PySpark moved back into the dependencies, and a repository of plans runs `pre-commit run
--all-files` from an empty pre-commit cache with pip's cache off (PIP_NO_CACHE_DIR=1), so every
package is downloaded and installed as on a fresh CI runner. Reported: the first run (install +
check), a second run (check only), and the size of the environment.

Run: python bench/bench_hook_install.py
Appends a section to bench/RESULTS.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_repo import commit_all, hook_repo  # noqa: E402
from machine import publish  # noqa: E402

PLAN = '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}]}\n'
CLUSTER = {"version": 1, "brokers": {"0": {}, "1": {}, "2": {}},
           "topics": {"orders": {"0": [0, 1]}}}


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> None:
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) \
        or shutil.which("pre-commit")
    if pre_commit is None:
        sys.exit("pre-commit is in the test extra: pip install -e '.[test]'")
    lines = [f"- `pre-commit run --all-files` in a repository of plans, from an empty pre-commit "
             f"cache, pip's cache off; load average before: {os.getloadavg()[0]:.1f}"]
    with tempfile.TemporaryDirectory(prefix="kadmin-bench-") as tmp:
        work = Path(tmp)
        for label, with_spark in (("kadmin (PySpark an extra, as shipped)", False),
                                  ("kadmin with PySpark a dependency", True)):
            name = "spark" if with_spark else "plain"
            rev = hook_repo(work / f"hooks-{name}", with_spark=with_spark)
            repo = work / f"plans-{name}"
            (repo / "plans").mkdir(parents=True)
            (repo / "plans" / "p.json").write_text(PLAN)
            (repo / "cluster.json").write_text(json.dumps(CLUSTER))
            (repo / ".pre-commit-config.yaml").write_text(
                f"repos:\n  - repo: {work / f'hooks-{name}'}\n    rev: {rev}\n    hooks:\n"
                "      - id: kadmin-validate\n        files: ^plans/\n"
                "        args: [--cluster, cluster.json]\n")
            commit_all(repo, "plans")
            cache = work / f"cache-{name}"
            env = {**os.environ, "PRE_COMMIT_HOME": str(cache), "PIP_NO_CACHE_DIR": "1"}
            env.pop("VIRTUAL_ENV", None)
            times = []
            for _ in range(2):
                start = time.perf_counter()
                run = subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, env=env,
                                     capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                if run.returncode != 0:
                    sys.exit(f"{label}: pre-commit failed:\n{run.stdout}{run.stderr}")
            lines.append(f"- {label}: first run (install + check) **{times[0]:.1f} s**, "
                         f"environment {du(cache) / 2**20:.0f} MB; second run {times[1]:.1f} s")
    publish("pre-commit hook install, with and without PySpark", lines)


if __name__ == "__main__":
    main()
