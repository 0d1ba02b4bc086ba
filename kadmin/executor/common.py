"""What every operation of the executor shares: settings, outcome, where the plan's files are,
and the reads and checks against the live cluster that come before anything is written."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from kadmin import files, plans
from kadmin.events import Event
from kadmin.health_gate import FULL_READ_INTERVAL
from kadmin.model import (
    ClusterSnapshot,
    Conflict,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
    Replicas,
    Severity,
    TopicPartition,
    sample_of,
)
from kadmin.zk import admin, codec, paths, reader, session

Emit = Callable[[Event], None]


def ignore(_: Event) -> None:
    """Default sink for callers that do not want progress."""


@dataclass(frozen=True)
class ExecutionSettings:
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    timeout: float | None = None
    """Bound on the whole wait, in seconds; None waits for as long as it takes."""
    allow_rf_change: bool = False
    allow_internal: bool = False
    allow_reassigning: bool = False
    """Queue topic deletions even while a reassignment moves some of their partitions."""
    throttle: int | None = None
    """Replication throttle (bytes/s) set for each batch and removed after it; None: none."""
    health_gate: bool = True
    """Before each batch, wait while partitions outside the plan are under-replicated or
    offline (as Cruise Control postpones moves)."""
    health_interval: float = FULL_READ_INTERVAL
    """Seconds between the gate's full reads of every partition state (see health_gate)."""
    max_batch_bytes: int | None = None
    """With partition sizes: the most bytes one batch copies (a bigger partition goes alone)."""
    max_moves_per_broker: int | None = None
    """Per batch, the most new replicas a broker receives and the most moving partitions it
    sends for as leader (Cruise Control's per-broker concurrency)."""
    started: float | None = None
    """The monotonic instant the command began, which ``timeout`` counts from (connecting and
    the reads and checks before the first submission included); None: from the first time
    the deadline is asked for."""
    elect: bool = False
    """After the last batch, elect the preferred leader of every partition whose first replica
    the plan changes."""


@dataclass(frozen=True)
class PlanFiles:
    """Where the rollback and the journal of one plan live: next to the plan, so they travel with it."""

    plan: Path

    @property
    def rollback(self) -> Path:
        return files.rollback_of(self.plan)

    @property
    def journal(self) -> Path:
        return files.journal_of(self.plan)


@dataclass(frozen=True)
class Outcome:
    """The result the CLI turns into an exit code: ``failures`` are one line each (with
    ``timed_out``: one per partition or topic still in flight)."""

    operation: str
    total: int
    failures: tuple[str, ...] = ()
    timed_out: bool = False
    notes: tuple[str, ...] = ()
    """Lines that do not fail the operation (say, partitions an --elect could not elect)."""

    @property
    def ok(self) -> bool:
        return not self.failures and not self.timed_out


def deadline_of(settings: ExecutionSettings) -> float:
    if settings.timeout is None:
        return float("inf")
    return (time.monotonic() if settings.started is None else settings.started) + settings.timeout


def run_limit(settings: ExecutionSettings) -> tuple[float, str] | None:
    """What bounds every ZooKeeper request of a run with a --timeout (connecting included):
    its deadline (the reads that say what is left at it have their own ``admin.AFTER_DEADLINE``);
    None without a --timeout."""
    if settings.timeout is None:
        return None
    return deadline_of(settings), f"{settings.timeout:g}s, the --timeout"


def live(client: KazooClient, topics: Sequence[str], *, states: bool = False
         ) -> reader.LiveCluster:
    """The cluster as far as one plan is concerned (a topic or state znode that cannot be decoded
    stops the operation). Partition states cost one read per partition: asked for only where
    they matter (elections; the leaders that send a reassignment's data)."""
    return reader.read_for_operation(client, set(topics), states=states)


