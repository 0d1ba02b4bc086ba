"""/admin/preferred_replica_election as Kafka's controller serves it (docs/controller.md): each
listed partition's preferred replica becomes leader if it is alive and in the ISR, then the
whole znode is deleted."""

from __future__ import annotations

import contextlib

from kazoo.exceptions import NoNodeError

from kadmin.model import PartitionState, TopicPartition
from kadmin.sandbox.cluster import ClusterView
from kadmin.zk import codec, paths


def on_request(cluster: ClusterView, data: bytes, czxid: int) -> None:
    """Cut off half-way, the next run elects again from the states as they are then: a
    partition already moved counts as "preferred replica is already leader"."""
    try:
        partitions = codec.decode_election(data)
    except codec.DecodeError as exc:
        cluster.record_submitted("election_submitted", czxid, error=str(exc))
        return  # Kafka fails to parse it and leaves it
    cluster.record_submitted("election_submitted", czxid, partitions=[
        {"topic": tp.topic, "partition": tp.partition} for tp in partitions])
    unique = list(dict.fromkeys(partitions))
    topics = cluster.topics(tp.topic for tp in unique)
    queued = cluster.queued_deletions()
    preferred = {tp: replicas[0] for tp in unique
                 if (replicas := cluster.replicas(topics, tp)) and tp.topic not in queued}

    def elect(tp: TopicPartition, state: PartitionState) -> PartitionState | None:
        if not_electable(cluster, preferred[tp], state):
            return None
        return PartitionState(preferred[tp], state.isr, state.leader_epoch + 1, cluster.epoch)

    outcome = cluster.update_states(preferred, elect)
    for tp in unique:
        if tp not in preferred:
            reason = ("topic queued for deletion" if cluster.replicas(topics, tp)
                      else "unknown partition")
        elif tp not in outcome:
            reason = "no leader and ISR state"
        elif (new := outcome[tp][1]) is not None:
            cluster.record("leader_elected", topic=tp.topic, partition=tp.partition,
                           leader=new.leader, leader_epoch=new.leader_epoch)
            continue
        else:
            reason = not_electable(cluster, preferred[tp], outcome[tp][0]) or ""
        cluster.record("election_skipped", topic=tp.topic, partition=tp.partition, reason=reason)
    with contextlib.suppress(NoNodeError):
        cluster.client.delete(paths.PREFERRED_REPLICA_ELECTION)


def not_electable(cluster: ClusterView, preferred: int, state: PartitionState) -> str | None:
    """Why the preferred replica cannot (or need not) become leader; None if it can."""
    if state.leader == preferred:
        return "preferred replica is already leader"
    if not cluster.alive(preferred):
        return f"preferred replica {preferred} is not alive"
    if preferred not in state.isr:
        return f"preferred replica {preferred} is not in the ISR"
    return None
