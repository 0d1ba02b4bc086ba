"""Plan files: kadmin's one writer and reader of them. A plan file is one admin document
(``plans.plan_document``), written atomically with its rollback file beside it; a reassignment
is read from a plan file or from a plan folder (:mod:`.folder`) alike."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path

from kadmin import files, min_insync, plans
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PartitionMove,
    Plan,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
    sample_of,
)
from kadmin.operations.folder import check_count, listed_batches, plan_folder

STDOUT = Path("-")
"""The output path that means the plan goes to stdout, as one compact JSON line."""

Stdout = Callable[[Iterable[str]], None]
"""Where a plan for stdout is written, chunk by chunk (the CLI's guarded stdout)."""


def to_stdout(path: Path | None) -> bool:
    """True when the output file is ``-``: then human messages go to stderr."""
    return path is not None and str(path) == "-"


def write_plan(plan: Plan, kind: PlanKind, out_path: Path | None, force: bool,
               rollback: ReassignmentPlan | None = None, *, stdout: Stdout | None = None
               ) -> Path | None:
    """Write the plan (and its rollback) atomically, by default to plans/<kind>-<UTC time>.json;
    ``-`` writes the plan to ``stdout`` instead and returns None."""
    if to_stdout(out_path):
        assert stdout is not None, "a plan for stdout needs somewhere to go"
        stdout([json.dumps(plans.plan_document(plan), separators=(",", ":")), "\n"])
        return None
    if out_path is None:
        out_path, rollback_path = files.plan_paths(kind.value, Path("plans"),
                                                   datetime.now(timezone.utc))
    else:
        rollback_path = files.rollback_of(out_path)
    writes = [(out_path, plan_file(plan))]
    if rollback is not None:  # the two files, or neither: a plan must not lose its rollback
        writes.append((rollback_path, plan_file(rollback)))

    def read_back(path: Path, written: Path) -> None:
        if path == rollback_path and rollback is not None:
            read_back_plan(path, written)

    files.atomic_write_files(writes, force=force, read_back=read_back)
    return out_path


def read_back_plan(_: Path, written: Path) -> None:
    """A plan file kadmin wrote (a rollback above all: the way back must be a plan kadmin
    runs), read back as ``plan validate`` reads one, without the cluster
    (:data:`kadmin.files.ReadBack`)."""
    doc = files.read_json(written)
    with files.gc_paused():
        report = plans.validate(doc)
    if not report.ok():
        raise report.invalid(f"{written}: invalid plan")


_SLOT = "\x00"
"""Stands for an entry in the frame :func:`plan_file` asks :func:`kadmin.files.dumps_json` for
(no topic can hold it, and json writes it as ``"\\u0000"``)."""


def plan_file(plan: Plan) -> bytes:
    """The bytes of a plan file: ``files.dumps_json(plans.plan_document(plan))``, one entry a
    line. A reassignment's million entries skip the document: the C encoder writes the moves
    as the arrays they are (a :class:`PartitionMove` is a tuple), ``["t",0,[1,2,3],null]``, and
    the fields are named by replacing the three delimiters it wrote between them: ``",`` ends
    the topic (inside a string a quote is escaped), ``,[`` starts the replicas, ``],null],["``
    ends an entry without log_dirs and starts the next. Each occurs once per entry unless a
    topic name holds one, which the counts show, and such a plan, or one with log_dirs, takes
    the document. No dict per entry: some 40% less time than the document, the same bytes."""
    if isinstance(plan, ReassignmentPlan) and plan.moves:
        moves = sorted(plan.moves)
        text = files.dumps_json(moves, compact=True)[3:]  # after [["
        count = len(moves)
        if text.endswith(b"],null]]\n") and text.count(b'],null],["') == count - 1:
            head, separator, tail = files.dumps_json(
                {"version": plan.version, "partitions": [_SLOT, _SLOT]}).split(b'"\\u0000"')
            text = text[:-9].replace(b'],null],["', b"]}" + separator + b'{"topic":"')
            if text.count(b'",') == count:
                text = text.replace(b'",', b'","partition":')
                if text.count(b",[") == count:
                    text = text.replace(b",[", b',"replicas":[')
                    return b"".join((head, b'{"topic":"', text, b"]}", tail))
    return files.dumps_json(plans.plan_document(plan))


def refuse_below_min_insync(plan: ReassignmentPlan, snapshot: ClusterSnapshot) -> None:
    """A planner's refusal (exit 2, nothing written) of targets shorter than their topic's
    min.insync.replicas, each partition named with both numbers."""
    short = sample_of(f"{m.tp}: {why}" for m in plan.moves
                      if (minimum := snapshot.min_insync.get(m.topic)) is not None
                      and (why := min_insync.too_short(m.replicas, minimum)) is not None)
    if short.total:
        raise InvalidInput(f"{short.total} partition(s) would end below min.insync.replicas; "
                           "nothing written", details=short.items, more=short.rest)


def checked(plan: Plan, kind: PlanKind, snapshot: ClusterSnapshot | None, **options: bool) -> None:
    """Validate a plan kadmin itself built, before it is written: the file must pass
    ``plan validate`` like any other."""
    report = plans.validate(plans.plan_document(plan), kind, snapshot, **options)
    if not report.ok():
        raise report.invalid("the plan is invalid; nothing written")


def load_plan(path: Path, kind: PlanKind, snapshot: ClusterSnapshot | None = None,
              **options: bool) -> Plan:
    """Read and validate a plan file of the kind the command needs (schema and structure, and
    with ``snapshot`` the cluster rules too); any error is an input error naming the file."""
    doc = files.read_json(path)
    wrong_kind = plans.kind_problem(doc, kind)
    if wrong_kind is not None:
        raise InvalidInput(f"{path}: invalid plan: {wrong_kind}")
    with files.gc_paused():
        report = plans.validate(doc, kind, snapshot, **options)
    if report.plan is None:
        raise report.invalid(f"{path}: invalid plan")
    return report.plan


def load_reassignment(path: Path, snapshot: ClusterSnapshot | None = None, **options: bool
                      ) -> tuple[ReassignmentPlan, Path]:
    """A plan file, or the output folder / manifest of ``kadmin spark plan`` or ``kadmin spark
    rebalance`` (its batch files are read in order and make one plan), checked as
    :func:`load_plan` checks. Returns the plan and the file its rollback and journal sit next
    to."""
    manifest = plan_folder(path)
    if manifest is None:
        plan = load_plan(path, PlanKind.REASSIGN, snapshot, **options)
        assert isinstance(plan, ReassignmentPlan)
        return plan, path
    moves: list[PartitionMove] = []
    home: dict[TopicPartition, Path] = {}
    for batch, listed in listed_batches(manifest).items():
        plan = load_plan(batch, PlanKind.REASSIGN, snapshot, **options)
        assert isinstance(plan, ReassignmentPlan)
        check_count(batch, listed, len(plan.moves))
        for move in plan.moves:
            first = home.setdefault(move.tp, batch)
            if first != batch:
                raise InvalidInput(f"{manifest}: partition {move.tp} is in more than one batch "
                                   f"file: {first.name} and {batch.name}")
        moves.extend(plan.moves)
    return ReassignmentPlan(tuple(sorted(moves))), manifest
