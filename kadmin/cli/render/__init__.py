"""Everything kadmin shows a person (rich tables and progress bars) or a machine (JSON), one
module per command group: :mod:`.plan` (and :mod:`.rebalance`, which ``spark rebalance`` and
``demo`` show too), :mod:`.execution` (reassign, verify, elect, topics delete), :mod:`.status`,
:mod:`.throttle`, :mod:`.spark`; the pieces they share are here."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from itertools import chain

from rich.text import Text

from kadmin.cli.common import err, out, write_stdout
from kadmin.model import and_more, printable, sample_of
from kadmin.units import human_bytes


def cell(text: str) -> Text:
    """A table cell of text kadmin did not write itself, escaped like every printed string and
    never read as rich markup."""
    return Text(printable(text))


def print_json(doc: object, *, to_stderr: bool = False) -> None:
    """A JSON document on stdout, encoded as it is written: never a second copy of a large
    document in memory (rich's print_json builds and highlights the whole text first). A
    string that held undecodable bytes (a file name, kept by Python as lone surrogates) is
    written as its JSON escapes, as the text formats escape it, never as raw bytes. With
    ``to_stderr`` (stdout carries the plan itself, ``--out -``) on stderr."""
    chunks = map(json_escaped, _PRETTY.iterencode(doc))
    if to_stderr:
        sys.stderr.write("".join(chunks) + "\n")
        sys.stderr.flush()
        return
    write_stdout(chain(chunks, ["\n"]))


_PRETTY = json.JSONEncoder(indent=2, ensure_ascii=False)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_escaped(text: str) -> str:
    """JSON text with every lone surrogate (an undecodable byte of a file name, as Python keeps
    it) written as its ``\\uXXXX`` escape, which any JSON reader reads back."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def above_capacity(prefix: str, over: Sequence[tuple[int, int, int]]) -> str:
    """One line naming the brokers above their capacity, ``(broker, bytes, capacity)`` each,
    with their use; capped like every list, with a count of the rest."""
    shown = sample_of(over)
    return prefix + ", ".join(f"broker {b} {human_bytes(held)} of {human_bytes(cap)} "
                              f"({held / cap:.0%})" for b, held, cap in shown.items) + (
        f", {and_more(shown.rest)}" if shown.rest else "")


def over_capacity_doc(over: Sequence[tuple[int, int, int]]) -> list[dict[str, int]]:
    """The ``--json`` form of the brokers above their capacity (every one: JSON is not capped)."""
    return [{"broker": b, "bytes": held, "capacity": cap} for b, held, cap in over]


def summary(line: str, doc: Mapping[str, object], as_json: bool, *,
            to_stderr: bool = False) -> None:
    """A command's result: ``doc`` as JSON with --json, else ``line`` for a person; on stderr
    when stdout carries the data itself (``--out -``)."""
    if as_json:
        print_json(doc, to_stderr=to_stderr)
    else:
        (err if to_stderr else out).print(line, markup=False)
