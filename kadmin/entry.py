"""The ``kadmin`` command's first lines: Ctrl-C while the CLI is still being imported.

Importing the CLI (Typer, rich, kazoo, jsonschema) takes a few hundred milliseconds, before the
error contract of :mod:`kadmin.cli.app` is in place; a Ctrl-C then would end in a Python
traceback. This module imports nothing but the standard library, so it is in place at once
(only the interpreter's own start-up, some 20 ms before any kadmin code runs, stays Python's).
"""

from __future__ import annotations

import atexit
import os
import sys

EXIT_INTERRUPTED = 130
INTERRUPTED_AT_START = "kadmin: interrupted; nothing was done"


def main() -> None:
    """Console-script entry point (also ``python -m kadmin``)."""
    try:
        try:
            from kadmin.cli.app import main as cli_main
        except KeyboardInterrupt:
            interrupted(INTERRUPTED_AT_START)
        try:
            cli_main()
        except KeyboardInterrupt:  # between the import and the CLI's own handling
            interrupted(INTERRUPTED_AT_START)
    except SystemExit as done:
        if done.code == EXIT_INTERRUPTED:
            _exit_interrupted()
        raise


def interrupted(line: str) -> None:
    """Exit 130 with ``line`` on stderr, as every Ctrl-C does; a second Ctrl-C meanwhile
    changes nothing."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (KeyboardInterrupt, OSError, ValueError):
        pass
    sys.exit(EXIT_INTERRUPTED)


def _exit_interrupted() -> None:
    """Exit 130 for certain. CPython remembers a KeyboardInterrupt that ended code run by
    ``exec`` of a string (dataclasses and namedtuple make their methods so, while modules are
    imported) and, at the very end, kills itself with SIGINT instead of exiting with the code
    it was given: the exit handlers run here, then the process ends at once."""
    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException:  # a second Ctrl-C: end all the same
        pass
    os._exit(EXIT_INTERRUPTED)
