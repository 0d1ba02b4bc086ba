"""Every file kadmin writes goes through here, and so do the JSON reads whose errors an operator sees.

Writes are atomic (a temp file in the same folder, fsync, rename, fsync of the folder): a crash or
a full disk leaves the old file or the new one, never half a plan, so a rollback file that exists
is always complete. Existing files are refused unless forced, because a plan or a rollback file is
the record of what was done to a cluster and must not be replaced by accident.

One rule for every name kadmin writes (:func:`check_target`): it may replace only a regular file
(with ``--force``), or, for a folder output, a folder kadmin wrote itself. A folder where a file
goes, a device, a named pipe, a socket and a symbolic link are refused by name before anything is
written: a link is never written through nor replaced (its target may be anything, anywhere).

Reads turn every way a file can be wrong into one :class:`InvalidInput` line naming the file and
the place in it (byte offset, line and column), never a traceback.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import itertools
import json
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypeVar, cast

from kadmin import jsontext
from kadmin.model import Conflict, InvalidInput, OperationFailed

T = TypeVar("T")

MB = 1024 * 1024
GB = 1024 * MB
DEFAULT_MAX_BYTES = 256 * MB
"""Largest JSON document read whole (a plan, a snapshot file)."""
MAX_JSONL_BYTES = 4 * GB
"""Largest JSON Lines file of a snapshot folder: the folder form exists for clusters too big for
one document, and 10 million partitions take under 1 GB of states.jsonl."""
MAX_JSONL_LINE = 64 * MB
"""Longest line of a JSON Lines file: one topic's partitions or states (a topic of 100,000
partitions takes about 7 MB of states)."""

_LAYOUT_LEVELS = 2
"""Containers this deep get one member per line; deeper values stay on one line."""

_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                            check_circular=False).encode
"""The one encoder of every file kadmin writes. Its documents are trees kadmin builds from plain
data, never cyclic: the encoder's cycle check (a dict insert and delete per container, some 15%
of encoding a plan) is left out."""


# --- writing ------------------------------------------------------------------------------------


def atomic_write_bytes(path: Path, data: bytes, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` atomically; refuse an existing file unless ``force``."""
    atomic_write_files([(path, data)], force=force)


def atomic_write_json(path: Path, doc: object, *, force: bool = False, compact: bool = False) -> None:
    """Write ``doc`` as JSON atomically, laid out by :func:`dumps_json`."""
    atomic_write_files([(path, dumps_json(doc, compact=compact))], force=force)


@contextmanager
def atomic_dir(path: Path, *, marker: str, force: bool = False) -> Iterator[Path]:
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
                     force: bool = False) -> None:
    """Build a folder from ``(file name, bytes)`` chunks with :func:`atomic_dir`.

    Chunks for different files may interleave: a generator can stream two files in one pass
    without holding either in memory (every file stays open until the end, so this suits a few
    files; many files are written one by one inside :func:`atomic_dir`).
    """
    with atomic_dir(path, marker=marker, force=force) as temp:
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


def atomic_write_files(items: Sequence[tuple[Path, bytes]], *, force: bool = False) -> None:
    """Write files that belong together (a plan and its rollback file) as one: all or none.

    Every file is first written to a temp sibling and synced, so a full disk fails before any
    name appears; then each is put in place. Should that fail for one, those already put in
    place are taken back (with ``force``, the files they replaced are restored).
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
        raise InvalidInput(f"{path} is {_file_type(mode)}; kadmin replaces only regular files")
    if not force:
        raise InvalidInput(f"{path} already exists (use --force to overwrite)")


_FOLDER_LOOK = 10_000
"""Members looked at before a folder is taken for one that is not kadmin's output."""


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
    return _fdopen_regular(fd, path, "ab", "; kadmin writes only regular files")


