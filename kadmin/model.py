"""Domain values shared by every layer of kadmin.

Everything here is plain, immutable data: the pure core (placement, plans, validation,
batching) computes over it and the shells (ZooKeeper, files, Spark, terminal) convert to and
from it. Nothing in this module performs I/O.

Values that exist once per *partition* (there can be millions) are ``NamedTuple``s rather than
dataclasses: they are created, hashed and sorted millions of times per plan and a tuple does that
in C. Values that exist once per broker, topic or plan are frozen dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

MAX_ID = 2**31 - 1
"""Kafka's broker and partition ids are Java ints: a larger number is no Kafka id, and a znode
holding one is a znode Kafka's controller cannot parse."""

Replicas = tuple[int, ...]
"""Ordered broker ids of one partition; the first is the preferred replica (leader)."""

TopicAssignment = dict[int, Replicas]
"""Partition id -> replicas for one topic (the ``partitions`` object of /brokers/topics/<t>)."""


class TopicPartition(NamedTuple):
    """One partition. Sorts by topic, then partition id, which is the order of every plan file."""

    topic: str
    partition: int

    def __str__(self) -> str:  # Kafka's own spelling, used in every message
        return f"{self.topic}-{self.partition}"


class PartitionMove(NamedTuple):
    """One entry of a reassignment plan (Kafka's file format; ``log_dirs`` is file-only)."""

    topic: str
    partition: int
    replicas: Replicas
    log_dirs: tuple[str, ...] | None = None

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True)
class Broker:
    """A registered broker (/brokers/ids/<id>); only what placement and reports need."""

    id: int
    host: str | None = None
    port: int | None = None
    rack: str | None = None


@dataclass(frozen=True)
class PartitionState:
    """Leader and ISR of one partition (/brokers/topics/<t>/partitions/<p>/state)."""

    leader: int
    isr: Replicas
    leader_epoch: int = 0
    controller_epoch: int = 0


@dataclass(frozen=True)
class ClusterSnapshot:
    """What kadmin knows about a cluster, from a snapshot file or read live from ZooKeeper.

    ``topics`` and ``states`` keep the ZooKeeper nesting (topic -> partition -> value) so a
    snapshot file maps onto it without reshaping and per-topic work needs no grouping.
    """

    brokers: Mapping[int, Broker]
    topics: Mapping[str, TopicAssignment]
    states: Mapping[str, Mapping[int, PartitionState]] = field(default_factory=dict)
    controller: int | None = None
    controller_epoch: int | None = None
    sizes: Mapping[str, Mapping[int, int]] = field(default_factory=dict)
    """Measured partition sizes in bytes, topic -> partition -> bytes (``cluster snapshot
    --sizes``); empty when unknown. :func:`kadmin.sizes.snapshot_sizes` makes them a
    :class:`kadmin.sizes.PartitionSizes`."""

    def replicas(self, tp: TopicPartition) -> Replicas | None:
        partitions = self.topics.get(tp.topic)
        return None if partitions is None else partitions.get(tp.partition)

    def state(self, tp: TopicPartition) -> PartitionState | None:
        states = self.states.get(tp.topic)
        return None if states is None else states.get(tp.partition)

    @property
    def partition_count(self) -> int:
        return sum(len(p) for p in self.topics.values())


class PlanKind(str, Enum):
    """The three admin operations; the value is the name used on the command line."""

    REASSIGN = "reassign"
    ELECTION = "election"
    DELETION = "deletion"


@dataclass(frozen=True)
class ReassignmentPlan:
    """Target replicas per partition, sorted by topic then partition."""

    moves: tuple[PartitionMove, ...]
    version: int = 1


@dataclass(frozen=True)
class ElectionPlan:
    """Partitions whose preferred replica should become leader."""

    partitions: tuple[TopicPartition, ...]
    version: int = 1


@dataclass(frozen=True)
class DeletionPlan:
    """Topics to delete (the seed's ``{"version":1,"topics":[...]}`` document)."""

    topics: tuple[str, ...]
    version: int = 1


Plan = ReassignmentPlan | ElectionPlan | DeletionPlan


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    """One finding of validation. ``where`` is a JSON path (``$.partitions[3].replicas``) or a
    ``topic-partition``, so the operator can find it in the file or the cluster."""

    where: str
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class KadminError(Exception):
    """An error the operator must see as one line, with the exit code the CLI contract assigns.

    The shells raise the subclasses; the CLI prints ``str(error)`` and exits with ``exit_code``.
    """

    exit_code = 1

    def __init__(self, message: str, details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.details = details
        """Further lines (one per partition or problem) printed after the one-line message."""


class InvalidInput(KadminError):
    """Bad file, field, option or partition (exit 2). Nothing was written."""

    exit_code = 2


class OperationFailed(KadminError):
    """Timeout, unreachable ZooKeeper, partitions that failed (exit 1)."""

    exit_code = 1


class Conflict(KadminError):
    """Another admin operation of the same kind is in progress (exit 3)."""

    exit_code = 3
