"""Careless and hostile use of ``reassign --cancel`` and ``--repair-stale``: options that do
not go together, a rollback file that is not one, a release that contradicts ZooKeeper, a
confirmation declined. Each is exit 2 (or 1 when declined) with one error line, and nothing in
ZooKeeper changes."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin.sandbox import Sandbox
from kadmin.zk import paths
from tests.helpers import KadminProcesses, write_plan
from tests.integration.test_cancel import CLUSTER, topic_doc

pytestmark = pytest.mark.zk


@pytest.fixture
def in_flight(kadmin: Callable[..., Any], start_sandbox: Callable[..., Sandbox],
              tmp_path: Path) -> Sandbox:
    """Kafka 2.8's controller with t-0 moving onto broker 6, which never catches up."""
    box = start_sandbox(CLUSTER, stuck_brokers=[6], latency=0.05)
    write_plan(tmp_path / "p.json", {("t", 0): (6, 2, 3)})
    assert kadmin("reassign", "--plan", "p.json", "-z", box.connect_string,
                  "--timeout", "1").code == 1
    return box


def unchanged(box: Sandbox) -> tuple[bytes, dict[str, Any]]:
    return box.client.get(paths.REASSIGN_PARTITIONS)[0], topic_doc(box.client, "t")


@pytest.mark.parametrize(("args", "message"), [
    (["--cancel", "--throttle", "10MB"], "--cancel takes no --throttle"),
    (["--cancel", "--elect"], "--cancel takes no --elect"),
    (["--cancel", "--repair-stale"], "give --cancel or --repair-stale, not both"),
    (["--repair-stale", "--plan", "p.json"], "--repair-stale takes no --plan"),
    (["--plan", "p.json", "--yes"], "--yes goes with --cancel"),
    (["--plan", "p.json", "--rollback", "p.rollback.json"], "--rollback goes with --cancel"),
    (["--cancel", "--kafka-version", "2.x"], "--kafka-version: Kafka version '2.x'"),
    (["--cancel", "--kafka-version", "4.1"], "only the ZooKeeper era"),
    (["--cancel", "--kafka-version", "2.3", "--yes"],
     "--kafka-version 2.3 contradicts ZooKeeper: topic znode t is version 2"),
    (["--cancel", "--rollback", "missing.json", "--yes"], "missing.json"),
    (["--cancel", "--rollback", "fifo", "--yes"], "fifo"),
    (["--cancel", "--rollback", "garbage.json", "--yes"], "garbage.json"),
])
def test_bad_combinations_and_files_are_refused_and_change_nothing(
        kadmin: Callable[..., Any], in_flight: Sandbox, tmp_path: Path, args: list[str],
        message: str) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "garbage.json").write_text('{"version": 1, "partitions": [{"topic": 5}]}')
    before = unchanged(in_flight)

    run = kadmin("reassign", "-z", in_flight.connect_string, *args)

    assert run.code == 2, (run.out, run.err)
    assert run.err.startswith("kadmin: error: ") and message in run.err.splitlines()[0], run.err
    assert unchanged(in_flight) == before


def test_a_declined_confirmation_writes_nothing(
        kadmin_process: KadminProcesses, in_flight: Sandbox, tmp_path: Path) -> None:
    before = unchanged(in_flight)
    process = kadmin_process("reassign", "--cancel", "--plan", "p.json", "-z",
                             in_flight.connect_string, stdin=subprocess.PIPE, cwd=tmp_path)
    _out, err = process.communicate("n\n", timeout=120)

    assert process.returncode == 1
    assert "revert 1 partition(s) to their original replicas (t-0): delete " in err
    assert "cancel not confirmed; nothing was written" in err
    assert unchanged(in_flight) == before
    assert "cancelled" not in json.loads((tmp_path / "p.journal.json").read_text())
