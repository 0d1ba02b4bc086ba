"""``--json`` is one JSON document on stdout (JSON Lines for the progress of ``reassign``,
``elect`` and ``topics delete``, and for ``plan validate`` of several plans, as the README
says) on every path of every command that has it: dry run, real run, and error paths (where
stdout holds nothing, the one-line error going to stderr). With ``--out -`` stdout is the plan
or snapshot itself and the JSON summary goes to stderr."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot, PartitionState
from kadmin.snapshots import write_snapshot
from tests.helpers import write_plan

pytestmark = pytest.mark.zk

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"a": {0: (0, 1), 1: (1, 2)}, "b": {0: (2, 3), 1: (3, 0)}, "gone": {0: (0, 1)}},
    states={"a": {0: PartitionState(1, (0, 1)), 1: PartitionState(1, (1, 2))},
            "b": {0: PartitionState(2, (2, 3)), 1: PartitionState(0, (3, 0))},
            "gone": {0: PartitionState(0, (0, 1))}},
    controller=0, controller_epoch=1)


def document(text: str) -> object:
    """The one JSON document ``text`` holds (json.loads refuses a second one after it)."""
    return json.loads(text)


def lines(text: str) -> list[Any]:
    found = [json.loads(line) for line in text.splitlines()]
    assert found, "no JSON line"
    return found


def nothing(text: str) -> None:
    assert text == "", text


def test_every_command_json_is_json(kadmin: Any, start_sandbox: Any, tmp_path: Path) -> None:
    box = start_sandbox(CLUSTER, latency=0.0)
    zk = ("-z", box.connect_string)
    write_snapshot(CLUSTER, tmp_path / "c.json")
    cluster = ("--cluster", "c.json")
    write_plan(tmp_path / "p.json", {("a", 0): [1, 0], ("b", 0): [3, 2]})
    write_plan(tmp_path / "bad.json", {("a", 0): [1, 9]})  # broker 9 is not registered
    (tmp_path / "e.json").write_text('{"version":1,"partitions":[{"topic":"a","partition":0},'
                                     '{"topic":"a","partition":1}]}')

    def run(*args: str, code: int = 0) -> Any:
        found = kadmin(*args, "--json")
        assert found.code == code, (args, found.out, found.err)
        return found

    # reading
    document(run("status", *zk).out)
    document(run("cluster", "snapshot", *zk, "--out", "snap.json").out)
    snap = run("cluster", "snapshot", *cluster, "--out", "-")
    document(snap.out)
    document(snap.err)
    nothing(run("cluster", "snapshot", *zk, "--out", "snap.json", code=2).out)  # exists
    # planning, to a file and to stdout (then the summary is JSON on stderr)
    document(run("plan", "generate", *cluster, "--topics", "a", "--out", "g.json").out)
    nothing_to_move = run("plan", "generate", *cluster, "--topics", "a", "--out", "-")
    assert document(nothing_to_move.out)["partitions"] == 0  # type: ignore[index]
    for command in (("plan", "generate", *cluster, "--all-topics", "--strategy", "kafka"),
                    ("plan", "rebalance", *cluster, "--brokers", "0,1,2"),
                    ("plan", "demote", *cluster, "--brokers", "1"),
                    ("plan", "replace", *cluster, "--broker", "1", "--with", "3"),
                    ("plan", "election", *cluster, "--all-topics"),
                    ("plan", "deletion", *cluster, "--topics", "gone")):
        to_file = run(*command, "--out", f"{command[1]}-x.json")
        document(to_file.out)
        to_stdout = run(*command, "--out", "-")
        document(to_stdout.out)
        document(to_stdout.err)
        nothing(run(*command, "--out", f"{command[1]}-x.json", code=2).out)  # exists
    document(run("plan", "validate", "p.json", *cluster).out)
    assert len(lines(run("plan", "validate", "p.json", "bad.json", *cluster, code=2).out)) == 2
    document(run("plan", "stats", "--plan", "p.json", *cluster).out)
    nothing(run("plan", "stats", "--plan", "bad.json", *cluster, code=2).out)
    # executing: dry runs are one document, real runs JSON Lines, errors nothing on stdout
    # the dry run predicts the real run's counts: a-1 is led by its preferred replica already
    dry = document(run("elect", "--plan", "e.json", *zk, "--dry-run").out)
    assert (dry["need_nothing"], dry["to_elect"], dry["would_fail_count"]) == (  # type: ignore[index]
        1, ["a-0"], 0)
    planned = lines(run("elect", "--plan", "e.json", *zk, "--timeout", "60").out)[0]
    assert (planned["event"], planned["unchanged"], planned["total"]) == (
        "execution_planned", 1, 2)
    document(run("reassign", "--plan", "p.json", *zk, "--dry-run").out)
    nothing(run("reassign", "--plan", "bad.json", *zk, "--dry-run", code=2).out)
    nothing(run("reassign", "--plan", "bad.json", *zk, code=2).out)
    lines(run("reassign", "--plan", "p.json", *zk, "--timeout", "60").out)
    document(run("verify", "--plan", "p.json", *zk).out)
    document(run("verify", "--plan", "generate-x.json", *zk, code=1).out)
    nothing(run("elect", "--topics", "nosuch", *zk, "--dry-run", code=2).out)
    nothing(run("elect", "--topics", "nosuch", *zk, code=2).out)
    document(run("topics", "delete", "gone", *zk, "--dry-run").out)
    nothing(run("topics", "delete", "nosuch", *zk, "--dry-run", code=2).out)
    lines(run("topics", "delete", "gone", *zk, "--yes", "--timeout", "60").out)
    # throttles
    document(run("throttle", "set", "--throttle", "1MB", *zk, "--brokers", "0,1").out)
    document(run("throttle", "show", *zk).out)
    document(run("throttle", "clear", *zk).out)
    nothing(run("throttle", "set", "--throttle", "fast", *zk, code=2).out)


def test_an_undecodable_file_name_is_escaped_in_json(kadmin_process: Any, tmp_path: Path) -> None:
    """A file name with a byte that is not UTF-8 reaches JSON as an escape, never raw bytes."""
    name = os.fsdecode(b"p\xff.json")
    write_snapshot(CLUSTER, tmp_path / "c.json")
    for args in (("plan", "generate", "--cluster", "c.json", "--all-topics", "--strategy",
                  "kafka", "--out", name, "--json"),
                 ("plan", "validate", name, "--json")):
        run = kadmin_process.run(*args, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        raw = run.stdout.encode("utf-8", "surrogateescape")
        assert b"\xff" not in raw and b"\\udcff" in raw
        doc = json.loads(raw.decode("utf-8"))
        assert name in (doc.get("plan"), doc.get("file"))
