"""Usage errors (unknown option, bad value, missing argument or command) through the console
entry point: one line naming the problem and where the help is, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize(("args", "line"), [
    (["reassign", "--plan", "p.json", "--batch-size", "abc"],
     "kadmin: error: Invalid value for '--batch-size': 'abc' is not a whole number (ASCII decimal "
     "digits such as 3 or 1000) (see 'kadmin reassign --help')"),
    (["plan", "generate", "--bogus"],
     "kadmin: error: No such option: --bogus"),
    (["elect", "--topics"], "kadmin: error: Option '--topics' requires an argument"),
    (["plan", "validate"],
     "kadmin: error: no plan given: name the plans to check (kadmin plan validate FILE ... or "
     "--plan FILE)"),
    (["topics", "delete", "-z", "127.0.0.1:1"],
     "kadmin: error: give topic names (as arguments or --topics a,b) or --plan FILE"),
    # kadmin's own options after the command: where they go
    (["status", "-z", "127.0.0.1:1", "--zk-tls"],
     "kadmin: error: --zk-tls is an option of kadmin itself: it goes before the command "
     "(kadmin --zk-tls status ...)"),
    (["plan", "validate", "p.json", "--zk-ca", "ca.pem"],
     "kadmin: error: --zk-ca is an option of kadmin itself: it goes before the command "
     "(kadmin --zk-ca ... plan validate ...)"),
    (["reassign", "--plan", "p.json", "--verbose"],
     "kadmin: error: --verbose is an option of kadmin itself: it goes before the command "
     "(kadmin --verbose reassign ...)"),
    (["topics", "delete", "t", "--max-znode-bytes", "10"],
     "kadmin: error: Invalid value for '--max-znode-bytes': "),
    (["plan"], "kadmin: error: missing command (see 'kadmin plan --help')"),
    (["status", "-z", "127.0.0.1:1", "--connect-timeout", "inf"],
     "kadmin: error: Invalid value for '--connect-timeout': "),
    (["status", "-z", "127.0.0.1:1", "--session-timeout", "inf"],
     "kadmin: error: Invalid value for '--session-timeout': "),
    (["status", "-z", "127.0.0.1:1", "--session-timeout", "nan"],
     "kadmin: error: Invalid value for '--session-timeout': "),
    (["reassign", "--plan", "p.json", "--timeout", "inf"],
     "kadmin: error: Invalid value for '--timeout': 'inf' is not a number of seconds"),
    (["reassign", "--plan", "p.json", "--health-interval", "inf"],
     "kadmin: error: Invalid value for '--health-interval': 'inf' is not a number of seconds"),
    (["reassign", "--plan", "p.json", "--health-interval", "-1"],
     "kadmin: error: Invalid value for '--health-interval': "),
    (["plan", "generate", "--cluster", "c.json", "--all-topics", "--out", ""],
     "kadmin: error: Invalid value for '--out' / '-o': must name a file, not be empty"),
    (["cluster", "snapshot", "--cluster", "c.json", "--out", ""],
     "kadmin: error: Invalid value for '--out' / '-o': must name a file, not be empty"),
    (["spark", "plan", "--cluster", "snap", "--all-topics", "--out", "-"],
     "kadmin: error: Invalid value for '--out' / '-o': '-' (stdout) is not possible here"),
    (["sandbox", "--record", "-"],
     "kadmin: error: Invalid value for '--record': '-' (stdout) is not possible here"),
    (["reassign", "--plan", "p.json", "-z", "127.0.0.1:1", "--max-znode-bytes", "1048575"],
     "kadmin: error: --max-znode-bytes 1,048,575 is more than ZooKeeper accepts: at most "
     "1,047,551 with jute.maxbuffer 1,048,575"),
    (["topics", "delete", "t", "-z", "127.0.0.1:1", "--max-znode-bytes", "2000000",
      "--jute-maxbuffer", "2000000"], "kadmin: error: --max-znode-bytes 2,000,000 is more "),
    (["spark", "plan", "--cluster", "snap", "--all-topics", "--out", "o",
      "--max-znode-bytes", "1048000"], "kadmin: error: --max-znode-bytes 1,048,000 is more "),
    (["spark", "rebalance", "--cluster", "snap", "--out", "-"],
     "kadmin: error: Invalid value for '--out' / '-o': '-' (stdout) is not possible here"),
    (["spark", "rebalance", "--cluster", "snap", "--out", "o", "--max-znode-bytes", "1048000"],
     "kadmin: error: --max-znode-bytes 1,048,000 is more "),
    (["spark", "rebalance", "--cluster", "snap", "--out", "o", "--topics", "a",
      "--all-topics"], "kadmin: error: choose exactly one of --topics, --topics-file and "),
    (["spark", "rebalance", "--cluster", "snap", "--out", "o", "--max-moves", "-1"],
     "kadmin: error: Invalid value for '--max-moves': "),
])
def test_a_usage_error_is_one_line_and_exit_2(kadmin, tmp_path: Path, args: list[str],
                                              line: str) -> None:
    run = kadmin(*args)

    assert run.code == 2
    assert run.err.splitlines()[0].startswith(line), run.err
    assert len(run.err.splitlines()) == 1, run.err
    assert list(tmp_path.iterdir()) == []  # the scratch working directory stays empty


def test_a_larger_jute_maxbuffer_allows_larger_znodes(kadmin) -> None:
    # "--all": the old spelling of --all-topics, still accepted
    run = kadmin("elect", "--all", "-z", "127.0.0.1:1", "--connect-timeout", "0.5",
                 "--max-znode-bytes", "2000000", "--jute-maxbuffer", "4194304")

    assert run.code == 1 and run.err.startswith("kadmin: error: cannot reach ZooKeeper"), run.err


def test_help_is_not_an_error(kadmin) -> None:
    run = kadmin("reassign", "--help")

    assert run.code == 0 and "--batch-size" in run.out and run.err == ""


@pytest.mark.parametrize(("args", "shown"), [
    # plan validate gives each plan named a verdict line: the name escaped there
    (["plan", "validate", "a\nkadmin: error: forged"],
     "a\\nkadmin: error: forged: error: no such file"),
    (["plan", "generate", "--cluster", "c\x1b[2J.json", "--all-topics"], "c\\x1b[2J.json"),
    (["status", "-z", "h\rforged:1"], "'h\\rforged'"),
    (["topics", "delete", "t\u202eevil", "-z", "127.0.0.1:1"], "t\\u202eevil"),
    (["plan", "validate", "--bo\ngus"], "--bo"),
])
def test_control_characters_from_the_command_line_are_escaped(kadmin, args: list[str],
                                                               shown: str) -> None:
    """A control character in a path, name or option value must not forge a second message
    line, clear the screen or reorder the text: it is shown escaped, as repr() writes it."""
    run = kadmin(*args)

    assert run.code == 2
    assert len(run.err.splitlines()) == 1, run.err
    assert run.err.startswith(("kadmin: error: ", shown)) and shown in run.err, run.err
    assert run.err.endswith("\n") and run.err[:-1].isprintable()


def test_printable_escapes_what_is_not_printable_only() -> None:
    from kadmin.model import printable

    assert printable("plans/réassign 1.json") == "plans/réassign 1.json"
    assert printable("a\nb\tc\r\x00\x1b\x7f\x85\u202e\u2028\U000e0001") == (
        "a\\nb\\tc\\r\\x00\\x1b\\x7f\\x85\\u202e\\u2028\\U000e0001")


def test_plan_validate_takes_the_plan_as_argument_or_as_plan(kadmin, tmp_path: Path) -> None:
    """One word per idea: `--plan FILE` as on every command that reads a plan, the bare
    argument (the command's subject) too, and both together."""
    good = '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]}]}'
    (tmp_path / "a.json").write_text(good)
    (tmp_path / "b.json").write_text('{"version":1,"partitions":[]}')
    assert kadmin("plan", "validate", "--plan", "a.json").code == 0
    both = kadmin("plan", "validate", "a.json", "--plan", "b.json", "--json")
    assert both.code == 2
    verdicts = {v["file"]: v["valid"] for v in map(json.loads, both.out.splitlines())}
    assert verdicts == {"a.json": True, "b.json": False}


def test_root_options_are_kadmins_own() -> None:
    """The list that says where an option goes is the root command's options, exactly."""
    from kadmin.cli.app import ROOT_OPTIONS, command_tree
    root = command_tree(every_command=False)
    assert {o for p in root.params for o in p.opts if o != "--help"} == ROOT_OPTIONS
