"""The front door of balancing on one machine: :func:`plan` runs the stages of
:mod:`kadmin.balance.stages` that an :class:`~kadmin.balance.objective.Objective` asks for over
the whole table (:mod:`kadmin.balance.machine`); :func:`rebalance` is the same with the goals
as keywords; :func:`rebalance_bytes` (``--balance bytes``) and :func:`change_factor`
(``--replication-factor``) are the two other plans ``kadmin plan rebalance`` makes.

Every step takes its quota as an argument (:func:`kadmin.balance.shares.replica_quota`,
:func:`kadmin.balance.shares.leader_quota` compute the single-machine one); a Spark task runs
the same steps on its chunk of topics with quotas the driver hands out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from kadmin.balance.bound import lower_bound
from kadmin.balance.capacity import refuse_overfull
from kadmin.balance.factor import change_replication_factor
from kadmin.balance.held import hold
from kadmin.balance.machine import changed, plan_whole, reorder_leaders
from kadmin.balance.metrics import leader_changes, replica_moves
from kadmin.balance.objective import Limits, Objective
from kadmin.balance.result import Rebalance
from kadmin.balance.table import PartitionTable
from kadmin.balance.weighted import balance_bytes

LIMITLESS = Limits()


def plan(table: PartitionTable, brokers: Collection[int], objective: Objective, *,
         counts: Mapping[int, int] | None = None, kept: Collection[int] = ()) -> Rebalance:
    """The fewest replica moves that balance ``table``'s replicas over ``brokers`` (drained
    brokers are those holding replicas but not in ``brokers``), then, with
    ``objective.leaders``, the fewest reorderings that balance preferred leaders. With
    ``objective.weights`` (broker capacities) balanced means each broker at the floor or
    ceiling of its capacity share.

    Topics (:mod:`kadmin.balance.evenness`): by default (``even_topics``), among the plans of
    the fewest moves the one whose worst topic spread is least, proven by a bound at any size
    where the search's plan meets it, else by the exact programs where they are small enough
    (else the search's plan, with the bound); with ``topic_spread``, the fewest moves that
    keep every topic within it, which is then the lower bound. Neither: the fewest moves and
    balanced brokers only, no topic looked at (the fastest).

    Racks: ``objective.rack_of`` (:mod:`kadmin.balance.across`). ``counts``: the replicas per
    broker of ``table`` where the caller has them already; ``kept``: the targets that are not
    registered (:func:`kadmin.balance.held.hold`)."""
    return plan_whole(table, brokers, objective, counts, kept)


def rebalance(table: PartitionTable, brokers: Collection[int],
              rack_of: Mapping[int, str] | None = None, *, leaders: bool = True,
              limits: Limits = LIMITLESS, counts: Mapping[int, int] | None = None,
              weights: Mapping[int, int] | None = None, topic_spread: int | None = None,
              even_topics: bool = True, kept: Collection[int] = ()) -> Rebalance:
    """:func:`plan` with the goals of the :class:`~kadmin.balance.objective.Objective` as
    keywords (tests and benchmarks state one goal at a time)."""
    return plan(table, brokers, Objective(leaders, limits, rack_of, weights, False,
                                          topic_spread, even_topics), counts=counts, kept=kept)


def rebalance_bytes(table: PartitionTable, sizes: Sequence[int], brokers: Collection[int],
                    rack_of: Mapping[int, str] | None = None, *, leaders: bool = True,
                    capacities: Mapping[int, int] | None = None,
                    kept: Collection[int] = (), others: int = 0) -> Rebalance:
    """``--balance bytes``: bytes per broker within one largest partition of each other, moving
    as few bytes as :func:`kadmin.balance.weighted.balance_bytes` finds, then the same leader
    step as :func:`rebalance`. ``lower_bound`` is then the byte bound, as is ``bytes_moved``.
    With ``capacities`` (bytes per target broker) bytes per unit of capacity are balanced, and
    leaders follow the same shares; a cluster holding more bytes than the targets' capacity
    is refused, counting ``others``, the bytes topics outside ``table`` keep on the targets."""
    if capacities is not None:
        refuse_overfull(sum(size * len(r) for size, r in zip(sizes, table.replicas, strict=True)),
                        capacities, brokers, others)
    held = hold(table, brokers, kept)
    before, brokers = held.free.replicas, held.targets
    fixed: Counter[int] = Counter()
    if held.index is not None:
        free = set(held.index)
        for i, members in enumerate(table.replicas):
            if i not in free:
                fixed.update({b: sizes[i] for b in members if b in brokers})
        sizes = [sizes[i] for i in held.index]
    moved = balance_bytes(held.free, sizes, brokers, rack_of, capacities, fixed)
    final = dict(moved.final)
    if leaders:
        final, _ = reorder_leaders(before, final, brokers, Limits(), capacities, held.leaders)
    final = changed(before, final)
    return Rebalance(held.whole(final), replica_moves(before, final), moved.lower_bound,
                     leader_changes(before, final), 0, False, moved.bytes_moved,
                     held=held.partitions)


def change_factor(table: PartitionTable, factor: int, brokers: Collection[int],
                  loads: Mapping[int, int], rack_of: Mapping[int, str] | None = None,
                  limits: Limits = LIMITLESS, kept: Collection[int] = ()) -> Rebalance:
    """A replication factor change (:func:`change_replication_factor`): moves are exactly the
    replicas added, which is the lower bound (:func:`lower_bound`: more only where the end is
    balanced and balance alone needs more); leaders stay. With ``max_moves`` the first
    partitions in plan order, as many as the budget allows."""
    held = hold(table, brokers, kept)
    before, brokers = held.free.replicas, held.targets
    final = change_replication_factor(held.free, factor, brokers, loads, rack_of)
    needed = lower_bound(before, [final.get(i, r) for i, r in enumerate(before)], brokers,
                         rack_of)
    partial = limits.max_moves is not None and needed > limits.max_moves
    if partial:
        budget, chosen = limits.max_moves or 0, {}
        for i in sorted(final):
            cost = len(set(final[i]) - set(before[i]))
            if cost <= budget:
                chosen[i] = final[i]
                budget -= cost
        final = chosen
    return Rebalance(held.whole(final), replica_moves(before, final), needed,
                     leader_changes(before, final), 0, partial, held=held.partitions)
