"""Reassignments that cannot finish, and why. Pure.

Three causes, each with the command that repairs it:

- a target replica on a broker that is not registered: the controller waits for every target
  replica to join the ISR, so the partition never completes until the broker is back
  (``kadmin reassign --cancel`` puts it back);
- a target replica not in the ISR long after the request was made (``stuck_after``) while
  other partitions of the same request have finished (the controller rewrote the znode): it is
  not catching up (``kadmin reassign --cancel``);
- a **stale** /admin/reassign_partitions (KAFKA-9478): every partition it lists is at its
  target with its ISR complete, yet the znode is still there - the controller no longer acts
  on it and no new reassignment can be submitted (``kadmin reassign --repair-stale``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kadmin.model import ClusterSnapshot, PartitionMove, Replicas, TopicPartition

REASSIGN_PARTITIONS = "/admin/reassign_partitions"
BROKER_IDS = "/brokers/ids"

DEFAULT_STUCK_AFTER = 600.0
"""Seconds a target replica may stay out of the ISR before it counts as stuck (10 min)."""

CANCEL = "kadmin reassign --cancel"
REPAIR_STALE = "kadmin reassign --repair-stale"


@dataclass(frozen=True)
class Stuck:
    """One reassignment that cannot finish: a partition, or (``tp`` None) the admin znode."""

    tp: TopicPartition | None
    cause: str
    repair: str

    def __str__(self) -> str:
        where = REASSIGN_PARTITIONS if self.tp is None else str(self.tp)
        return f"{where}: stuck: {self.cause} (repair: {self.repair})"


@dataclass(frozen=True)
class Request:
    """/admin/reassign_partitions as read: its entries, how long ago it was created, and
    whether the controller has rewritten it since (some partitions finished)."""

    moves: tuple[PartitionMove, ...]
    age: float
    """Seconds since the znode was created."""
    shrunk: bool


def moving(snapshot: ClusterSnapshot, request: Request | None
           ) -> dict[TopicPartition, Replicas]:
    """Every partition in flight with its target: the topic znodes' (2.4+) and the request's
    entries not yet at their target."""
    found = {tp: m.target for topic, moves in snapshot.reassigning.items()
             for tp, m in ((TopicPartition(topic, p), m) for p, m in moves.items())}
    for move in () if request is None else request.moves:
        if snapshot.replicas(move.tp) is not None and snapshot.replicas(move.tp) != move.replicas:
            found.setdefault(move.tp, move.replicas)
    return found


def is_stale(snapshot: ClusterSnapshot, request: Request | None) -> bool:
    """Every entry of the request at its target, nothing moving, every target in the ISR."""
    if request is None or not request.moves:
        return False
    for move in request.moves:
        state = snapshot.state(move.tp)
        if (snapshot.replicas(move.tp) != move.replicas or snapshot.reassignment(move.tp)
                or state is None or not set(move.replicas) <= set(state.isr)):
            return False
    return True


def diagnose(snapshot: ClusterSnapshot, request: Request | None,
             stuck_after: float = DEFAULT_STUCK_AFTER) -> list[Stuck]:
    """What cannot finish in ``snapshot`` (read with partition states), partition by partition
    in order, the stale znode first."""
    found: list[Stuck] = []
    if request is not None and is_stale(snapshot, request):
        found.append(Stuck(None, f"all {len(request.moves)} partition(s) it lists are at their "
                                 "targets with their ISR complete, yet it is still there (the "
                                 "controller no longer acts on it; nothing new can be "
                                 "submitted)", REPAIR_STALE))
        return found
    for tp, target in sorted(moving(snapshot, request).items()):
        dead = [r for r in target if r not in snapshot.brokers]
        if dead:
            found.append(Stuck(tp, f"target replica(s) {dead} on broker(s) not registered in "
                                   f"{BROKER_IDS}: it cannot finish until they are back",
                               CANCEL))
            continue
        state = snapshot.state(tp)
        lagging = [r for r in target if state is None or r not in state.isr]
        if (lagging and request is not None and request.shrunk
                and any(m.tp == tp for m in request.moves) and request.age > stuck_after):
            found.append(Stuck(tp, f"target replica(s) {lagging} not in the ISR "
                                   f"{[] if state is None else list(state.isr)} "
                                   f"{request.age / 60:.0f} min after the request, while "
                                   "others of it finished", CANCEL))
    return found
