"""``verify``: every partition of a plan as complete, in progress, not started or failed."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from kazoo.client import KazooClient

from kadmin.executor.common import in_flight_reassignment, live
from kadmin.model import ReassignmentPlan, TopicPartition


@dataclass(frozen=True)
class Verification:
    """Every partition of a plan in one of four states; ``failures`` are one line each."""

    complete: tuple[TopicPartition, ...]
    in_progress: tuple[TopicPartition, ...]
    not_started: tuple[TopicPartition, ...]
    failures: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.in_progress or self.not_started or self.failures)


def verify_reassignment(client: KazooClient, plan: ReassignmentPlan,
                        submitted: Collection[TopicPartition] | None) -> Verification:
    """Each partition of the plan, against the live cluster:

    - in progress: moving to its target - listed so in /admin/reassign_partitions, or shown
      moving there in its topic znode (Kafka 2.4+);
    - complete: not moving, and its replicas equal the target (order included);
    - not started: neither, and no run submitted it (not in ``submitted``, the partitions the
      journal's schedule has submitted; None: nothing of the plan was submitted);
    - failed: gone, being moved to another target, or submitted yet not at its target.
    """
    before = in_flight_reassignment(client) or ()
    found = live(client, sorted({m.topic for m in plan.moves}))
    # listed when in the znode before or after the topic reads: a batch submitted in between
    # is in the second, a partition that finished in between is final in the topic read
    listed = {m.tp: m.replicas for m in (*before, *(found.in_flight.reassignment or ()))}
    sent = frozenset(submitted or ())
    complete, in_progress, not_started, failures = [], [], [], []
    for move in plan.moves:
        tp, target = move.tp, move.replicas
        moving = found.snapshot.reassignment(tp)
        heading = {t for t in (listed.get(tp), moving and moving.target) if t}
        current = found.snapshot.replicas(tp)
        if heading:
            # checked first: while moving, Kafka 2.4+ shows target + old replicas in the topic
            # znode, which equals the target whenever the target only adds replicas
            if heading == {target}:
                in_progress.append(tp)
            else:
                elsewhere = sorted(list(t) for t in heading - {target})
                failures.append(f"{tp}: being reassigned to {elsewhere[0]} by another request, "
                                f"not to its target {list(target)}")
        elif current == target:
            complete.append(tp)
        elif current is None:
            failures.append(f"{tp}: partition no longer exists")
        elif tp in sent:
            failures.append(f"{tp}: replicas {list(current)}, target {list(target)}")
        else:
            not_started.append(tp)
    return Verification(tuple(complete), tuple(in_progress), tuple(not_started), tuple(failures))
