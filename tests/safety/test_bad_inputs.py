"""Every malformed input of ``tests/corpus`` through every command that reads it.

The contract (README, "Exit codes and errors"): exit 2, one ``kadmin: error:`` line naming the
problem (then only indented detail lines), no traceback, and nothing written: no admin znode, no
change to the cluster's znodes, no plan, rollback or journal file. ``plan validate`` reports
problems as one ``<file>: error: ...`` line each instead.

The commands that talk to ZooKeeper run against one sandbox (the corpus's ``cluster.json`` loaded
into a chroot of the session's server, with the simulated controller running, so a request that
slipped through would really be carried out and seen).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from kadmin import plans, snapshots
from kadmin.model import MAX_ID, MAX_TOPIC_LENGTH, ClusterSnapshot, TopicPartition
from kadmin.sandbox import Sandbox
from kadmin.zk import codec, paths
from tests.helpers import KadminProcesses

pytestmark = pytest.mark.zk

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
EXPECTATIONS: dict[str, dict[str, Any]] = json.loads((CORPUS / "expectations.json").read_text())
CLUSTER = CORPUS / "cluster.json"
VALID_PLANS = {"reassign": CORPUS / "valid" / "reassign.json",
               "election": CORPUS / "valid" / "election.json",
               "deletion": CORPUS / "valid" / "deletion.json"}
ZK_COMMANDS = frozenset({"reassign", "elect", "delete"})
SNAPSHOT_FOLDERS = ("snapshot/", "snapshot-dir/")
MB = 1024 * 1024

Run = Callable[..., Any]


def command_line(command: str, plan: str, cluster: str, zookeeper: str,
                 options: list[str]) -> list[str]:
    lines = {
        "validate": ["plan", "validate", plan],
        "validate-cluster": ["plan", "validate", plan, "--cluster", cluster],
        "stats": ["plan", "stats", plan, "--cluster", cluster],
        "generate": ["plan", "generate", "--cluster", cluster, "--all-topics"],
        "reassign": ["reassign", "--plan", plan, "-z", zookeeper, "--timeout", "30"],
        "elect": ["elect", "--plan", plan, "-z", zookeeper, "--timeout", "30"],
        "delete": ["topics", "delete", "--plan", plan, "-z", zookeeper, "--yes", "--timeout", "30"],
    }
    return [*lines[command], *options]


def stage(case: str, folder: Path) -> tuple[str, str]:
    """Copy the case's input into the working folder beside the reference cluster and the valid
    plan; returns the plan and the cluster to give on the command line, one of them the case."""
    source = CORPUS / case
    shutil.copyfile(CLUSTER, folder / "cluster.json")
    shutil.copyfile(VALID_PLANS["reassign"], folder / "plan.json")
    name = f"input-{source.name}"
    if source.is_dir():
        shutil.copytree(source, folder / name)
    else:
        shutil.copyfile(source, folder / name)
    return ("plan.json", name) if case.startswith(SNAPSHOT_FOLDERS) else (name, "cluster.json")


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def zk_state(client: KazooClient, snapshot: ClusterSnapshot) -> dict[str, tuple[int, ...] | None]:
    """Version stamps of every znode an admin operation touches (an admin znode created and
    removed again still moves its parent's pzxid and cversion)."""
    watched = [paths.ADMIN, paths.REASSIGN_PARTITIONS, paths.PREFERRED_REPLICA_ELECTION,
               paths.DELETE_TOPICS, paths.BROKER_TOPICS, paths.CONFIG_CHANGES]
    for topic, partitions in snapshot.topics.items():
        watched.append(paths.topic(topic))
        watched.extend(paths.partition_state(topic, p) for p in partitions)
    replies = [(path, client.exists_async(path)) for path in watched]
    return {path: None if (stat := reply.get()) is None
            else (stat.mzxid, stat.pzxid, stat.version, stat.cversion)
            for path, reply in replies}


def assert_no_admin_request(client: KazooClient) -> None:
    assert client.exists(paths.REASSIGN_PARTITIONS) is None
    assert client.exists(paths.PREFERRED_REPLICA_ELECTION) is None
    if client.exists(paths.DELETE_TOPICS) is not None:
        assert client.get_children(paths.DELETE_TOPICS) == []


def assert_one_error(run: Any, command: str, subject: str) -> None:
    """Exit 2, no traceback; one ``kadmin: error:`` line and only indented details after it, or
    (``plan validate``) one ``<file>: error:`` line per problem (``warning:`` with --strict) and
    the verdict on stdout."""
    assert run.code == 2, (run.code, run.out, run.err)
    assert "Traceback" not in run.out + run.err
    lines = run.err.splitlines()
    assert lines, "an error must be shown"
    if command.startswith("validate") and not lines[0].startswith("kadmin: error: "):
        assert all(line.startswith((f"{subject}: error: ", f"{subject}: warning: "))
                   for line in lines), lines
        assert run.out.splitlines()[-1].startswith(f"{subject}: "), run.out  # the verdict
        return
    assert lines[0].startswith("kadmin: error: "), lines
    assert all(line.startswith("  ") and line.strip() for line in lines[1:]), lines


@pytest.fixture(scope="module")
def sandbox(zk_server: Any, kazoo_session: Callable[[str], AbstractContextManager[KazooClient]]
            ) -> Iterator[Sandbox]:
    """The corpus cluster in a chroot of its own, with the simulated controller running."""
    chroot = f"/kadmin-test/safety-bad-inputs-{uuid.uuid4().hex[:8]}"
    box = Sandbox(snapshots.read_snapshot(CLUSTER), zookeeper=zk_server.connect_string,
                  chroot=chroot, latency=0.0).start()
    yield box
    box.stop()
    with kazoo_session(zk_server.connect_string) as root:
        root.delete(chroot, recursive=True)


CASES = [pytest.param(case, command, id=f"{case}:{command}")
         for case, expectation in sorted(EXPECTATIONS.items())
         for command in expectation["commands"]]


@pytest.mark.parametrize(("case", "command"), CASES)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
        case: str, command: str, kadmin: Run, sandbox: Sandbox, tmp_path: Path) -> None:
    expectation = EXPECTATIONS[case]
    plan, cluster = stage(case, tmp_path)
    files_before = listing(tmp_path)
    zk_before = zk_state(sandbox.client, sandbox.snapshot) if command in ZK_COMMANDS else None

    run = kadmin(*command_line(command, plan, cluster, sandbox.connect_string,
                               expectation.get("options", [])))

    assert_one_error(run, command, plan)
    shown = run.err + run.out if command.startswith("validate") else run.err
    assert expectation["message"] in shown, shown
    assert listing(tmp_path) == files_before, "a file was written"
    if command in ZK_COMMANDS:
        assert_no_admin_request(sandbox.client)
        assert zk_state(sandbox.client, sandbox.snapshot) == zk_before, "a znode was written"


