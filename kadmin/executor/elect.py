"""Preferred replica elections in znode-sized batches, with the reason for every partition
still not led by its preferred replica afterwards."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient

from kadmin import plans
from kadmin.events import BatchDone, BatchSubmitted, ExecutionPlanned, Finished, TimedOut
from kadmin.executor.common import (
    Emit,
    ExecutionSettings,
    Outcome,
    deadline_of,
    ignore,
    live,
    require_valid,
)
from kadmin.model import ClusterSnapshot, ElectionPlan, PlanKind, TopicPartition
from kadmin.zk import admin


@dataclass(frozen=True)
class ElectionDryRun:
    """What an election would do now: the partitions it submits (those not led by their
    preferred replica), in how many batches, and those of them the controller would skip
    (preferred replica offline or out of the ISR: the real run fails on them)."""

    plan: ElectionPlan
    pending: tuple[TopicPartition, ...]
    batches: int
    failures: tuple[str, ...]


def check_election(client: KazooClient, plan: ElectionPlan, settings: ExecutionSettings
                   ) -> ClusterSnapshot:
    """What must hold before an election is submitted (a dry run stops where the real run
    would): the plan's topics and states readable, the plan valid, no election in flight and
    /admin/preferred_replica_election readable. Returns the cluster as read."""
    snapshot = live(client, sorted({tp.topic for tp in plan.partitions}), states=True).snapshot
    require_valid(plan, snapshot, settings)
    admin.ensure_idle(client, PlanKind.ELECTION)
    return snapshot


def _prepare(client: KazooClient, plan: ElectionPlan, settings: ExecutionSettings
             ) -> tuple[ClusterSnapshot, list[TopicPartition], list[Sequence[TopicPartition]]]:
    """The checks and reads before an election, the same for a dry run: the cluster, the
    partitions not led by their preferred replica, and their batches."""
    snapshot = check_election(client, plan, settings)
    pending = [tp for tp in plan.partitions if not led_by_preferred(snapshot, tp)]
    batches = plans.election_batches(pending, settings.batch_size, settings.max_znode_bytes) \
        if pending else []
    return snapshot, pending, batches


def dry_run_election(client: KazooClient, plan: ElectionPlan, settings: ExecutionSettings
                     ) -> ElectionDryRun:
    """What :func:`execute_election` would now submit, checked as it checks; writes nothing."""
    snapshot, pending, batches = _prepare(client, plan, settings)
    return ElectionDryRun(plan, tuple(pending), len(batches), tuple(
        election_failure(snapshot, tp) for tp in pending if not electable(snapshot, tp)))


def electable(snapshot: ClusterSnapshot, tp: TopicPartition) -> bool:
    """Whether the controller can move the leadership to the preferred replica: registered and
    in the ISR."""
    replicas, state = snapshot.replicas(tp), snapshot.state(tp)
    return bool(replicas) and state is not None and replicas[0] in snapshot.brokers \
        and replicas[0] in state.isr  # type: ignore[index]


def execute_election(client: KazooClient, plan: ElectionPlan, settings: ExecutionSettings,
                     emit: Emit = ignore, deadline: float | None = None) -> Outcome:
    """Elect preferred leaders in znode-sized batches, then explain every partition still not led
    by its preferred replica. At the deadline, one failure line per partition of the batch
    still in /admin/preferred_replica_election (the count the progress reported)."""
    topics = sorted({tp.topic for tp in plan.partitions})
    _, pending, batches = _prepare(client, plan, settings)
    total = len(plan.partitions)
    emit(ExecutionPlanned("elect", total, total - len(pending), len(batches)))
    if deadline is None:
        deadline = deadline_of(settings)
    done = total - len(pending)
    for number, batch in enumerate(batches, start=1):
        admin.submit_election(client, batch)
        emit(BatchSubmitted(number, len(batches), len(batch)))
        if not admin.wait_election(client, deadline=deadline):
            emit(TimedOut(len(batch)))
            return Outcome("elect", total, tuple(
                f"{tp}: still in /admin/preferred_replica_election (batch {number} of "
                f"{len(batches)})" for tp in batch), timed_out=True)
        done += len(batch)
        emit(BatchDone(number, len(batches), done, total))

    after = live(client, topics, states=True).snapshot
    failures = tuple(election_failure(after, tp) for tp in plan.partitions
                     if not led_by_preferred(after, tp))
    emit(Finished("elect", not failures, len(failures)))
    return Outcome("elect", total, failures)


def led_by_preferred(snapshot: ClusterSnapshot, tp: TopicPartition) -> bool:
    replicas, state = snapshot.replicas(tp), snapshot.state(tp)
    return replicas is not None and len(replicas) > 0 and state is not None \
        and state.leader == replicas[0]


def election_failure(snapshot: ClusterSnapshot, tp: TopicPartition) -> str:
    replicas, state = snapshot.replicas(tp) or (), snapshot.state(tp)
    leader = state.leader if state else None
    if not replicas:
        return f"{tp}: partition no longer exists"
    preferred = replicas[0]
    if preferred not in snapshot.brokers:
        why = f"preferred replica {preferred} is offline"
    elif state is None:
        why = "the partition has no state znode, so no leader or ISR"
    elif preferred not in state.isr:
        why = f"preferred replica {preferred} is not in the ISR {list(state.isr)}"
    else:
        why = "the controller did not move the leadership"
    led = "no leader" if leader is None or leader < 0 else f"leader is {leader}"
    return f"{tp}: {led}, not preferred replica {preferred}: {why}"
