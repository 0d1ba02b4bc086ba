"""What a reassignment plan changes per broker: replicas, leaders and bytes, before and after. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain

from kadmin.balance.capacity import over_capacity
from kadmin.balance.metrics import Balance, balance
from kadmin.balance.scope import racks
from kadmin.balance.table import PartitionTable
from kadmin.balance.weighted import topic_bytes_per_broker
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    ReassignmentPlan,
    TopicPartition,
)

# --- stats -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerLoad:
    broker: int
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    """Leaders are *preferred* leaders (first replica): what the cluster converges to after
    elections, and the only leader a plan can predict."""
    bytes_before: int | None = None
    bytes_after: int | None = None
    """Bytes of the replicas on the broker (None without partition sizes)."""
    capacity: int | None = None
    """The broker's capacity in bytes (``--capacity``; None without)."""


@dataclass(frozen=True)
class PlanStats:
    partitions: int
    unchanged: int
    replica_moves: int
    """Replicas added to partitions: each is a full copy of the partition's data."""
    leader_changes: int
    """Partitions whose preferred leader changes."""
    brokers: tuple[BrokerLoad, ...]
    bytes_moved: int | None = None
    """Bytes copied: each partition's size once per replica it gains (None without sizes)."""
    lower_bound: int | None = None
    """The fewest moves that balance the plan's topics over the brokers they end on (spec
    section 7): a plan that moves more copies more data than balance needs."""
    worst_topic_spread_before: int | None = None
    worst_topic_spread_after: int | None = None
    worst_topic: str | None = None
    """The topic spread least evenly after the plan, over the brokers the plan's topics end on.
    The four are None where they were not computed (the Spark planner's totals)."""
    over_capacity: tuple[tuple[int, int, int], ...] = ()
    """With sizes and capacities: ``(broker, bytes after, capacity)`` of every broker the plan
    leaves above its capacity, counting every topic's bytes on it."""


def plan_stats(plan: ReassignmentPlan, snapshot: ClusterSnapshot,
               sizes: Mapping[TopicPartition, int] | None = None, *, rack_aware: bool = True,
               weights: Mapping[int, int] | None = None) -> PlanStats:
    """Per-broker load before and after the plan over the whole cluster (partitions outside the
    plan count with their current replicas), so the operator sees the balance that results.
    With ``sizes`` (:class:`kadmin.sizes.PartitionSizes`) also bytes: moved, and per broker."""
    assignments: list[Mapping[int, tuple[int, ...]]] = list(snapshot.topics.values())
    all_replicas = [r for partitions in assignments for r in partitions.values()]
    replicas_before = Counter(chain.from_iterable(all_replicas))
    leaders_before = Counter(r[0] for r in all_replicas if r)
    replicas_after, leaders_after = replicas_before.copy(), leaders_before.copy()
    bytes_before = Counter() if sizes is None else Counter(
        topic_bytes_per_broker(snapshot.topics, sizes))
    bytes_after = bytes_before.copy()
    unchanged = replica_moves = leader_changes = bytes_moved = 0
    for move in plan.moves:
        current = snapshot.replicas(move.tp) or ()
        if current == move.replicas:
            unchanged += 1
            continue
        replicas_after.subtract(current)
        replicas_after.update(move.replicas)
        added = len(set(move.replicas) - set(current))
        replica_moves += added
        if sizes is not None:
            size = sizes.get(move.tp, 0)
            bytes_moved += size * added
            for broker in current:
                bytes_after[broker] -= size
            for broker in move.replicas:
                bytes_after[broker] += size
        old_leader = current[0] if current else None
        new_leader = move.replicas[0] if move.replicas else None
        if old_leader != new_leader:
            leader_changes += 1
            if old_leader is not None:
                leaders_after[old_leader] -= 1
            if new_leader is not None:
                leaders_after[new_leader] += 1
    brokers = sorted(set(snapshot.brokers) | {b for b, n in replicas_before.items() if n}
                     | {b for b, n in replicas_after.items() if n})
    sized = sizes is not None
    bound, before, after = _topic_balance(plan, snapshot, rack_aware, weights)
    return PlanStats(len(plan.moves), unchanged, replica_moves, leader_changes, tuple(
        BrokerLoad(b, replicas_before[b], replicas_after[b], leaders_before[b], leaders_after[b],
                   bytes_before[b] if sized else None, bytes_after[b] if sized else None,
                   None if weights is None else weights.get(b))
        for b in brokers), bytes_moved if sized else None, bound, before.worst_topic_spread,
        after.worst_topic_spread, after.worst_topic,
        () if not sized or weights is None else tuple(over_capacity(
            {b: bytes_after[b] for b in brokers}, weights)))


def _topic_balance(plan: ReassignmentPlan, snapshot: ClusterSnapshot, rack_aware: bool,
                   weights: Mapping[int, int] | None) -> tuple[int, Balance, Balance]:
    """The lower bound of moves (:func:`kadmin.balance.bound.lower_bound`, the one ``plan
    rebalance`` prints: over the plan's topics, or over every topic where that is higher, as
    for a plan balancing the whole cluster) and the balance before and after, for the plan's
    topics over the brokers they end on, with the racks of the registered brokers unless ``rack_aware`` is
    off (or some of those brokers have none)."""
    table = PartitionTable.from_topics(snapshot.topics,
                                       sorted({m.topic for m in plan.moves} & set(snapshot.topics)))
    after = list(table.replicas)
    index = {tp: i for i, tp in enumerate(map(table.tp, range(len(table))))}
    for move in plan.moves:
        i = index.get(move.tp)
        if i is not None:
            after[i] = move.replicas
    targets = sorted({b for members in after for b in members})
    if not targets:  # no move, no topic: nothing to balance
        nothing = balance([], [], [], [])
        return 0, nothing, nothing
    try:
        rack_of = racks(snapshot.brokers, targets, rack_aware)
    except InvalidInput:  # a target without a rack: plan rebalance would balance without racks
        rack_of = None
    from kadmin.balance.bound import lower_bound  # the solvers: only when stats are asked for

    shares = None if weights is None else {b: weights[b] for b in targets}
    bound = lower_bound(table.replicas, after, targets, rack_of, shares)
    if len(table.topics) < len(snapshot.topics):  # a plan of the whole cluster bounds it whole
        whole = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
        ends = list(whole.replicas)
        at = {tp: i for i, tp in enumerate(map(whole.tp, range(len(whole))))}
        for move in plan.moves:
            if move.tp in at:
                ends[at[move.tp]] = move.replicas
        everyone = sorted({b for members in ends for b in members})
        if everyone == targets:
            bound = max(bound, lower_bound(whole.replicas, ends, targets, rack_of, shares))
    return (bound,
            balance(table.replicas, table.topic_of, table.topics, targets),
            balance(after, table.topic_of, table.topics, targets))
