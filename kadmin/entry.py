"""The ``kadmin`` command's first lines: Ctrl-C while the CLI is still being imported.

Importing the CLI (Typer, rich, kazoo, jsonschema) takes a few hundred milliseconds, before the
error contract of :mod:`kadmin.cli.app` is in place; a Ctrl-C then would end in a Python
traceback. This module imports nothing but the standard library, so it is in place at once.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130
INTERRUPTED_AT_START = "kadmin: interrupted; nothing was done"


def main() -> None:
    """Console-script entry point (also ``python -m kadmin``)."""
    try:
        from kadmin.cli.app import main as cli_main
    except KeyboardInterrupt:
        interrupted(INTERRUPTED_AT_START)
    try:
        cli_main()
    except KeyboardInterrupt:  # between the import and the CLI's own handling
        interrupted(INTERRUPTED_AT_START)


def interrupted(line: str) -> None:
    """Exit 130 with ``line`` on stderr, as every Ctrl-C does; a second Ctrl-C meanwhile
    changes nothing."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (KeyboardInterrupt, OSError, ValueError):
        pass
    sys.exit(EXIT_INTERRUPTED)
