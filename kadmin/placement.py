"""Replica placement: which brokers hold each partition, and in which order.

Two rules (docs/placement.md): round robin (``roundrobin``) and Kafka's own
``AdminUtils.assignReplicasToBrokers`` (plain and rack-aware), ported exactly so a plan made here
matches what Kafka would have chosen for the same start index.

Both rules number partitions with a *global* counter that runs over every partition of the plan
(topics sorted by name). That counter is what balances leaders across many small topics, and it is
also what lets Spark place topics independently: each topic only needs the counter value at its
first partition (``topic_offsets``), so ``place`` (one machine) and the Spark job produce the same
plan by construction.

Speed matters (a million partitions): brokers are prepared once per plan as a ``BrokerRing``, and
the rack-unaware rules build whole runs of partitions from slices of the doubled broker order,
letting ``zip`` make the replica tuples in C instead of looping per replica in Python.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate, chain, pairwise, zip_longest

from kadmin.model import Broker, InvalidInput, Replicas, TopicAssignment, and_more


class Strategy(str, Enum):
    """Placement rule; the value is the name used on the command line."""

    ROUNDROBIN = "roundrobin"
    KAFKA = "kafka"


@dataclass(frozen=True)
class PlacementOptions:
    strategy: Strategy = Strategy.ROUNDROBIN
    replication_factor: int | None = None
    """None: every partition keeps its own replica count, so a plan never changes a replication
    factor unless asked to - what ``plan validate`` and ``reassign`` check (Kafka's tool gives
    every partition the first partition's count instead; the two agree for the usual uniform
    topic). A topic whose partitions have different counts is placed with the largest and each
    partition keeps the first replicas of its list: the leaders, and the rule's spread, are
    those of the whole topic."""
    start_index: int | None = None
    """roundrobin: value of the global counter at the first partition (None means 0).
    kafka: ``fixedStartIndex`` for every topic; None derives it from the global counter, which
    keeps leaders balanced across topics where Kafka would draw it at random."""
    start_partition: int = 0
    """kafka: ``startPartitionId`` (negative means 0, as in Kafka)."""
    rack_aware: bool = True
    """False is ``--disable-rack-aware``: racks are ignored, even when only some brokers have one."""


@dataclass(frozen=True)
class BrokerRing:
    """Target brokers prepared once per plan and shared by every topic (Spark broadcasts it).

    Sorting, rack grouping and doubling are per-plan work; redone per topic they would cost more
    than placing the topic. Build it with ``BrokerRing.of``, which validates the brokers.
    """

    ids: tuple[int, ...]
    """Broker ids ascending: the order of roundrobin and of Kafka's rack-unaware rule."""
    rack_order: tuple[int, ...] | None = None
    """Kafka's rack-alternated broker list when placing rack-aware, else None."""
    rack_index: tuple[int, ...] = ()
    """Rack number of each position of ``rack_order``."""
    n_racks: int = 0
    _ids2: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Any rotation of the ring is one slice of the doubled order; see _rows.
        object.__setattr__(self, "_ids2", self.ids + self.ids)

    @classmethod
    def of(cls, brokers: Sequence[Broker], rack_aware: bool = True) -> BrokerRing:
        """Validate the target brokers and prepare them (Kafka's ``getBrokerMetadatas`` checks)."""
        if not brokers:
            raise InvalidInput("no target brokers")
        ordered = sorted(brokers, key=lambda b: b.id)
        for before, after in pairwise(ordered):
            if before.id == after.id:
                raise InvalidInput(f"duplicate broker id {after.id} in the target brokers")
        ids = tuple(b.id for b in ordered)
        without_rack = [b.id for b in ordered if b.rack is None]
        if not rack_aware or len(without_rack) == len(ordered):
            return cls(ids)
        if without_rack:
            raise InvalidInput(
                f"brokers without a rack: {', '.join(map(str, without_rack))} (other brokers have "
                "one); disable rack awareness to place replicas anyway"
            )
        rack_of = {b.id: b.rack for b in ordered if b.rack is not None}  # that is, every broker
        by_rack: dict[str, list[int]] = defaultdict(list)
        for i in ids:
            by_rack[rack_of[i]].append(i)
        racks = sorted(by_rack)
        # One broker from each rack in turn (AdminUtils.getRackAlternatedBrokerList).
        alternated = tuple(
            i for i in chain.from_iterable(zip_longest(*(by_rack[r] for r in racks))) if i is not None
        )
        rack_number = {r: k for k, r in enumerate(racks)}
        return cls(ids, alternated, tuple(rack_number[rack_of[i]] for i in alternated), len(racks))

    @property
    def size(self) -> int:
        return len(self.ids)

    def roundrobin(
        self, n_partitions: int, replication_factor: int, offset: int
    ) -> Iterator[Replicas]:
        """The seed's rule: global counter g gets ids[(g + j) % n] as replica j."""
        n = self.size
        check_topic(n_partitions, replication_factor, n)
        end = offset + n_partitions
        return chain.from_iterable(
            _rows(self._ids2, [(g + j) % n for j in range(replication_factor)], min(n, end - g))
            for g in range(offset, end, n)
        )

    def kafka(
        self,
        n_partitions: int,
        replication_factor: int,
        fixed_start_index: int,
        start_partition_id: int = 0,
    ) -> Iterator[Replicas]:
        """Kafka's ``assignReplicasToBrokers``; element k is partition ``start_partition_id + k``
        (negative means 0). Rack-aware when the ring has racks (``rack_order``)."""
        check_topic(n_partitions, replication_factor, self.size)
        _check_start_index(fixed_start_index)
        rule = self._kafka_plain if self.rack_order is None else self._kafka_rack_aware
        return rule(n_partitions, replication_factor, fixed_start_index, max(0, start_partition_id))

    def _kafka_plain(self, n_partitions: int, rf: int, start_index: int, p: int) -> Iterator[Replicas]:
        # Kafka bumps the follower shift at every partition id that is a positive multiple of n,
        # so between two multiples the leader just steps along the ring and each follower keeps
        # its distance from it: that run is one slice per replica.
        n, end = self.size, p + n_partitions
        runs = []
        shift = start_index
        while p < end:
            if p > 0 and p % n == 0:
                shift += 1
            length = min(end, (p // n + 1) * n) - p
            first = (p + start_index) % n
            starts = [first] + [(first + 1 + (shift + j) % (n - 1)) % n for j in range(rf - 1)]
            runs.append(_rows(self._ids2, starts, length))
            p += length
        return chain.from_iterable(runs)

    def _kafka_rack_aware(
        self, n_partitions: int, rf: int, start_index: int, p: int
    ) -> Iterator[Replicas]:
        # Candidates are skipped depending on what this partition already holds, so this rule
        # runs per partition. Positions index rack_order; a position is used iff its broker is.
        order, rack_of, n_racks = self.rack_order, self.rack_index, self.n_racks
        assert order is not None
        n = len(order)
        m = n - 1
        shift = start_index
        out: list[Replicas] = []
        for pid in range(p, p + n_partitions):
            if pid > 0 and pid % n == 0:
                shift += 1
            first = (pid + start_index) % n
            chosen = [first]
            racks_used = {rack_of[first]}
            k = shift * n_racks  # the candidate counter is not reset between followers
            for _ in range(rf - 1):
                while True:
                    pos = (first + 1 + k % m) % n
                    k += 1
                    # Kafka also accepts a used broker once every broker is used; with rf <= n
                    # that never happens, so a used broker is always skipped.
                    if pos not in chosen and (
                        rack_of[pos] not in racks_used or len(racks_used) == n_racks
                    ):
                        break
                chosen.append(pos)
                racks_used.add(rack_of[pos])
            out.append(tuple([order[i] for i in chosen]))
        return iter(out)


def _rows(ring2: tuple[int, ...], starts: Sequence[int], length: int) -> Iterator[Replicas]:
    """``length`` consecutive partitions whose replica j starts at ring position ``starts[j]``
    and steps by one; ``ring2`` is the doubled ring, ``length`` at most its half."""
    return zip(*(ring2[s : s + length] for s in starts), strict=True)


def check_topic(
    n_partitions: int, replication_factor: int, n_brokers: int, topic: str | None = None
) -> None:
    """Kafka's own preconditions of a placement, as InvalidInput naming the topic when known."""
    if n_partitions < 1:
        raise InvalidInput(
            f"topic {topic} has no partitions" if topic is not None
            else f"number of partitions {n_partitions} must be at least 1"
        )
    of_topic = "" if topic is None else f" of topic {topic}"
    if replication_factor < 1:
        raise InvalidInput(f"replication factor {replication_factor}{of_topic} must be at least 1")
    if replication_factor > n_brokers:
        raise InvalidInput(
            f"replication factor {replication_factor}{of_topic} exceeds the {n_brokers} "
            "target brokers"
        )


def _check_start_index(start_index: int) -> None:
    # Kafka reads a negative fixedStartIndex as "draw one at random"; plans must be reproducible.
    if start_index < 0:
        raise InvalidInput(f"start index {start_index} must be at least 0")


def assign_replicas_to_brokers(
    brokers: Sequence[Broker],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int,
    start_partition_id: int = 0,
    rack_aware: bool = True,
) -> list[Replicas]:
    """Kafka's ``AdminUtils.assignReplicasToBrokers`` with a fixed start index (brokers sorted by
    id first, as Kafka's callers do); element k is partition ``max(0, start_partition_id) + k``."""
    ring = BrokerRing.of(brokers, rack_aware)
    return list(ring.kafka(n_partitions, replication_factor, fixed_start_index, start_partition_id))


def roundrobin_replicas(
    broker_ids: Sequence[int], n_partitions: int, replication_factor: int, offset: int
) -> list[Replicas]:
    """The seed's rule for ``n_partitions`` partitions whose global counter starts at ``offset``."""
    ring = BrokerRing.of([Broker(i) for i in broker_ids], rack_aware=False)
    return list(ring.roundrobin(n_partitions, replication_factor, offset))


def topic_offsets(partition_counts: Sequence[int], start: int = 0) -> list[int]:
    """Global counter value at each topic's first partition (exclusive prefix sums)."""
    return list(accumulate(partition_counts, initial=start))[:-1]


def replication_factor_of(
    assignment: Mapping[int, Replicas], options: PlacementOptions
) -> int:
    """The replication factor a topic is placed with (see ``PlacementOptions``); without
    ``--replication-factor`` each partition is then cut back to its own count."""
    if options.replication_factor is not None:
        return options.replication_factor
    return max(map(len, assignment.values()), default=0)


def place_topic(
    current: Mapping[int, Replicas],
    brokers: Sequence[Broker] | BrokerRing,
    replication_factor: int,
    offset: int,
    options: PlacementOptions,
) -> TopicAssignment:
    """Place one topic (its ``current`` assignment) whose first partition has global counter
    ``offset``.

    The k-th partition id in ascending order gets the k-th replica list of the rule, cut to the
    partition's own replica count unless ``options`` sets the replication factor. Pass a
    ``BrokerRing`` when placing many topics; a broker sequence is prepared on each call.
    """
    ring = brokers if isinstance(brokers, BrokerRing) else BrokerRing.of(brokers, options.rack_aware)
    if not current:  # a topic without partitions (ZooKeeper can hold one): nothing to place
        return {}
    ids = sorted(current)
    if options.strategy is Strategy.ROUNDROBIN:
        replicas = ring.roundrobin(len(ids), replication_factor, offset)
    else:
        start = options.start_index if options.start_index is not None else offset % ring.size
        replicas = ring.kafka(len(ids), replication_factor, start, options.start_partition)
    placed = dict(zip(ids, replicas, strict=True))
    if options.replication_factor is None:
        for partition, old in current.items():
            if len(old) < replication_factor:  # a mixed topic: keep this partition's count
                placed[partition] = placed[partition][:len(old)]
    return placed


def counter_start(options: PlacementOptions) -> int:
    """The global counter's value at the first selected partition: ``--start-index`` for the
    roundrobin rule; 0 for Kafka's, whose ``--start-index`` is each topic's fixedStartIndex
    instead. Shared with the Spark planner so both count from the same place."""
    return (options.start_index or 0) if options.strategy is Strategy.ROUNDROBIN else 0


def place(
    current: Mapping[str, Mapping[int, Replicas]],
    topics: Sequence[str],
    brokers: Sequence[Broker],
    options: PlacementOptions,
) -> dict[str, TopicAssignment]:
    """Plan new replicas for ``topics`` on one machine: topics sorted by name, one global counter.

    Everything is validated before anything is placed, so a bad input fails fast with one line.
    """
    ring = BrokerRing.of(brokers, options.rack_aware)
    if options.start_index is not None:
        _check_start_index(options.start_index)
    names = sorted(set(topics))
    if not names:
        raise InvalidInput("no topics to place")
    unknown = [t for t in names if t not in current]
    if unknown:
        raise InvalidInput(
            f"unknown topic {unknown[0]}"
            + (f" {and_more(len(unknown) - 1)}" if len(unknown) > 1 else ""),
            tuple(f"unknown topic {t}" for t in unknown),
        )
    factors = [replication_factor_of(current[t], options) for t in names]
    counts = [len(current[t]) for t in names]
    for name, count, rf in zip(names, counts, factors, strict=True):
        if count:
            check_topic(count, rf, ring.size, name)
    offsets = topic_offsets(counts, counter_start(options))
    return {
        name: place_topic(current[name], ring, rf, offset, options)
        for name, rf, offset in zip(names, factors, offsets, strict=True)
    }
