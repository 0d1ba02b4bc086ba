"""JSON text -> Python values, strictly: the one parser behind every file and znode kadmin reads.

Python's ``json`` accepts two things no other reader of a plan, snapshot or znode agrees on:
``NaN``/``Infinity`` (not JSON at all), and an object that repeats a key, where the last value
silently wins - so a bad value can hide behind a good one, and kadmin would act on a document
that Kafka's tools or a person reading the file understand differently. Both are refused here,
for files (:func:`kadmin.files.parse_json`) and znode payloads (:mod:`kadmin.zk.codec`) alike.

Speed: a 1M-entry plan has a million objects. The check is ``object_pairs_hook``, one small
Python call per object (about +40% over a plain ``json.loads``, a fraction of what validating
the entries costs); the JSON path of a duplicate is looked for only once one was found. A
reader that walks every key of a member anyway (a snapshot's partitions and states) can have
that member parsed without the hook and prove the same by counting (:func:`loads_counting`).

Positions (:func:`loads_located`): ``plan validate`` annotates the line and column where an
offending entry starts (a CI system shows the message there). They are kept while parsing: the
root object and its members' arrays are walked here, and each element is parsed by
``json``'s own C scanner from the offset where it starts, which is recorded (8 bytes an
element, in an ``array``). Line and column are worked out only for the offsets reported
(:func:`line_columns`), in one pass over the text.
"""

from __future__ import annotations

import contextlib
import json
import re
from array import array
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, NoReturn, cast


class NotJson(ValueError):
    """A constant Python's parser takes but JSON has not (``NaN``, ``Infinity``)."""


class DuplicateKey(ValueError):
    """An object lists ``key`` twice; ``path`` is the JSON path of that object. ``offset``
    (from :func:`loads_located` only): where in the text the entry holding it starts, or for the
    root object the repeated key itself."""

    def __init__(self, key: str, path: str, offset: int | None = None) -> None:
        super().__init__(f"duplicate key {json.dumps(key, ensure_ascii=False)} in the object at "
                         f"{path}")
        self.key = key
        self.path = path
        self.offset = offset


class _Repeated(Exception):
    """Raised inside the parse: cheaper than finding the path there, which is rarely needed."""


def loads(text: str) -> Any:
    """The JSON value in ``text``. Raises what ``json.loads`` raises (``JSONDecodeError``,
    ``ValueError`` for huge integers, ``RecursionError``), :class:`NotJson` and
    :class:`DuplicateKey`."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique)
    except _Repeated:
        key, parts = _first_duplicate(json.loads(text, object_pairs_hook=_Pairs))
        raise DuplicateKey(key, json_path(parts)) from None


def loads_counting(text: str, unchecked: Collection[str]) -> tuple[Any, Mapping[str, int]]:
    """:func:`loads`, but the values of the root object's members named in ``unchecked`` (the
    million objects of a snapshot's ``topics`` and ``states``) are parsed as ``json.loads``
    parses them, without the per-object call that finds a repeated key; for each of those
    members the ``:`` in its text are counted instead.

    Every ``:`` of a JSON text ends a key or stands inside a string, so a member's count is at
    least the keys its objects hold once parsed, and equals them only if no object repeated a
    key (a repeat leaves one key where the text has two). A caller that counts the keys it
    walked in such a member and finds the count has the proof :func:`loads` would have given;
    otherwise it must call :func:`loads`, which refuses the repeat (or, if a string held a
    colon, returns the same document). Every other fault of the text is raised exactly as
    :func:`loads` raises it, by :func:`loads` itself."""
    scan = json.JSONDecoder(parse_constant=_refuse_constant,
                            object_pairs_hook=_unique).scan_once  # type: ignore[attr-defined]
    plain = json.JSONDecoder(parse_constant=_refuse_constant).scan_once  # type: ignore[attr-defined]
    try:
        doc, _, colons = _walk(text, scan, arrays=False, plain=plain, unchecked=unchecked)
    except (ValueError, RecursionError, StopIteration, _Syntax, _Repeated, _Duplicate):
        # ValueError: a syntax error, NaN, a huge integer, a repeated root key
        return loads(text), {}
    return doc, colons


def _refuse_constant(name: str) -> object:
    raise NotJson(f"{name} is not a JSON value")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Repeated
    return obj


class _Pairs(list[tuple[str, Any]]):
    """An object kept as its pairs, repeats included: what the second parse builds."""


def _first_duplicate(doc: Any) -> tuple[str, tuple[str | int, ...]]:
    """The first repeated key in document order and its object's path (without recursion:
    the document may be nested as deep as the parser allowed)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        value, where = stack.pop()
        if isinstance(value, _Pairs):
            seen: set[str] = set()
            for key, _ in value:
                if key in seen:
                    return key, where
                seen.add(key)
            stack.extend((member, (*where, key)) for key, member in reversed(value))
        elif isinstance(value, list):
            stack.extend((member, (*where, i)) for i, member in reversed(list(enumerate(value))))
    raise AssertionError("a key was repeated, yet no object repeats one")  # pragma: no cover


