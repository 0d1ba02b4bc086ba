"""``reassign``, ``verify``, ``elect`` and ``topics delete``: a plan carried out on the cluster by
:mod:`kadmin.executor`, which this wraps; the plan files read, the execution settings, the
connection, the reads the run needs, and the dry runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kadmin import executor, min_insync, plans, schedule
from kadmin.events import Event
from kadmin.health_gate import FULL_READ_INTERVAL
from kadmin.model import (
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    PartitionState,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
    and_more,
    sample_of,
)
from kadmin.operations.planfiles import load_plan, load_reassignment
from kadmin.operations.selection import split_names
from kadmin.operations.source import Connection, Warn, connected, partition_sizes
from kadmin.progress_metrics import MetricsFile
from kadmin.units import parse_bytes, parse_rate
from kadmin.zk import reader
from kadmin.zk.identity import cluster_identity

Emit = Callable[[Event], None]
"""Where a run sends its progress events."""


@dataclass(frozen=True)
class ReassignRequest:
    plan: Path
    """A plan file, or a plan folder (Spark output) or its manifest."""
    connection: Connection
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    jute_maxbuffer: int = plans.JUTE_MAXBUFFER
    timeout: float | None = None
    allow_rf_change: bool = False
    throttle: str | None = None
    """The replication throttle as typed (``50MB``): set before each batch, removed after."""
    sizes: Path | None = None
    max_batch_bytes: str | None = None
    """As typed; needs ``sizes``."""
    max_moves_per_broker: int | None = None
    elect: bool = False
    health_gate: bool = True
    health_interval: float = FULL_READ_INTERVAL
    metrics_file: Path | None = None
    """A Prometheus text file kept current during the run (a dry run writes none)."""
    dry_run: bool = False


@dataclass(frozen=True)
class ReassignDryRun:
    """What a reassignment would submit: the schedule a real run would now follow (its batches
    and their model), the plan's before/after stats, and with sizes and a throttle the
    schedule's predicted duration."""

    scheduled: executor.Scheduled
    stats: plans.PlanStats
    throttle: int | None = None
    predicted: schedule.Prediction | None = None
    in_flight: int = 0
    """Partitions of our batch an interrupted run left in ZooKeeper (waited on first)."""
    would_fail: tuple[str, ...] = ()
    """A line per partition the run would submit and fail on (exit 1)."""

    @property
    def batch_count(self) -> int:
        """The batches the run would run, the one it waits on included."""
        return len(self.scheduled.batches) + (1 if self.in_flight else 0)

    @property
    def resumed(self) -> bool:
        """The run would resume an earlier one: our batch in flight, or a journal to go on."""
        return bool(self.in_flight) or self.scheduled.resumed


def reassign(request: ReassignRequest, emit: Emit, warn: Warn
             ) -> executor.Outcome | ReassignDryRun:
    """Run (or with ``dry_run`` only compose its batches) a reassignment: the plan is read and
    checked, then the cluster's state of its topics, then partition sizes fitted to it (their
    warnings to ``warn``). With ``metrics_file``, every event also goes to that file (its path
    checked before anything is read from ZooKeeper; marked finished however the run ends)."""
    plans.check_znode_limit(request.max_znode_bytes, request.jute_maxbuffer)
    plan, anchor = load_reassignment(request.plan)
    if request.max_batch_bytes is not None and request.sizes is None:
        raise InvalidInput("--max-batch-bytes needs partition sizes: give --sizes FILE")
    settings = executor.ExecutionSettings(
        batch_size=request.batch_size, max_znode_bytes=request.max_znode_bytes,
        timeout=request.timeout, allow_rf_change=request.allow_rf_change,
        throttle=None if request.throttle is None else parse_rate(request.throttle),
        health_gate=request.health_gate, health_interval=request.health_interval,
        max_batch_bytes=None if request.max_batch_bytes is None else parse_bytes(
            request.max_batch_bytes, "--max-batch-bytes"),
        max_moves_per_broker=request.max_moves_per_broker, elect=request.elect,
        started=time.monotonic())  # --timeout counts from here: connecting, reads, checks
    metrics = (None if request.metrics_file is None or request.dry_run
               else MetricsFile(request.metrics_file, str(request.plan)))
    try:
        with connected(request.connection, executor.run_limit(settings)) as client:
            topics = {m.topic for m in plan.moves}
            cluster = reader.read_for_operation(client, topics)
            snapshot = cluster.snapshot
            found = partition_sizes(request.sizes, snapshot, warn, topics)
            if request.dry_run:
                result = executor.dry_run_reassignment(client, plan, executor.PlanFiles(anchor),
                                                       settings, found, cluster)
                for line in below_min_insync(plan, snapshot, reader.read_states(
                        client, {m.tp for m in plan.moves})):
                    warn(line)
                rate = settings.throttle
                predicted = (result.scheduled.prediction(rate)
                             if rate and result.scheduled.sized else None)
                return ReassignDryRun(result.scheduled, result.stats, rate, predicted,
                                      result.in_flight, result.would_fail)
            return executor.execute_reassignment(
                client, plan, executor.PlanFiles(anchor), settings,
                emit if metrics is None else _also_to(metrics, emit), found)
    finally:
        if metrics is not None:
            metrics.close()


