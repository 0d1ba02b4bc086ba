"""The journal of a plan's runs, ``<plan>.journal.json``: the schedule and how far it got.

It holds the batches as the first run composed them (indices into the plan), so that a rerun
after Ctrl-C or a crash continues the *same* schedule, and says which batches have been
submitted and which are complete. The live cluster still decides what is left: a partition at its
target is skipped, our batch found in /admin/reassign_partitions is waited on, never submitted
again; losing the journal loses nothing but the schedule (the rest is composed anew).

Version 2. A version 1 journal (kadmin before composed schedules: batches in plan order) is
refused with a one-line error saying what to do: it cannot say which partitions were submitted
under a schedule it never knew.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kadmin import files
from kadmin.model import InvalidInput, PartitionMove, ReassignmentPlan, TopicPartition

VERSION = 2


def plan_fingerprint(plan: ReassignmentPlan) -> str:
    digest = hashlib.sha256()
    for move in plan.moves:
        digest.update(f"{move.topic}\0{move.partition}\0{move.replicas}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Throttle:
    """The throttles in force for the batch in flight (kadmin's record in ZooKeeper,
    /kadmin/throttles, is what a rerun removes)."""

    rate: int
    entities: tuple[str, ...]


@dataclass(frozen=True)
class Journal:
    plan: str
    """The plan file's name."""
    plan_sha256: str
    options: str
    """What the schedule was composed with (limits, sizes or not); a rerun with other options
    keeps the batches already submitted and composes the rest anew."""
    batches: tuple[tuple[int, ...], ...]
    """The schedule: per batch, indices into the plan's moves, in the order they run."""
    submitted: int = 0
    """Batches submitted so far (the first ``submitted`` of ``batches``)."""
    batches_done: int = 0
    partitions: int = 0
    partitions_done: int = 0
    in_flight: int = 0
    """Partitions of the batch in ZooKeeper when this was written (0: none)."""
    throttle: Throttle | None = None
    updated: str = field(default="", compare=False)

    def submitted_partitions(self, plan: ReassignmentPlan) -> frozenset[TopicPartition]:
        return frozenset(plan.moves[i].tp for b in self.batches[:self.submitted] for i in b
                         if i < len(plan.moves))

    def batch_moves(self, plan: ReassignmentPlan, number: int) -> tuple[PartitionMove, ...]:
        """Batch ``number`` (from 0) as moves of ``plan``."""
        return tuple(plan.moves[i] for i in self.batches[number])

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION, "plan": self.plan, "plan_sha256": self.plan_sha256,
            "options": self.options, "partitions": self.partitions,
            "partitions_done": self.partitions_done, "batches_done": self.batches_done,
            "batches_submitted": self.submitted, "in_flight": self.in_flight,
            "throttle": None if self.throttle is None else {
                "rate": self.throttle.rate, "entities": list(self.throttle.entities)},
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "batches": [list(b) for b in self.batches],
        }

    def write(self, path: Path) -> Journal:
        files.atomic_write_json(path, self.to_json(), force=True)
        return self

    def update(self, path: Path, **changes: Any) -> Journal:
        return replace(self, **changes).write(path)


def read(path: Path, plan: ReassignmentPlan) -> Journal | None:
    """The journal of an earlier run of *this* plan at ``path``, or None (missing, unreadable,
    another plan's). InvalidInput for a version 1 journal of this plan."""
    if not path.exists():
        return None
    try:
        doc = files.read_json(path)
    except InvalidInput:
        return None
    if not isinstance(doc, dict) or doc.get("plan_sha256") != plan_fingerprint(plan):
        return None
    if doc.get("cancelled"):
        return None  # `reassign --cancel` put its partitions back: a rerun starts afresh
    if doc.get("version") == 1:
        raise InvalidInput(
            f"{path}: a journal of kadmin before composed schedules (version 1); the live "
            "cluster knows what is done: move the file away and run again (nothing is "
            "submitted twice)")
    try:
        return _parse(doc, len(plan.moves))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a kadmin journal of version {VERSION} ({exc}); move "
                           "it away and run again") from None


def _parse(doc: dict[str, Any], moves: int) -> Journal:
    if doc.get("version") != VERSION:
        raise ValueError(f"version {doc.get('version')!r}")
    batches = tuple(tuple(_index(i, moves) for i in b) for b in doc["batches"])
    throttle = doc.get("throttle")
    return Journal(
        plan=str(doc["plan"]), plan_sha256=str(doc["plan_sha256"]), options=str(doc["options"]),
        batches=batches, submitted=_count(doc["batches_submitted"], len(batches)),
        batches_done=_count(doc["batches_done"], len(batches)),
        partitions=_count(doc["partitions"], moves),
        partitions_done=_count(doc["partitions_done"], moves),
        in_flight=_count(doc["in_flight"], moves),
        throttle=None if throttle is None else Throttle(
            int(throttle["rate"]), tuple(map(str, throttle["entities"]))),
        updated=str(doc.get("updated", "")))


def _index(value: object, moves: int) -> int:
    if type(value) is not int or not 0 <= value < moves:
        raise ValueError(f"batch entry {value!r} is not a partition of the plan")
    return value


def _count(value: object, most: int) -> int:
    if type(value) is not int or not 0 <= value <= most:
        raise ValueError(f"count {value!r} out of range")
    return value


def record_cancel(path: Path) -> None:
    """``reassign --cancel`` ran: the journal at ``path`` (if any) says so, and no rerun of its
    plan resumes its schedule."""
    if not path.exists():
        return
    try:
        doc = files.read_json(path)
    except InvalidInput:
        return
    if isinstance(doc, dict):
        doc["cancelled"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        files.atomic_write_json(path, doc, force=True)


def submitted(path: Path, plan: ReassignmentPlan) -> frozenset[TopicPartition] | None:
    """The partitions runs of ``plan`` have submitted, by its journal (None: no journal)."""
    found = read(path, plan)
    return None if found is None else found.submitted_partitions(plan)


def new(plan_file: Path, plan: ReassignmentPlan, options: str,
        batches: Sequence[Sequence[int]], kept: Journal | None = None) -> Journal:
    """A journal for a schedule; ``kept``'s submitted batches stay first (and submitted)."""
    history = () if kept is None else kept.batches[:kept.submitted]
    return Journal(plan=plan_file.name, plan_sha256=plan_fingerprint(plan), options=options,
                   batches=(*history, *(tuple(b) for b in batches)),
                   submitted=len(history), batches_done=kept.batches_done if kept else 0,
                   partitions=len(plan.moves))
