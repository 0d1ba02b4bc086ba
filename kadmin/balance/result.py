"""What a rebalance returns, from every planner of one machine (:mod:`kadmin.balance.rebalance`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kadmin.balance.across import RackBalance
from kadmin.balance.evenness import TopicGoal
from kadmin.model import Replicas


@dataclass(frozen=True)
class Rebalance:
    final: Mapping[int, Replicas]
    """New replica lists by partition index, only those that change."""
    replica_moves: int
    lower_bound: int
    """The fewest moves any plan balancing these topics over these brokers makes."""
    leader_changes: int
    unplaced: int
    """Replica moves the balanced end state needs that no valid plan allows (racks, or
    partitions as wide as the broker list); 0 means the spread ends at most 1."""
    partial: bool
    """True when a limit cut the plan short: running again continues."""
    bytes_moved: int | None = None
    """With ``--balance bytes``: the bytes the plan copies (``lower_bound`` is then in bytes)."""
    topics: TopicGoal | None = None
    """What the plan does for each topic's evenness (None where no goal was pursued)."""
    racks: RackBalance | None = None
    """With racks of unequal size: whether brokers were balanced across racks."""
    held: int = 0
    """Partitions left as they are because they hold a replica on a target broker that is not
    registered (see :func:`kadmin.balance.held.hold`)."""
    worst_topic: tuple[int, int] | None = None
    """The final plan's worst topic spread over the targets and the first topic at it (its
    index in the table), where the topic step computed it (None: not computed)."""