def test_every_corpus_file_has_an_expectation_and_the_readme_lists_it() -> None:
    inputs = {str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*")} - {
        str(p.relative_to(CORPUS)) for p in VALID_PLANS.values()}
    assert inputs == set(EXPECTATIONS)
    readme = (CORPUS / "README.md").read_text()
    assert all(f"`{case}`" in readme for case in EXPECTATIONS), \
        sorted(c for c in EXPECTATIONS if f"`{c}`" not in readme)
    assert len(EXPECTATIONS) >= 60


@pytest.mark.parametrize("command", ["validate-cluster", "stats", "reassign"])
def test_valid_controls_pass_so_the_harness_can_fail(command: str, kadmin: Run,
                                                    sandbox: Sandbox, tmp_path: Path) -> None:
    """The valid plan passes the same command lines (``reassign`` as a dry run): every refusal
    above is about its input, not about the harness."""
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    shutil.copyfile(VALID_PLANS["reassign"], tmp_path / "plan.json")
    extra = ["--dry-run"] if command == "reassign" else []
    run = kadmin(*command_line(command, "plan.json", "cluster.json", sandbox.connect_string, extra))
    assert run.code == 0, run.err


@pytest.mark.parametrize(("kind", "command"), [("election", "validate-cluster"),
                                               ("election", "elect"),
                                               ("deletion", "validate-cluster"),
                                               ("deletion", "delete")])
