"""Where an output cannot go: a name that is a folder (``--out .``, ``--out /``, ``--out
newdir/``) or a folder that cannot be written (read-only): one line naming the place, exit 2,
nothing written, on every writer (plans, snapshots, ``reassign``'s rollback)."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot
from kadmin.snapshots import write_snapshot
from tests.helpers import write_plan

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"a": {0: (0, 1), 1: (1, 2)}, "b": {0: (2, 3), 1: (3, 0)}},
    controller=0, controller_epoch=1)

WRITERS = {
    "plan generate": ["plan", "generate", "--all-topics", "--strategy", "kafka"],
    "plan rebalance": ["plan", "rebalance", "--brokers", "0,1,2"],
    "plan demote": ["plan", "demote", "--brokers", "1"],
    "plan election": ["plan", "election", "--all-topics"],
    "plan deletion": ["plan", "deletion", "--topics", "a"],
    "cluster snapshot": ["cluster", "snapshot"],
}


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody can write in: a small tmpfs remounted read-only (as root, whom
    permissions do not stop), else a folder without write permission."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "sub").mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        (folder / "sub").chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], check=True)
    try:
        (folder / "sub").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def one_line_error(run: Any, *words: str) -> None:
    assert run.code == 2, (run.out, run.err)
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kadmin: error: "), run.err
    assert "internal error" not in run.err
    assert all(w in lines[0] for w in words), run.err


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("out", [".", "/", "..", "newdir/", "a/b/"])
def test_a_folder_name_is_no_output_file(kadmin: Any, tmp_path: Path, writer: str,
                                         out: str) -> None:
    write_snapshot(CLUSTER, tmp_path / "c.json")
    before = sorted(p.name for p in tmp_path.iterdir())
    run = kadmin(*WRITERS[writer], "--cluster", "c.json", "--out", out)
    one_line_error(run, out.rstrip("/") or "/", "folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("where", ["p.json", "sub/p.json", "new/p.json"])
def test_a_read_only_folder_is_a_one_line_error(kadmin: Any, tmp_path: Path, read_only: Path,
                                                 writer: str, where: str) -> None:
    write_snapshot(CLUSTER, tmp_path / "c.json")
    run = kadmin(*WRITERS[writer], "--cluster", "c.json", "--out", str(read_only / where))
    one_line_error(run, "cannot ", str(read_only))
    assert sorted(p.name for p in read_only.iterdir()) == ["sub"]


def test_a_snapshot_folder_in_a_read_only_folder(kadmin: Any, tmp_path: Path,
                                                 read_only: Path) -> None:
    write_snapshot(CLUSTER, tmp_path / "c.json")
    run = kadmin("cluster", "snapshot", "--cluster", "c.json", "--format", "dir", "--out",
                 str(read_only / "snap"))
    one_line_error(run, "cannot write", "snap")
    assert sorted(p.name for p in read_only.iterdir()) == ["sub"]


@pytest.mark.zk
@pytest.mark.parametrize("dry", [(), ("--dry-run",)], ids=["run", "dry run"])
def test_reassign_with_its_plan_in_a_read_only_folder(kadmin: Any, start_sandbox: Any,
                                                      tmp_path: Path, dry: tuple[str, ...]
                                                      ) -> None:
    """The run refuses before it writes anything, and its dry run refuses alike."""
    box = start_sandbox(CLUSTER, latency=0.0)
    plan = write_plan(tmp_path / "p.json", {("a", 0): [1, 0]})
    if os.geteuid() == 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                       check=True)
        try:
            (folder / "p.json").write_bytes(plan.read_bytes())
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
            run = kadmin("reassign", "--plan", str(folder / "p.json"), "-z", box.connect_string,
                         *dry)
            one_line_error(run, "cannot write", "p.rollback.json")
            assert sorted(p.name for p in folder.iterdir()) == ["p.json"]
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    else:
        tmp_path.chmod(0o555)
        try:
            run = kadmin("reassign", "--plan", str(plan), "-z", box.connect_string, *dry)
        finally:
            tmp_path.chmod(0o755)
        one_line_error(run, "cannot write", "p.rollback.json")
    data, _ = box.client.get("/brokers/topics/a")
    assert b'"0":[0,1]' in data.replace(b" ", b"")


# --- commands that start something (a sandbox, Spark) before they write: the place first ------


def _a_file_as_folder(tmp_path: Path) -> Path:
    (tmp_path / "afile").write_text("not a folder\n")
    return tmp_path / "afile"


def test_demo_refuses_an_out_folder_under_a_file_before_the_sandbox_starts(
        kadmin: Any, tmp_path: Path) -> None:
    afile = _a_file_as_folder(tmp_path)
    run = kadmin("demo", "--topic-count", "2", "--partitions", "2", "--out", "afile/plans")
    one_line_error(run, "cannot write afile/plans/demo-reassign.json", f"{afile} is not a folder")
    assert run.out == ""  # no story: nothing started
    assert afile.read_text() == "not a folder\n"


def test_demo_refuses_a_read_only_out_folder_before_the_sandbox_starts(
        kadmin: Any, read_only: Path) -> None:
    run = kadmin("demo", "--topic-count", "2", "--partitions", "2", "--out",
                 str(read_only / "plans"))
    one_line_error(run, f"cannot write {read_only}/plans/demo-reassign.json", str(read_only))
    assert run.out == ""
    assert sorted(p.name for p in read_only.iterdir()) == ["sub"]


@pytest.mark.parametrize("where", ["afile/record.jsonl", "ro/record.jsonl"])
def test_sandbox_refuses_a_record_it_cannot_write_before_zookeeper_starts(
        kadmin: Any, tmp_path: Path, read_only: Path, where: str) -> None:
    """Its port taken: had ZooKeeper been started first, "port in use" would be the error."""
    _a_file_as_folder(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        run = kadmin("sandbox", "--port", str(taken.getsockname()[1]), "--record", where)
    reason = "is not a folder" if where.startswith("afile") else str(read_only)
    one_line_error(run, f"cannot write {where}", reason)
    assert run.out == ""  # no connect string: nothing started


@pytest.mark.parametrize("command", ["plan", "rebalance"])
def test_spark_refuses_an_out_folder_under_a_file_before_spark_starts(
        kadmin: Any, tmp_path: Path, command: str) -> None:
    """A master no Spark accepts: had Spark started first, its error would be the one shown."""
    _a_file_as_folder(tmp_path)
    write_snapshot(CLUSTER, tmp_path / "snap", fmt="dir")
    run = kadmin("spark", command, "--cluster", "snap", "--all-topics", "--master", "nowhere://",
                 "--out", "afile/out")
    one_line_error(run, "cannot write afile/out", "is not a folder")
