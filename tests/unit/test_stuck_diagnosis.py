"""Reassignments that cannot finish, named with their cause and repair."""

from __future__ import annotations

from kadmin.model import (
    Broker,
    ClusterSnapshot,
    PartitionMove,
    PartitionState,
    Reassignment,
    TopicPartition,
)
from kadmin.stuck import CANCEL, REPAIR_STALE, Request, diagnose, is_stale

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def cluster(brokers: range = range(1, 7)) -> ClusterSnapshot:
    return ClusterSnapshot(
        brokers={b: Broker(b) for b in brokers},
        topics={"t": {0: (6, 2, 3, 1), 1: (2, 3, 4)}},
        states={"t": {0: PartitionState(1, (1, 2, 3)), 1: PartitionState(2, (2, 3, 4))}},
        reassigning={"t": {0: Reassignment((6, 2, 3), (2, 3, 1))}})


def test_a_target_on_a_dead_broker_is_stuck_at_once() -> None:
    found = diagnose(cluster(range(1, 6)), None)
    assert [(s.tp, s.repair) for s in found] == [(T0, CANCEL)]
    assert str(found[0]) == ("t-0: stuck: target replica(s) [6] on broker(s) not registered in "
                             "/brokers/ids: it cannot finish until they are back (repair: "
                             "kadmin reassign --cancel)")


def test_a_lagging_target_is_stuck_only_late_and_while_others_finish() -> None:
    request = Request((PartitionMove("t", 0, (6, 2, 3)),), age=900.0, shrunk=True)
    found = diagnose(cluster(), request, stuck_after=600)
    assert [s.tp for s in found] == [T0] and "[6] not in the ISR [1, 2, 3] 15 min" in found[0].cause
    assert diagnose(cluster(), request, stuck_after=1200) == []  # not late yet
    young = Request(request.moves, age=900.0, shrunk=False)
    assert diagnose(cluster(), young, stuck_after=600) == []  # nothing finished: maybe slow


def test_a_znode_whose_entries_are_all_done_is_stale() -> None:
    done = ClusterSnapshot(brokers={b: Broker(b) for b in range(1, 7)},
                           topics={"t": {0: (6, 2, 3), 1: (2, 3, 4)}},
                           states={"t": {0: PartitionState(6, (6, 2, 3)),
                                         1: PartitionState(2, (2, 3, 4))}})
    request = Request((PartitionMove("t", 0, (6, 2, 3)), PartitionMove("t", 1, (2, 3, 4))),
                      age=5.0, shrunk=False)
    assert is_stale(done, request)
    (found,) = diagnose(done, request)
    assert found.tp is None and found.repair == REPAIR_STALE
    assert str(found).startswith("/admin/reassign_partitions: stuck: all 2 partition(s)")

    lagging = ClusterSnapshot(done.brokers, done.topics,
                              states={"t": {0: PartitionState(6, (2, 3)),
                                            1: PartitionState(2, (2, 3, 4))}})
    assert not is_stale(lagging, request)  # the ISR is not complete: the controller may act
    assert not is_stale(cluster(), request)
