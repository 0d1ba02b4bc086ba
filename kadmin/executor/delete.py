"""Topic deletion: every marker queued (in znode-sized transactions), then a wait until the
topics are gone."""

from __future__ import annotations

from collections.abc import Sequence

from kazoo.client import KazooClient

from kadmin import plans
from kadmin.events import BatchDone, BatchSubmitted, ExecutionPlanned, Finished, TimedOut, Waiting
from kadmin.executor.common import (
    Emit,
    ExecutionSettings,
    Outcome,
    deadline_of,
    ignore,
    in_flight_reassignment,
    live,
    require_valid,
)
from kadmin.model import ClusterSnapshot, Conflict, DeletionPlan, PartitionMove, PlanKind
from kadmin.zk import admin


def check_deletion(client: KazooClient, plan: DeletionPlan, settings: ExecutionSettings
                   ) -> list[Sequence[str]]:
    """Everything that must hold before the operator is asked to confirm a deletion; returns
    the topics of each transaction of markers."""
    moving = in_flight_reassignment(client) or ()
    snapshot = live(client, list(plan.topics)).snapshot
    if not settings.allow_reassigning:
        _refuse_deleting_moving(plan, snapshot, moving)
    require_valid(plan, snapshot, settings)
    batches = plans.deletion_batches(plan.topics, settings.max_znode_bytes, client.chroot or "")
    admin.ensure_idle(client, PlanKind.DELETION)
    return batches


def _refuse_deleting_moving(plan: DeletionPlan, snapshot: ClusterSnapshot,
                            submitted: Sequence[PartitionMove]) -> None:
    """Conflict for a topic a reassignment still moves, in /admin/reassign_partitions or in its
    topic znode: Kafka's controller holds such a deletion until the move ends, so the wait that
    follows would hang on it, and the move's work is thrown away."""
    doomed = set(plan.topics)
    partitions = sorted({m.tp for m in submitted if m.topic in doomed}
                        | {tp for tp in snapshot.reassigning_partitions() if tp.topic in doomed})
    if partitions:
        topics = sorted({tp.topic for tp in partitions})
        raise Conflict(f"{len(topics)} topic(s) to delete are being reassigned "
                       f"({len(partitions)} partition(s) moving); nothing was deleted (wait until "
                       "the reassignment is done, or --allow-reassigning)",
                       details=(f"topic {tp.topic}: partition {tp.partition} is moving"
                                for tp in partitions))


def execute_deletion(client: KazooClient, plan: DeletionPlan, settings: ExecutionSettings,
                     emit: Emit = ignore) -> Outcome:
    batches = check_deletion(client, plan, settings)
    total, count = len(plan.topics), len(batches)
    emit(ExecutionPlanned("delete", total, 0, count))
    queued: list[str] = []
    for number, batch in enumerate(batches, start=1):
        # all queued before the wait: the controller works through every marker it finds
        admin.submit_deletions(client, batch, queued_before=queued)
        queued += batch
        emit(BatchSubmitted(number, count, len(batch)))

    def update(u: admin.WaitUpdate) -> None:
        emit(Waiting(count, u.remaining, total - u.remaining, total, u.controller, u.connected))

    remaining = admin.wait_deletions(client, plan.topics, deadline=deadline_of(settings),
                                     on_update=update)
    if remaining:
        emit(TimedOut(len(remaining)))
        return Outcome("delete", total, tuple(f"topic {t} is not deleted yet" for t in remaining),
                       timed_out=True)
    emit(BatchDone(count, count, total, total))
    emit(Finished("delete", True, 0))
    return Outcome("delete", total)
