"""``reassign``, ``verify``, ``elect`` and ``topics delete``: a plan carried out on the cluster by
:mod:`kadmin.executor`, which this wraps; the connection, the reads the run needs, and the
dry runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kadmin import executor, plans
from kadmin.events import Event
from kadmin.model import DeletionPlan, ElectionPlan, ReassignmentPlan
from kadmin.operations.planfiles import load_reassignment
from kadmin.operations.source import Connection, connected, partition_sizes
from kadmin.zk import reader
from kadmin.zk.identity import cluster_identity

Emit = Callable[[Event], None]
"""Where a run sends its progress events."""


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
    with connected(request.connection) as client:
        topics = {m.topic for m in plan.moves}
        snapshot = reader.read_for_operation(client, topics).snapshot
        found = partition_sizes(request.sizes, snapshot, warn, topics)
        if request.dry_run:
            result = executor.dry_run_reassignment(client, plan,
                                                   executor.PlanFiles(request.anchor), snapshot,
                                                   request.settings, found)
            return ReassignDryRun(result.scheduled, result.stats)
        return executor.execute_reassignment(client, plan, executor.PlanFiles(request.anchor),
                                             request.settings, emit, found)


def verify(plan_path: Path, connection: Connection
           ) -> tuple[ReassignmentPlan, executor.Verification]:
    """Each partition of a plan as complete, in progress, not started or failed."""
    plan, anchor = load_reassignment(plan_path)
    journal = executor.PlanFiles(anchor).journal
    executor.submitted(journal, plan, "")  # a journal kadmin cannot use stops it unconnected
    with connected(connection) as client:
        submitted = executor.submitted(journal, plan, cluster_identity(client))
        return plan, executor.verify_reassignment(client, plan, submitted)


def elect(explicit: ElectionPlan | None, topics: Sequence[str], connection: Connection,
          settings: executor.ExecutionSettings, emit: Emit, *, dry_run: bool = False
          ) -> executor.Outcome | executor.ElectionDryRun:
    """A preferred replica election of ``explicit`` (a plan file's), else of ``topics`` (none:
    every partition) as the cluster has them; with ``dry_run`` what it would submit, checked
    as the run checks."""
    with connected(connection) as client:
        if explicit is not None:
            plan = explicit
        else:
            snapshot = reader.read_for_operation(client, set(topics) if topics else None).snapshot
            plan = plans.election_plan_for(snapshot, list(topics) or None)
        if dry_run:
            return executor.dry_run_election(client, plan, settings)
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
    with connected(connection) as client:
        transactions = len(executor.check_deletion(client, plan, settings))
        if dry_run:
            return DeletionDryRun(plan, transactions)
        if not confirm(plan):
            return None
        return executor.execute_deletion(client, plan, settings, emit)
