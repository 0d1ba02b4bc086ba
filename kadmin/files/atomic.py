"""Atomic writes: a temp file in the same folder, fsync, rename, fsync of the folder. A crash or
a full disk leaves the old file or the new one, never half a plan, so a rollback file that exists
is always complete. Existing files are refused unless forced, because a plan or a rollback file is
the record of what was done to a cluster and must not be replaced by accident.

One rule for every name kadmin writes (:func:`check_target`): it may replace only a regular file
(with ``--force``), or, for a folder output, a folder kadmin wrote itself. A folder where a file
goes, a device, a named pipe, a socket and a symbolic link are refused by name before anything is
written: a link is never written through nor replaced (its target may be anything, anywhere).
"""

from __future__ import annotations

import errno
import itertools
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from kadmin.files.layout import dumps_json
from kadmin.files.regular import fdopen_regular, file_type
from kadmin.model import InvalidInput, KadminError, OperationFailed


def atomic_write_bytes(path: Path, data: bytes, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` atomically; refuse an existing file unless ``force``."""
    atomic_write_files([(path, data)], force=force)


def atomic_write_json(path: Path, doc: object, *, force: bool = False, compact: bool = False,
                      read_back: ReadBack | None = None) -> None:
    """Write ``doc`` as JSON atomically, laid out by :func:`dumps_json`."""
    atomic_write_files([(path, dumps_json(doc, compact=compact))], force=force,
                       read_back=read_back)


ReadBack = Callable[[Path, Path], None]
"""Reads back a file (or folder) kadmin wrote, before it is put in place: called with the name it
gets and the temporary name that holds it now; raises a :class:`KadminError` for a defect."""


def _read_back(read_back: ReadBack | None, path: Path, temp: Path) -> None:
    """Run ``read_back`` on what was written for ``path``: a file kadmin would refuse to read is
    kadmin's own defect, an internal error naming the file, and nothing is replaced."""
    if read_back is None:
        return
    try:
        read_back(path, temp)
    except KadminError as exc:
        named = str(temp), str(path)
        raise OperationFailed(f"internal error: {path} as written fails kadmin's own check when "
                              f"read back ({str(exc).replace(*named)}); nothing was replaced",
                              details=(line.replace(*named) for line in exc.details),
                              more=exc.more) from None


@contextmanager
def atomic_dir(path: Path, *, marker: str, force: bool = False,
               read_back: ReadBack | None = None) -> Iterator[Path]:
    """Yield a hidden temp sibling of ``path`` to fill with files; when the block succeeds it is
    synced and renamed to ``path`` at once, when it fails it is removed.

    So a crash never leaves a half-written folder that looks finished. With ``force`` an existing
    ``path`` (a regular file, or a folder kadmin wrote: one holding ``marker`` and only regular
    files, or an empty one) is moved aside, replaced, then deleted; between the two renames
    ``path`` briefly does not exist, and the old one is put back if the second rename fails.
    """
    check_target(path, force, marker=marker)
    _make_parent(path)
    temp = _temp_sibling(path, ".tmp")
    try:
        temp.mkdir()
        yield temp
        _fsync_dir(temp)
        _read_back(read_back, path, temp)
        if os.path.lexists(path):
            check_target(path, force, marker=marker)
            old = _temp_sibling(path, ".old")
            os.rename(path, old)
            try:
                os.rename(temp, path)
            except OSError:
                os.rename(old, path)  # put the old folder back rather than lose both
                raise
            _remove(old)
        else:
            os.rename(temp, path)
        _fsync_dir(path.parent)
    except OSError as exc:
        raise write_error(path, exc) from None
    finally:
        _remove(temp)


def atomic_write_dir(path: Path, chunks: Iterable[tuple[str, bytes]], *, marker: str,
                     force: bool = False, read_back: ReadBack | None = None) -> None:
    """Build a folder from ``(file name, bytes)`` chunks with :func:`atomic_dir`.

    Chunks for different files may interleave: a generator can stream two files in one pass
    without holding either in memory (every file stays open until the end, so this suits a few
    files; many files are written one by one inside :func:`atomic_dir`).
    """
    with atomic_dir(path, marker=marker, force=force, read_back=read_back) as temp:
        handles: dict[str, BinaryIO] = {}
        try:
            for name, data in chunks:
                handle = handles.get(name)
                if handle is None:
                    handle = handles[name] = (temp / name).open("xb")
                handle.write(data)
            for handle in handles.values():
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            for handle in handles.values():
                handle.close()


def atomic_write_files(items: Sequence[tuple[Path, bytes]], *, force: bool = False,
                       read_back: ReadBack | None = None) -> None:
    """Write files that belong together (a plan and its rollback file) as one: all or none.

    Every file is first written to a temp sibling and synced, so a full disk fails before any
    name appears, and checked with ``read_back`` when given; then each is put in place. Should
    that fail for one, those already put in place are taken back (with ``force``, the files
    they replaced are restored).
    """
    for path, _ in items:
        check_target(path, force)
    temps: list[Path] = []
    placed: list[tuple[Path, Path | None]] = []
    """Each file put in place, with the backup (a hard link) of the file it replaced."""
    current = items[0][0] if items else Path()
    try:
        for path, data in items:
            current = path
            _make_parent(path)
            temps.append(_temp_sibling(path, ".tmp"))
            _write_synced(temps[-1], data)
        for (path, _), temp in zip(items, temps, strict=True):
            _read_back(read_back, path, temp)
        for (path, _), temp in zip(items, temps, strict=True):
            current = path
            backup = _backup(path) if force else None
            try:
                if force:
                    check_target(path, force)  # again: the name may have changed meanwhile
                    os.replace(temp, path)
                else:
                    _link_no_clobber(temp, path)
            except BaseException:
                if backup is not None:
                    _remove(backup)
                raise
            placed.append((path, backup))
        for parent in dict.fromkeys(path.parent for path, _ in items):
            _fsync_dir(parent)
    except BaseException as exc:
        _take_back(placed)
        if isinstance(exc, OSError):
            raise write_error(current, exc) from None
        raise
    finally:
        for temp in temps:
            _remove(temp)
        for _, backup in placed:
            if backup is not None:
                _remove(backup)


def _write_synced(temp: Path, data: bytes) -> None:
    # O_EXCL with mode 0o666 lets the umask decide the permissions, as for any new file
    # (tempfile.mkstemp would make every plan 0600).
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _backup(path: Path) -> Path | None:
    """A second name for the file about to be replaced, to restore it if a later file of the
    same write fails; None when there is none (or the file system has no hard links)."""
    backup = _temp_sibling(path, ".old")
    try:
        os.link(path, backup)
    except OSError:
        return None
    return backup


def _take_back(placed: Sequence[tuple[Path, Path | None]]) -> None:
    for path, backup in reversed(placed):
        with suppress(OSError):
            if backup is not None:
                os.replace(backup, path)
            else:
                path.unlink()


def _link_no_clobber(temp: Path, path: Path) -> None:
    """Put ``temp`` at ``path`` unless something got there since the first check.

    A hard link fails if the target exists, so two runs racing for one file cannot both win. File
    systems without hard links fall back to check-then-rename.
    """
    try:
        os.link(temp, path)
    except FileExistsError:
        check_target(path, False)
    except OSError:
        check_target(path, False)
        os.replace(temp, path)


def check_target(path: Path, force: bool, *, marker: str | None = None) -> None:
    """Refuse ``path`` as a name kadmin writes, unless it is free, or (with ``force``) a regular
    file, or (for a folder output, ``marker`` given) a folder kadmin wrote itself.

    The one rule of every writer, checked early by those that work long before they write (the
    Spark planner, ``reassign`` for its rollback and journal) and again at the rename. Checked
    with lstat: a symbolic link is refused whatever it points to, never followed."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # nothing there (a parent that is no folder is named when it is made)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise InvalidInput(f"{path} is a symbolic link; kadmin neither writes through nor "
                           "replaces a link (name the file itself)")
    if stat.S_ISDIR(mode):
        if marker is None:
            raise InvalidInput(f"{path} is a folder, expected a file name")
        _check_own_folder(path, marker)
    elif not stat.S_ISREG(mode):
        raise InvalidInput(f"{path} is {file_type(mode)}; kadmin replaces only regular files")
    if not force:
        raise InvalidInput(f"{path} already exists (use --force to overwrite)")


_FOLDER_LOOK = 10_000
"""Members looked at before a folder is taken for one that is not kadmin's output."""


def check_place(path: Path, force: bool, *, marker: str | None = None) -> None:
    """:func:`check_target`, and the place around it: the nearest folder of ``path`` that
    exists must be a folder kadmin can write in (a parent that is a file, a read-only or
    forbidden folder is refused here, by name). For the commands that start something (a
    sandbox, Spark, a reassignment) before they write: checked before anything starts."""
    check_target(path, force, marker=marker)
    place = path.absolute().parent
    while not os.path.lexists(place) and place != place.parent:
        place = place.parent
    if not place.is_dir():
        raise InvalidInput(f"cannot write {path}: {place} is not a folder")
    if not os.access(place, os.W_OK | os.X_OK):
        read_only = os.statvfs(place).f_flag & os.ST_RDONLY
        reason = os.strerror(errno.EROFS if read_only else errno.EACCES)
        raise InvalidInput(f"cannot write {path}: {place}: {reason}")


def _check_own_folder(path: Path, marker: str) -> None:
    """Refuse to replace a folder kadmin did not write: it must be empty, or hold ``marker``
    and nothing but regular files (what kadmin writes), since replacing deletes every member."""
    try:
        with os.scandir(path) as members:
            names = []
            for entry in itertools.islice(members, _FOLDER_LOOK + 1):
                if not entry.is_file(follow_symlinks=False):
                    raise InvalidInput(f"{path} is a folder holding {entry.name!r}, which is not "
                                       "a regular file: not a folder kadmin wrote, so it is not "
                                       "replaced")
                names.append(entry.name)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
    if names and (marker not in names or len(names) > _FOLDER_LOOK):
        raise InvalidInput(f"{path} is a folder without {marker}: not a folder kadmin wrote, "
                           "so it is not replaced")


def open_append(path: Path) -> BinaryIO:
    """``path`` opened to append to (created if missing), refused unless it is, or becomes, a
    regular file: :func:`check_target`'s rule for a file kadmin adds lines to (``sandbox
    --record``). Opened without following a link and without blocking, then checked with fstat
    on the descriptor itself, so a named pipe can neither hang kadmin nor slip in between."""
    check_target(path, True)
    _make_parent(path)
    flags = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        check_target(path, True)  # a link or a folder put there meanwhile, by name
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
    return fdopen_regular(fd, path, "ab", "; kadmin writes only regular files")


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InvalidInput(f"cannot write {path}: {path.parent} is not a folder") from None
    except OSError as exc:
        raise write_error(path.parent, exc, "create folder") from None


def _temp_sibling(path: Path, suffix: str) -> Path:
    """A hidden name next to ``path``: same file system (so rename is atomic), and never taken for
    a finished file by anything that lists the folder for ``*.json``."""
    if path.name in ("", ".", ".."):
        raise InvalidInput(f"{path} is a folder, expected a file name")
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}{suffix}")


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable: without it a power loss can bring the old name back."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # platforms that cannot open folders have no folder fsync either
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on folders; the data itself is already synced
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    """Best-effort cleanup: whatever stops it (the file never made, a read-only file system)
    must not mask the error that brought kadmin here."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(OSError):
            path.unlink()


_OPERATOR_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR,
                              errno.EISDIR, errno.ENAMETOOLONG, errno.ELOOP})
"""Write failures that the place named causes (read-only, not permitted, not a folder): an
input error (exit 2), the operator names another place; the rest (a full disk, an I/O error)
fail the operation (exit 1)."""


def write_error(path: Path, exc: OSError, verb: str = "write") -> InvalidInput | OperationFailed:
    """The one-line error of a failed write of ``path``."""
    kind = InvalidInput if exc.errno in _OPERATOR_ERRNOS else OperationFailed
    return kind(f"cannot {verb} {path}: {exc.strerror or exc}")
