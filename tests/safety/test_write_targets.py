"""Every file kadmin writes may replace only a regular file.

Plans and their rollback files, snapshots (file and folder), Spark output folders, ``sandbox
--record`` and the rollback and journal files of ``reassign``: a folder where a file goes, a
named pipe, a device, a socket and a symbolic link (whatever it points to) are refused by name
with exit 2 and nothing written - the odd file itself is left exactly as it was, no rollback
file appears beside it, and a pipe never makes kadmin wait. A folder output replaces only a
folder kadmin wrote (its marker file and regular files only, or empty), even with --force.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kadmin import files, snapshots
from kadmin.model import InvalidInput
from tests.helpers import run_kadmin

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
CLUSTER = CORPUS / "cluster.json"
TIME_LIMIT = 60


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # what /dev/null is
    except PermissionError:
        pytest.skip("making a device node needs root")


def make_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def make_folder(path: Path) -> None:
    path.mkdir()
    (path / "keep.txt").write_text("the operator's")


def make_link_to_file(path: Path) -> None:
    (path.parent / "elsewhere.json").write_text("the operator's")
    path.symlink_to(path.parent / "elsewhere.json")


def make_dangling_link(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere" / "x.json")


def make_link_to_device(path: Path) -> None:
    path.symlink_to("/dev/null")


ODD = {
    "named pipe": (make_fifo, "is a named pipe (FIFO)"),
    "device": (make_device, "is a device"),
    "socket": (make_socket, "is a socket"),
    "folder": (make_folder, "is a folder, expected a file name"),
    "link to a file": (make_link_to_file, "is a symbolic link"),
    "dangling link": (make_dangling_link, "is a symbolic link"),
    "link to /dev/null": (make_link_to_device, "is a symbolic link"),
}


def fingerprint(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every name under ``folder`` with its type, inode and (regular files) content, links
    not followed: what "nothing was written" must leave equal."""
    out = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        text = path.read_text() if stat.S_ISREG(st.st_mode) else os.readlink(path) \
            if stat.S_ISLNK(st.st_mode) else ""
        out[str(path.relative_to(folder))] = (stat.S_IFMT(st.st_mode), st.st_ino, text)
    return out


