"""A newcomer's first calls answer at once: ``kadmin --help``, ``--version`` and validating a
small plan offline import neither kazoo nor numpy, scipy or PySpark (each command's module is
loaded when that command runs), and help is readable at 80 columns through a pipe."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kadmin.cli.app import COMMANDS

HEAVY = ("kazoo", "numpy", "scipy", "pyspark")
ROOT = Path(__file__).resolve().parents[2]
PLAN = '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}]}\n'


def run(*args: str, cwd: Path, columns: int | None = None,
        importtime: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("KADMIN_ZOOKEEPER", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    python = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "kadmin"]
    return subprocess.run([*python, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)  # stdout a pipe, as in CI or `kadmin ... | less`


def imported(stderr: str) -> set[str]:
    """The top-level packages ``-X importtime`` reports as imported."""
    return {line.split("|")[-1].strip().split(".")[0] for line in stderr.splitlines()
            if line.startswith("import time:")}


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("plan", "--help"),
                                  ("plan", "validate", "small.json")])
def test_start_up_imports_no_driver_library(args: tuple[str, ...], tmp_path: Path) -> None:
    (tmp_path / "small.json").write_text(PLAN)
    done = run(*args, cwd=tmp_path, importtime=True)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = imported(done.stderr)
    assert "kadmin" in loaded  # the report is read right
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_a_command_that_needs_them_still_gets_them(tmp_path: Path) -> None:
    """The control: a command that reads ZooKeeper does import kazoo (so the test above is not
    blind to it)."""
    done = run("status", "-z", "127.0.0.1:1", "--connect-timeout", "0.5", cwd=tmp_path,
               importtime=True)
    assert done.returncode == 1
    assert "kazoo" in imported(done.stderr)


def test_version_is_the_package_version(tmp_path: Path) -> None:
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(),
                        re.M).group(1)  # type: ignore[union-attr]
    done = run("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"kadmin {version}\n", "")


def test_the_command_list_is_every_command(tmp_path: Path) -> None:
    done = run("--help", cwd=tmp_path)
    listed = re.findall(r"^  (\w+)  ", done.stdout.split("Commands:")[1], re.M)
    assert listed == list(COMMANDS)


@pytest.mark.parametrize("path", ["", "reassign", "plan rebalance", "plan validate", "status",
                                  "spark rebalance", "topics delete"])
def test_help_through_a_pipe_at_80_columns_is_whole(path: str, tmp_path: Path) -> None:
    done = run(*path.split(), "--help", cwd=tmp_path, columns=80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert "…" not in done.stdout  # nothing cut
    assert "<bool>" not in done.stdout  # a flag takes no value
    from kadmin.cli.app import command_tree
    command = command_tree()
    for word in path.split():
        command = command.commands[word]
    for param in command.params:
        if param.param_type_name == "option" and not param.hidden:
            for name in (*param.opts, *param.secondary_opts):
                assert re.search(rf"(^|[\s,/]){re.escape(name)}([\s,/=]|$)", done.stdout, re.M), name
