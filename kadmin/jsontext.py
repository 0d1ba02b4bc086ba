"""JSON text -> Python values, strictly: the one parser behind every file and znode kadmin reads.

Python's ``json`` accepts two things no other reader of a plan, snapshot or znode agrees on:
``NaN``/``Infinity`` (not JSON at all), and an object that repeats a key, where the last value
silently wins - so a bad value can hide behind a good one, and kadmin would act on a document
that Kafka's tools or a person reading the file understand differently. Both are refused here,
for files (:func:`kadmin.files.parse_json`) and znode payloads (:mod:`kadmin.zk.codec`) alike.

Speed: a 1M-entry plan has a million objects. The check is ``object_pairs_hook``, one small
Python call per object (about +40% over a plain ``json.loads``, a fraction of what validating
the entries costs); the JSON path of a duplicate is looked for only once one was found.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


class NotJson(ValueError):
    """A constant Python's parser takes but JSON has not (``NaN``, ``Infinity``)."""


class DuplicateKey(ValueError):
    """An object lists ``key`` twice; ``path`` is the JSON path of that object."""

    def __init__(self, key: str, path: str) -> None:
        super().__init__(f"duplicate key {json.dumps(key, ensure_ascii=False)} in the object at "
                         f"{path}")
        self.key = key
        self.path = path


class _Repeated(Exception):
    """Raised inside the parse: cheaper than finding the path there, which is rarely needed."""


def loads(text: str) -> Any:
    """The JSON value in ``text``. Raises what ``json.loads`` raises (``JSONDecodeError``,
    ``ValueError`` for huge integers, ``RecursionError``), :class:`NotJson` and
    :class:`DuplicateKey`."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique)
    except _Repeated:
        key, path = _first_duplicate(json.loads(text, object_pairs_hook=_Pairs))
        raise DuplicateKey(key, path) from None


def _refuse_constant(name: str) -> object:
    raise NotJson(f"{name} is not a JSON value")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Repeated
    return obj


class _Pairs(list[tuple[str, Any]]):
    """An object kept as its pairs, repeats included: what the second parse builds."""


def _first_duplicate(doc: Any) -> tuple[str, str]:
    """The first repeated key in document order and its object's JSON path (without recursion:
    the document may be nested as deep as the parser allowed)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        value, where = stack.pop()
        if isinstance(value, _Pairs):
            seen: set[str] = set()
            for key, _ in value:
                if key in seen:
                    return key, json_path(where)
                seen.add(key)
            stack.extend((member, (*where, key)) for key, member in reversed(value))
        elif isinstance(value, list):
            stack.extend((member, (*where, i)) for i, member in reversed(list(enumerate(value))))
    raise AssertionError("a key was repeated, yet no object repeats one")  # pragma: no cover


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