@pytest.fixture
def odd(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    make, message = ODD[request.param]
    target = tmp_path / "target.json"
    make(target)
    yield target, message


# --- the files module: every writer, every odd target -------------------------------------------

WRITERS: dict[str, Callable[[Path], Any]] = {
    "atomic_write_bytes --force": lambda p: files.atomic_write_bytes(p, b"{}\n", force=True),
    "atomic_write_json": lambda p: files.atomic_write_json(p, {"a": 1}),
    "plan and rollback, the plan odd": lambda p: files.atomic_write_files(
        [(p, b"plan"), (p.with_name("r.json"), b"rollback")], force=True),
    "plan and rollback, the rollback odd": lambda p: files.atomic_write_files(
        [(p.with_name("plan.json"), b"plan"), (p, b"rollback")], force=True),
    "open_append (sandbox --record)": lambda p: files.open_append(p).close(),
    "check_target (reassign's rollback and journal)": lambda p: files.check_target(p, True),
}


@pytest.mark.parametrize("odd", sorted(ODD), indirect=True)
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_refuses_an_odd_target_by_name_and_writes_nothing(
        writer: str, odd: tuple[Path, str], tmp_path: Path) -> None:
    target, message = odd
    before = fingerprint(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        WRITERS[writer](target)
    assert str(refused.value).startswith(f"{target} {message}"), refused.value
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize("odd", sorted(set(ODD) - {"folder"}), indirect=True)
def test_a_folder_output_refuses_an_odd_target_too(odd: tuple[Path, str], tmp_path: Path) -> None:
    target, message = odd
    before = fingerprint(tmp_path)
    with pytest.raises(InvalidInput, match="^" + str(target) + " " + message.replace(
            "(", r"\(").replace(")", r"\)")):
        files.atomic_write_dir(target, [("m.json", b"{}")], marker="m.json", force=True)
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize(("members", "reason"), [
    ({"notes.txt": "mine"}, "without m.json: not a folder kadmin wrote"),
    ({"m.json": "{}", "sub/": ""}, "holding 'sub', which is not a regular file"),
    ({"m.json": "{}", "pipe|": ""}, "holding 'pipe', which is not a regular file"),
    ({"m.json": "{}", "link@": ""}, "holding 'link', which is not a regular file"),
])
def test_a_folder_output_replaces_only_a_folder_kadmin_wrote(
        members: dict[str, str], reason: str, tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    for name, text in members.items():
        if name.endswith("/"):
            (target / name[:-1]).mkdir()
        elif name.endswith("|"):
            os.mkfifo(target / name[:-1])
        elif name.endswith("@"):
            (target / name[:-1]).symlink_to(tmp_path)
        else:
            (target / name).write_text(text)
    before = fingerprint(tmp_path)
    with pytest.raises(InvalidInput, match=reason):
        files.atomic_write_dir(target, [("m.json", b"new")], marker="m.json", force=True)
    assert fingerprint(tmp_path) == before


def test_a_folder_kadmin_wrote_or_an_empty_one_is_replaced_with_force(tmp_path: Path) -> None:
    target = tmp_path / "out"
    files.atomic_write_dir(target, [("m.json", b"old"), ("batch-1.json", b"x")], marker="m.json")
    files.atomic_write_dir(target, [("m.json", b"new")], marker="m.json", force=True)
    assert sorted(p.name for p in target.iterdir()) == ["m.json"]
    empty = tmp_path / "empty"
    empty.mkdir()
    files.atomic_write_dir(empty, [("m.json", b"new")], marker="m.json", force=True)
    assert (empty / "m.json").read_bytes() == b"new"


def test_appending_to_a_regular_file_keeps_what_it_held(tmp_path: Path) -> None:
    record = tmp_path / "events.jsonl"
    record.write_text("earlier\n")
    with files.open_append(record) as handle:
        handle.write(b"later\n")
    assert record.read_text() == "earlier\nlater\n"


# --- the commands -------------------------------------------------------------------------------


def kadmin_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m kadmin`` in ``folder`` with a time limit: a pipe opened for writing would
    block, and the test must fail rather than hang."""
    return run_kadmin(*args, cwd=folder, timeout=TIME_LIMIT)


def assert_refused(run: subprocess.CompletedProcess[str], name: str, message: str) -> None:
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines()[-1].startswith(f"kadmin: error: {name} {message}"), run.stderr


COMMANDS = {
    "plan generate --out": ["plan", "generate", "--cluster", "cluster.json", "--all-topics",
                            "--force", "--out"],
    "plan rebalance --out": ["plan", "rebalance", "--cluster", "cluster.json", "--force",
                             "--out"],
    "cluster snapshot --out": ["cluster", "snapshot", "--cluster", "cluster.json", "--force",
                               "--out"],
    "sandbox --record": ["sandbox", "--cluster", "cluster.json", "--port", "0", "--record"],
}


@pytest.mark.parametrize("odd", ["named pipe", "device", "folder", "link to a file",
                                 "link to /dev/null"], indirect=True)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_output_option_refuses_an_odd_target(command: str, odd: tuple[Path, str],
                                                   tmp_path: Path) -> None:
    target, message = odd
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    before = fingerprint(tmp_path)
    run = assert_refused_run(tmp_path, [*COMMANDS[command], target.name], target.name, message)
    assert fingerprint(tmp_path) == before, run.stdout
    assert not (tmp_path / "target.rollback.json").exists()


def assert_refused_run(folder: Path, args: list[str], name: str, message: str
                       ) -> subprocess.CompletedProcess[str]:
    run = kadmin_in(folder, *args)
    assert_refused(run, name, message)
    return run


@pytest.mark.parametrize("odd", ["named pipe", "folder", "dangling link"], indirect=True)
def test_a_plan_whose_rollback_name_is_odd_is_not_written_either(
        odd: tuple[Path, str], tmp_path: Path) -> None:
    """``--out plan.json`` also writes ``plan.rollback.json``: both or neither."""
    target, message = odd
    rollback = tmp_path / "plan.rollback.json"
    target.rename(rollback)
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    before = fingerprint(tmp_path)
    assert_refused_run(tmp_path, ["plan", "generate", "--cluster", "cluster.json",
                                  "--all-topics", "--out", "plan.json"],
                       rollback.name, message)
    assert fingerprint(tmp_path) == before


def test_the_dev_null_of_the_report_is_refused_as_root_too(tmp_path: Path) -> None:
    """The case of the report: as root, ``--out /dev/null --force`` turned /dev/null into a
    regular file and wrote /dev/null.rollback.json."""
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    run = kadmin_in(tmp_path, "plan", "rebalance", "--cluster", "cluster.json", "--out",
                     "/dev/null", "--force")
    assert_refused(run, "/dev/null", "is a device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not os.path.lexists("/dev/null.rollback.json")


def test_a_snapshot_folder_replaces_only_a_snapshot_folder(tmp_path: Path) -> None:
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    snap = ["cluster", "snapshot", "--cluster", "cluster.json", "--format", "dir", "--force",
            "--out"]
    assert kadmin_in(tmp_path, *snap, "snap").returncode == 0
    assert kadmin_in(tmp_path, *snap, "snap").returncode == 0  # its own: replaced
    home = tmp_path / "home"
    make_folder(home)
    before = fingerprint(tmp_path)
    assert_refused(kadmin_in(tmp_path, *snap, "home"), "home",
                   "is a folder without brokers.json")
    assert fingerprint(tmp_path) == before


@pytest.mark.spark
def test_a_spark_output_folder_replaces_only_a_spark_output_folder(tmp_path: Path) -> None:
    """Refused before Spark starts: the check comes first."""
    snapshots.write_snapshot(snapshots.read_snapshot(CLUSTER), tmp_path / "snap", fmt="dir")
    home = tmp_path / "home"
    make_folder(home)
    before = fingerprint(tmp_path)
    for command in ("plan", "rebalance"):
        run = kadmin_in(tmp_path, "spark", command, "--cluster", "snap", "--all-topics",
                         "--out", "home", "--force")
        assert_refused(run, "home", "is a folder without manifest.json")
    assert fingerprint(tmp_path) == before


@pytest.mark.parametrize("odd", ["named pipe", "link to a file"], indirect=True)
def test_sandbox_record_refuses_before_anything_starts(odd: tuple[Path, str],
                                                       tmp_path: Path) -> None:
    target, message = odd
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    run = kadmin_in(tmp_path, "sandbox", "--cluster", "cluster.json", "--port", "0",
                     "--record", target.name)
    assert_refused(run, target.name, message)
    assert "connect string" not in run.stdout  # nothing started


# --- reassign: its rollback and journal -------------------------------------------------------


@pytest.mark.zk
@pytest.mark.parametrize("which", ["rollback", "journal"])
@pytest.mark.parametrize("odd", ["named pipe", "folder", "link to a file"], indirect=True)
def test_reassign_refuses_an_odd_rollback_or_journal_before_anything(
        which: str, odd: tuple[Path, str], tmp_path: Path, zk_connect: str,
        start_sandbox: Callable[..., Any], kadmin: Callable[..., Any]) -> None:
    target, message = odd
    cluster = snapshots.read_snapshot(CLUSTER)
    box = start_sandbox(cluster, latency=0.0, record_path=None)
    plan = tmp_path / "move.json"
    topic, partition, replicas = next((t, p, list(r)) for t in sorted(cluster.topics)
                                      for p, r in sorted(cluster.topics[t].items()) if len(r) > 1)
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": partition, "replicas": replicas[::-1]}]}))
    odd_name = tmp_path / f"move.{which}.json"
    target.rename(odd_name)
    before = fingerprint(tmp_path)
    run = kadmin("reassign", "--plan", "move.json", "-z", box.connect_string, "--timeout", "30")
    assert run.code == 2, run.err
    assert run.err.splitlines()[-1].startswith(f"kadmin: error: {odd_name.name} {message}"), run.err
    assert fingerprint(tmp_path) == before
    assert box.client.exists("/admin/reassign_partitions") is None
