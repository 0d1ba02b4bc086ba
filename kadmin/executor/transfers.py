"""A plan's moves as the schedule's model sees them (pure): who sends, who receives, how much.

The sender of a move is the partition's current leader (its state znode) while that broker is
registered and holds a replica; otherwise the first registered current replica (the one the
controller would elect), otherwise the first current replica. Receivers are the new replicas.
Without sizes every partition weighs 1 byte, so the model counts partitions per broker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kadmin import min_insync, schedule
from kadmin.model import ClusterSnapshot, PartitionMove, PartitionState, TopicPartition
from kadmin.zk import codec

ENVELOPE = len(codec.REASSIGNMENT_PREFIX) + len(codec.REASSIGNMENT_SUFFIX)


def limits(batch_size: int, max_znode_bytes: int, max_batch_bytes: int | None = None,
           max_moves_per_broker: int | None = None) -> schedule.Limits:
    """The limits of one ``/admin/reassign_partitions`` batch."""
    return schedule.Limits(max_partitions=batch_size, max_znode_bytes=max_znode_bytes,
                           overhead=ENVELOPE, separator=1, max_batch_bytes=max_batch_bytes,
                           max_moves_per_broker=max_moves_per_broker)


def sender(current: Sequence[int], state: PartitionState | None, registered: Mapping[int, object]
           ) -> int:
    if state is not None and state.leader in current and state.leader in registered:
        return state.leader
    return next((b for b in current if b in registered), current[0] if current else -1)


def transfer(move: PartitionMove, snapshot: ClusterSnapshot,
             sizes: Mapping[TopicPartition, int] | None,
             states: Mapping[TopicPartition, PartitionState] | None = None) -> schedule.Transfer:
    """``move`` in ``snapshot`` (its settled replicas: a batch left in flight by an interrupted
    run still copies what it copied); ``states`` overrides the snapshot's partition states."""
    tp = move.tp
    current = snapshot.settled_replicas(tp) or ()
    state = states.get(tp) if states is not None else snapshot.state(tp)
    return schedule.Transfer(
        tp=tp, size=1 if sizes is None else sizes.get(tp, 0),
        sender=sender(current, state, snapshot.brokers),
        receivers=tuple(b for b in move.replicas if b not in current),
        entry_bytes=len(codec.encode_reassignment_entry(move)),
        restores=any(b not in snapshot.brokers for b in current),
        at_min_isr=min_insync.at_or_below(state, snapshot.min_insync.get(tp.topic)))


def transfers(moves: Sequence[PartitionMove], snapshot: ClusterSnapshot,
              sizes: Mapping[TopicPartition, int] | None,
              states: Mapping[TopicPartition, PartitionState] | None = None
              ) -> list[schedule.Transfer]:
    return [transfer(m, snapshot, sizes, states) for m in moves]