def require_valid(plan: ReassignmentPlan | ElectionPlan | DeletionPlan, snapshot: ClusterSnapshot,
                  settings: ExecutionSettings) -> None:
    """The same rules as ``plan validate --cluster``: nothing is written when any error is found."""
    errors = sample_of(str(p) for p in plans.validate_against_cluster(
        plan, snapshot, allow_rf_change=settings.allow_rf_change,
        allow_internal=settings.allow_internal) if p.severity is Severity.ERROR)
    if errors.total:
        # named by what it does: the topics of `topics delete a b` and `elect --topics` are no plan
        what = ("reassignment" if isinstance(plan, ReassignmentPlan) else
                "election" if isinstance(plan, ElectionPlan) else "deletion")
        raise InvalidInput(
            f"the {what} does not fit the live cluster ({errors.total:,} error(s)); nothing was "
            "written", details=errors.items, more=errors.rest)


def in_flight_reassignment(client: KazooClient) -> tuple[PartitionMove, ...] | None:
    """/admin/reassign_partitions (None: absent or unreadable), read *before* the topic znodes.

    The controller writes a partition's final replicas before it takes the partition out of that
    znode, so a partition that leaves it after this read shows its final replicas in a topic
    read that follows. Read the other way round, a partition finishing between the two reads
    looks unfinished and not in flight at once: a rerun would submit it a second time, and
    ``verify`` would call it failed."""
    return live(client, ()).in_flight.reassignment


def ours_in_flight(client: KazooClient, in_flight: tuple[PartitionMove, ...] | None,
                   targets: dict[TopicPartition, Replicas]) -> tuple[PartitionMove, ...]:
    """Our batch that an interrupted run left in /admin/reassign_partitions (``in_flight``, as
    :func:`in_flight_reassignment` reads it), to wait on rather than submit again; anyone else's
    request there is a Conflict. (An unreadable znode reads as none: the create that follows
    refuses with a Conflict naming it.)"""
    if in_flight is None:
        return ()
    if not in_flight or any(targets.get(m.tp) != m.replicas for m in in_flight):
        admin.ensure_idle(client, PlanKind.REASSIGN)  # raises Conflict naming what runs
        raise Conflict("a reassignment is already in progress in /admin/reassign_partitions")
    return in_flight


def refuse_moving(plan: ReassignmentPlan, snapshot: ClusterSnapshot,
                  ours: set[TopicPartition]) -> None:
    """Conflict for a partition of the plan that the topic znodes show moving, unless it is in
    ``ours`` (a batch of this plan an interrupted run left in /admin/reassign_partitions)."""
    planned = {m.tp for m in plan.moves}
    plans.refuse_moving(snapshot.reassigning, lambda tp: tp in planned and tp not in ours,
                        "nothing of the plan was submitted")


def unmoved(client: KazooClient, batch: Sequence[PartitionMove]) -> tuple[PartitionMove, ...]:
    """The batch's moves that the live cluster does not show applied yet (a Conflict if someone
    else started moving one since the run began)."""
    found = live(client, sorted({m.topic for m in batch}))
    moves = ReassignmentPlan(tuple(batch))
    refuse_moving(moves, found.snapshot, set())
    return plans.changed_moves(moves, found.snapshot)[0]


def not_in_isr(client: KazooClient, moves: Sequence[PartitionMove]) -> tuple[str, ...]:
    """One line per partition still moving: which target replicas have not joined its ISR yet.

    Read at a deadline, when ZooKeeper itself may be why time ran out: kazoo holds a request
    made while it reconnects until a server answers, so an unbounded read would keep kadmin
    past its --timeout for as long as the outage lasts. These reads run only while connected
    and end ``admin.AFTER_DEADLINE`` from now; once that has passed, every further read fails
    at once."""
    calls = admin.ZkCalls(client, time.monotonic() + admin.AFTER_DEADLINE, while_connected=True)
    return tuple(_isr_line(calls, move) for move in moves)


def _isr_line(calls: admin.ZkCalls, move: PartitionMove) -> str:
    head = f"{move.tp}: target {list(move.replicas)}"
    path = paths.partition_state(move.topic, move.partition)
    try:
        data = calls.data(path)
        isr = set() if data is None else set(codec.decode_state(data).isr)
    except session.RETRYABLE:
        return f"{head}, ISR unknown (ZooKeeper did not answer)"
    except codec.DecodeError as exc:
        return f"{head}, ISR unknown ({path}: {exc})"
    return f"{head}, not yet in ISR: {[r for r in move.replicas if r not in isr]}"
