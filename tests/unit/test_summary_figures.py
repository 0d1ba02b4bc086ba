"""The summary's worst topic after a plan, and the plan's replica moves: taken from the topic
step where it counted them (kadmin.balance.evenness.worst_topic), the same figures
metrics.balance and metrics.replica_moves count."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin.balance.metrics import balance, replica_moves
from kadmin.balance.objective import Limits
from kadmin.balance.rebalance import rebalance
from kadmin.balance.table import PartitionTable
from kadmin.synthetic import synthetic_cluster


@settings(max_examples=60)
@given(st.integers(0, 10_000), st.integers(3, 9), st.integers(0, 3), st.integers(1, 3),
       st.sampled_from([None, 1, 2]), st.sampled_from([None, 7]), st.booleans())
def test_the_worst_topic_the_topic_step_counted_is_the_one_the_summary_counts(
        seed: int, old: int, added: int, factor: int, asked: int | None, moves: int | None,
        drain: bool) -> None:
    snapshot = synthetic_cluster(old, 12, 6, min(factor, old), seed=seed)
    table = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
    targets = list(range(1 if drain else 0, old + added))
    result = rebalance(table, targets, topic_spread=asked, limits=Limits(max_moves=moves))
    after = [result.final.get(i, r) for i, r in enumerate(table.replicas)]
    counted = balance(after, table.topic_of, table.topics, targets)
    # the moves the topic step counted are the final plan's (the leader step only reorders)
    assert result.replica_moves == replica_moves(table.replicas, result.final)
    if result.worst_topic is None:  # the topic step did not run, or made another plan
        return
    spread, topic = result.worst_topic
    assert (spread, table.topics[topic]) == (counted.worst_topic_spread, counted.worst_topic)
    assert balance(after, table.topic_of, table.topics, targets, result.worst_topic) == counted


def test_a_plan_the_topic_step_keeps_carries_its_worst_topic() -> None:
    """1,000 partitions on 40 brokers, 8 added: the search's plan meets the certificate, so
    it stands, and the summary takes its worst topic from the topic step."""
    snapshot = synthetic_cluster(40, 100, 10, 3, seed=3)
    table = PartitionTable.from_topics(snapshot.topics, sorted(snapshot.topics))
    targets = list(range(48))
    result = rebalance(table, targets)
    assert result.topics is not None and result.topics.exact and result.worst_topic is not None
    after = [result.final.get(i, r) for i, r in enumerate(table.replicas)]
    counted = balance(after, table.topic_of, table.topics, targets)
    spread, topic = result.worst_topic
    assert (spread, table.topics[topic]) == (counted.worst_topic_spread, counted.worst_topic)
