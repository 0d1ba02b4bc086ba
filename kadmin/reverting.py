"""Cancelling reassignments in flight through ZooKeeper: which partitions go back to which
replicas, which must not, and what the cancel does on each Kafka release. Pure.

A partition is *moving* when its topic znode records a move (Kafka 2.4+: ``adding_replicas`` /
``removing_replicas``), when /admin/reassign_partitions lists it at a target it has not reached,
or (before 2.4, which records nothing in the topic znode) when it holds more replicas than its
originals. Each goes back to its **original replicas in their original order**: the order of
kadmin's records (the plan's rollback file) when they name the same replicas, else the order
the topic znode keeps (2.4+ writes the target first, so the first replica may differ).

Reverting is safe only onto live replicas: a partition whose originals are not all registered
and in the ISR would lose data or its leader, so it is not reverted (it goes on moving) and is
named with the reason.

The steps, per release (KafkaController 2.3 and 2.4+):

- 2.4+: remove a lingering admin znode, submit the originals (the controller replaces the move
  in flight by them, stops the replicas being added), wait;
- before 2.4: delete the admin znode, move the controller (delete /controller: the new one
  forgets the moves; the old one would write them back into the znode), submit the originals
  (in the ISR already: done at once, the extra replicas deleted), wait.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from enum import Enum

from kadmin.kafka_version import KafkaVersion
from kadmin.model import PartitionMove, PartitionState, Replicas, TopicPartition


class Step(Enum):
    DELETE_ADMIN_ZNODE = "delete /admin/reassign_partitions"
    MOVE_CONTROLLER = "move the controller (delete /controller)"
    SUBMIT_ORIGINALS = "submit the original replicas"
    WAIT = "wait for the controller"
    CLEAR_THROTTLES = "remove kadmin's throttles"


@dataclass(frozen=True)
class Revert:
    tp: TopicPartition
    current: Replicas
    """The replicas the topic znode lists now (the full set while it moves)."""
    original: Replicas
    """What the partition goes back to."""
    recorded: bool = True
    """The order is kadmin's record of it; False: the order the topic znode keeps (no record
    of kadmin's: 2.4+ writes the target first, so the first replica may differ)."""


@dataclass(frozen=True)
class Kept:
    """A moving partition that is not reverted, and why."""

    tp: TopicPartition
    reason: str

    def __str__(self) -> str:
        return f"{self.tp}: not reverted: {self.reason}"


@dataclass(frozen=True)
class CancelPlan:
    version: KafkaVersion | None
    """None: not needed, nothing is in flight."""
    reverts: tuple[Revert, ...]
    kept: tuple[Kept, ...]
    steps: tuple[Step, ...]

    @property
    def moves(self) -> tuple[PartitionMove, ...]:
        """What is submitted: each reverted partition at its originals."""
        return tuple(PartitionMove(r.tp.topic, r.tp.partition, r.original) for r in self.reverts)


@dataclass(frozen=True)
class Partition:
    """What ZooKeeper (and kadmin's records) show of one partition that may be moving."""

    tp: TopicPartition
    current: Replicas
    """The topic znode's list."""
    adding: Replicas | None
    """``adding_replicas`` of a version 2+ topic znode (empty: none); None when the topic
    znode has no such field (version 1)."""
    removing: Replicas | None
    requested: Replicas | None
    """Its target in /admin/reassign_partitions (None: not listed)."""
    recorded: Replicas | None
    """Its replicas before the plan by kadmin's records (None: no record)."""
    state: PartitionState | None


def originals(p: Partition) -> Replicas | str:
    """The replicas ``p`` goes back to, or why they are not known."""
    if p.adding is not None:
        from_zk = tuple(r for r in p.current if r not in p.adding)
        if p.recorded is not None and sorted(p.recorded) == sorted(from_zk):
            return p.recorded  # the same replicas, in the order they had
        return from_zk
    if p.recorded is None:
        return ("before Kafka 2.4 its original replicas are not in ZooKeeper and no record of "
                "kadmin's names them")
    if not set(p.recorded) <= set(p.current):
        return (f"the recorded original replicas {list(p.recorded)} are not among its "
                f"replicas {list(p.current)} (moved by someone else since?)")
    return p.recorded


def is_moving(p: Partition) -> bool:
    """Moving, by what ZooKeeper shows (see the module's docstring)."""
    if p.adding is not None:  # 2.4+: the topic znode says
        return bool(p.adding or p.removing) or (p.requested is not None and (
            tuple(p.requested) != tuple(p.current)))
    if p.requested is not None and tuple(p.requested) != tuple(p.current):
        return True
    return p.recorded is not None and len(set(p.current)) > len(set(p.recorded)) and (
        set(p.recorded) < set(p.current))


def guard(original: Replicas, state: PartitionState | None, live: Set[int]) -> str | None:
    """Why reverting onto ``original`` is unsafe (None: it is safe)."""
    dead = [r for r in original if r not in live]
    if dead:
        return f"original replica(s) {dead} not registered in /brokers/ids"
    if state is None:
        return "its state znode is missing (no ISR to check)"
    lagging = [r for r in original if r not in state.isr]
    if lagging:
        return f"original replica(s) {lagging} not in the ISR {list(state.isr)}"
    return None


def plan_cancel(partitions: Sequence[Partition], live: Set[int], version: KafkaVersion | None,
                admin_znode: bool) -> CancelPlan:
    """Which moving partitions go back and which are kept, and the steps the release needs
    (``admin_znode``: /admin/reassign_partitions exists now)."""
    reverts: list[Revert] = []
    kept: list[Kept] = []
    for p in partitions:
        if version is not None and version.records_moves_in_topic and p.adding is None:
            # a version 1 topic znode under 2.4+: its partitions have not started moving
            p = dataclasses.replace(p, adding=(), removing=())
        if not is_moving(p):
            continue
        found = originals(p)
        if isinstance(found, str):
            kept.append(Kept(p.tp, found))
            continue
        unsafe = guard(found, p.state, live)
        if unsafe is not None:
            kept.append(Kept(p.tp, unsafe))
        else:
            reverts.append(Revert(p.tp, p.current, found, found == p.recorded))
    steps: list[Step] = []
    if admin_znode:
        steps.append(Step.DELETE_ADMIN_ZNODE)
    if version is not None and not version.records_moves_in_topic and reverts:
        steps.append(Step.MOVE_CONTROLLER)
    if reverts:
        steps += [Step.SUBMIT_ORIGINALS, Step.WAIT]
    steps.append(Step.CLEAR_THROTTLES)
    return CancelPlan(version, tuple(reverts), tuple(kept), tuple(steps))


def release_evidence(topic_versions: Mapping[str, int], partitions: Sequence[Partition]
                     ) -> tuple[KafkaVersion | None, str]:
    """What ZooKeeper shows of the controller's release: a topic znode of version 2+ (only 2.4+
    writes them), or a partition that holds the union of two replica sets in a version 1 topic
    znode (a 2.4+ controller would have rewritten it as version 2). (None, why) otherwise."""
    newer = sorted(t for t, v in topic_versions.items() if v >= 2)
    if newer:
        return KafkaVersion(2, 4), f"topic znode {newer[0]} is version {topic_versions[newer[0]]}"
    for p in partitions:
        if p.adding is None and topic_versions.get(p.tp.topic) == 1 and is_moving(p) and (
                p.requested is None or set(p.requested) < set(p.current)):
            return KafkaVersion(2, 3), (f"{p.tp} holds {list(p.current)} in a version 1 topic "
                                        "znode: a release before 2.4 moves it")
    return None, "no topic znode shows a move in flight"
