"""What a rebalance optimises: one frozen value, built once from the operator's request, that
the one-machine planner (:mod:`kadmin.balance.rebalance`) and the Spark chunks
(:mod:`kadmin.balance.chunks`) both read. Every goal is a field here; where a goal applies is
a property here, so the two planners cannot drift apart on it.

The order of the goals is lexicographic (docs/balancing.md): first the fewest replica moves
that balance replicas over the target brokers (by capacity shares where given, keeping each
partition's racks), then the topics as even as those moves allow (or, with ``topic_spread``,
the fewest moves that keep every topic within it), then preferred leaders balanced by
reordering only; ``limits`` cut the plan short, the most loaded brokers relieved first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    """A partial plan: at most this many replica moves / leader changes (None: no limit)."""

    max_moves: int | None = None
    max_leader_changes: int | None = None


@dataclass(frozen=True)
class Objective:
    """The goals of one rebalance (see the module docstring for their order)."""

    leaders: bool = True
    """Balance preferred leaders by reordering replica lists (no copy)."""
    limits: Limits = field(default_factory=Limits)
    rack_of: Mapping[int, str] | None = None
    """The rack of each broker: every partition keeps as many racks as it has (None: racks
    ignored, ``--disable-rack-aware`` or a cluster without racks)."""
    weights: Mapping[int, int] | None = None
    """Capacity of each target broker (``--capacity``): replica and leader shares follow it."""
    by_bytes: bool = False
    """Balance bytes per broker instead of replica counts (``--balance bytes``)."""
    topic_spread: int | None = None
    """Every topic within this spread, with the fewest moves that allow it."""
    even_topics: bool = True
    """Among the plans of the fewest moves, one whose worst topic spread is least; False: the
    fewest moves and balanced brokers only, no topic looked at (the fastest)."""

    @property
    def prefers_even(self) -> bool:
        """Whether the broker-level search prefers moves that keep topics even."""
        return self.even_topics or self.topic_spread is not None

    @property
    def least_spread(self) -> bool:
        """The default topic goal: the least worst topic spread at the fewest moves (a whole
        plan, no ``--topic-spread``)."""
        return self.even_topics and self.topic_spread is None and self.limits.max_moves is None

    @property
    def evens_topics(self) -> bool:
        """Whether the topic stage runs at all: ``--topic-spread``, or the default goal."""
        return self.topic_spread is not None or (self.even_topics
                                                 and self.limits.max_moves is None)
