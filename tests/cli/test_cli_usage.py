"""Usage errors (unknown option, bad value, missing argument or command) through the console
entry point: one line naming the problem and where the help is, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize(("args", "line"), [
    (["reassign", "--plan", "p.json", "--batch-size", "abc"],
     "kadmin: error: Invalid value for '--batch-size': Input should be a valid integer, unable to "
     "parse string as an integer (see 'kadmin reassign --help')"),
    (["plan", "generate", "--bogus"],
     "kadmin: error: No such option: --bogus"),
    (["elect", "--topics"], "kadmin: error: Option '--topics' requires an argument"),
    (["plan", "validate"],
     "kadmin: error: Missing argument"),
    (["topics", "delete", "t", "--max-znode-bytes", "10"],
     "kadmin: error: Invalid value for '--max-znode-bytes': "),
    (["plan"], "kadmin: error: missing command (see 'kadmin plan --help')"),
])
def test_a_usage_error_is_one_line_and_exit_2(kadmin, tmp_path: Path, args: list[str],
                                              line: str) -> None:
    run = kadmin(*args)

    assert run.code == 2
    assert run.err.splitlines()[0].startswith(line), run.err
    assert len(run.err.splitlines()) == 1, run.err
    assert list(tmp_path.iterdir()) == []  # the scratch working directory stays empty


def test_help_is_not_an_error(kadmin) -> None:
    run = kadmin("reassign", "--help")

    assert run.code == 0 and "--batch-size" in run.out and run.err == ""


@pytest.mark.parametrize(("args", "shown"), [
    (["plan", "validate", "a\nkadmin: error: forged"], "a\\nkadmin: error: forged: no such file"),
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
    assert run.err.startswith("kadmin: error: ") and shown in run.err, run.err
    assert run.err.isprintable() or run.err.endswith("\n") and run.err[:-1].isprintable()


def test_printable_escapes_what_is_not_printable_only() -> None:
    from kadmin.model import printable

    assert printable("plans/réassign 1.json") == "plans/réassign 1.json"
    assert printable("a\nb\tc\r\x00\x1b\x7f\x85\u202e\u2028\U000e0001") == (
        "a\\nb\\tc\\r\\x00\\x1b\\x7f\\x85\\u202e\\u2028\\U000e0001")