@dataclass(frozen=True)
class Positions:
    """Where values start in a document's text (character offsets): the root, the value of each
    member of a root object, and each element of a member that is an array (a plan's entries).
    Deeper values are not recorded: a problem inside an entry is shown where the entry starts."""

    root: int = 0
    members: Mapping[str, int] = field(default_factory=dict)
    elements: Mapping[str, array[int]] = field(default_factory=dict)

    def offset(self, path: Sequence[str | int]) -> int:
        """The start of the deepest recorded value on ``path`` (``("partitions", 3,
        "replicas")`` -> where entry 3 starts)."""
        if not path or not isinstance(path[0], str) or path[0] not in self.members:
            return self.root
        key = path[0]
        starts = self.elements.get(key)
        if starts is not None and len(path) > 1 and isinstance(path[1], int) \
                and 0 <= path[1] < len(starts):
            return starts[path[1]]
        return self.members[key]


class _Syntax(Exception):
    """The walk of the top levels met text ``json`` refuses: its own parse says why."""


_SPACE: Callable[[str, int], re.Match[str]] = cast(Any, re.compile(r"[ \t\n\r]*").match)
"""JSON's whitespace from an offset: it always matches (perhaps nothing)."""


def loads_located(text: str) -> tuple[Any, Positions]:
    """:func:`loads`, and where the document's values start (:class:`Positions`). Raises what
    :func:`loads` raises, with the same words and positions; a :class:`DuplicateKey` also
    carries its ``offset``.

    The root object and the arrays among its members are walked here; every other value (each
    entry of a plan) is parsed by the C scanner of ``json``, from the offset recorded for it.
    Keys of the entries are shared through one memo for the parse, as ``json.loads`` shares
    them, not a million copies of ``"topic"``."""
    memo: dict[str, str] = {}
    keep = memo.setdefault

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = {keep(key, key): value for key, value in pairs}
        if len(obj) != len(pairs):
            raise _Repeated
        return obj

    scan = json.JSONDecoder(parse_constant=_refuse_constant,
                            object_pairs_hook=unique).scan_once  # type: ignore[attr-defined]
    try:
        doc, positions, _ = _walk(text, scan)
        return doc, positions
    except (_Syntax, StopIteration):
        pass
    except _Duplicate as duplicate:
        rescan = json.JSONDecoder(object_pairs_hook=_Pairs).scan_once  # type: ignore[attr-defined]
        key, parts = _first_duplicate(rescan(text, duplicate.offset)[0])
        _refused_as_loads_refuses(
            text, DuplicateKey(key, json_path((*duplicate.where, *parts)), duplicate.offset))
    except DuplicateKey as repeated:  # a key of the root object
        _refused_as_loads_refuses(text, repeated)
    # json's own parse names the error as it always does (and, should the walk ever refuse
    # what json accepts, the document is still read, only without positions)
    return loads(text), Positions()


def _refused_as_loads_refuses(text: str, repeated: DuplicateKey) -> NoReturn:
    """Raise ``repeated``, met while the walk was still inside the text, only if :func:`loads`
    also finds a repeated key: ``json`` checks an object's keys once the whole text parsed, so
    a syntax error further on is what it reports, and so must this."""
    with contextlib.suppress(DuplicateKey):
        loads(text)  # raises its own error, which comes first if the text has another
    raise repeated from None


class _Duplicate(Exception):
    def __init__(self, where: tuple[str | int, ...], offset: int) -> None:
        self.where = where
        self.offset = offset


