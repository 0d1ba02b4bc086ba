"""The simulated controller's data model: what it records, what it tracks per moving partition,
and what a poke of its worker thread asks it to look at again."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from kadmin.model import PartitionState, Replicas, TopicPartition


@dataclass(frozen=True)
class ControllerEvent:
    """One thing the controller did, for tests and for the ``--record`` file.

    ``kind`` is one of ``reassign_submitted``, ``partition_reassigned``, ``partition_dropped``,
    ``election_submitted``, ``leader_elected``, ``election_skipped``, ``topic_deleted``,
    ``deletion_marker_removed``, ``failover``, ``reassignment_replaced`` (a request for a
    partition already moving gave it a new target) and ``reassignment_rewritten`` (a controller
    before 2.4 re-created /admin/reassign_partitions from its memory). ``at`` is wall-clock time (seconds); a
    ``partition_reassigned`` event also says, on the controller's (possibly simulated) clock,
    when the move ``started`` and when its replicas were all ``in_sync``.
    A ``reassign_submitted``/``election_submitted`` event is recorded once per *created* znode
    (its ``czxid``), never again when a new controller re-reads it, so two events with the same
    partitions mean the same request was really submitted twice. Outcomes are recorded right
    after the ZooKeeper writes they describe (``SimulatedController.events`` waits for the step
    in progress; a ``--record`` file may trail the writes by that step).
    """

    kind: str
    detail: dict[str, Any]
    at: float


def read_events(record_path: Path) -> list[ControllerEvent]:
    """The events a controller (possibly of another process) recorded in ``record_path``."""
    with open(record_path, encoding="utf-8") as lines:
        return [ControllerEvent(**json.loads(line)) for line in lines if line.strip()]


Versioned = tuple[PartitionState, int]
"""A partition's leader and ISR with the znode version it was read at."""


@dataclass
class Move:
    """One partition being reassigned. ``state`` (None: the partition has no state znode),
    ``isr`` and ``started`` are set when the move starts; ``leader`` is where new replicas
    copy from."""

    tp: TopicPartition
    target: Replicas
    state: Versioned | None = None
    isr: frozenset[int] = frozenset()
    started: float = 0.0
    leader: int = -1
    origin: Replicas = ()
    """The replicas the controller counts as the partition's before this move: its originals
    (2.4+: the full set minus the replicas being added), or before 2.4 the full set the
    topic znode holds when the move starts (the union of an earlier move's sets, if any)."""
    reorder: bool = False
    """The target holds the replicas it has, reordered: Kafka 2.4+ adds and removes nothing,
    so the move is complete at once, whatever the replicas' state."""


class Kind(Enum):
    """What a poke asks the worker to look at again."""

    CONTROLLER = "controller"
    BROKERS = "brokers"
    SESSION = "session"
    """The session expired: its ephemeral znodes (brokers, /controller) are gone."""
    REASSIGN = "reassign"
    ELECTION = "election"
    DELETION = "deletion"
    CONFIG = "config"
    """A config change notification: brokers re-read the config it names."""


WATCHED = (Kind.CONTROLLER, Kind.BROKERS, Kind.REASSIGN, Kind.ELECTION, Kind.DELETION,
           Kind.CONFIG)
"""The kinds with a ZooKeeper watch, all re-read after a reconnect."""
