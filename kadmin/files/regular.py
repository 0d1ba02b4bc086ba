"""Regular files only: a named pipe opened for reading blocks, a device never ends, a link may
point anywhere. Every file kadmin opens is checked to be a regular file on its descriptor, and
every way one can be wrong is one :class:`InvalidInput` line naming it."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, cast

from kadmin.model import InvalidInput


def fdopen_regular(fd: int, path: Path, mode_text: str, refusal: str) -> BinaryIO:
    """The open descriptor ``fd`` of ``path`` as a file object (``mode_text``) once fstat shows
    a regular file; closed and refused by name (``refusal`` ends the message) otherwise."""
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InvalidInput(f"{path} is a folder, expected a file")
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{path} is {file_type(mode)}{refusal}")
        os.set_blocking(fd, True)
        return cast(BinaryIO, os.fdopen(fd, mode_text))
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, refused unless it is a regular file.

    A named pipe (FIFO) opened for reading blocks until something writes to it, and a device
    such as /dev/zero never ends: kadmin would hang or fill memory. The file is opened without
    blocking and then checked with fstat, on the descriptor itself, so nothing can swap the
    path for a pipe between the check and the open. Regular files read as ever afterwards.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise unreadable(path, exc) from None
    return fdopen_regular(fd, path, "rb", ", not a regular file")


def require_regular(path: Path) -> None:
    """Refuse ``path`` unless it is a regular file, for files another library opens by name
    (TLS certificates and keys: OpenSSL and kazoo). A check before their open, so a path
    swapped for a pipe in between would still block there; these are the operator's own files."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise unreadable(path, exc) from None
    if stat.S_ISDIR(mode):
        raise InvalidInput(f"{path} is a folder, expected a file")
    if not stat.S_ISREG(mode):
        raise InvalidInput(f"{path} is {file_type(mode)}, not a regular file")


def file_type(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file"


def unreadable(path: Path, exc: OSError) -> InvalidInput:
    """The one line for a file that cannot be read, in the operator's words."""
    if isinstance(exc, FileNotFoundError):
        return InvalidInput(f"{path}: no such file")
    if isinstance(exc, IsADirectoryError):
        return InvalidInput(f"{path} is a folder, expected a file")
    if isinstance(exc, PermissionError):
        return InvalidInput(f"{path}: permission denied")
    return InvalidInput(f"{path}: cannot read ({exc.strerror or exc})")