def _fdopen_regular(fd: int, path: Path, mode_text: str, refusal: str) -> BinaryIO:
    """The open descriptor ``fd`` of ``path`` as a file object (``mode_text``) once fstat shows
    a regular file; closed and refused by name (``refusal`` ends the message) otherwise."""
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InvalidInput(f"{path} is a folder, expected a file")
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{path} is {_file_type(mode)}{refusal}")
        os.set_blocking(fd, True)
        return cast(BinaryIO, os.fdopen(fd, mode_text))
    except BaseException:
        os.close(fd)
        raise


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


# --- JSON layout --------------------------------------------------------------------------------


def dumps_json(doc: object, *, compact: bool = False) -> bytes:
    """UTF-8 JSON that any JSON reader (Kafka's tools included) accepts, ending in a newline.

    ``compact`` is a single line. Otherwise the members of the top-level container and of the
    containers directly inside it each get a line and deeper values stay compact: a plan gets one
    partition per line and a snapshot one topic per line, so a million-entry file stays grep-able,
    diff-able and only a few percent larger than the compact form. The pieces are joined once and
    encoded once: a million-entry plan is some 40 MB of text, and every extra copy of it counts.
    """
    if compact:
        return (_compact(doc) + "\n").encode("utf-8")
    pieces: list[str] = []
    _layout(doc, 0, pieces)
    pieces.append("\n")
    return "".join(pieces).encode("utf-8")


def _layout(value: Any, level: int, out: list[str]) -> None:
    """Append the text of ``value`` at nesting ``level`` to ``out``."""
    if level == _LAYOUT_LEVELS or not isinstance(value, (dict, list)) or not value:
        out.append(_compact(value))
        return
    pad = "\n" + "  " * (level + 1)
    end = "\n" + "  " * level
    if isinstance(value, dict):
        out.append("{")
        for n, (key, member) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {key!r}")
            out.extend(("," + pad if n else pad, _compact(key), ": "))
            _layout(member, level + 1, out)
        out.extend((end, "}"))
    elif level + 1 == _LAYOUT_LEVELS:
        out.extend(("[", pad, _compact_lines(value, "," + pad), end, "]"))
    else:
        out.append("[")
        for n, member in enumerate(value):
            out.append("," + pad if n else pad)
            _layout(member, level + 1, out)
        out.extend((end, "]"))


def _compact_lines(items: list[Any], separator: str) -> str:
    """The compact JSON of each item, joined by ``separator``.

    A list of objects (every plan) is encoded in one call of the C encoder and split at ``},{``:
    when that text occurs exactly once per gap between items, every occurrence is a gap. That is
    twice as fast as one encoder call per item for a million tiny entries; any other list, or a
    string that happens to contain ``},{``, takes the per-item path.
    """
    if set(map(type, items)) == {dict}:
        text = _compact(items)
        if text.count("},{") == len(items) - 1:
            return text.replace("},{", "}" + separator + "{")[1:-1]
    return separator.join(map(_compact, items))


# --- reading ------------------------------------------------------------------------------------


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building millions of containers.

    JSON documents and the values made from them hold no reference cycles, yet every few thousand
    allocations the collector would walk all of them again: pausing it makes loading a
    million-partition snapshot about twice as fast. Nested use is fine.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
        raise _unreadable(path, exc) from None
    return _fdopen_regular(fd, path, "rb", ", not a regular file")


def require_regular(path: Path) -> None:
    """Refuse ``path`` unless it is a regular file, for files another library opens by name
    (TLS certificates and keys: OpenSSL and kazoo). A check before their open, so a path
    swapped for a pipe in between would still block there; these are the operator's own files."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if stat.S_ISDIR(mode):
        raise InvalidInput(f"{path} is a folder, expected a file")
    if not stat.S_ISREG(mode):
        raise InvalidInput(f"{path} is {_file_type(mode)}, not a regular file")


def _file_type(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file"


def _unreadable(path: Path, exc: OSError) -> InvalidInput:
    """The one line for a file that cannot be read, in the operator's words."""
    if isinstance(exc, FileNotFoundError):
        return InvalidInput(f"{path}: no such file")
    if isinstance(exc, IsADirectoryError):
        return InvalidInput(f"{path} is a folder, expected a file")
    if isinstance(exc, PermissionError):
        return InvalidInput(f"{path}: permission denied")
    return InvalidInput(f"{path}: cannot read ({exc.strerror or exc})")


