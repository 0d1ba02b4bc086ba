"""The JSON text of every file kadmin writes: strict, UTF-8, laid out one entry a line."""

from __future__ import annotations

import json
from typing import Any

_LAYOUT_LEVELS = 2
"""Containers this deep get one member per line; deeper values stay on one line."""

_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                            check_circular=False).encode
"""The one encoder of every file kadmin writes. Its documents are trees kadmin builds from plain
data, never cyclic: the encoder's cycle check (a dict insert and delete per container, some 15%
of encoding a plan) is left out."""


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
