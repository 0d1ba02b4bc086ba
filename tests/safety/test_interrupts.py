"""Ctrl-C: exit 130 with one line, never a traceback - also while the CLI
is still being imported - and the line says "run again to resume" only for the commands that
resume (``reassign``, ``elect``); a planner such as ``spark rebalance`` writes its output whole
or not at all, so an interrupted one wrote nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kadmin.cli.app import interrupted_line

TIME_LIMIT = 60

INTERRUPT_ON_IMPORT = textwrap.dedent("""
    import importlib.abc, os, signal, sys

    class Interrupt(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == module:
                sys.meta_path.remove(self)
                # as the operator's Ctrl-C, landing in code made by exec of a string, as
                # dataclasses and namedtuple make their methods while modules are imported
                exec("os.kill(os.getpid(), signal.SIGINT); sum(range(99))")
            return None

    module = sys.argv.pop(1)
    sys.meta_path.insert(0, Interrupt())
    sys.argv[0] = "kadmin"
    from kadmin.entry import main
    main()
""")


@pytest.mark.parametrize(("module", "line"), [
    *((m, "kadmin: interrupted; nothing was done\n") for m in ("typer", "rich.console")),
    # imported once `status` is chosen, when its command module loads: status writes nothing
    *((m, "kadmin: interrupted; nothing was written\n")
      for m in ("kazoo.client", "kadmin.operations.status", "kadmin.cli.status", "kadmin.cli.render",
                "kadmin.zk.session"))])
def test_ctrl_c_while_the_cli_is_imported_exits_130_with_one_line(module: str, line: str,
                                                                  tmp_path: Path) -> None:
    """The SIGINT arrives exactly when ``module`` starts importing, inside code run by exec of
    a string. Run with ``python -m``, as ``python -m kadmin`` is: CPython then remembers such a
    KeyboardInterrupt and used to end the process by SIGINT even after kadmin's handler chose
    exit 130."""
    (tmp_path / "interrupting.py").write_text(INTERRUPT_ON_IMPORT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run([sys.executable, "-m", "interrupting", module, "status", "-z",
                          "127.0.0.1:1", "--connect-timeout", "1"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=TIME_LIMIT)
    assert run.returncode == 130, run.stderr
    assert run.stderr == line
    assert [p.name for p in tmp_path.iterdir()] == ["interrupting.py"]


@pytest.mark.parametrize(("argv", "line"), [
    (["reassign", "--plan", "p.json", "-z", "zk:2181"], "run the same command again to resume"),
    (["--zk-sasl-file", "s.json", "reassign", "--plan", "p.json"],
     "run the same command again to resume"),
    (["elect", "--all", "-z", "zk:2181"], "run the same command again to finish the election"),
    (["topics", "delete", "a", "--yes"], "topics already queued in /admin/delete_topics"),
    (["spark", "rebalance", "--cluster", "snap", "--out", "o"], "nothing was written"),
    (["spark", "plan", "--cluster", "snap", "--out", "o"], "nothing was written"),
    (["plan", "rebalance", "-z", "zk:2181"], "nothing was written"),
    (["--zk-tls", "cluster", "snapshot", "-z", "zk:2181"], "nothing was written"),
    (["status", "-z", "zk:2181"], "nothing was written"),
    (["throttle", "clear", "-z", "zk:2181"], "see what is in force with kadmin throttle show"),
    (["--zk-auth-file", "reassign", "status"], "nothing was written"),  # a file named reassign
])
def test_the_interrupted_line_promises_a_resume_only_where_there_is_one(
        argv: list[str], line: str) -> None:
    said = interrupted_line(argv)
    assert said.startswith("kadmin: interrupted; ")
    assert line in said
    assert ("resume" in said) == (argv[0] == "reassign" or argv[2:3] == ["reassign"])


def test_ctrl_c_in_a_command_that_does_not_resume_says_nothing_was_written(
        tmp_path: Path) -> None:
    """A server that accepts the connection and never answers keeps ``status`` inside the
    command; the operator gives up with Ctrl-C."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        process = subprocess.Popen(
            [sys.executable, "-m", "kadmin", "status", "-z", f"127.0.0.1:{port}",
             "--connect-timeout", "50"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            silent.settimeout(TIME_LIMIT)
            connection, _ = silent.accept()  # kadmin is connecting: inside the command
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=TIME_LIMIT)
            connection.close()
        finally:
            process.kill()
    assert process.returncode == 130, err
    assert err.splitlines()[-1] == "kadmin: interrupted; nothing was written", err
    assert "Traceback" not in err
