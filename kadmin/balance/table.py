"""The partitions a rebalance works on, flattened into parallel lists indexed by partition.

The balancing core handles a million partitions in one process and a chunk of topics per Spark
task, so it indexes partitions by position instead of by ``TopicPartition``: a position is a small
int, hashes in C and costs nothing to keep in a dozen per-broker lists. Topics are sorted by name
and partitions by id, which is the order of every plan file and makes every result deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kadmin.model import PartitionMove, Replicas, TopicAssignment, TopicPartition


@dataclass(frozen=True)
class PartitionTable:
    """Parallel lists: partition ``i`` is partition ``ids[i]`` of ``topics[topic_of[i]]`` and
    holds ``replicas[i]`` (first = preferred leader). Lists rather than tuples because they are
    built once, never changed, and a million-element tuple would only cost a copy."""

    topics: tuple[str, ...]
    topic_of: list[int]
    ids: list[int]
    replicas: list[Replicas]

    @classmethod
    def of(cls, assignments: Iterable[tuple[str, TopicAssignment]]) -> PartitionTable:
        """Topics in name order (each once), partitions in id order."""
        topics: list[str] = []
        topic_of: list[int] = []
        ids: list[int] = []
        replicas: list[Replicas] = []
        for name, partitions in sorted(assignments, key=lambda item: item[0]):
            if topics and topics[-1] == name:
                raise ValueError(f"topic {name} given twice")
            index = len(topics)
            topics.append(name)
            for partition in sorted(partitions):
                topic_of.append(index)
                ids.append(partition)
                replicas.append(partitions[partition])
        return cls(tuple(topics), topic_of, ids, replicas)

    @classmethod
    def from_topics(cls, topics: Mapping[str, TopicAssignment], names: Iterable[str]
                    ) -> PartitionTable:
        return cls.of((name, topics[name]) for name in names)

    def subset(self, indexes: Sequence[int]) -> PartitionTable:
        """The partitions at ``indexes`` (ascending), as a table of their own."""
        topic_of, ids, replicas = self.topic_of, self.ids, self.replicas
        return PartitionTable(self.topics, [topic_of[i] for i in indexes],
                              [ids[i] for i in indexes], [replicas[i] for i in indexes])

    def __len__(self) -> int:
        return len(self.replicas)

    def tp(self, i: int) -> TopicPartition:
        return TopicPartition(self.topics[self.topic_of[i]], self.ids[i])

    def moves(self, final: Mapping[int, Replicas]
              ) -> tuple[list[PartitionMove], list[PartitionMove]]:
        """The plan entries of the partitions whose replica list changes, in plan order, and
        the rollback's: the same partitions with their replicas of today."""
        plan: list[PartitionMove] = []
        rollback: list[PartitionMove] = []
        topics, topic_of, ids, replicas = self.topics, self.topic_of, self.ids, self.replicas
        for i in sorted(final):
            if final[i] != replicas[i]:
                topic = topics[topic_of[i]]
                plan.append(PartitionMove(topic, ids[i], final[i]))
                rollback.append(PartitionMove(topic, ids[i], replicas[i]))
        return plan, rollback
