"""What `kadmin status` reports about a cluster, computed from a snapshot. Pure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kadmin.balance.metrics import balance, spread
from kadmin.balance.table import PartitionTable
from kadmin.model import ClusterSnapshot, Reassignment, TopicPartition


@dataclass(frozen=True)
class ClusterHealth:
    brokers: int
    topics: int
    partitions: int
    under_replicated: tuple[TopicPartition, ...]
    """ISR smaller than the replication factor: the replica list, or while a partition is being
    reassigned its original replicas (Kafka's own rule: the replicas being added do not count
    until they join)."""
    offline: tuple[TopicPartition, ...]
    """No leader (-1), the leader not a live broker, or no state read (leader unknown: those of
    ``without_state`` too)."""
    not_preferred: tuple[TopicPartition, ...]
    """Led by a live broker that is not the preferred replica: a preferred election would move it."""
    without_state: tuple[TopicPartition, ...]
    """No state read (no state znode: a topic being created, or a damaged tree; or one that
    cannot be decoded): counted offline, as nothing shows a leader."""
    reassigning: tuple[tuple[TopicPartition, Reassignment], ...] = ()
    """Partitions Kafka 2.4+ shows moving in their topic znodes, whoever started the move
    (``/admin/reassign_partitions`` or the Admin API, which writes no admin znode)."""


def cluster_health(snapshot: ClusterSnapshot) -> ClusterHealth:
    under, offline, not_preferred, without_state = [], [], [], []
    live = snapshot.brokers
    for topic in sorted(snapshot.topics):
        states = snapshot.states.get(topic, {})
        for partition, replicas in sorted(snapshot.topics[topic].items()):
            tp = TopicPartition(topic, partition)
            state = states.get(partition)
            if state is None:
                without_state.append(tp)
                offline.append(tp)
                continue
            if len(set(state.isr)) < len(snapshot.settled_replicas(tp) or replicas):
                under.append(tp)
            if state.leader < 0 or state.leader not in live:
                offline.append(tp)
            elif replicas and state.leader != replicas[0]:
                not_preferred.append(tp)
    return ClusterHealth(
        brokers=len(snapshot.brokers),
        topics=len(snapshot.topics),
        partitions=snapshot.partition_count,
        under_replicated=tuple(under),
        offline=tuple(offline),
        not_preferred=tuple(not_preferred),
        without_state=tuple(without_state),
        reassigning=tuple((tp, moving) for tp in snapshot.reassigning_partitions()
                          if (moving := snapshot.reassignment(tp)) is not None),
    )


@dataclass(frozen=True)
class BrokerShare:
    broker: int
    rack: str | None
    replicas: int
    preferred: int
    """Partitions whose preferred replica (first) it is: what it leads after elections."""
    leading: int
    """Partitions it leads now (state znodes)."""


@dataclass(frozen=True)
class Shares:
    """How replicas and leadership are spread over the registered brokers: where an operator
    looks for skew first (``kadmin plan rebalance`` fixes it)."""

    brokers: tuple[BrokerShare, ...]
    replica_spread: int
    preferred_spread: int
    leader_spread: int
    worst_topic_spread: int
    worst_topic: str | None


def broker_shares(snapshot: ClusterSnapshot) -> Shares:
    table = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
    registered = sorted(snapshot.brokers)
    figures = balance(table.replicas, table.topic_of, table.topics, registered)
    leading = Counter(state.leader for states in snapshot.states.values()
                      for state in states.values())
    leaders = {b: leading[b] for b in registered}
    return Shares(
        tuple(BrokerShare(b, snapshot.brokers[b].rack, figures.replicas[b], figures.leaders[b],
                          leaders[b]) for b in registered),
        figures.replica_spread, figures.leader_spread, spread(leaders),
        figures.worst_topic_spread, figures.worst_topic)
