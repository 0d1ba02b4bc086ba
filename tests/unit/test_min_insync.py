"""min.insync.replicas: its source, the targets refused, the moves named, and batches that put
partitions at or below it first."""

from __future__ import annotations

from kadmin import schedule
from kadmin.min_insync import at_or_below, kept_in_sync, resolve, too_short
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    PartitionMove,
    PartitionState,
    ReassignmentPlan,
    Severity,
    TopicPartition,
)
from kadmin.plans import validate_against_cluster


def test_the_topic_then_the_broker_default_then_kafkas_default() -> None:
    assert resolve("t", {"min.insync.replicas": "2"}, {"min.insync.replicas": "3"}) == (
        2, "/config/topics/t")
    assert resolve("t", {"retention.ms": "1"}, {"min.insync.replicas": "3"}) == (
        3, "/config/brokers/<default>")
    assert resolve("t", None, None) == (1, "Kafka's default")
    assert resolve("t", {"min.insync.replicas": "two"}, None) == (1, "Kafka's default")


def test_a_target_shorter_than_the_minimum_is_refused_naming_both_numbers() -> None:
    assert too_short((1, 2, 3), (3, "x")) is None
    assert too_short((1, 2), (3, "/config/topics/t")) == (
        "2 target replica(s) [1, 2], fewer than min.insync.replicas 3 (/config/topics/t): "
        "acks=all producers would fail for good")


def test_a_move_keeping_too_few_in_sync_replicas_is_named_and_a_reorder_is_fine() -> None:
    state = PartitionState(1, (1, 2))
    assert kept_in_sync((1, 2, 3), (4, 5, 1), state, (2, "s")) is not None
    assert kept_in_sync((1, 2, 3), (4, 2, 1), state, (2, "s")) is None
    assert kept_in_sync((1, 2, 3), (3, 2, 1), state, (3, "s")) is None  # a reorder
    assert at_or_below(state, (2, "s")) and not at_or_below(state, (1, "s"))


def test_validation_against_the_cluster_uses_the_topics_minimum() -> None:
    snapshot = ClusterSnapshot(
        brokers={b: Broker(b) for b in range(1, 6)},
        topics={"t": {0: (1, 2, 3), 1: (1, 2, 3)}},
        states={"t": {0: PartitionState(1, (1, 2, 3)), 1: PartitionState(1, (1, 2, 3))}},
        min_insync={"t": (2, "/config/topics/t")})
    plan = ReassignmentPlan((PartitionMove("t", 0, (4,)), PartitionMove("t", 1, (4, 5, 1))))
    found = [(p.where, p.severity) for p in validate_against_cluster(
        plan, snapshot, allow_rf_change=True) if "min.insync" in p.message]
    assert found == [("t-0", Severity.ERROR), ("t-1", Severity.WARNING)]


def transfer(partition: int, *, restores: bool = False, at_min: bool = False
             ) -> schedule.Transfer:
    return schedule.Transfer(TopicPartition("t", partition), 1, 1, (2,), 40, restores, at_min)


def test_batches_put_partitions_at_min_isr_first_then_those_restoring_redundancy() -> None:
    transfers = [transfer(0), transfer(1, restores=True), transfer(2, at_min=True), transfer(3)]
    composed = schedule.compose(transfers, schedule.Limits(max_partitions=1))
    order = [transfers[b[0]].tp.partition for b in composed.batches]
    assert order[:2] == [2, 1] and sorted(order[2:]) == [0, 3]
    plain = schedule.compose([transfer(i) for i in range(4)], schedule.Limits(max_partitions=1))
    assert composed.load == plain.load  # the order costs nothing in the model
