"""Domain values shared by every layer of kadmin.

Everything here is plain, immutable data: the pure core (placement, plans, validation,
batching) computes over it and the shells (ZooKeeper, files, Spark, terminal) convert to and
from it. Nothing in this module performs I/O.

Values that exist once per *partition* (there can be millions) are ``NamedTuple``s rather than
dataclasses: they are created, hashed and sorted millions of times per plan and a tuple does that
in C. Values that exist once per broker, topic or plan are frozen dataclasses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, NamedTuple, TypeGuard, TypeVar

MAX_ID = 2**31 - 1
"""Kafka's broker and partition ids are Java ints: a larger number is no Kafka id, and a znode
holding one is a znode Kafka's controller cannot parse."""

LIST_LIMIT = 100
"""How many items of one list of findings (errors, warnings, partitions left) kadmin keeps and
shows; the rest are counted. A plan broken in every one of a million entries says so in a
screenful, in seconds and in memory that does not grow with the number of problems."""

T = TypeVar("T")

MAX_TOPIC_LENGTH = 255
"""The longest topic name a Kafka release ever created: Kafka 0.8 and 0.9 allowed 255 characters,
0.10 and later allow 249 (KAFKA-3219). kadmin never creates topics, but it must read, snapshot,
plan and delete every topic a cluster may hold, so it takes the older, wider bound."""

_TOPIC_NAME = re.compile(rf"[a-zA-Z0-9._-]{{1,{MAX_TOPIC_LENGTH}}}")


