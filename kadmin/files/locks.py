"""Locks between kadmin processes: one run of a plan at a time."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kadmin.files.regular import open_regular
from kadmin.model import Conflict


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the existing file ``path`` for the block; another kadmin
    process that asks for it meanwhile gets a Conflict at once.

    flock(2) on the file itself: no lock file to create or leave behind, and the kernel drops
    the lock when its process dies, so a killed run never blocks the next one."""
    with open_regular(path) as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Conflict(f"{path} is being run by another kadmin process; run it again once "
                           "that one has ended") from None
        yield
