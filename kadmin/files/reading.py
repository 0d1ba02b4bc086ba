"""Bounded reads: a file's bytes, a JSON document, a JSON Lines file. Every way a file can be
wrong is one :class:`InvalidInput` line naming the file and the place in it (byte offset, line
and column), never a traceback; sizes are limited so a file without end fails instead of
filling memory."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from kadmin import jsontext
from kadmin.files.collector import gc_paused
from kadmin.files.regular import open_regular, unreadable
from kadmin.model import InvalidInput

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
        raise unreadable(path, exc) from None


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
                raise unreadable(path, exc) from None
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
