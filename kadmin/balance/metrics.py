"""The figures of balance an operator judges a plan by (docs/balancing.md). Pure.

Counts are per target broker, zeros included: a new broker that holds nothing is the very skew
a rebalance exists to fix, so it must weigh in the spread. Replicas on other brokers (a drain not
finished yet) are counted apart, in ``elsewhere``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from kadmin.model import Replicas


@dataclass(frozen=True)
class Balance:
    replicas: Mapping[int, int]
    """Replicas per target broker."""
    leaders: Mapping[int, int]
    """Preferred leaders (first replicas) per target broker."""
    elsewhere: int
    """Replicas on brokers that are not targets."""
    worst_topic: str | None
    """The topic spread the least evenly over the target brokers."""
    worst_topic_spread: int

    @property
    def replica_spread(self) -> int:
        return spread(self.replicas)

    @property
    def leader_spread(self) -> int:
        return spread(self.leaders)

    def figures(self) -> dict[str, object]:
        """The spreads, as ``plan rebalance --json`` and a Spark plan's manifest give them."""
        return {"replica_spread": self.replica_spread, "leader_spread": self.leader_spread,
                "worst_topic_spread": self.worst_topic_spread, "worst_topic": self.worst_topic,
                "elsewhere": self.elsewhere}


def loads(before: Balance, after: Balance) -> list[dict[str, int]]:
    """Per target broker, its replicas and preferred leaders before and after."""
    return [{"broker": b, "replicas_before": before.replicas[b], "replicas_after": after.replicas[b],
             "leaders_before": before.leaders[b], "leaders_after": after.leaders[b]}
            for b in before.replicas]


def spread(counts: Mapping[int, int]) -> int:
    """Max minus min over the brokers (docs/balancing.md); 0 for no brokers."""
    return max(counts.values()) - min(counts.values()) if counts else 0


def balance(replicas: Sequence[Replicas], topic_of: Sequence[int], topics: Sequence[str],
            brokers: Collection[int], worst_topic: tuple[int, int] | None = None) -> Balance:
    """The balance of ``replicas`` (partitions grouped by topic, in ``topic_of`` order) over
    ``brokers``. Counting runs in C and a topic costs a few calls: a million partitions take
    about a second. ``worst_topic``: the worst topic spread and the index of the first topic
    at it, as :func:`kadmin.balance.evenness.worst_topic` gives them (a plan's
    ``Rebalance.worst_topic``), when the caller has them: the topics are not counted again."""
    targets = frozenset(brokers)
    per_replica = Counter(chain.from_iterable(replicas))
    per_leader = Counter(members[0] for members in replicas if members)
    worst = None if not (targets and len(topic_of)) else (
        _worst_topic(replicas, topic_of, targets) if worst_topic is None else worst_topic)
    elsewhere = sum(n for b, n in per_replica.items() if b not in targets)
    return Balance({b: per_replica[b] for b in sorted(targets)},
                   {b: per_leader[b] for b in sorted(targets)}, elsewhere,
                   None if worst is None else topics[worst[1]], 0 if worst is None else worst[0])


def _worst_topic(replicas: Sequence[Replicas], topic_of: Sequence[int],
                 targets: frozenset[int]) -> tuple[int, int]:
    """The worst topic spread over ``targets`` and the index of the first topic at it (pure
    Python: this also runs on Spark executors, which may lack numpy)."""
    worst = (-1, 0)
    start = 0
    for end in _topic_ends(topic_of):
        counts = Counter(chain.from_iterable(replicas[start:end]))
        if counts.keys() <= targets:
            high = max(counts.values(), default=0)
            low = min(counts.values(), default=0) if len(counts) == len(targets) else 0
        else:  # some replicas are on brokers outside the targets (a drain not done yet)
            inside = [n for b, n in counts.items() if b in targets]
            high = max(inside, default=0)
            low = min(inside, default=0) if len(inside) == len(targets) else 0
        if high - low > worst[0]:
            worst = (high - low, topic_of[start])
        start = end
    return worst


def _topic_ends(topic_of: Sequence[int]) -> Iterable[int]:
    for i in range(1, len(topic_of)):
        if topic_of[i] != topic_of[i - 1]:
            yield i
    if topic_of:
        yield len(topic_of)


def replica_moves(before: Sequence[Replicas], after: Mapping[int, Replicas]) -> int:
    """Replicas copied: brokers in a partition's new list that are not in its current one."""
    return sum(len(set(new) - set(before[i])) for i, new in after.items())


def leader_changes(before: Sequence[Replicas], after: Mapping[int, Replicas]) -> int:
    """Partitions whose preferred leader (first replica) changes."""
    return sum(1 for i, new in after.items() if new[:1] != before[i][:1])
