"""``reassign``, ``verify``, ``elect`` and ``topics delete``: a plan carried out on the cluster by
:mod:`kadmin.executor`, which this wraps; the connection, the reads the run needs, and the
dry runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kadmin import executor, plans
from kadmin.events import Event
from kadmin.model import DeletionPlan, ElectionPlan, ReassignmentPlan
from kadmin.operations.planfiles import load_reassignment
from kadmin.operations.source import Connection, connected, partition_sizes
from kadmin.zk import reader

Emit = Callable[[Event], None]
"""Where a run sends its progress events."""


def _started(settings: executor.ExecutionSettings) -> executor.ExecutionSettings:
    """The settings of a run that begins now: its --timeout counts from here, connecting and
    every read and check before the first submission included."""
    return replace(settings, started=time.monotonic())


@dataclass(frozen=True)
class ReassignRequest:
    plan: ReassignmentPlan
    anchor: Path
    """The plan file (or folder manifest) its rollback and journal sit next to."""
    connection: Connection
    settings: executor.ExecutionSettings
    sizes: Path | None = None
    dry_run: bool = False


@dataclass(frozen=True)
class ReassignDryRun:
    """What a reassignment would submit: the schedule a real run would now follow (its batches
    and their model, spec section 8) and the plan's before/after stats."""

    scheduled: executor.Scheduled
    stats: plans.PlanStats


def reassign(request: ReassignRequest, emit: Emit, warn: Callable[[str], None]
             ) -> executor.Outcome | ReassignDryRun:
    """Run (or with ``dry_run`` only compose its batches) a reassignment: the cluster's state of
    the plan's topics is read first, then partition sizes fitted to it (their warnings to
    ``warn``)."""
    plan = request.plan
    settings = _started(request.settings)
    with connected(request.connection, executor.run_limit(settings)) as client:
        snapshot = reader.read_for_operation(client, {m.topic for m in plan.moves}).snapshot
        found = partition_sizes(request.sizes, snapshot, warn)
        if request.dry_run:
            result = executor.dry_run_reassignment(client, plan,
                                                   executor.PlanFiles(request.anchor), snapshot,
                                                   settings, found)
            return ReassignDryRun(result.scheduled, result.stats)
        return executor.execute_reassignment(client, plan, executor.PlanFiles(request.anchor),
                                             settings, emit, found)


def verify(plan_path: Path, connection: Connection
           ) -> tuple[ReassignmentPlan, executor.Verification]:
    """Each partition of a plan as complete, in progress, not started or failed."""
    plan, anchor = load_reassignment(plan_path)
    submitted = executor.submitted(executor.PlanFiles(anchor).journal, plan)
    with connected(connection) as client:
        return plan, executor.verify_reassignment(client, plan, submitted)


def elect(explicit: ElectionPlan | None, topics: Sequence[str], connection: Connection,
          settings: executor.ExecutionSettings, emit: Emit, *, dry_run: bool = False
          ) -> executor.Outcome | ElectionPlan:
    """A preferred replica election of ``explicit`` (a plan file's), else of ``topics`` (none:
    every partition) as the cluster has them; with ``dry_run`` the plan it would run."""
    settings = _started(settings)
    with connected(connection, executor.run_limit(settings)) as client:
        if explicit is not None:
            plan = explicit
        else:
            snapshot = reader.read_for_operation(client, set(topics) if topics else None).snapshot
            plan = plans.election_plan_for(snapshot, list(topics) or None)
        if dry_run:
            executor.check_election(client, plan, settings)  # exits where the real run would
            return plan
        return executor.execute_election(client, plan, settings, emit)


@dataclass(frozen=True)
class DeletionDryRun:
    plan: DeletionPlan
    transactions: int


def delete_topics(plan: DeletionPlan, connection: Connection,
                  settings: executor.ExecutionSettings, emit: Emit,
                  confirm: Callable[[DeletionPlan], bool], *, dry_run: bool = False
                  ) -> executor.Outcome | DeletionDryRun | None:
    """Topic deletion, checked against the cluster first; ``confirm`` is asked after the check
    (None when it says no: nothing was written)."""
    settings = _started(settings)
    with connected(connection, executor.run_limit(settings)) as client:
        transactions = len(executor.check_deletion(client, plan, settings))
        if dry_run:
            return DeletionDryRun(plan, transactions)
        if not confirm(plan):
            return None
        return executor.execute_deletion(client, plan, settings, emit)
