"""The request values of the balancing commands, as the operator typed them: what
:mod:`kadmin.operations` takes and the Spark shells (:mod:`kadmin.spark`) read. They live
below both so that neither imports the other for them; nothing here reads a file or the
cluster."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kadmin.balance.objective import Limits, Objective
from kadmin.model import InvalidInput


@dataclass(frozen=True)
class TopicSelection:
    """The topics an operation covers, as the operator named them: ``--topics`` (text as
    typed), ``--topics-file`` or ``--all-topics``; exactly one, or none where every topic is
    the default."""

    topics: str | None = None
    file: Path | None = None
    all_topics: bool = False

    def given(self) -> int:
        return sum([self.topics is not None, self.file is not None, self.all_topics])


@dataclass(frozen=True)
class RebalanceRequest:
    """What to balance: the options ``kadmin plan rebalance`` and ``kadmin spark rebalance``
    share. Spark honours all but ``replication_factor``, ``max_leader_changes`` and
    ``by_bytes`` (its command has no option for them)."""

    # No topic option given: every topic.
    topics: TopicSelection = field(default_factory=TopicSelection)
    # The target brokers (None: every registered broker minus ``remove``).
    brokers: Sequence[int] | None = None
    # Brokers to drain.
    remove: Sequence[int] | None = None
    # Change the replication factor of the selected topics instead of rebalancing.
    replication_factor: int | None = None
    leaders: bool = True
    max_moves: int | None = None
    max_leader_changes: int | None = None
    rack_aware: bool = True
    # Balance bytes per broker (needs partition sizes) instead of replica counts.
    by_bytes: bool = False
    # Every selected topic within this spread, with the fewest moves that allow it.
    topic_spread: int | None = None
    # Among the plans of the fewest moves, the one whose worst topic spread is least (the
    # default objective); False: the fewest moves and balanced brokers only, the fastest.
    even_topics: bool = True
    # A capacity file: replica, leader and byte shares follow each broker's capacity (read by
    # the operation, which hands the capacities to :meth:`objective`).
    capacity: Path | None = None

    def check(self) -> None:
        """The combinations refused before anything is read."""
        if self.by_bytes and (self.replication_factor is not None or self.max_moves is not None
                              or self.max_leader_changes is not None):
            raise InvalidInput("--balance bytes makes a whole plan: it does not combine with "
                               "--replication-factor, --max-moves or --max-leader-changes")
        if self.topic_spread is not None and (self.by_bytes
                                              or self.replication_factor is not None):
            raise InvalidInput("--topic-spread balances replica counts: it does not combine "
                               "with --balance bytes or --replication-factor")
        if self.topic_spread is not None and not self.even_topics:
            raise InvalidInput("--topic-spread evens topics out: it does not combine with "
                               "--no-even-topics")

    @property
    def limits(self) -> Limits:
        return Limits(self.max_moves, self.max_leader_changes)

    @property
    def limit_words(self) -> str | None:
        """The limits as the operator gave them (``--max-moves 0``); None without one."""
        return " and ".join(f"{option} {n}" for option, n in (
            ("--max-moves", self.max_moves), ("--max-leader-changes", self.max_leader_changes))
            if n is not None) or None

    def objective(self, rack_of: Mapping[int, str] | None, weights: Mapping[int, int] | None
                  ) -> Objective:
        """The goals of this request, built once the scope is known: ``rack_of``, the racks
        of the brokers (None: racks ignored); ``weights``, each target broker's capacity from
        the capacity file (None: none given)."""
        return Objective(self.leaders, self.limits, rack_of, weights, self.by_bytes,
                         self.topic_spread, self.even_topics)
