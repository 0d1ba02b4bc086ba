"""A verdict per plan of a validation run, each problem placed at a line and column, and the
partitions two plans of the run both move. Pure: the files were read by the caller.

A CI system shows a problem on the line where it is (``plan validate --format github``), so every
problem gets a place in the file as written:

- a problem inside an entry, or in the document's own members: where that entry (or member)
  starts, from the positions the parser kept (:class:`kadmin.jsontext.Positions`);
- a problem the cluster check names by partition or topic (``orders-17``, ``unknown topic x``):
  the entry of that partition (the topic's first), found by one pass over the entries of the
  documents, made only when there is such a problem;
- a file that is no JSON document: where the parser stopped (:class:`kadmin.files.UnreadableJson`).

Line and column are worked out for the problems shown only (at most a hundred errors and a
hundred warnings a plan), in one pass over each file's text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from kadmin import files, plans
from kadmin.files import LocatedJson
from kadmin.jsontext import line_columns
from kadmin.model import MAX_ID, PlanKind, Problem, Severity, printable


@dataclass(frozen=True)
class Finding:
    """A problem and where it is: ``file`` as the operator named it (or the batch file of a
    plan folder), ``line`` and ``column`` from 1 (None where no place in a file is known: a
    file that cannot be read at all)."""

    problem: Problem
    file: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Verdict:
    """The outcome for one plan as named on the command line (a file, or a Spark planner's
    output folder or manifest): its report, and each of its problems placed."""

    plan: str
    report: plans.ValidationReport
    findings: tuple[Finding, ...]
    """One per problem of ``report``, in the same order."""

    def ok(self, strict: bool = False) -> bool:
        return self.report.ok(strict)


def unreadable(plan: str, message: str, file: str | None = None,
               at: tuple[int, int] | None = None) -> Verdict:
    """The verdict on a plan that could not be read: one error, at ``at`` when known."""
    problem = Problem(file or "", message, file=file)
    report = plans.ValidationReport(None, (problem,), None)
    line, column = at if at is not None else (None, None)
    return Verdict(plan, report, (Finding(problem, file or plan, line, column),))


def locate(plan: str, report: plans.ValidationReport, sources: Sequence[tuple[str, LocatedJson]]
           ) -> Verdict:
    """Place every problem of ``report``, a plan read from ``sources`` (the file, or each batch
    file of a folder, named as the problems' ``file`` names them)."""
    by_name = {name: (name, source) for name, source in sources}
    pending = [p for p in report.problems if p.path is None]
    entries = _entries_named(sources, pending) if pending else {}
    placed: list[tuple[Problem, str, LocatedJson | None, int | None]] = []
    for problem in report.problems:
        name, source = by_name.get(problem.file or "", sources[0] if sources else (plan, None))
        offset = None
        if source is not None and problem.path is not None:
            offset = source.positions.offset(problem.path)
        elif problem.path is None and problem.where in entries:
            name, source, offset = entries[problem.where]
        placed.append((problem, name, source, offset))
    lines: dict[int, dict[int, tuple[int, int]]] = {}
    for _, source in sources:
        wanted = [offset for _, _, s, offset in placed if s is source and offset is not None]
        lines[id(source)] = line_columns(source.text, wanted) if wanted else {}
    findings = []
    for problem, name, source, offset in placed:
        line, column = (None, None) if source is None or offset is None \
            else lines[id(source)][offset]
        findings.append(Finding(problem, name, line, column))
    return Verdict(plan, report, tuple(findings))


def _entries_named(sources: Sequence[tuple[str, LocatedJson]], problems: Sequence[Problem]
                   ) -> dict[str, tuple[str, LocatedJson, int]]:
    """For each problem named by a partition (``orders-17``) or topic: the source and offset of
    its entry (a partition's last, for the one repeated in a later batch file; a topic's
    first)."""
    topics = {p.where for p in problems}
    partitions: dict[tuple[str, Any], str] = {}
    for where in topics:
        head, _, number = where.rpartition("-")
        if head and number.isdigit():
            partitions[(head, int(number))] = where
    found: dict[str, tuple[str, LocatedJson, int]] = {}
    topics_found: set[str] = set()  # a topic named like a partition ("a-1") is the topic
    for name, source in sources:
        doc = source.doc
        key = "topics" if isinstance(doc, dict) and "topics" in doc else "partitions"
        items = doc.get(key) if isinstance(doc, dict) else None
        starts = source.positions.elements.get(key)
        if not isinstance(items, list) or starts is None:
            continue
        for i, entry in enumerate(items):
            topic: Any = entry.get("topic") if isinstance(entry, dict) else entry
            if type(topic) is not str:
                continue
            if topic in topics and topic not in topics_found:
                found[topic] = (name, source, starts[i])
                topics_found.add(topic)
            number = entry.get("partition") if isinstance(entry, dict) else None
            # only an int names a partition; a list or an object in the field is a schema error
            named = partitions.get((topic, number)) if type(number) is int else None
            if named is not None and named not in topics_found:
                found[named] = (name, source, starts[i])
    return found


class MovedBy:
    """The partitions the reassignment plans of one run move, and the first plan moving each:
    two plans moving the same partition cannot run at once, so the second is warned, naming
    the first. A plan and its own rollback (``x.json``, ``x.rollback.json``) undo each other by
    design and are not warned about."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, int], int] = {}
        self.plans: list[str] = []

    def warnings(self, plan: str, kind: PlanKind | None,
                 sources: Sequence[tuple[str, LocatedJson]]) -> Iterator[Problem]:
        """The warnings of ``plan``'s entries that an earlier plan moves already; records its
        partitions for the plans after it. Lazy: the caller samples what it keeps, and must
        consume it all."""
        if kind is not PlanKind.REASSIGN:
            return
        number = len(self.plans)
        self.plans.append(plan)
        first = self.first
        for name, source in sources:
            items = source.doc.get("partitions") if isinstance(source.doc, dict) else None
            if not isinstance(items, list):
                continue
            for i, entry in enumerate(items):
                tp = _partition_of(entry)
                if tp is None:
                    continue
                earlier = first.setdefault(tp, number)
                if earlier != number and not _rollback_pair(self.plans[earlier], plan):
                    where = f"$.partitions[{i}]" if name == plan else f"{name}: $.partitions[{i}]"
                    yield Problem(where, f"also moved by {self.plans[earlier]}: "
                                  "the two plans cannot run at once", Severity.WARNING,
                                  f"{printable(tp[0])}-{tp[1]}", ("partitions", i), name)


def _partition_of(entry: Any) -> tuple[str, int] | None:
    if not isinstance(entry, dict):
        return None
    topic, partition = entry.get("topic"), entry.get("partition")
    if type(topic) is str and type(partition) is int and 0 <= partition <= MAX_ID:
        return topic, partition
    return None


def _rollback_pair(a: str, b: str) -> bool:
    def undoes(plan: str, rollback: str) -> bool:
        return PurePath(rollback) == files.rollback_of(Path(plan))
    return undoes(a, b) or undoes(b, a)
