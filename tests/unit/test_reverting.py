"""Which partitions a cancel puts back, onto which replicas, and which it must leave moving."""

from __future__ import annotations

from kadmin.kafka_version import KafkaVersion
from kadmin.model import PartitionState, TopicPartition
from kadmin.reverting import Partition, Step, plan_cancel, release_evidence

V23, V28 = KafkaVersion(2, 3), KafkaVersion(2, 8)
TP = TopicPartition("t", 0)
LIVE = {1, 2, 3, 4, 5, 6}


def state(*isr: int) -> PartitionState:
    return PartitionState(isr[0], isr)


def test_2_4_takes_the_originals_from_the_topic_znode_in_the_recorded_order() -> None:
    moving = Partition(TP, (6, 2, 3, 1), (6,), (1,), (6, 2, 3), (1, 2, 3), state(1, 2, 3))
    plan = plan_cancel([moving], LIVE, V28, admin_znode=True)
    assert [(r.original, r.recorded) for r in plan.reverts] == [((1, 2, 3), True)]
    assert plan.steps == (Step.DELETE_ADMIN_ZNODE, Step.SUBMIT_ORIGINALS, Step.WAIT,
                          Step.CLEAR_THROTTLES)

    unrecorded = Partition(TP, (6, 2, 3, 1), (6,), (1,), None, None, state(1, 2, 3))
    plan = plan_cancel([unrecorded], LIVE, V28, admin_znode=False)
    assert [(r.original, r.recorded) for r in plan.reverts] == [((2, 3, 1), False)]


def test_before_2_4_needs_a_record_and_moves_the_controller() -> None:
    union = Partition(TP, (6, 2, 3, 1), None, None, (6, 2, 3), (1, 2, 3), state(1, 2, 3))
    plan = plan_cancel([union], LIVE, V23, admin_znode=True)
    assert [r.original for r in plan.reverts] == [(1, 2, 3)]
    assert Step.MOVE_CONTROLLER in plan.steps

    unknown = Partition(TP, (6, 2, 3, 1), None, None, (6, 2, 3), None, state(1, 2, 3))
    plan = plan_cancel([unknown], LIVE, V23, admin_znode=True)
    assert not plan.reverts and Step.MOVE_CONTROLLER not in plan.steps
    assert "not in ZooKeeper" in plan.kept[0].reason

    elsewhere = Partition(TP, (6, 2, 3, 4), None, None, (6, 2, 3), (1, 2, 3), state(2, 3, 4))
    assert "not among its replicas" in plan_cancel([elsewhere], LIVE, V23, False).kept[0].reason


def test_a_revert_onto_a_dead_or_lagging_original_is_kept_moving() -> None:
    moving = Partition(TP, (6, 2, 3, 1), (6,), (1,), None, (1, 2, 3), state(2, 3))
    assert plan_cancel([moving], LIVE, V28, False).kept[0].reason == (
        "original replica(s) [1] not in the ISR [2, 3]")
    assert plan_cancel([moving], LIVE - {2}, V28, False).kept[0].reason == (
        "original replica(s) [2] not registered in /brokers/ids")
    assert str(plan_cancel([moving], LIVE - {2}, V28, False).kept[0]).startswith(
        "t-0: not reverted: ")


def test_settled_and_finished_partitions_are_left_alone() -> None:
    done = Partition(TP, (6, 2, 3), (), (), (6, 2, 3), (1, 2, 3), state(6, 2, 3))
    settled_v1 = Partition(TP, (1, 2, 3), None, None, None, (1, 2, 3), state(1, 2, 3))
    plan = plan_cancel([done, settled_v1], LIVE, V28, admin_znode=False)
    assert plan.reverts == plan.kept == ()
    assert plan.steps == (Step.CLEAR_THROTTLES,)


def test_the_release_is_read_from_zookeeper_or_not_guessed() -> None:
    union = Partition(TP, (6, 2, 3, 1), None, None, (6, 2, 3), None, None)
    assert release_evidence({"t": 2}, [])[0] == KafkaVersion(2, 4)
    found, why = release_evidence({"t": 1}, [union])
    assert found == KafkaVersion(2, 3) and "version 1 topic znode" in why
    not_started = Partition(TP, (1, 2, 3), None, None, (6, 2, 3), None, None)
    assert release_evidence({"t": 1}, [not_started]) == (
        None, "no topic znode shows a move in flight")