def _walk(s: str, scan: Any, *, arrays: bool = True, plain: Any = None,
          unchecked: Collection[str] = ()) -> tuple[Any, Positions, dict[str, int]]:
    """The document, where its top values start, and the ``:`` counted in the text of each
    member in ``unchecked`` (parsed by ``plain``, not ``scan``). ``arrays``: members that are
    arrays are walked element by element, for their positions."""
    idx = _SPACE(s, 0).end()
    colons: dict[str, int] = {}
    if s[idx:idx + 1] != "{" or s.startswith("\ufeff"):
        value, end = _value(s, idx, scan, ())
        if _SPACE(s, end).end() != len(s):
            raise _Syntax
        return value, Positions(idx), colons
    root = idx
    pairs: list[tuple[str, Any]] = []
    members: dict[str, int] = {}
    elements: dict[str, array[int]] = {}
    idx = _SPACE(s, idx + 1).end()
    if s[idx:idx + 1] == "}":
        idx += 1
    else:
        while True:
            if s[idx:idx + 1] != '"':
                raise _Syntax
            key_at = idx
            key, idx = scanstring(s, idx + 1, True)
            if key in members:
                raise DuplicateKey(key, "$", key_at)
            idx = _SPACE(s, idx).end()
            if s[idx:idx + 1] != ":":
                raise _Syntax
            idx = _SPACE(s, idx + 1).end()
            members[key] = idx
            if key in unchecked:
                value, end = plain(s, idx)
                colons[key] = s.count(":", idx, end)
                idx = end
            elif arrays and s[idx:idx + 1] == "[":
                value, idx, elements[key] = _array(s, idx + 1, scan, key)
            else:
                value, idx = _value(s, idx, scan, (key,))
            pairs.append((key, value))
            idx = _SPACE(s, idx).end()
            c = s[idx:idx + 1]
            idx += 1
            if c == "}":
                break
            if c != ",":
                raise _Syntax
            idx = _SPACE(s, idx).end()
    if _SPACE(s, idx).end() != len(s):
        raise _Syntax
    return dict(pairs), Positions(root, members, elements), colons


def _value(s: str, idx: int, scan: Any, where: tuple[str | int, ...]) -> tuple[Any, int]:
    try:
        return scan(s, idx)  # type: ignore[no-any-return]
    except _Repeated:
        raise _Duplicate(where, idx) from None


def _array(s: str, idx: int, scan: Any, key: str) -> tuple[list[Any], int, array[int]]:
    """The elements of an array whose ``[`` ends before ``idx``, and where each starts. The
    loop runs once per entry of a plan: locals only, whitespace skipped only where there is
    some."""
    starts: array[int] = array("q")
    values: list[Any] = []
    append, start = values.append, starts.append
    idx = _SPACE(s, idx).end()
    if s[idx:idx + 1] == "]":
        return values, idx + 1, starts
    while True:
        start(idx)
        try:
            value, idx = scan(s, idx)
        except _Repeated:
            raise _Duplicate((key, len(values)), starts[-1]) from None
        append(value)
        c = s[idx:idx + 1]
        if c and c in " \t\n\r":
            idx = _SPACE(s, idx).end()
            c = s[idx:idx + 1]
        if c == "]":
            return values, idx + 1, starts
        if c != ",":
            raise _Syntax
        idx = _SPACE(s, idx + 1).end()


def line_columns(text: str, offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Line and column (both from 1, the column in characters, as ``json``'s own errors count
    them) of each offset: one pass over the text however many offsets there are."""
    found: dict[int, tuple[int, int]] = {}
    line, line_start, at = 1, 0, 0
    for offset in sorted(set(offsets)):
        offset = max(0, min(offset, len(text)))
        newlines = text.count("\n", at, offset)
        if newlines:
            line += newlines
            line_start = text.rindex("\n", at, offset) + 1
        at = offset
        found[offset] = (line, offset - line_start + 1)
    return found


def json_path(parts: Sequence[object]) -> str:
    """``$.partitions[3].replicas``: the JSONPath an operator finds in the file; keys that are not
    identifiers are quoted, ``$.topics["my.topic"]``."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif isinstance(part, str) and part.isidentifier():
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part)}]")
    return "".join(out)


def json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words ("an object", "a boolean", "null"), for a message
    that must not show Python's type names (``NoneType``, ``dict``)."""
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def shown(value: object, limit: int = 40) -> str:
    """A value read from a JSON document, in a message, cut to ``limit`` characters: a string
    quoted, a number as it is, ``true``/``false``/``null`` as JSON spells them (never Python's
    ``True``/``None``), an object or a list by its kind."""
    if isinstance(value, bool) or value is None:
        text = json.dumps(value)
    elif isinstance(value, (dict, list)):
        text = json_kind(value)
    else:
        text = repr(value)
    return _cut(text, limit)


def spelled(value: object, *, ascii: bool = False) -> str:
    """A value read from a JSON document (a file or a znode), in a message, as JSON writes it
    (strings in double quotes, objects and lists in full), cut to 60 characters: a corrupt
    document may hold a megabyte where an id belongs. ``ascii``: every character beyond ASCII
    escaped, ``"\\u00b2"`` (the znode decoder's messages), else written as it is, ``"²"``."""
    return _cut(json.dumps(value, ensure_ascii=ascii), 60)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
