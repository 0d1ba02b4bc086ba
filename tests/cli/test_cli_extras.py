"""The plain install (what the pre-commit hook installs) leaves the planners' solvers out:
scipy and OR-tools are the extra ``kadmin[plan]`` (in ``spark`` and ``test``). Validating works without it,
and a command that needs it says in one line which extra to install, exit 1, nothing written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WITHOUT = textwrap.dedent("""
    import importlib.abc, sys

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == LIBRARY:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    sys.argv[0] = "kadmin"
    from kadmin.entry import main
    main()
""")

# racks of unequal size: the end state is decided by an integer program (scipy's HiGHS), the
# topic spread by the topic x broker program (its network programs: OR-tools' min-cost flow)
CLUSTER = {"version": 1,
           "brokers": {"0": {"rack": "a"}, "1": {"rack": "a"}, "2": {"rack": "b"},
                       "3": {"rack": "c"}},
           "topics": {f"t{t}": {str(p): [p % 3, (p + 1) % 3] for p in range(6)}
                      for t in range(3)}}
PLAN = {"version": 1, "partitions": [{"topic": "t0", "partition": 0, "replicas": [1, 2]}]}


def without(tmp_path: Path, library: str, *args: str) -> subprocess.CompletedProcess[str]:
    """kadmin run with ``library`` (and its submodules) not importable."""
    (tmp_path / "without.py").write_text(f"LIBRARY = {library!r}\n{WITHOUT}")
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "without.py", *args], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)


@pytest.mark.parametrize("library", ["scipy", "ortools"])
def test_a_planner_that_needs_a_solver_names_the_extra(tmp_path: Path, library: str) -> None:
    run = without(tmp_path, library, "plan", "rebalance", "--cluster", "cluster.json", "--out",
                  "out.json")
    assert run.returncode == 1, run.stderr
    assert run.stderr == (f"kadmin: error: plan rebalance needs {library}, which the plain "
                          "install leaves out: pip install 'kadmin[plan]'\n")
    assert not (tmp_path / "out.json").exists()
    assert not (tmp_path / "out.rollback.json").exists()


def test_the_same_planner_with_the_solvers_plans(tmp_path: Path) -> None:
    """The control: the cluster above does take scipy and OR-tools (the runs above are not a
    plan that never needed them; the topic x broker program decides its topic spread, and its
    network programs are min-cost flows)."""
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "kadmin", "plan", "rebalance",
                          "--cluster", "cluster.json", "--out", "out.json"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(r"\|\s+scipy$", run.stderr, re.M)
    assert re.search(r"\|\s+ortools$", run.stderr, re.M)
    assert (tmp_path / "out.json").exists()


def test_validating_needs_no_scipy(tmp_path: Path) -> None:
    run = without(tmp_path, "scipy", "plan", "validate", "plan.json", "--cluster", "cluster.json")
    assert run.returncode == 0, run.stderr
    assert "valid" in run.stdout


def test_scipy_is_an_extra_that_spark_and_test_include() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    dependencies = re.search(r"^dependencies = \[(.*?)\]", text, re.M | re.S).group(1)  # type: ignore[union-attr]
    assert "scipy" not in dependencies
    assert "numpy" in dependencies  # the executor's schedule computes with it
    assert "ortools" not in dependencies
    assert re.search(r'^plan = \[\s*"scipy[^"]*",\s*"ortools[^"]*",\s*\]', text, re.M)
    assert re.search(r'^spark = \[\s*"kadmin\[plan\]",', text, re.M)
    assert re.search(r'^test = \[\s*"kadmin\[spark[,\w]*\]",', text, re.M)