def _also_to(metrics: MetricsFile, emit: Emit) -> Emit:
    """``emit`` with every event written to ``metrics`` first."""

    def both(event: Event) -> None:
        metrics(event)
        emit(event)

    return both


def below_min_insync(plan: ReassignmentPlan, snapshot: ClusterSnapshot,
                     states: Mapping[TopicPartition, PartitionState]) -> list[str]:
    """The moves that keep fewer of a partition's in-sync replicas than its topic's
    min.insync.replicas while they run, a line each (at most LIST_LIMIT, then a count)."""
    lines = (f"{m.tp}: {risk}" for m in plan.moves
             if (minimum := snapshot.min_insync.get(m.topic)) is not None
             and (current := snapshot.settled_replicas(m.tp)) is not None
             and (risk := min_insync.kept_in_sync(current, m.replicas, states.get(m.tp),
                                                  minimum)) is not None)
    shown = sample_of(lines)
    return [*shown.items, *((and_more(shown.rest),) if shown.rest else ())]


@dataclass(frozen=True)
class VerifyRequest:
    plan: Path
    connection: Connection


@dataclass(frozen=True)
class Verified:
    plan: ReassignmentPlan
    verification: executor.Verification


def verify(request: VerifyRequest) -> Verified:
    """Each partition of a plan as complete, in progress, not started or failed."""
    plan, anchor = load_reassignment(request.plan)
    journal = executor.PlanFiles(anchor).journal
    executor.submitted(journal, plan, "")  # a journal kadmin cannot use stops it unconnected
    with connected(request.connection) as client:
        submitted = executor.submitted(journal, plan, cluster_identity(client))
        return Verified(plan, executor.verify_reassignment(client, plan, submitted))


@dataclass(frozen=True)
class ElectRequest:
    """Exactly one of ``plan``, ``topics`` and ``all_topics``."""

    connection: Connection
    plan: Path | None = None
    topics: str | None = None
    """Comma-separated, as typed."""
    all_topics: bool = False
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    jute_maxbuffer: int = plans.JUTE_MAXBUFFER
    timeout: float | None = None
    dry_run: bool = False


def elect(request: ElectRequest, emit: Emit) -> executor.Outcome | executor.ElectionDryRun:
    """A preferred replica election of a plan file's partitions, else of the topics (all:
    every partition) as the cluster has them; with ``dry_run`` what it would submit, checked
    as the run checks."""
    if sum([request.plan is not None, request.topics is not None, request.all_topics]) != 1:
        raise InvalidInput("choose exactly one of --plan, --topics and --all-topics")
    plans.check_znode_limit(request.max_znode_bytes, request.jute_maxbuffer)
    explicit = load_plan(request.plan, PlanKind.ELECTION) if request.plan else None
    assert explicit is None or isinstance(explicit, ElectionPlan)
    topics = split_names(request.topics, "--topics")
    settings = executor.ExecutionSettings(batch_size=request.batch_size,
                                          max_znode_bytes=request.max_znode_bytes,
                                          timeout=request.timeout, started=time.monotonic())
    with connected(request.connection, executor.run_limit(settings)) as client:
        if explicit is not None:
            plan = explicit
        else:
            snapshot = reader.read_for_operation(client, set(topics) if topics else None).snapshot
            plan = plans.election_plan_for(snapshot, list(topics) or None)
        if request.dry_run:
            return executor.dry_run_election(client, plan, settings)
        return executor.execute_election(client, plan, settings, emit)


@dataclass(frozen=True)
class DeleteRequest:
    """Topic names or a deletion plan file (exactly one)."""

    connection: Connection
    names: Sequence[str] = ()
    plan: Path | None = None
    allow_internal: bool = False
    allow_reassigning: bool = False
    timeout: float | None = None
    max_znode_bytes: int = 1_000_000
    jute_maxbuffer: int = plans.JUTE_MAXBUFFER
    dry_run: bool = False


@dataclass(frozen=True)
class DeletionDryRun:
    plan: DeletionPlan
    transactions: int


def delete_topics(request: DeleteRequest, emit: Emit, confirm: Callable[[DeletionPlan], bool]
                  ) -> executor.Outcome | DeletionDryRun | None:
    """Topic deletion, checked against the cluster first; ``confirm`` is asked after the check
    (None when it says no: nothing was written)."""
    if bool(request.names) == (request.plan is not None):
        raise InvalidInput("give topic names (as arguments or --topics a,b) or --plan FILE "
                           "(one of them)")
    plans.check_znode_limit(request.max_znode_bytes, request.jute_maxbuffer)
    plan = (load_plan(request.plan, PlanKind.DELETION) if request.plan
            else plans.deletion_plan_for(list(request.names)))
    assert isinstance(plan, DeletionPlan)
    settings = executor.ExecutionSettings(timeout=request.timeout,
                                          allow_internal=request.allow_internal,
                                          allow_reassigning=request.allow_reassigning,
                                          max_znode_bytes=request.max_znode_bytes,
                                          started=time.monotonic())
    with connected(request.connection, executor.run_limit(settings)) as client:
        transactions = len(executor.check_deletion(client, plan, settings))
        if request.dry_run:
            return DeletionDryRun(plan, transactions)
        if not confirm(plan):
            return None
        return executor.execute_deletion(client, plan, settings, emit)
