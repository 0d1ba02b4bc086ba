"""Plan documents: the kind of a document, the document of a plan, the rollback (current
assignment) and diff of a reassignment, and the plans built from a cluster. Pure."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from kadmin.model import (
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    PartitionMove,
    Plan,
    PlanKind,
    Problem,
    ReassignmentPlan,
    TopicPartition,
    listed,
    topic_name_problem,
)

_MESSAGE_LIMIT = 300
_LOG_DIRS = itemgetter(3)
"""A move's ``log_dirs`` (mostly None)."""


def shortened(text: str) -> str:
    """jsonschema quotes the whole offending value, which may be a million-entry list."""
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "…"


def described(value: object) -> str:
    if isinstance(value, dict):
        return shortened(f"an object with keys {json.dumps(sorted(map(str, value)))}")
    return "an array" if isinstance(value, list) else shortened(json.dumps(value, default=str))


def detect_kind(doc: object) -> PlanKind | None:
    """The plan kind by shape, so ``plan validate`` needs no ``--kind`` for ordinary files.

    ``partitions`` whose entries carry ``replicas`` is a reassignment, without them an election;
    ``topics`` is a deletion. An empty ``partitions`` list counts as a reassignment (by far the
    commonest file; the empty documents of both kinds are identical anyway). An object with both
    keys or neither is no plan.
    """
    if not isinstance(doc, dict) or ("partitions" in doc) == ("topics" in doc):
        return None
    if "topics" in doc:
        return PlanKind.DELETION
    entries = doc["partitions"]
    if isinstance(entries, list) and entries and not any(
            isinstance(e, dict) and "replicas" in e for e in entries):
        return PlanKind.ELECTION
    return PlanKind.REASSIGN


_KIND_NAMES = {PlanKind.REASSIGN: "a reassignment plan", PlanKind.ELECTION: "an election plan",
               PlanKind.DELETION: "a deletion plan"}


def not_a_plan(doc: object) -> Problem:
    return Problem("$", 'not a plan: expected an object with "partitions" (a reassignment or '
                        f'election plan) or "topics" (a deletion plan), got {described(doc)}',
                   path=())


def kind_problem(doc: object, expected: PlanKind) -> Problem | None:
    """Why ``doc`` cannot be meant as the ``expected`` kind of plan: it is no plan, or by its shape
    a plan of another kind. None when the shape fits, whatever its entries hold.

    Commands that need one kind say so in one line, instead of listing every entry of, say, an
    election plan as a reassignment missing its replicas. Only entries with ``replicas`` make a
    ``partitions`` document a reassignment rather than an election (an empty one is both; one
    whose entries are broken is left for validation to explain).
    """
    found = detect_kind(doc)
    if found is None:
        return not_a_plan(doc)
    if found is expected:
        return None
    if expected is PlanKind.ELECTION and found is PlanKind.REASSIGN and isinstance(doc, dict):
        entries = doc["partitions"]
        if not (isinstance(entries, list)
                and any(isinstance(e, dict) and "replicas" in e for e in entries)):
            return None
    return Problem("$", f"{_KIND_NAMES[found]}, expected {_KIND_NAMES[expected]}", path=())


# --- documents, diff, rollback -----------------------------------------------------------------


def plan_document(plan: Plan, *, log_dirs: bool = True) -> dict[str, Any]:
    """The plan file, entries sorted; ``log_dirs`` kept for moves that have them unless the
    caller wants the znode's shape."""
    if isinstance(plan, ReassignmentPlan):
        moves = sorted(plan.moves)
        # a comprehension, then log_dirs for the few moves that have them: a million entries
        entries: list[dict[str, Any]] = [
            {"topic": topic, "partition": partition, "replicas": list(replicas)}
            for topic, partition, replicas, _ in moves]
        if log_dirs and list(map(_LOG_DIRS, moves)).count(None) < len(moves):
            for entry, move in zip(entries, moves, strict=True):
                if move.log_dirs is not None:
                    entry["log_dirs"] = list(move.log_dirs)
        return {"version": plan.version, "partitions": entries}
    if isinstance(plan, ElectionPlan):
        return {"version": plan.version, "partitions": [
            {"topic": tp.topic, "partition": tp.partition} for tp in sorted(plan.partitions)]}
    return {"version": plan.version, "topics": sorted(plan.topics)}


def current_assignment(plan: ReassignmentPlan, snapshot: ClusterSnapshot) -> ReassignmentPlan:
    """The rollback plan: today's replicas of the partitions the plan touches, in Kafka's file
    format, so undoing a reassignment is running another one. A partition still moving (a batch
    of this plan that an interrupted run left in flight) is recorded with its original replicas,
    never the temporary full set."""
    moves, unknown = [], []
    for move in plan.moves:
        current = snapshot.settled_replicas(move.tp)
        if current is None:
            unknown.append(str(move.tp))
        else:
            moves.append(PartitionMove(move.topic, move.partition, current))
    if unknown:
        raise InvalidInput(f"cannot write a rollback plan: {len(unknown)} partition(s) of the plan "
                           f"are not in the cluster, the first {unknown[0]}", details=tuple(unknown))
    return ReassignmentPlan(tuple(sorted(moves)))


def changed_moves(plan: ReassignmentPlan, snapshot: ClusterSnapshot
                  ) -> tuple[tuple[PartitionMove, ...], int]:
    """The moves that still change something (replica order counts: it picks the preferred
    leader), and how many already match the cluster."""
    changed = tuple(m for m in plan.moves if snapshot.replicas(m.tp) != m.replicas)
    return changed, len(plan.moves) - len(changed)


# --- plans built from a cluster ----------------------------------------------------------------


def election_plan_for(snapshot: ClusterSnapshot, topics: Sequence[str] | None) -> ElectionPlan:
    """Every partition of ``topics`` (None: of every topic), like Kafka's tool without a file."""
    names = sorted(snapshot.topics) if topics is None else sorted(set(topics))
    unknown = [t for t in names if t not in snapshot.topics]
    if unknown:
        raise InvalidInput(f"unknown topic(s) not in the cluster: {listed(unknown)}")
    return ElectionPlan(tuple(TopicPartition(t, p) for t in names
                              for p in sorted(snapshot.topics[t])))


def deletion_plan_for(topics: Sequence[str]) -> DeletionPlan:
    """The deletion plan of ``topics`` (sorted); a name given twice and names Kafka could never
    have created are refused here rather than left to the cluster check."""
    names = sorted(set(topics))
    if not names:
        raise InvalidInput("no topics to delete")
    twice = sorted(n for n, count in Counter(topics).items() if count > 1)
    if twice:  # as a broker id given twice is refused: the operator meant something else
        raise InvalidInput(f"topic(s) given more than once: {listed(twice)}")
    bad = [problem for n in names if (problem := topic_name_problem(n)) is not None]
    if len(bad) == 1:
        raise InvalidInput(bad[0])
    if bad:
        raise InvalidInput(f"{len(bad)} illegal topic names, the first: {bad[0]}",
                           details=tuple(bad))
    return DeletionPlan(tuple(names))
