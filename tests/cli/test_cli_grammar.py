"""One grammar on the command line: the same word for the same idea on every command,
help on every option, ``--json`` wherever a result is reported, the ZooKeeper options alike
everywhere, and the old spellings still working, hidden from help."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kadmin.cli.aliases import OLD_SPELLINGS
from kadmin.cli.app import command_tree

ROOT = command_tree()


def leaves(group: Any = ROOT, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every command kadmin runs, as (its words after ``kadmin``, the Click command)."""
    for name, sub in sorted(getattr(group, "commands", {}).items()):
        if hasattr(sub, "commands"):
            yield from leaves(sub, (*path, name))
        else:
            yield " ".join((*path, name)), sub


COMMANDS = dict(leaves())


def options(command: Any) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "option"]


def names(command: Any, *, hidden: bool = False) -> set[str]:
    return {o for p in options(command) if p.hidden == hidden
            for o in (*p.opts, *p.secondary_opts)}


def test_every_command_is_walked() -> None:
    assert {"plan generate", "plan rebalance", "plan validate", "plan stats", "plan election",
            "plan deletion", "cluster snapshot", "status", "reassign", "verify", "elect",
            "topics delete", "throttle show", "throttle clear", "throttle set", "spark plan",
            "spark rebalance", "sandbox", "demo", "zk serve"} <= set(COMMANDS)


def test_every_option_and_argument_has_help() -> None:
    missing = [f"kadmin {path} {'/'.join(p.opts)}" for path, command in COMMANDS.items()
               for p in command.params if not p.hidden and not (getattr(p, "help", None) or "").strip()]
    assert missing == []


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_that_reports_a_result_has_json(path: str) -> None:
    assert "--json" in names(COMMANDS[path])


def test_the_zookeeper_options_are_the_same_everywhere() -> None:
    connecting = {path: command for path, command in COMMANDS.items()
                  if "--zookeeper" in names(command)}
    assert len(connecting) >= 15
    shapes = {(tuple(p.opts), p.help, p.default, p.envvar, getattr(p, "min", None),
               getattr(p, "max", None))
              for command in connecting.values() for p in options(command)
              if p.opts[0] in ("--zookeeper", "--connect-timeout", "--session-timeout")}
    assert len(shapes) == 3, shapes
    for path, command in connecting.items():
        assert {"-z", "--connect-timeout", "--session-timeout"} <= names(command), path


RETIRED = {"--all", "--rate", "--latency-ms", "--out-dir", "--racks"}
"""Old words no visible option uses any more (OLD_SPELLINGS keeps them working)."""


def test_one_word_per_idea() -> None:
    for path, command in COMMANDS.items():
        visible = names(command)
        assert not visible & RETIRED, (path, visible & RETIRED)
        for param in (p for p in options(command) if not p.hidden):
            if {"--brokers", "--topics"} & set(param.opts):  # lists of ids and names, never counts
                given = command.make_context("kadmin", [param.opts[0], "1,2"],
                                             resilient_parsing=True).params[param.name]
                assert given == "1,2", (path, param.opts)
            if "--out" in param.opts:
                assert "-o" in param.opts, path
        if "--throttle" in visible:
            assert "--rate" not in visible


@pytest.mark.parametrize(("path", "new", "old"), [
    (path, new, old) for path, renamed in OLD_SPELLINGS.items()
    for new, olds in renamed.items() for old in olds])
def test_an_old_spelling_is_hidden_and_parses_as_the_new(path: str, new: str, old: str) -> None:
    command = COMMANDS[path]
    assert old in names(command, hidden=True) and old not in names(command)
    (option,) = [p for p in options(command) if new in p.opts]
    value = [] if option.is_flag else ["7"]
    as_new = command.make_context("kadmin", [new, *value], resilient_parsing=True).params
    as_old = command.make_context("kadmin", [old, *value], resilient_parsing=True).params
    assert as_new == as_old
    assert as_new[option.name] != option.default


def test_plan_election_deletion_and_snapshot_report_json(kadmin: Any, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({"version": 1, "brokers": {"0": {}, "1": {}}, "topics": {
        "orders": {"0": [0, 1], "1": [1, 0]}, "audit": {"0": [0, 1]}}}))

    elected = kadmin("plan", "election", "--cluster", str(cluster), "--all-topics", "-o",
                     "e.json", "--json")
    assert elected.code == 0, elected.err
    assert json.loads(elected.out) == {"plan": "e.json", "partitions": 3}
    deleted = kadmin("plan", "deletion", "--topics", "audit", "--cluster", str(cluster), "-o",
                     "d.json", "--json")
    assert deleted.code == 0, deleted.err
    assert json.loads(deleted.out) == {"plan": "d.json", "topics": 1}
    snapshot = kadmin("cluster", "snapshot", "--cluster", str(cluster), "-o", "snap",
                      "--format", "dir", "--json")
    assert snapshot.code == 0, snapshot.err
    assert json.loads(snapshot.out) == {"snapshot": "snap", "format": "dir", "brokers": 2,
                                        "topics": 2, "partitions": 3}
    # the data on stdout: the summary is the person's line on stderr, never JSON on stdout
    to_stdout = kadmin("plan", "election", "--cluster", str(cluster), "--topics", "audit",
                       "-o", "-", "--json")
    assert to_stdout.code == 0, to_stdout.err
    assert json.loads(to_stdout.out) == {"version": 1, "partitions": [
        {"topic": "audit", "partition": 0}]}


READS_A_PLAN = {"reassign", "verify", "elect", "topics delete", "plan stats"}
"""plan validate reads plans too: its FILE... arguments name plan files."""


@pytest.mark.parametrize("path", sorted(READS_A_PLAN))
def test_the_plan_a_command_reads_is_plan_file(path: str) -> None:
    assert "--plan" in names(COMMANDS[path])


def test_plan_stats_takes_its_old_bare_argument_too(kadmin: Any, tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps({"version": 1, "brokers": {"0": {}, "1": {}},
                                                       "topics": {"t": {"0": [0]}}}))
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1]}]}))
    runs = [kadmin("plan", "stats", *where, "--cluster", "cluster.json", "--json")
            for where in (["--plan", "p.json"], ["p.json"])]
    assert runs[0].code == runs[1].code == 0, runs[1].err
    assert runs[0].out == runs[1].out and json.loads(runs[0].out)["replica_moves"] == 1
    twice = kadmin("plan", "stats", "p.json", "--plan", "p.json", "--cluster", "cluster.json")
    assert (twice.code, twice.err) == (
        2, "kadmin: error: give the plan once: --plan p.json or p.json, not both\n")
    assert "plan_file" not in kadmin("plan", "stats", "--help").out  # hidden
