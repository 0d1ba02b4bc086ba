"""A reader that goes away before kadmin wrote everything (``kadmin ... --out - | head -1``):
exit 141, as a tool killed by SIGPIPE, never 0 with a success line, on every command that writes
its data to stdout, whether the data is one large write (a snapshot) or many."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kadmin.snapshots import write_snapshot
from kadmin.synthetic import synthetic_cluster

COMMANDS = {
    "cluster snapshot": ["cluster", "snapshot", "--out", "-"],
    "plan generate": ["plan", "generate", "--all-topics", "--strategy", "kafka", "--out", "-"],
    "plan rebalance": ["plan", "rebalance", "--out", "-"],
    "plan demote": ["plan", "demote", "--brokers", "1", "--out", "-"],
    "plan election": ["plan", "election", "--all-topics", "--out", "-"],
}


@pytest.fixture(scope="module")
def big_cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cluster whose snapshot and plans are many times a pipe's buffer."""
    path = tmp_path_factory.mktemp("closed") / "big.json"
    write_snapshot(synthetic_cluster(brokers=6, topics=80, partitions=100, replication_factor=3,
                                     seed=1), path)
    return path


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_pipe_is_exit_141_and_no_success(kadmin_process: Any, big_cluster: Path,
                                                   command: str) -> None:
    run = kadmin_process(*COMMANDS[command], "--cluster", str(big_cluster), "--json")
    assert run.stdout is not None and run.stderr is not None
    # `| head -1` of a snapshot (a topic a line); `| head -c 100` of a plan (one line)
    got = run.stdout.readline() if command == "cluster snapshot" else run.stdout.read(100)
    assert got.startswith("{")
    run.stdout.close()
    assert run.wait(timeout=180) == 141, run.stderr.read()
    assert run.stderr.read() == ""