def is_topic_name(name: object) -> TypeGuard[str]:
    """A name Kafka could have created (``Topic.validate`` of any release): 1 to 255 characters
    from ``[a-zA-Z0-9._-]``, not "." or "..". The one rule for every topic name kadmin reads:
    from ZooKeeper, a snapshot or a plan, so whatever it accepts in one it accepts in the others."""
    return type(name) is str and name not in (".", "..") and bool(_TOPIC_NAME.fullmatch(name))


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` fails :func:`is_topic_name`, in the operator's words; None when it passes."""
    if is_topic_name(name):
        return None
    if not name:
        return "topic name is empty"
    if len(name) > MAX_TOPIC_LENGTH:
        return (f"topic name is {len(name)} characters long; no Kafka release allows more than "
                f"{MAX_TOPIC_LENGTH}")
    if name in (".", ".."):
        return f"topic name {json.dumps(name)} is not allowed by Kafka"
    return (f"illegal topic name {json.dumps(name)}: Kafka allows only ASCII letters, digits, "
            "'.', '_' and '-'")


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


class Reassignment(NamedTuple):
    """A partition being reassigned, as Kafka 2.4+ records it in its topic znode (docs/znodes.md).

    While it moves, the topic znode lists the *full* replica set (``target`` first, then the
    replicas being removed), which is neither what the partition had nor what it will have:
    ``target`` is that list minus ``removing_replicas``, ``original`` that list minus
    ``adding_replicas``. ``original`` keeps the order of the full list, which is the order
    before the move only as far as Kafka kept it (a failed-over controller recovers it the same
    way). Its length is the partition's replication factor until the move ends.
    """

    target: Replicas
    original: Replicas


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

    ``topics``, ``states`` and ``reassigning`` keep the ZooKeeper nesting (topic -> partition ->
    value) so a snapshot file maps onto it without reshaping and per-topic work needs no grouping.

    ``topics`` holds each partition's replica list exactly as its topic znode does, so for a
    partition in ``reassigning`` it is the temporary full set (target plus the replicas being
    removed). ``reassigning`` holds every partition that Kafka 2.4+ shows moving (a non-empty
    ``adding_replicas`` or ``removing_replicas``), whoever started the move; nothing may be
    planned or submitted for those until the controller is done with them.
    """

    brokers: Mapping[int, Broker]
    topics: Mapping[str, TopicAssignment]
    states: Mapping[str, Mapping[int, PartitionState]] = field(default_factory=dict)
    controller: int | None = None
    controller_epoch: int | None = None
    reassigning: Mapping[str, Mapping[int, Reassignment]] = field(default_factory=dict)
    min_insync: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    """Each topic's ``min.insync.replicas`` and where it comes from, read live (empty: not
    read, e.g. a snapshot file; see :mod:`kadmin.min_insync`)."""
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

    def reassignment(self, tp: TopicPartition) -> Reassignment | None:
        """The partition's move in flight, or None when it is settled."""
        moving = self.reassigning.get(tp.topic)
        return None if moving is None else moving.get(tp.partition)

    def settled_replicas(self, tp: TopicPartition) -> Replicas | None:
        """The replicas the partition has outside any move: ``original`` while it moves (what a
        rollback restores, and whose length is its replication factor), else the topic znode's
        list."""
        moving = self.reassignment(tp)
        return moving.original if moving is not None else self.replicas(tp)

    def reassigning_partitions(self) -> list[TopicPartition]:
        """Every partition in flight, sorted."""
        return sorted(TopicPartition(topic, p) for topic, moving in self.reassigning.items()
                      for p in moving)

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
    """Topics to delete (the deletion plan's ``{"version":1,"topics":[...]}`` document)."""

    topics: tuple[str, ...]
    version: int = 1


Plan = ReassignmentPlan | ElectionPlan | DeletionPlan


@dataclass(frozen=True)
class Sample(Generic[T]):
    """The first :data:`LIST_LIMIT` items of a list that may be too long to show, and its length.

    The one way kadmin bounds what it prints: error details, validation problems, status
    warnings. Text and JSON show ``items`` and say how many more there are (``rest``).
    """

    items: tuple[T, ...]
    total: int

    @property
    def rest(self) -> int:
        return self.total - len(self.items)


class Sampler(Generic[T]):
    """Collects a :class:`Sample` one item at a time: keeps the first ``limit``, counts all."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = LIST_LIMIT if limit is None else limit
        self.items: list[T] = []
        self.total = 0

    def add(self, item: T) -> None:
        if self.total < self.limit:
            self.items.append(item)
        self.total += 1

    @property
    def full(self) -> bool:
        """True once further items are only counted."""
        return self.total >= self.limit

    @property
    def rest(self) -> int:
        return self.total - len(self.items)

    def sample(self) -> Sample[T]:
        return Sample(tuple(self.items), self.total)


def sample_of(items: Iterable[T], limit: int | None = None) -> Sample[T]:
    """The sample of ``items``, consumed lazily: a generator of a million is never held."""
    sampler: Sampler[T] = Sampler(limit)
    for item in items:
        sampler.add(item)
    return sampler.sample()


def printable(text: str) -> str:
    """``text`` with every character Python does not count as printable escaped as ``repr``
    writes it (``\\n``, ``\\x1b``, ``\\u202e``): control characters, bidirectional overrides,
    line separators. Operator-given text (paths, names, option values) and text read from
    ZooKeeper reach messages through this, so none can forge a second line, move the cursor or
    reorder what the terminal shows."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _ESCAPES.get(c) or _escape(c) for c in text)


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def and_more(count: int) -> str:
    """The words for the items a sample leaves out, the same in every message."""
    return f"(and {count:,} more)"


INLINE_LIMIT = 10
"""How many items a list written inside one line names before saying "(and N more)"."""


def listed(items: Iterable[object], limit: int = INLINE_LIMIT) -> str:
    """``a, b, c (and 12 more)``: a list inside one line of a message, sampled like every list
    kadmin shows (unknown topics, partitions left, topics to delete)."""
    shown = sample_of(items, limit)
    return ", ".join(map(str, shown.items)) + (f" {and_more(shown.rest)}" if shown.rest else "")


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


class Problem(NamedTuple):
    """One finding of validation. ``where`` is a JSON path (``$.partitions[3].replicas``) or a
    ``topic-partition``, so the operator can find it in the file or the cluster. A tuple, like
    the per-partition values: a plan broken throughout makes one per entry."""

    where: str
    message: str
    severity: Severity = Severity.ERROR
    subject: str | None = None
    """The partition (``orders-17``) of the entry a JSON path points into: in a million-entry
    plan the index alone does not tell the operator which partition it is."""
    path: tuple[str | int, ...] | None = None
    """``where`` as parts, when it is a JSON path: where in the file to point (a CI
    annotation). None for a problem the cluster check names by partition or topic."""
    file: str | None = None
    """The file it is in, when a plan is several files (a Spark planner's batch files)."""

    def __str__(self) -> str:
        where = f"{self.where} ({self.subject})" if self.subject else self.where
        return f"{where}: {self.message}" if where else self.message


class KadminError(Exception):
    """An error the operator must see as one line, with the exit code the CLI contract assigns.

    The shells raise the subclasses; the CLI prints ``str(error)`` and exits with ``exit_code``.
    """

    exit_code = 1

    def __init__(self, message: str, details: Iterable[str] = (), *, more: int = 0) -> None:
        super().__init__(message)
        sample = sample_of(details)
        self.details = sample.items
        """Further lines (one per partition or problem) printed after the one-line message: at
        most :data:`LIST_LIMIT`."""
        self.more = sample.rest + more
        """Further lines left out of ``details`` (``more`` counts those the caller already left
        out, as a validation report does)."""


class InvalidInput(KadminError):
    """Bad file, field, option or partition (exit 2). Nothing was written."""

    exit_code = 2


class OperationFailed(KadminError):
    """Timeout, unreachable ZooKeeper, partitions that failed (exit 1)."""

    exit_code = 1


class NotAuthorized(OperationFailed):
    """ZooKeeper refused the request: an ACL, or the session's credentials (exit 1). Nothing of
    that request was written."""


class Conflict(KadminError):
    """Another admin operation of the same kind is in progress (exit 3)."""

    exit_code = 3