def read_bytes(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The content of a regular file; missing, folder, pipe, device, unreadable or too large is
    InvalidInput. The size is checked before reading, and again while reading (a file that
    grows meanwhile)."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise InvalidInput(f"{path} is {_size(size)}, over the {_size(max_bytes)} limit")
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise InvalidInput(f"{path} holds more than {_size(max_bytes)}, over the limit")
        return data
    except OSError as exc:
        raise _unreadable(path, exc) from None


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


def read_json(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> object:
    """The parsed JSON document in ``path``; every problem is one InvalidInput line."""
    with gc_paused():
        return parse_json(_document_bytes(path, max_bytes), str(path))


class LocatedJson(NamedTuple):
    """A document with its text and where its values start (:func:`kadmin.jsontext.loads_located`),
    for messages that point at a line and column."""

    text: str
    doc: Any
    positions: jsontext.Positions


class UnreadableJson(InvalidInput):
    """A file that is no JSON document; ``at`` is the (line, column) of the fault, where one
    is known (a syntax error, a repeated key)."""

    def __init__(self, message: str, at: tuple[int, int] | None = None) -> None:
        super().__init__(message)
        self.at = at


def read_json_located(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> LocatedJson:
    """:func:`read_json` with positions; a document that cannot be read is an
    :class:`UnreadableJson` (or, for the file itself, an InvalidInput)."""
    source = str(path)
    text = _text(_document_bytes(path, max_bytes), source)
    with gc_paused():
        doc, positions = _parsed(jsontext.loads_located, text, source, False)
    return LocatedJson(text, doc, positions)


class CountedJson(NamedTuple):
    """A document read by :func:`kadmin.jsontext.loads_counting`, the ``:`` counted in each of
    its unchecked members, and its text for :meth:`strict`."""

    doc: Any
    colons: Mapping[str, int]
    text: str
    source: str

    def strict(self) -> object:
        """The document as :func:`read_json` reads it (a repeated key anywhere refused)."""
        with gc_paused():
            return _parsed(jsontext.loads, self.text, self.source, False)


def read_json_counting(path: Path, unchecked: Collection[str], *,
                       max_bytes: int = DEFAULT_MAX_BYTES) -> CountedJson:
    """:func:`read_json` for a big document whose ``unchecked`` members are parsed without
    the repeated-key check (:func:`kadmin.jsontext.loads_counting`): the caller compares the
    keys it walks in them with ``colons`` and, unless they agree, calls ``strict()``. Every
    other problem is the one InvalidInput line :func:`read_json` gives."""
    source = str(path)
    text = _text(_document_bytes(path, max_bytes), source)
    with gc_paused():
        doc, colons = _parsed(lambda t: jsontext.loads_counting(t, unchecked), text, source,
                              False)
    return CountedJson(doc, colons, text, source)


def _document_bytes(path: Path, max_bytes: int) -> bytes:
    data = read_bytes(path, max_bytes=max_bytes)
    if not data or data.isspace():
        raise InvalidInput(f"{path} is empty, expected a JSON document")
    return data


def parse_json(data: bytes, source: str, *, one_line: bool = False) -> object:
    """Parse UTF-8 JSON (a BOM is tolerated) strictly (:mod:`kadmin.jsontext`: no ``NaN``, no
    repeated key); errors say where, prefixed with ``source``.

    ``one_line`` (a JSON Lines record, whose line number is already in ``source``) reports the
    column only.
    """
    return _parsed(jsontext.loads, _text(data, source), source, one_line)


def _text(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _parsed(parse: Callable[[str], T], text: str, source: str, one_line: bool) -> T:
    try:
        return parse(text)
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if one_line else f"line {exc.lineno} column {exc.colno}"
        raise UnreadableJson(f"{source}: not valid JSON ({exc.msg} at {where})",
                             (exc.lineno, exc.colno)) from None
    except jsontext.DuplicateKey as exc:
        at = None if exc.offset is None else jsontext.line_columns(text, [exc.offset])[exc.offset]
        raise UnreadableJson(f"{source}: not valid JSON ({exc})", at) from None
    except jsontext.NotJson as exc:
        raise UnreadableJson(f"{source}: not valid JSON ({exc})") from None
    except ValueError:  # Python refuses integers of more than sys.get_int_max_str_digits() digits
        raise UnreadableJson(f"{source}: an integer with thousands of digits; no id or count in "
                             "a plan or snapshot is that long") from None
    except RecursionError:
        raise UnreadableJson(f"{source}: JSON nested too deeply to read") from None


def iter_jsonl(path: Path, *, max_bytes: int | None = None, max_line: int | None = None
               ) -> Iterator[tuple[int, object]]:
    """``(line number, document)`` for each non-blank line of a JSON Lines file, streamed.

    Errors name the file and line (``snap/topics.jsonl:17: not valid JSON (...)``); the file
    must be a regular file (like :func:`read_json`). Lines are read at most ``max_line`` bytes
    at a time (default :data:`MAX_JSONL_LINE`) and the file at most ``max_bytes`` (default
    :data:`MAX_JSONL_BYTES`), so a line or a file without end fails instead of filling memory.
    """
    max_bytes = MAX_JSONL_BYTES if max_bytes is None else max_bytes
    max_line = MAX_JSONL_LINE if max_line is None else max_line
    with open_regular(path) as handle:
        check_jsonl_size(path, os.fstat(handle.fileno()).st_size, max_bytes)
        total = 0
        for number in itertools.count(1):
            try:
                line = handle.readline(max_line + 1)
            except OSError as exc:
                raise _unreadable(path, exc) from None
            if not line:
                return
            check_jsonl_line(line.rstrip(b"\r\n"), f"{path}:{number}", max_line)
            total += len(line)
            if total > max_bytes:
                raise InvalidInput(f"{path} holds more than {_size(max_bytes)}, over the limit "
                                   f"(at line {number})")
            if line.strip():
                yield number, parse_json(line.rstrip(b"\r\n"), f"{path}:{number}", one_line=True)


def check_jsonl_size(path: Path, size: int, max_bytes: int = MAX_JSONL_BYTES) -> None:
    """The size limit of a JSON Lines file, for every reader of one (the Spark planner too)."""
    if size > max_bytes:
        raise InvalidInput(f"{path} is {_size(size)}, over the {_size(max_bytes)} limit")


def check_jsonl_line(line: bytes, source: str, max_line: int = MAX_JSONL_LINE) -> None:
    """The length limit of one JSON Lines record (its line ending not counted), for every
    reader of one: ``source`` is ``file:line``. A reader that splits the file itself (Spark)
    may hand over the first ``max_line + 1`` bytes of a longer line."""
    if len(line) > max_line:
        raise InvalidInput(f"{source}: line longer than {_size(max_line)}, over the limit for "
                           "one record")


def _size(n: int) -> str:
    """Bytes for people: ``512 bytes``, ``3 KB``, ``210 MB``, ``256.4 MB`` (binary units)."""
    for unit, scale in (("MB", MB), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


# --- names --------------------------------------------------------------------------------------


def plan_paths(kind: str, out_dir: Path, now: datetime) -> tuple[Path, Path]:
    """The plan file and its rollback file for a plan made at ``now`` (naive means UTC).

    The UTC timestamp in the name sorts plans by age and never depends on the machine's zone.
    """
    moment = now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now.astimezone(timezone.utc)
    plan = out_dir / f"{kind}-{moment:%Y%m%dT%H%M%SZ}.json"
    return plan, sibling(plan, ".rollback.json")


def sibling(path: Path, suffix: str) -> Path:
    """``plans/x.json`` + ``.rollback.json`` -> ``plans/x.rollback.json``: files that belong to a
    plan live next to it and share its name, so they travel with it."""
    if path.name in ("", ".", ".."):
        raise InvalidInput(f"{path} is a folder, expected a file name")
    return path.with_name(path.name.removesuffix(".json") + suffix)
