"""Plan documents: parsing, writing, rollback, diff against the cluster, stats, generated plans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin import plans
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    PartitionMove,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
)

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b) for b in (1, 2, 3, 4, 5)},
    topics={"a": {0: (1, 2), 1: (2, 3)}, "b": {0: (3, 1)}, "c": {0: (4, 1)}},
)


def applied(snapshot: ClusterSnapshot, plan: ReassignmentPlan) -> ClusterSnapshot:
    """The cluster after the controller carried out ``plan``."""
    topics = {t: dict(parts) for t, parts in snapshot.topics.items()}
    for move in plan.moves:
        topics[move.topic][move.partition] = move.replicas
    return ClusterSnapshot(snapshot.brokers, topics)


# --- parsing and writing -----------------------------------------------------------------------


def test_parse_plan_sorts_by_topic_then_partition() -> None:
    doc = {"partitions": [{"topic": "b", "partition": 10, "replicas": [1]},
                          {"topic": "a", "partition": 2, "replicas": [2, 1],
                           "log_dirs": ["/d1", "any"]},
                          {"topic": "b", "partition": 9, "replicas": [3]}]}
    assert plans.parse_plan(doc, PlanKind.REASSIGN) == ReassignmentPlan((
        PartitionMove("a", 2, (2, 1), ("/d1", "any")),
        PartitionMove("b", 9, (3,)),
        PartitionMove("b", 10, (1,)),
    ))
    assert plans.parse_plan({"partitions": [{"topic": "z", "partition": 1},
                                            {"topic": "a", "partition": 0}]}, None) == \
        ElectionPlan((TopicPartition("a", 0), TopicPartition("z", 1)))
    assert plans.parse_plan({"version": 1, "topics": ["z", "a"]}, None) == DeletionPlan(("a", "z"))


def test_parse_plan_refuses_an_invalid_document_naming_every_problem() -> None:
    doc = {"partitions": [{"topic": "a", "partition": -1, "replicas": [1, 1]}]}
    with pytest.raises(InvalidInput) as raised:
        plans.parse_plan(doc, None)
    assert str(raised.value) == "invalid reassign plan (2 errors)"
    assert raised.value.details == (
        "$.partitions[0].partition: partition id -1 is negative",
        "$.partitions[0].replicas: broker id(s) 1 listed more than once in [1, 1]")
    with pytest.raises(InvalidInput, match=r"^invalid plan: \$: not a plan"):
        plans.parse_plan([], None)


def test_plan_document_is_kafkas_file_format_sorted() -> None:
    plan = ReassignmentPlan((PartitionMove("b", 0, (3, 1)),
                             PartitionMove("a", 1, (2, 3), ("any", "/data"))))
    assert plans.plan_document(plan) == {"version": 1, "partitions": [
        {"topic": "a", "partition": 1, "replicas": [2, 3], "log_dirs": ["any", "/data"]},
        {"topic": "b", "partition": 0, "replicas": [3, 1]}]}
    assert plans.plan_document(plan, log_dirs=False)["partitions"][0] == {
        "topic": "a", "partition": 1, "replicas": [2, 3]}
    assert plans.plan_document(ElectionPlan((TopicPartition("b", 0), TopicPartition("a", 3)))) == {
        "version": 1, "partitions": [{"topic": "a", "partition": 3}, {"topic": "b", "partition": 0}]}
    assert plans.plan_document(DeletionPlan(("foo", "bar"))) == {"version": 1,
                                                                "topics": ["bar", "foo"]}


@settings(max_examples=100)
@given(moves=st.lists(st.tuples(
    st.sampled_from(["a", "b.c", "d_e-f"]), st.integers(0, 100),
    st.lists(st.integers(0, 20), min_size=1, max_size=4, unique=True).map(tuple),
    st.sampled_from([None, "any", "/data"])),
    unique_by=lambda m: m[:2], min_size=1, max_size=40))
def test_plan_document_round_trips(moves: list[tuple[str, int, tuple[int, ...], str | None]]
                                   ) -> None:
    plan = ReassignmentPlan(tuple(sorted(
        PartitionMove(t, p, r, None if d is None else (d,) * len(r)) for t, p, r, d in moves)))
    assert plans.parse_plan(plans.plan_document(plan), PlanKind.REASSIGN) == plan


# --- rollback and diff -------------------------------------------------------------------------


def test_rollback_is_the_current_assignment_of_the_same_partitions() -> None:
    plan = ReassignmentPlan((PartitionMove("b", 0, (4, 1), ("any", "any")),
                             PartitionMove("a", 0, (3, 4))))
    rollback = plans.current_assignment(plan, CLUSTER)
    assert rollback == ReassignmentPlan((PartitionMove("a", 0, (1, 2)),
                                         PartitionMove("b", 0, (3, 1))))
    assert plans.plan_document(rollback) == {"version": 1, "partitions": [
        {"topic": "a", "partition": 0, "replicas": [1, 2]},
        {"topic": "b", "partition": 0, "replicas": [3, 1]}]}
    # running the plan, then its rollback, restores the cluster exactly
    assert applied(applied(CLUSTER, plan), rollback).topics == CLUSTER.topics
    assert plans.validate(plans.plan_document(rollback), None, applied(CLUSTER, plan)).ok(
        strict=True)


def test_rollback_of_an_unknown_partition_is_refused() -> None:
    plan = ReassignmentPlan((PartitionMove("a", 7, (1,)), PartitionMove("x", 0, (1,))))
    with pytest.raises(InvalidInput, match=r"2 partition\(s\) of the plan are not in the cluster, "
                                           r"the first a-7") as raised:
        plans.current_assignment(plan, CLUSTER)
    assert raised.value.details == ("a-7", "x-0")


def test_changed_moves_skips_partitions_already_in_place() -> None:
    plan = ReassignmentPlan((PartitionMove("a", 0, (1, 2)),       # in place
                             PartitionMove("a", 1, (3, 2)),       # reorder: a change
                             PartitionMove("b", 0, (3, 4))))
    changed, unchanged = plans.changed_moves(plan, CLUSTER)
    assert changed == (PartitionMove("a", 1, (3, 2)), PartitionMove("b", 0, (3, 4)))
    assert unchanged == 1
    assert plans.changed_moves(ReassignmentPlan(()), CLUSTER) == ((), 0)


# --- stats -------------------------------------------------------------------------------------


def test_plan_stats_hand_computed() -> None:
    """Before: a0 (1,2) a1 (2,3) b0 (3,1) c0 (4,1); after: a0 (3,4) a1 (2,3) b0 (4,1) c0 (4,1).
    a0 copies to 3 and 4, b0 to 4: three replica moves; preferred leaders change for a0 (1->3)
    and b0 (3->4); c0 is outside the plan but still counts; broker 5 holds nothing.
    The plan's topics a and b end on brokers 1-4 with 6 replicas: broker 4 must take one,
    so the lower bound is 1; topic a is spread 1,2,1,0 before and 0,1,2,1 after."""
    plan = ReassignmentPlan((PartitionMove("a", 0, (3, 4)), PartitionMove("a", 1, (2, 3)),
                             PartitionMove("b", 0, (4, 1))))
    stats = plans.plan_stats(plan, CLUSTER)
    assert stats == plans.PlanStats(
        partitions=3, unchanged=1, replica_moves=3, leader_changes=2, brokers=(
            plans.BrokerLoad(1, replicas_before=3, replicas_after=2, leaders_before=1,
                             leaders_after=0),
            plans.BrokerLoad(2, replicas_before=2, replicas_after=1, leaders_before=1,
                             leaders_after=1),
            plans.BrokerLoad(3, replicas_before=2, replicas_after=2, leaders_before=1,
                             leaders_after=1),
            plans.BrokerLoad(4, replicas_before=1, replicas_after=3, leaders_before=1,
                             leaders_after=2),
            plans.BrokerLoad(5, 0, 0, 0, 0),
        ), lower_bound=1, worst_topic_spread_before=2, worst_topic_spread_after=2,
        worst_topic="a")


def test_plan_stats_lists_unregistered_brokers_holding_replicas() -> None:
    snapshot = ClusterSnapshot(brokers={1: Broker(1)}, topics={"a": {0: (7, 1)}})
    stats = plans.plan_stats(ReassignmentPlan((PartitionMove("a", 0, (1,)),)), snapshot)
    assert stats.brokers == (plans.BrokerLoad(1, 1, 1, 0, 1), plans.BrokerLoad(7, 1, 0, 1, 0))
    assert (stats.replica_moves, stats.leader_changes) == (0, 1)


@settings(max_examples=100)
@given(data=st.data())
def test_plan_stats_after_equals_the_applied_cluster(data: st.DataObject) -> None:
    replicas = st.lists(st.integers(1, 5), min_size=1, max_size=3, unique=True).map(tuple)
    topics = data.draw(st.dictionaries(st.sampled_from("abc"), st.dictionaries(
        st.integers(0, 4), replicas, min_size=1), min_size=1))
    snapshot = ClusterSnapshot({b: Broker(b) for b in range(1, 6)}, topics)
    tps = sorted(TopicPartition(t, p) for t, parts in topics.items() for p in parts)
    chosen = data.draw(st.lists(st.sampled_from(tps), unique=True))
    plan = ReassignmentPlan(tuple(sorted(PartitionMove(tp.topic, tp.partition, data.draw(replicas))
                                         for tp in chosen)))
    stats = plans.plan_stats(plan, snapshot)
    fresh = plans.plan_stats(ReassignmentPlan(()), applied(snapshot, plan))
    assert [(b.broker, b.replicas_after, b.leaders_after) for b in stats.brokers] == \
        [(b.broker, b.replicas_before, b.leaders_before) for b in fresh.brokers]
    assert stats.unchanged == plans.changed_moves(plan, snapshot)[1]


# --- plans built from the cluster --------------------------------------------------------------


def test_election_plan_for_topics_or_everything() -> None:
    assert plans.election_plan_for(CLUSTER, ["b", "a", "b"]) == ElectionPlan((
        TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)))
    assert len(plans.election_plan_for(CLUSTER, None).partitions) == 4
    with pytest.raises(InvalidInput, match="unknown topic\\(s\\) not in the cluster: x, y"):
        plans.election_plan_for(CLUSTER, ["a", "y", "x"])


def test_deletion_plan_for() -> None:
    assert plans.deletion_plan_for(["foo", "bar"]) == DeletionPlan(("bar", "foo"))
    with pytest.raises(InvalidInput, match=r"^topic\(s\) given more than once: foo$"):
        plans.deletion_plan_for(["foo", "bar", "foo"])  # as --brokers 1,1 is refused
    with pytest.raises(InvalidInput, match=r'^illegal topic name "a b": Kafka allows only'):
        plans.deletion_plan_for(["ok", "a b"])
    with pytest.raises(InvalidInput, match=r"^2 illegal topic names, the first: topic name is "
                                           r"empty$") as raised:
        plans.deletion_plan_for(["", ".."])
    assert raised.value.details == ("topic name is empty", 'topic name ".." is not allowed by Kafka')
    with pytest.raises(InvalidInput, match="no topics to delete"):
        plans.deletion_plan_for([])
