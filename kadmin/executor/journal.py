"""The journal of a plan's runs, ``<plan>.journal.json``: the schedule and how far it got.

It holds the batches as the first run composed them (indices into the plan), so that a rerun
after Ctrl-C or a crash continues the *same* schedule, and says which batches have been
submitted and which are complete. The live cluster still decides what is left: a partition at its
target is skipped, our batch found in /admin/reassign_partitions is waited on, never submitted
again; losing the journal loses nothing but the schedule (the rest is composed anew).

A journal belongs to one plan (its content: ``plan_sha256``), one cluster (``cluster``, see
:mod:`kadmin.zk.identity`) and one run (``run``; a rerun after an interruption continues it). A
run that finished (every batch submitted and complete) is history: the next run of the plan
starts a journal of its own. Whatever cannot be such a journal (unreadable, truncated, another
plan's, another version's, an unfinished run on another cluster) is refused with a one-line error
naming the file and the way out, never taken for absent and never overwritten.

Version 3. Older journals are refused the same way: version 1 (kadmin before composed schedules)
cannot say which partitions were submitted under a schedule it never knew, version 2 not on
which cluster.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kadmin import files
from kadmin.jsontext import shown
from kadmin.model import InvalidInput, PartitionMove, ReassignmentPlan, TopicPartition

VERSION = 3

WAY_OUT = ("move it away and run again (the live cluster decides what is done: a partition at "
           "its target is skipped, a batch of this plan in ZooKeeper waited on)")
"""What to do with a journal kadmin refuses."""


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
    cluster: str
    """The cluster the run ran on (:func:`kadmin.zk.identity.cluster_identity`)."""
    run: str
    """This run's id: a rerun after an interruption continues it, a run after it finished starts
    another."""
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

    @property
    def finished(self) -> bool:
        """Every batch of the schedule submitted and complete, nothing in flight: a new run of the
        plan starts afresh instead of continuing this one."""
        return (self.submitted == len(self.batches) == self.batches_done
                and self.in_flight == 0)

    def submitted_partitions(self, plan: ReassignmentPlan) -> frozenset[TopicPartition]:
        return frozenset(plan.moves[i].tp for b in self.batches[:self.submitted] for i in b
                         if i < len(plan.moves))

    def batch_moves(self, plan: ReassignmentPlan, number: int) -> tuple[PartitionMove, ...]:
        """Batch ``number`` (from 0) as moves of ``plan``."""
        return tuple(plan.moves[i] for i in self.batches[number])

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION, "plan": self.plan, "plan_sha256": self.plan_sha256,
            "cluster": self.cluster, "run": self.run,
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
    """The journal of an earlier run of *this* plan at ``path``, or None (no file). InvalidInput
    for anything else there: unreadable or truncated, another plan's, another version's."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        doc = files.read_json(path)
    except InvalidInput as exc:
        raise InvalidInput(f"{exc} (a kadmin journal, unreadable: truncated or damaged); "
                           f"{WAY_OUT}") from None
    if not isinstance(doc, dict):
        raise InvalidInput(f"{path}: not a kadmin journal (not a JSON object); {WAY_OUT}")
    if doc.get("cancelled") and doc.get("plan_sha256") == plan_fingerprint(plan):
        return None  # `reassign --cancel` put its partitions back: a rerun starts afresh
    if doc.get("version") in (1, 2):
        raise InvalidInput(
            f"{path}: a journal of an older kadmin (version {doc['version']}, which "
            f"{'knew no composed schedules' if doc['version'] == 1 else 'recorded no cluster'}"
            f"); {WAY_OUT}")
    if doc.get("plan_sha256") != plan_fingerprint(plan):
        raise InvalidInput(
            f"{path}: the journal of another plan (its plan_sha256 is not this plan's: the plan "
            f"file changed since that run); finish that plan, or {WAY_OUT}")
    try:
        return _parse(doc, len(plan.moves))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a kadmin journal of version {VERSION} ({exc}); "
                           f"{WAY_OUT}") from None


def of_run(path: Path, found: Journal | None, cluster: str) -> Journal | None:
    """The journal a new run on ``cluster`` continues: ``found`` when its run is unfinished and
    on this cluster, None when there is none or its run finished (anywhere). InvalidInput for an
    unfinished run on another cluster: its record is not this cluster's, and not to be lost."""
    if found is None or found.finished:
        return None
    if found.cluster != cluster:
        raise InvalidInput(
            f"{path}: the journal of an unfinished run of this plan on another cluster "
            f"({found.cluster}; this one is {cluster}); finish it there, or {WAY_OUT}")
    return found


def _parse(doc: dict[str, Any], moves: int) -> Journal:
    if doc.get("version") != VERSION:
        raise ValueError(f"version {shown(doc.get('version'))}")
    batches = tuple(tuple(_index(i, moves) for i in b) for b in doc["batches"])
    throttle = doc.get("throttle")
    return Journal(
        plan=str(doc["plan"]), plan_sha256=str(doc["plan_sha256"]),
        cluster=_text(doc["cluster"]), run=_text(doc["run"]), options=str(doc["options"]),
        batches=batches, submitted=_count(doc["batches_submitted"], len(batches)),
        batches_done=_count(doc["batches_done"], len(batches)),
        partitions=_count(doc["partitions"], moves),
        partitions_done=_count(doc["partitions_done"], moves),
        in_flight=_count(doc["in_flight"], moves),
        throttle=None if throttle is None else Throttle(
            int(throttle["rate"]), tuple(map(str, throttle["entities"]))),
        updated=str(doc.get("updated", "")))


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{shown(value)} is not a non-empty string")
    return value


def _index(value: object, moves: int) -> int:
    if type(value) is not int or not 0 <= value < moves:
        raise ValueError(f"batch entry {shown(value)} is not a partition of the plan")
    return value


def _count(value: object, most: int) -> int:
    if type(value) is not int or not 0 <= value <= most:
        raise ValueError(f"count {shown(value)} out of range")
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


def submitted(path: Path, plan: ReassignmentPlan, cluster: str
              ) -> frozenset[TopicPartition] | None:
    """The partitions the last run of ``plan`` on ``cluster`` submitted, by its journal (None:
    no journal, or the journal of a run on another cluster, which submitted nothing here)."""
    found = read(path, plan)
    if found is None or found.cluster != cluster:
        return None
    return found.submitted_partitions(plan)


def new(plan_file: Path, plan: ReassignmentPlan, cluster: str, options: str,
        batches: Sequence[Sequence[int]], kept: Journal | None = None) -> Journal:
    """A journal for a schedule; ``kept``'s submitted batches stay first (and submitted), and
    its run goes on (else a new run begins)."""
    history = () if kept is None else kept.batches[:kept.submitted]
    return Journal(plan=plan_file.name, plan_sha256=plan_fingerprint(plan), cluster=cluster,
                   run=kept.run if kept is not None else uuid.uuid4().hex, options=options,
                   batches=(*history, *(tuple(b) for b in batches)),
                   submitted=len(history), batches_done=kept.batches_done if kept else 0,
                   partitions=len(plan.moves))
