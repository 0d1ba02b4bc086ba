"""What `kadmin status` reports about a cluster, computed from a snapshot. Pure."""

from __future__ import annotations

from dataclasses import dataclass

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
    """No leader (-1), or the leader is not a live broker."""
    not_preferred: tuple[TopicPartition, ...]
    """Led by a live broker that is not the preferred replica: a preferred election would move it."""
    without_state: tuple[TopicPartition, ...]
    """No state znode (a topic being created, or a damaged tree)."""
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