def test_valid_election_and_deletion_controls(kind: str, command: str, kadmin: Run,
                                              sandbox: Sandbox, tmp_path: Path) -> None:
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    shutil.copyfile(VALID_PLANS[kind], tmp_path / "control.json")
    run = kadmin(*command_line(command, "control.json", "cluster.json", sandbox.connect_string,
                               ["--dry-run"] if command in ZK_COMMANDS else []))
    assert run.code == 0, run.err


def test_every_election_entry_fits_the_smallest_znode_allowed() -> None:
    """No election plan is too big to batch: its largest possible entry (a 255-character topic,
    the largest partition id) fits the smallest --max-znode-bytes the CLI accepts (1024). Only a
    reassignment entry can outgrow it (``reassign/entry-over-znode-limit.json``)."""
    largest = codec.encode_election_entry(TopicPartition("t" * MAX_TOPIC_LENGTH, MAX_ID))
    assert len(codec.ELECTION_PREFIX) + len(largest) + len(codec.ELECTION_SUFFIX) < 1024
    assert plans.election_batches([TopicPartition("t" * MAX_TOPIC_LENGTH, MAX_ID)] * 3, 1000, 1024)


# --- inputs too big to keep in the corpus, made at test time --------------------------------------


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    """A file of ``size`` bytes that costs no disk: ``head`` then a hole (read back as NULs)."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)


@pytest.mark.parametrize("command", ["validate", "stats", "reassign", "elect", "delete"])
def test_a_200_mb_plan_is_refused_as_one_line(command: str, kadmin: Run, sandbox: Sandbox,
                                               tmp_path: Path) -> None:
    _sparse(tmp_path / "huge.json", 200 * MB, b'{"version":1,"partitions":[')
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    files_before = listing(tmp_path)
    run = kadmin(*command_line(command, "huge.json", "cluster.json", sandbox.connect_string, []))
    assert_one_error(run, command, "huge.json")
    # plan validate gives a verdict per plan: the file, then the severity, then the fault
    assert ("huge.json: error: not valid JSON" if command == "validate"
            else "huge.json: not valid JSON") in run.err
    assert listing(tmp_path) == files_before
    assert_no_admin_request(sandbox.client)


def test_a_200_mb_snapshot_is_refused_as_one_line(kadmin: Run, tmp_path: Path) -> None:
    _sparse(tmp_path / "huge-cluster.json", 200 * MB, b'{"version":1,"brokers":{')
    run = kadmin("plan", "generate", "--cluster", "huge-cluster.json", "--all-topics")
    assert_one_error(run, "generate", "huge-cluster.json")
    assert "huge-cluster.json: not valid JSON" in run.err
    assert listing(tmp_path) == ["huge-cluster.json"]


def test_a_file_over_the_size_limit_is_refused_unread(kadmin: Run, tmp_path: Path) -> None:
    _sparse(tmp_path / "enormous.json", 300 * MB)
    run = kadmin("plan", "validate", "enormous.json")
    assert_one_error(run, "validate", "enormous.json")
    assert "enormous.json is 300 MB, over the 256 MB limit" in run.err


@pytest.mark.parametrize(("args", "message"), [
    # plan validate: a verdict per plan named, so a file it cannot read is one of them
    (["plan", "validate", "missing.json"], "missing.json: error: no such file"),
    (["plan", "validate", "folder"], "folder is a folder without plans"),
    (["plan", "validate", "/dev/zero"], "/dev/zero is a device, not a regular file"),
    (["plan", "stats", "plan.json", "--cluster", "missing"], "missing: no such file"),
    (["plan", "generate", "--cluster", "folder", "--all-topics"],
     "folder is a folder without brokers.json and topics.jsonl"),
    (["plan", "generate", "--cluster", "cluster.json", "--all-topics", "--brokers", "0,²"],
     "'²' is not a broker id"),
    (["plan", "generate", "--cluster", "cluster.json", "--all-topics", "--brokers=--1"],
     "'--1' is not a broker id"),
    (["plan", "generate", "--cluster", "cluster.json", "--all-topics", "--brokers",
      "0," + "9" * 5000], "is not a broker id"),
    (["plan", "generate", "--cluster", "cluster.json", "--topics", "orders,nope"],
     "unknown topic(s) not in the cluster: nope"),
])
def test_bad_paths_and_options(args: list[str], message: str, kadmin: Run,
                               tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    shutil.copyfile(VALID_PLANS["reassign"], tmp_path / "plan.json")
    files_before = listing(tmp_path)
    run = kadmin(*args)
    assert_one_error(run, args[1], args[2])
    assert message in run.err
    assert listing(tmp_path) == files_before


# --- named pipes: refused at once, never read (a reader blocks until a writer comes) ------------

FIFO_CASES = {
    "plan": (["plan", "validate", "pipe"], "pipe"),
    "snapshot file": (["plan", "generate", "--cluster", "pipe", "--all-topics"], "pipe"),
    "topics file": (["plan", "generate", "--cluster", "cluster.json", "--topics-file", "pipe"],
                    "pipe"),
    "snapshot folder: topics.jsonl": (["plan", "generate", "--cluster", "snap", "--all-topics"],
                                      "snap/topics.jsonl"),
    "snapshot folder: states.jsonl": (["plan", "generate", "--cluster", "snap", "--all-topics"],
                                      "snap/states.jsonl"),
    "snapshot folder: meta.json": (["plan", "generate", "--cluster", "snap", "--all-topics"],
                                   "snap/meta.json"),
    "snapshot folder: brokers.json": (["plan", "generate", "--cluster", "snap", "--all-topics"],
                                      "snap/brokers.json"),
    "digest credential file": (["--zk-auth-file", "pipe", "status", "-z", "127.0.0.1:1"], "pipe"),
    "SASL credential file": (["--zk-sasl-file", "pipe", "status", "-z", "127.0.0.1:1"], "pipe"),
    "TLS CA file": (["--zk-tls", "--zk-ca", "pipe", "status", "-z", "127.0.0.1:1"], "pipe"),
    "TLS key file": (["--zk-tls", "--zk-cert", "cluster.json", "--zk-key", "pipe", "status", "-z",
                      "127.0.0.1:1"], "pipe"),
}


@pytest.mark.parametrize("case", sorted(FIFO_CASES))
def test_a_named_pipe_is_refused_without_blocking(case: str, tmp_path: Path,
                                                  kadmin_process: KadminProcesses) -> None:
    """As a separate process with a time limit: a kadmin that opened the pipe for reading would
    block forever, and the test must fail, not hang."""
    args, named = FIFO_CASES[case]
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    snap = tmp_path / "snap"
    snapshots.write_snapshot(snapshots.read_snapshot(CLUSTER), snap, fmt="dir")
    pipe = tmp_path / named
    pipe.unlink(missing_ok=True)
    os.mkfifo(pipe)
    run = kadmin_process.run(*args, cwd=tmp_path, timeout=60)  # fails if it blocks on the pipe
    assert run.returncode == 2, run.stderr
    refused = f"{named} is a named pipe (FIFO), not a regular file"
    assert run.stderr.splitlines() == [
        f"{named}: error: {refused}" if args[:2] == ["plan", "validate"]  # its verdict line
        else f"kadmin: error: {refused}"], run.stderr
