"""One reader, one set of limits: a topics.jsonl line over the 64 MB limit
for one record is refused alike - same exit code, same one line naming the file and line - by
every command that reads a snapshot folder, the Spark planners included."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kadmin import files, snapshots
from tests.helpers import run_kadmin

CLUSTER = Path(__file__).resolve().parent.parent / "corpus" / "cluster.json"


@pytest.fixture(scope="module")
def long_line_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot folder whose second topics.jsonl line is valid JSON one byte over the limit
    (blanks inside the object): only its length is wrong."""
    folder = tmp_path_factory.mktemp("long") / "snap"
    snapshots.write_snapshot(snapshots.read_snapshot(CLUSTER), folder, fmt="dir")
    topics = folder / "topics.jsonl"
    first = topics.read_bytes().splitlines(keepends=True)[0]
    head, tail = b'{"topic":"zz-long",', b'"partitions":{"0":[0]}}'
    padding = files.MAX_JSONL_LINE + 1 - len(head) - len(tail)
    with topics.open("wb") as handle:
        handle.write(first)
        handle.write(head + b" " * padding + tail + b"\n")
    return folder


def kadmin(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_kadmin(*args, cwd=folder, timeout=600)


EXPECTED = "kadmin: error: {snap}/topics.jsonl:2: line longer than 64 MB, over the limit for " \
           "one record"


@pytest.mark.parametrize("command", [
    ["plan", "rebalance", "--cluster", "snap", "--out", "out.json"],
    ["plan", "generate", "--cluster", "snap", "--all-topics", "--out", "out.json"],
    pytest.param(["spark", "rebalance", "--cluster", "snap", "--out", "out"],
                 marks=pytest.mark.spark),
    pytest.param(["spark", "plan", "--cluster", "snap", "--all-topics", "--out", "out"],
                 marks=pytest.mark.spark),
])
def test_a_line_over_the_limit_is_refused_by_every_reader_alike(
        command: list[str], long_line_snapshot: Path) -> None:
    run = kadmin(long_line_snapshot.parent, *command)
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.splitlines()[-1] == EXPECTED.format(snap="snap"), run.stderr[-2000:]
    assert not (long_line_snapshot.parent / "out").exists()
    assert not (long_line_snapshot.parent / "out.json").exists()


def test_the_spark_planner_refuses_a_topics_file_over_the_size_limit(tmp_path: Path) -> None:
    """The file limit, checked before Spark starts (a sparse file: no disk used)."""
    folder = tmp_path / "snap"
    snapshots.write_snapshot(snapshots.read_snapshot(CLUSTER), folder, fmt="dir")
    with (folder / "topics.jsonl").open("r+b") as handle:
        handle.truncate(files.MAX_JSONL_BYTES + 1)
    for command in (["spark", "rebalance"], ["plan", "rebalance"]):
        run = kadmin(tmp_path, *command, "--cluster", "snap", "--out", "out")
        assert run.returncode == 2, run.stderr[-2000:]
        assert run.stderr.splitlines()[-1] == "kadmin: error: snap/topics.jsonl is 4096 MB, " \
                                              "over the 4096 MB limit", run.stderr[-2000:]
