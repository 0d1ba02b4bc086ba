"""Synthetic clusters for tests, benchmarks and the sandbox: seeded, deterministic, any size.

The assignment imitates how real clusters drift out of balance: each topic was created when the
cluster had only its first ``k`` brokers (``k`` drawn between the replication factor and the
broker count), and placed round-robin from a random start over those ``k``. Low broker ids
therefore hold more replicas and leaderships than high ones, exactly what adding brokers to a
running cluster produces, so placement plans always have work to do. Every partition is healthy:
the leader is the preferred replica and the ISR is the full replica list.

Partitions are built from slices of one precomputed table per ``k`` and share their replica
tuples and states, so a million partitions take about a second and little memory, and
:func:`write_synthetic_dir` streams ten million to disk one topic at a time.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from kadmin import files, snapshots
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionMove,
    PartitionState,
    Replicas,
    is_topic_name,
)

CONTROLLER = 0
CONTROLLER_EPOCH = 1


def synthetic_cluster(brokers: int, topics: int, partitions: int, replication_factor: int,
                      racks: int = 0, seed: int = 0, topic_prefix: str = "topic") -> ClusterSnapshot:
    """A cluster of ``brokers`` brokers and ``topics`` topics of ``partitions`` partitions each.

    Broker ids are ``0..brokers-1``; with ``racks`` > 0 broker ``b`` is in rack ``r{b % racks}``.
    Topics are named ``{topic_prefix}-{i:06d}``. The same arguments always give the same cluster.
    """
    topic_map = {}
    states = {}
    with files.gc_paused():
        for name, assignment, topic_states in _topics(brokers, topics, partitions,
                                                      replication_factor, racks, seed, topic_prefix):
            topic_map[name] = assignment
            states[name] = topic_states
    return ClusterSnapshot(brokers=synthetic_brokers(brokers, racks), topics=topic_map, states=states,
                           controller=CONTROLLER, controller_epoch=CONTROLLER_EPOCH)


def write_synthetic_dir(path: Path, brokers: int, topics: int, partitions: int,
                        replication_factor: int, racks: int = 0, seed: int = 0, *,
                        topic_prefix: str = "topic", force: bool = False) -> None:
    """Write the cluster :func:`synthetic_cluster` would return as a snapshot folder, streaming
    one topic at a time (ten million partitions need no more memory than ten)."""
    topic_stream = _topics(brokers, topics, partitions, replication_factor, racks, seed,
                           topic_prefix)  # validates before anything is written
    snapshots.write_snapshot_dir(path, synthetic_brokers(brokers, racks), topic_stream,
                                 controller=CONTROLLER, controller_epoch=CONTROLLER_EPOCH,
                                 force=force)


def _check(brokers: int, topics: int, partitions: int, replication_factor: int, racks: int,
           topic_prefix: str) -> None:
    if brokers < 1:
        raise InvalidInput(f"brokers must be at least 1, got {brokers}")
    if topics < 0:
        raise InvalidInput(f"topics must be at least 0, got {topics}")
    if partitions < 1:
        raise InvalidInput(f"partitions must be at least 1, got {partitions}")
    if not 1 <= replication_factor <= brokers:
        raise InvalidInput(f"replication factor must be between 1 and the number of brokers "
                           f"({brokers}), got {replication_factor}")
    if not 0 <= racks <= brokers:
        raise InvalidInput(f"racks must be between 0 and the number of brokers ({brokers}), "
                           f"got {racks}")
    longest = f"{topic_prefix}-{max(topics - 1, 0):06d}"
    if not is_topic_name(longest):
        raise InvalidInput(f"topic prefix {topic_prefix!r} does not make legal topic names "
                           f"(e.g. {longest!r})")


def synthetic_brokers(count: int, racks: int) -> dict[int, Broker]:
    """Brokers ``0..count-1``, broker ``b`` in rack ``r{b % racks}`` (no racks when 0)."""
    return {b: Broker(id=b, host=f"broker-{b}", port=9092, rack=f"r{b % racks}" if racks else None)
            for b in range(count)}


def _topics(brokers: int, topics: int, partitions: int, replication_factor: int, racks: int,
            seed: int, topic_prefix: str
            ) -> Iterator[tuple[str, dict[int, Replicas], dict[int, PartitionState]]]:
    """``(name, partitions, states)`` per topic, lazily; arguments are checked on the first call,
    not on the first ``next``, so a bad argument fails before any file is opened."""
    _check(brokers, topics, partitions, replication_factor, racks, topic_prefix)
    return _generate(brokers, topics, partitions, replication_factor, seed, topic_prefix)


def _generate(brokers: int, topics: int, partitions: int, replication_factor: int, seed: int,
              topic_prefix: str
              ) -> Iterator[tuple[str, dict[int, Replicas], dict[int, PartitionState]]]:
    rng = random.Random(seed)
    tables: dict[int, tuple[list[Replicas], list[PartitionState]]] = {}
    for i in range(topics):
        size = rng.randint(replication_factor, brokers)  # brokers when the topic was created
        start = rng.randrange(size)
        if size not in tables:
            tables[size] = _table(size, replication_factor)
        replicas_table, states_table = tables[size]
        # partition p goes to table row (start + p) % size: rotate once, repeat, cut
        repeat = partitions // size + 1
        replicas = ((replicas_table[start:] + replicas_table[:start]) * repeat)[:partitions]
        states = ((states_table[start:] + states_table[:start]) * repeat)[:partitions]
        yield f"{topic_prefix}-{i:06d}", dict(enumerate(replicas)), dict(enumerate(states))


def _table(size: int, replication_factor: int) -> tuple[list[Replicas], list[PartitionState]]:
    """Row ``f``: the partition led by broker ``f`` of the first ``size``, followed by the next
    ``replication_factor - 1`` brokers (the round-robin rule), and its healthy state."""
    replicas = [tuple((first + j) % size for j in range(replication_factor))
                for first in range(size)]
    states = [PartitionState(leader=r[0], isr=r, leader_epoch=0, controller_epoch=CONTROLLER_EPOCH)
              for r in replicas]
    return replicas, states


def synthetic_sizes(snapshot: ClusterSnapshot, seed: int = 0, median: float = 200e6,
                    topic_sigma: float = 2.0, partition_sigma: float = 0.3
                    ) -> dict[str, dict[int, int]]:
    """Long-tailed partition sizes in bytes, as real clusters have them: each topic's typical
    partition size is log-normal around ``median`` (a few huge topics, many small ones) and its
    partitions vary log-normally around that (keys are skewed a little). Deterministic."""
    rng = random.Random(seed)
    out: dict[str, dict[int, int]] = {}
    for topic in sorted(snapshot.topics):
        typical = median * rng.lognormvariate(0.0, topic_sigma)
        out[topic] = {p: max(1, int(typical * rng.lognormvariate(0.0, partition_sigma)))
                      for p in sorted(snapshot.topics[topic])}
    return out


MOVE_KINDS = ("add", "drain", "skew", "random")
"""The plans :func:`synthetic_moves` makes, as operators make them (schedule tests, benchmarks)."""


def synthetic_moves(snapshot: ClusterSnapshot, kind: str, moves: int, seed: int = 0,
                    new_brokers: int = 4) -> tuple[ClusterSnapshot, tuple[PartitionMove, ...]]:
    """A cluster and a plan of about ``moves`` single-replica moves on it, each partition moved at
    most once: ``add`` registers ``new_brokers`` empty brokers and moves replicas onto them;
    ``drain`` moves replicas off the broker holding the most (then the next); ``skew`` moves
    replicas from the brokers holding the most to those holding the fewest; ``random`` replaces
    a random replica by a random broker. Deterministic."""
    if kind not in MOVE_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(MOVE_KINDS)}, got {kind!r}")
    rng = random.Random(seed)
    if kind == "add":
        first = max(snapshot.brokers) + 1
        added = {**synthetic_brokers(first + new_brokers, 0), **snapshot.brokers}
        snapshot = ClusterSnapshot(brokers=added, topics=snapshot.topics, states=snapshot.states,
                                   controller=snapshot.controller,
                                   controller_epoch=snapshot.controller_epoch,
                                   sizes=snapshot.sizes)
    brokers = sorted(snapshot.brokers)
    partitions = [(t, p, r) for t in sorted(snapshot.topics)
                  for p, r in sorted(snapshot.topics[t].items())]
    rng.shuffle(partitions)
    held: dict[int, int] = dict.fromkeys(brokers, 0)
    for _, _, replicas in partitions:
        for b in replicas:
            held[b] += 1
    by_load = sorted(brokers, key=lambda b: (-held[b], b))
    drained: set[int] = set()
    for b in by_load:  # the most loaded brokers, as many as the moves need
        if sum(held[d] for d in drained) >= moves:
            break
        drained.add(b)
    out: list[PartitionMove] = []
    for topic, partition, replicas in partitions:
        if len(out) >= moves:
            break
        if kind == "add":
            old, choices = rng.choice(replicas), brokers[-new_brokers:]
        elif kind == "drain":
            on = [b for b in replicas if b in drained]
            if not on:
                continue
            old, choices = on[0], [b for b in brokers if b not in drained]
        elif kind == "skew":
            heavy, light = by_load[:len(brokers) // 3], by_load[-(len(brokers) // 3):]
            on = [b for b in replicas if b in heavy]
            if not on:
                continue
            old, choices = rng.choice(on), light
        else:
            old, choices = rng.choice(replicas), brokers
        free = [b for b in choices if b not in replicas]
        if not free:
            continue
        new = rng.choice(free)
        out.append(PartitionMove(topic, partition,
                                 tuple(new if b == old else b for b in replicas)))
    return snapshot, tuple(sorted(out))
