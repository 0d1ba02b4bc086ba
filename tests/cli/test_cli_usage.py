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
