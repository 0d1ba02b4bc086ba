"""The sandbox against a real ZooKeeper: the snapshot as loaded, and the simulated controller
doing to the admin znodes what Kafka's controller does (docs/controller.md).

The test's own client (``zk``) plays kadmin or the operator; the controller runs on a session of
its own, as a real controller would. Assertions are on znode contents.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NoNodeError
from kazoo.recipe.watchers import DataWatch
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from kadmin.embedded import EmbeddedZooKeeper, is_serving
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    OperationFailed,
    PartitionMove,
    PartitionState,
    Reassignment,
    TopicPartition,
)
from kadmin.sandbox import (
    ManualClock,
    Sandbox,
    SandboxSpec,
    SimulatedController,
    controller_of,
    load_cluster,
    read_events,
)
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import codec, paths, reader
from tests.helpers import KadminProcesses, eventually

Session = Callable[[str], AbstractContextManager[KazooClient]]
"""The conftest's ``kazoo_session`` fixture: opens another plain kazoo session."""

pytestmark = pytest.mark.zk

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, host=f"kafka-{b}", port=9092, rack=f"r{b % 3}") for b in range(1, 7)},
    topics={
        "orders": {0: (1, 2, 3), 1: (2, 3, 4), 2: (3, 4, 5), 3: (4, 5, 6)},
        "events": {0: (5, 6, 1), 1: (6, 1, 2)},
    },
    states={"orders": {
        0: PartitionState(leader=2, isr=(1, 2, 3), leader_epoch=7, controller_epoch=3),
        1: PartitionState(leader=3, isr=(3, 4), leader_epoch=2, controller_epoch=3),
    }},
    controller=1,
    controller_epoch=3,
)
"""orders-0 is led by its second replica (an election repairs that); orders-1's preferred
replica 2 is out of the ISR. Partitions without a state start led by their first replica."""

def topic_doc(zk: KazooClient, topic: str) -> dict[str, Any]:
    return json.loads(zk.get(paths.topic(topic))[0])


def state(zk: KazooClient, topic: str, partition: int) -> PartitionState:
    return codec.decode_state(zk.get(paths.partition_state(topic, partition))[0])


def reassigning(zk: KazooClient) -> list[PartitionMove] | None:
    try:
        return list(codec.decode_reassignment(zk.get(paths.REASSIGN_PARTITIONS)[0]))
    except NoNodeError:
        return None


def submit(zk: KazooClient, *moves: PartitionMove) -> None:
    zk.create(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(moves))


def epoch(zk: KazooClient) -> int:
    return codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0])


def kinds(controller: SimulatedController, kind: str) -> list[dict[str, Any]]:
    return [e.detail for e in controller.events if e.kind == kind]


@contextmanager
def first_handling_cut_off(zk: KazooClient, controller: SimulatedController,
                           caplog: pytest.LogCaptureFixture, submitted: str) -> Iterator[None]:
    """The controller's first handling of the request made in the block fails half-way: it
    reads the request (and records ``submitted``), then cannot list /admin/delete_topics. The
    queue is readable again once that failure is logged, so the next attempt can succeed."""
    zk.add_auth("digest", "operator:secret")
    zk.set_acls(paths.DELETE_TOPICS, [make_digest_acl("operator", "secret", all=True)])
    yield
    seen = eventually(lambda: [e for e in controller.events if e.kind == submitted],
                      "the request read")[0]
    eventually(lambda: any(r.created >= seen.at and r.exc_info
                           and isinstance(r.exc_info[1], NoAuthError) for r in caplog.records),
               "the handling cut off after the request was read")
    zk.set_acls(paths.DELETE_TOPICS, OPEN_ACL_UNSAFE)


@pytest.fixture
def controller_session(zk_connect: str, kazoo_session: Session) -> Iterator[KazooClient]:
    """The controller's (and the brokers') own session."""
    with kazoo_session(zk_connect) as client:
        yield client


@pytest.fixture
def cluster(controller_session: KazooClient) -> Iterator[Callable[..., SimulatedController]]:
    """Loads a snapshot (CLUSTER by default) and starts its controller (SimulatedController's
    options)."""
    started: list[SimulatedController] = []

    def start(snapshot: ClusterSnapshot = CLUSTER, **options: Any) -> SimulatedController:
        load_cluster(controller_session, snapshot)
        controller = SimulatedController(controller_session,
                                         controller_id=controller_of(snapshot), **options)
        started.append(controller.start())
        return controller

    yield start
    for controller in started:
        controller.stop()


# --- loading -----------------------------------------------------------------------------------


def test_load_writes_the_cluster_as_kafka_does(zk: KazooClient,
                                               controller_session: KazooClient) -> None:
    load_cluster(controller_session, CLUSTER)

    assert sorted(zk.get_children(paths.BROKER_IDS), key=int) == ["1", "2", "3", "4", "5", "6"]
    data, stat = zk.get(paths.broker(4))
    assert stat.ephemeralOwner == controller_session.client_id[0]
    assert codec.decode_broker(4, data) == CLUSTER.brokers[4]
    assert json.loads(data)["version"] == 5
    assert topic_doc(zk, "orders") == {
        "version": 2,
        "partitions": {"0": [1, 2, 3], "1": [2, 3, 4], "2": [3, 4, 5], "3": [4, 5, 6]},
        "adding_replicas": {}, "removing_replicas": {}}
    assert sorted(zk.get_children(paths.partitions("orders"))) == ["0", "1", "2", "3"]
    assert state(zk, "orders", 0) == CLUSTER.states["orders"][0]
    assert json.loads(zk.get(paths.partition_state("events", 1))[0]) == {
        "controller_epoch": 3, "leader": 6, "version": 1, "leader_epoch": 0, "isr": [6, 1, 2]}
    controller_data, controller_stat = zk.get(paths.CONTROLLER)
    assert codec.decode_controller(controller_data) == 1
    assert controller_stat.ephemeralOwner == controller_session.client_id[0]
    assert zk.get(paths.CONTROLLER_EPOCH)[0] == b"3"
    assert json.loads(zk.get(paths.topic_config("events"))[0]) == {"version": 1, "config": {}}
    assert zk.get_children(paths.ADMIN) == ["delete_topics"]
    assert zk.get_children(paths.DELETE_TOPICS) == []


def test_load_keeps_older_znode_versions(zk: KazooClient, controller_session: KazooClient) -> None:
    load_cluster(controller_session, CLUSTER, broker_version=1, topic_version=1)

    assert json.loads(zk.get(paths.broker(2))[0]).keys() == {
        "version", "host", "port", "jmx_port", "timestamp"}
    assert topic_doc(zk, "events") == {"version": 1, "partitions": {"0": [5, 6, 1],
                                                                    "1": [6, 1, 2]}}


def test_load_keeps_partitions_in_flight_as_kafka_records_them(
        zk: KazooClient, controller_session: KazooClient) -> None:
    """A snapshot taken mid-move: the topic znode gets the full replica set with its adding and
    removing replicas (Kafka 2.4+), so kadmin reads the move back; a partition without a state
    is led by its original leader with only the original replicas in sync."""
    moving = dataclasses.replace(
        CLUSTER, topics={**CLUSTER.topics, "events": {0: (1, 2, 5, 6), 1: (6, 1, 2)}},
        reassigning={"events": {0: Reassignment(target=(1, 2, 5), original=(1, 5, 6))}})
    load_cluster(controller_session, moving)

    assert topic_doc(zk, "events") == {
        "version": 2, "partitions": {"0": [1, 2, 5, 6], "1": [6, 1, 2]},
        "adding_replicas": {"0": [2]}, "removing_replicas": {"0": [6]}}
    assert state(zk, "events", 0) == PartitionState(leader=1, isr=(1, 5, 6), controller_epoch=3)
    assert state(zk, "events", 1) == PartitionState(leader=6, isr=(6, 1, 2), controller_epoch=3)
    live = reader.read_cluster(zk).snapshot
    assert live.reassigning == moving.reassigning
    assert live.topics == moving.topics


def test_load_refuses_a_chroot_that_is_not_empty(controller_session: KazooClient) -> None:
    load_cluster(controller_session, CLUSTER)

    with pytest.raises(OperationFailed, match=r"/brokers/ids/1: NodeExistsError.*empty chroot"):
        load_cluster(controller_session, CLUSTER)


# --- reassignment ------------------------------------------------------------------------------


def test_reassignment_completes_partition_by_partition(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.2, parallelism=1)
    sizes: list[int | None] = []
    DataWatch(zk, paths.REASSIGN_PARTITIONS, lambda data, _stat: sizes.append(
        None if data is None else len(codec.decode_reassignment(data))))

    submit(zk, PartitionMove("orders", 0, (4, 5, 6)),   # leader 2 leaves: 4 takes over
           PartitionMove("orders", 2, (5, 3, 6)),        # leader 3 stays
           PartitionMove("events", 1, (6, 1, 3)))

    eventually(lambda: sizes[-1] is None and len(sizes) > 1, "the znode deleted")
    # it only shrank, then disappeared (a watch re-registers after each change, so on a busy
    # machine it may miss a step; the order of completion is asserted on the events below)
    seen = [n for n in sizes if n is not None]
    assert seen and seen == sorted(set(seen), reverse=True) and set(seen) <= {1, 2, 3}, sizes
    assert topic_doc(zk, "orders") == {
        "version": 2,
        "partitions": {"0": [4, 5, 6], "1": [2, 3, 4], "2": [5, 3, 6], "3": [4, 5, 6]},
        "adding_replicas": {}, "removing_replicas": {}}
    assert topic_doc(zk, "events")["partitions"] == {"0": [5, 6, 1], "1": [6, 1, 3]}
    assert state(zk, "orders", 0) == PartitionState(leader=4, isr=(4, 5, 6), leader_epoch=8,
                                                    controller_epoch=3)
    assert state(zk, "orders", 2) == PartitionState(leader=3, isr=(5, 3, 6), leader_epoch=1,
                                                    controller_epoch=3)
    assert [(e["topic"], e["partition"], e["leader"])
            for e in kinds(controller, "partition_reassigned")] == [
        ("orders", 0, 4), ("orders", 2, 3), ("events", 1, 6)]


def test_reassignment_in_flight_shows_kafkas_replica_sets(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    cluster(latency=0.05, stuck_brokers=[6])
    submit(zk, PartitionMove("orders", 1, (6, 3, 2)))

    # RS = TRS + (ORS - TRS), AR = TRS - ORS, RR = ORS - TRS (Kafka 2.4+)
    doc = eventually(lambda: (d := topic_doc(zk, "orders"))["adding_replicas"] and d,
                     "the move started")
    assert doc["partitions"]["1"] == [6, 3, 2, 4]
    assert doc["adding_replicas"] == {"1": [6]}
    assert doc["removing_replicas"] == {"1": [4]}


def test_reorders_and_unchanged_targets_complete_at_once(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=60.0, stuck_brokers=[1, 2, 3, 4, 5, 6])
    submit(zk, PartitionMove("orders", 2, (5, 4, 3)), PartitionMove("orders", 3, (4, 5, 6)))

    eventually(lambda: reassigning(zk) is None, "the znode deleted")
    assert topic_doc(zk, "orders")["partitions"]["2"] == [5, 4, 3]  # new preferred replica
    assert state(zk, "orders", 2).leader == 3  # leadership moves only by election
    assert len(kinds(controller, "partition_reassigned")) == 2


def test_unknown_partitions_are_dropped_from_the_znode(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05, stuck_brokers=[6])
    stuck = PartitionMove("orders", 1, (2, 3, 6))  # keeps the znode alive to be looked at
    submit(zk, PartitionMove("nope", 0, (1, 2)), PartitionMove("orders", 9, (1, 2, 3)), stuck)

    eventually(lambda: reassigning(zk) == [stuck], "unknown partitions dropped")
    assert [(e["topic"], e["partition"], e["reason"])
            for e in kinds(controller, "partition_dropped")] == [
        ("nope", 0, "unknown topic or partition"), ("orders", 9, "unknown topic or partition")]


def test_partitions_of_a_topic_queued_for_deletion_are_dropped(
        zk: KazooClient, controller_session: KazooClient,
        cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05)
    controller.kill_broker(5)  # events has a replica on 5: its deletion waits for it
    zk.create(paths.delete_topic("events"))
    submit(zk, PartitionMove("events", 0, (1, 2, 3)))

    eventually(lambda: reassigning(zk) is None, "the entry dropped")
    assert kinds(controller, "partition_dropped") == [
        {"topic": "events", "partition": 0, "reason": "topic queued for deletion"}]
    assert topic_doc(zk, "events")["partitions"]["0"] == [5, 6, 1]
    assert zk.get_children(paths.DELETE_TOPICS) == ["events"]


def test_replicas_on_a_dead_broker_wait_until_it_starts(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05)
    controller.kill_broker(6)
    waiting = PartitionMove("orders", 0, (6, 2, 3))
    submit(zk, waiting, PartitionMove("orders", 1, (2, 3, 5)))

    eventually(lambda: reassigning(zk) == [waiting], "the live move done")
    controller.catch_up()  # looked again, past the latency: still waiting
    assert reassigning(zk) == [waiting]
    assert topic_doc(zk, "orders")["adding_replicas"] == {"0": [6]}

    controller.start_broker(CLUSTER.brokers[6])

    eventually(lambda: reassigning(zk) is None, "the znode deleted")
    assert topic_doc(zk, "orders")["partitions"]["0"] == [6, 2, 3]
    assert state(zk, "orders", 0) == PartitionState(leader=2, isr=(6, 2, 3), leader_epoch=8,
                                                    controller_epoch=3)


def test_a_stuck_broker_never_joins_the_isr(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05, stuck_brokers=[6])
    stuck = PartitionMove("orders", 1, (6, 3, 4))
    submit(zk, PartitionMove("orders", 0, (1, 2, 4)), stuck)

    eventually(lambda: reassigning(zk) == [stuck], "the other move done")
    controller.catch_up()  # looked again, past the latency: still in flight
    assert reassigning(zk) == [stuck]
    assert topic_doc(zk, "orders")["partitions"]["1"] == [6, 3, 4, 2]
    assert state(zk, "orders", 1).isr == (3, 4)


@pytest.mark.parametrize("replicas", [(), (4, 4, 5)], ids=["empty", "duplicate"])
def test_empty_or_duplicate_replicas_leave_the_znode_forever(
        zk: KazooClient, cluster: Callable[..., SimulatedController],
        replicas: tuple[int, ...]) -> None:
    controller = cluster(latency=0.05)
    bad = PartitionMove("orders", 2, replicas)
    submit(zk, PartitionMove("orders", 3, (6, 5, 4)), bad)

    eventually(lambda: reassigning(zk) == [bad], "the valid move done")
    controller.catch_up()
    assert reassigning(zk) == [bad]  # why kadmin validates before it submits


def test_a_rewrite_of_the_znode_is_not_a_new_request(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    """Kafka 2.4+ acts on creation only: entries someone adds to a live znode are ignored."""
    controller = cluster(latency=0.05, stuck_brokers=[6])
    stuck = PartitionMove("orders", 1, (6, 3, 4))
    submit(zk, stuck)
    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"], "the move started")
    late = PartitionMove("orders", 3, (1, 2, 3))
    zk.set(paths.REASSIGN_PARTITIONS, codec.encode_reassignment([stuck, late]))

    controller.catch_up()  # has read the rewritten znode
    assert reassigning(zk) == [stuck, late]
    assert topic_doc(zk, "orders")["partitions"]["3"] == [4, 5, 6]


def test_a_reassignment_cut_off_half_way_is_handled_again(
        zk: KazooClient, cluster: Callable[..., SimulatedController],
        caplog: pytest.LogCaptureFixture) -> None:
    """A request counts as handled only once its handling is complete: one cut off after the
    znode was read (a ZooKeeper restart, any error) is handled again on the next read, not
    skipped as already seen while its znode stays forever."""
    controller = cluster(latency=0.05)

    with first_handling_cut_off(zk, controller, caplog, "reassign_submitted"):
        submit(zk, PartitionMove("orders", 3, (1, 2, 3)), PartitionMove("nope", 0, (1, 2)))

    eventually(lambda: reassigning(zk) is None, "the znode deleted")
    assert topic_doc(zk, "orders")["partitions"]["3"] == [1, 2, 3]
    assert [e.kind for e in controller.events] == [
        "reassign_submitted", "partition_dropped", "partition_reassigned"]


def test_parallelism_bounds_the_partitions_in_flight(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05, parallelism=2, stuck_brokers=[6])
    moves = [PartitionMove("orders", p, (6, 1, 2)) for p in range(4)]
    submit(zk, *moves)

    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"], "moves started")
    controller.catch_up()
    assert topic_doc(zk, "orders")["adding_replicas"].keys() == {"0", "1"}  # in znode order


# --- preferred replica election ----------------------------------------------------------------


def test_election_makes_live_in_sync_preferred_replicas_leader(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    snapshot = ClusterSnapshot(
        brokers=CLUSTER.brokers, topics=CLUSTER.topics, controller=1, controller_epoch=3,
        states={"orders": {
            0: PartitionState(leader=2, isr=(1, 2, 3), leader_epoch=7),  # elected
            1: PartitionState(leader=3, isr=(3, 4), leader_epoch=2),  # 2 not in the ISR
            2: PartitionState(leader=4, isr=(3, 4, 5), leader_epoch=1),  # 3 dead
            # 3: led by 4 already
        }})
    controller = cluster(snapshot, latency=0.05)
    controller.kill_broker(3)
    before = {p: state(zk, "orders", p) for p in range(4)}

    zk.create(paths.PREFERRED_REPLICA_ELECTION, codec.encode_election([
        TopicPartition("orders", p) for p in range(4)] + [TopicPartition("nope", 0)]))

    eventually(lambda: not zk.exists(paths.PREFERRED_REPLICA_ELECTION), "the znode deleted")
    assert state(zk, "orders", 0) == PartitionState(leader=1, isr=(1, 2, 3), leader_epoch=8,
                                                    controller_epoch=3)
    assert [state(zk, "orders", p) for p in (1, 2, 3)] == [before[p] for p in (1, 2, 3)]
    assert kinds(controller, "leader_elected") == [
        {"topic": "orders", "partition": 0, "leader": 1, "leader_epoch": 8}]
    assert [(e["topic"], e["partition"], e["reason"])
            for e in kinds(controller, "election_skipped")] == [
        ("orders", 1, "preferred replica 2 is not in the ISR"),
        ("orders", 2, "preferred replica 3 is not alive"),
        ("orders", 3, "preferred replica is already leader"),
        ("nope", 0, "unknown partition")]


def test_an_election_cut_off_half_way_is_held_again(
        zk: KazooClient, cluster: Callable[..., SimulatedController],
        caplog: pytest.LogCaptureFixture) -> None:
    controller = cluster(latency=0.05)

    with first_handling_cut_off(zk, controller, caplog, "election_submitted"):
        zk.create(paths.PREFERRED_REPLICA_ELECTION,
                  codec.encode_election([TopicPartition("orders", 0)]))

    eventually(lambda: not zk.exists(paths.PREFERRED_REPLICA_ELECTION), "the znode deleted")
    assert state(zk, "orders", 0) == PartitionState(leader=1, isr=(1, 2, 3), leader_epoch=8,
                                                    controller_epoch=3)
    assert kinds(controller, "leader_elected") == [
        {"topic": "orders", "partition": 0, "leader": 1, "leader_epoch": 8}]


# --- topic deletion ----------------------------------------------------------------------------


def test_deletion_removes_topic_config_and_marker(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05)
    zk.create(paths.delete_topic("events"))
    zk.create(paths.delete_topic("ghost"))

    eventually(lambda: zk.get_children(paths.DELETE_TOPICS) == [], "markers removed")
    assert zk.get_children(paths.BROKER_TOPICS) == ["orders"]
    assert zk.get_children(paths.CONFIG_TOPICS) == ["orders"]
    assert kinds(controller, "topic_deleted") == [{"topic": "events"}]
    assert kinds(controller, "deletion_marker_removed") == [
        {"topic": "ghost", "reason": "unknown topic"}]


def test_deletion_waits_for_dead_replicas_and_reassignments(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    clock = ManualClock()  # the deletions fall due when the test says, however busy we are
    controller = cluster(latency=0.05, stuck_brokers=[6], clock=clock)
    controller.kill_broker(5)
    submit(zk, PartitionMove("orders", 0, (6, 2, 3)))
    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"], "the move started")
    zk.create(paths.delete_topic("orders"))
    zk.create(paths.delete_topic("events"))

    controller.catch_up()  # the markers seen
    clock.advance(1.0)  # twenty times the latency
    controller.catch_up()  # looked again once both fell due
    assert sorted(zk.get_children(paths.DELETE_TOPICS)) == ["events", "orders"]
    assert sorted(zk.get_children(paths.BROKER_TOPICS)) == ["events", "orders"]

    controller.start_broker(CLUSTER.brokers[5])
    eventually(lambda: zk.get_children(paths.DELETE_TOPICS) == ["orders"], "events deleted")
    assert zk.get_children(paths.BROKER_TOPICS) == ["orders"]


def test_deletion_disabled_removes_markers_only(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05, delete_topic_enable=False)
    zk.create(paths.delete_topic("events"))

    eventually(lambda: zk.get_children(paths.DELETE_TOPICS) == [], "marker removed")
    assert sorted(zk.get_children(paths.BROKER_TOPICS)) == ["events", "orders"]
    assert kinds(controller, "deletion_marker_removed") == [
        {"topic": "events", "reason": "delete.topic.enable=false"}]


# --- failover ----------------------------------------------------------------------------------


def test_failover_resumes_the_reassignment_and_bumps_the_epoch(
        zk: KazooClient, cluster: Callable[..., SimulatedController], tmp_path: Path) -> None:
    record = tmp_path / "controller.jsonl"
    clock = ManualClock()  # the move cannot complete before the failover, however busy we are
    controller = cluster(latency=1.0, record_path=record, clock=clock)
    submit(zk, PartitionMove("orders", 0, (4, 5, 6)))
    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"], "the move started")

    controller.fail_over(2, gap=0.3)

    assert codec.decode_controller(zk.get(paths.CONTROLLER)[0]) == 2
    assert epoch(zk) == 4
    eventually(lambda: clock.advance(1.0) or reassigning(zk) is None, "the znode deleted")
    assert topic_doc(zk, "orders")["partitions"]["0"] == [4, 5, 6]
    assert state(zk, "orders", 0) == PartitionState(leader=4, isr=(4, 5, 6), leader_epoch=8,
                                                    controller_epoch=4)
    assert [e.kind for e in read_events(record)] == [e.kind for e in controller.events] == [
        "reassign_submitted", "failover", "failover", "partition_reassigned"]
    assert kinds(controller, "failover") == [{"controller": None, "epoch": 3},
                                             {"controller": 2, "epoch": 4}]


def test_no_controller_no_action_until_one_is_elected(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=0.05)
    controller.resign()
    assert not zk.exists(paths.CONTROLLER)
    submit(zk, PartitionMove("orders", 3, (1, 2, 3)))
    zk.create(paths.delete_topic("events"))

    controller.catch_up()  # woken by both, and did nothing
    assert reassigning(zk) == [PartitionMove("orders", 3, (1, 2, 3))]
    assert zk.get_children(paths.DELETE_TOPICS) == ["events"]

    controller.elect(5)
    eventually(lambda: reassigning(zk) is None and not zk.get_children(paths.DELETE_TOPICS),
               "work done by the new controller")
    assert codec.decode_controller(zk.get(paths.CONTROLLER)[0]) == 5
    assert epoch(zk) == 4
    assert topic_doc(zk, "orders")["partitions"]["3"] == [1, 2, 3]


def test_a_deleted_controller_znode_is_re_created_with_a_new_epoch(
        zk: KazooClient, cluster: Callable[..., SimulatedController]) -> None:
    """``rmr /controller``: the operator's way to force a controller election."""
    cluster(latency=0.05)

    zk.delete(paths.CONTROLLER)

    eventually(lambda: zk.exists(paths.CONTROLLER), "a controller again")
    assert codec.decode_controller(zk.get(paths.CONTROLLER)[0]) == 1
    assert epoch(zk) == 4


def test_reassignment_survives_a_zookeeper_restart(own_zk_server: EmbeddedZooKeeper,
                                                   kazoo_session: Session) -> None:
    with (kazoo_session(own_zk_server.connect_string) as kadmin_session,
          kazoo_session(own_zk_server.connect_string) as controller_session):
        load_cluster(controller_session, CLUSTER)
        with SimulatedController(controller_session, controller_id=1, latency=1.0,
                                 parallelism=1) as controller:
            submit(kadmin_session, PartitionMove("orders", 0, (4, 5, 6)),
                   PartitionMove("orders", 1, (5, 6, 1)))
            eventually(lambda: topic_doc(kadmin_session, "orders")["adding_replicas"],
                       "the move started")

            own_zk_server.restart(down_for=1.0)

            eventually(lambda: reassigning(kadmin_session) is None, "the znode deleted", 90)
            assert topic_doc(kadmin_session, "orders")["partitions"] == {
                "0": [4, 5, 6], "1": [5, 6, 1], "2": [3, 4, 5], "3": [4, 5, 6]}
            assert epoch(kadmin_session) == 3  # the session survived: no new controller
            assert len(kinds(controller, "partition_reassigned")) == 2
            assert sorted(kadmin_session.get_children(paths.BROKER_IDS), key=int) == [
                "1", "2", "3", "4", "5", "6"]


def test_session_expiry_re_registers_brokers_and_re_elects(
        zk: KazooClient, zk_connect: str, controller_session: KazooClient,
        cluster: Callable[..., SimulatedController]) -> None:
    controller = cluster(latency=1.0)
    submit(zk, PartitionMove("orders", 0, (4, 5, 6)))
    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"], "the move started")
    expired_session = controller_session.client_id

    # closing a second client on the same session ends it: ZooKeeper's way to expire one
    twin = KazooClient(hosts=zk_connect, client_id=expired_session, timeout=30)
    twin.start(timeout=30)
    twin.stop()
    twin.close()

    eventually(lambda: controller_session.client_id != expired_session and epoch(zk) == 4,
               "a new session and a new controller epoch")
    eventually(lambda: len(zk.get_children(paths.BROKER_IDS)) == 6, "brokers re-registered")
    assert zk.exists(paths.CONTROLLER).ephemeralOwner == controller_session.client_id[0]
    eventually(lambda: reassigning(zk) is None, "the znode deleted")
    assert topic_doc(zk, "orders")["partitions"]["0"] == [4, 5, 6]
    assert kinds(controller, "failover") == [{"controller": 1, "epoch": 4}]


# --- the sandbox -------------------------------------------------------------------------------


def test_sandbox_in_a_chroot_of_an_existing_zookeeper(zk_connect: str, zk: KazooClient,
                                                      kazoo_session: Session) -> None:
    hosts, _, chroot = zk_connect.partition("/")
    with Sandbox(CLUSTER, zookeeper=hosts, chroot=f"/{chroot}/kafka", latency=0.05) as box:
        assert box.connect_string == f"{zk_connect}/kafka"
        assert box.controller_id == 1
        with kazoo_session(box.connect_string) as kadmin_session:
            submit(kadmin_session, PartitionMove("events", 0, (1, 2, 3)))
            eventually(lambda: reassigning(kadmin_session) is None, "the znode deleted")
            assert topic_doc(kadmin_session, "events")["partitions"]["0"] == [1, 2, 3]
    assert zk.get_children("/kafka/brokers/ids") == []  # the sandbox's session is closed
    assert not zk.exists("/kafka/controller")


def test_sandbox_runs_its_own_zookeeper_with_a_synthetic_cluster(kazoo_session: Session) -> None:
    spec = SandboxSpec(brokers=4, racks=2, topics=3, partitions=5, replication_factor=2)
    with Sandbox(spec.snapshot(), latency=0.01) as box:
        assert box.server is not None and box.server.running
        with kazoo_session(box.connect_string) as client:
            assert sorted(client.get_children(paths.BROKER_IDS)) == ["0", "1", "2", "3"]
            assert json.loads(client.get(paths.broker(3))[0])["rack"] == "r1"
            assert len(client.get_children(paths.BROKER_TOPICS)) == 3
            assert codec.decode_controller(client.get(paths.CONTROLLER)[0]) == box.controller_id
    assert not box.server.running


def _sandbox_command(kadmin_process: KadminProcesses
                     ) -> tuple[subprocess.Popen[str], str]:
    """``kadmin sandbox`` started, and its connect string once it has announced it."""
    command = kadmin_process("sandbox", "--port", "0", "--broker-count", "3", "--rack-count", "0",
                             "--topic-count", "2", "--partitions", "4")
    assert command.stdout is not None
    lines = [command.stdout.readline() for _ in range(3)]
    assert lines[0].startswith("sandbox: 3 broker(s), 2 topic(s), 8 partition(s)"), lines
    connect = lines[1].removeprefix("connect string: ").strip()
    assert lines[2].startswith(f"try: kadmin status -z {connect}")
    return command, connect


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:  # a process may end while we look
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_sandbox_command_serves_until_stopped_and_leaves_nothing(
        tmp_path: Path, kazoo_session: Session, stop: signal.Signals,
        kadmin_process: KadminProcesses) -> None:
    command, connect = _sandbox_command(kadmin_process)
    with kazoo_session(connect) as client:
        assert sorted(client.get_children(paths.BROKER_IDS)) == ["0", "1", "2"]
    command.send_signal(stop)
    rest, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert rest == "sandbox stopped\n"
    host, port = connect.rsplit(":", 1)
    assert not is_serving(host, int(port))
    assert list(tmp_path.iterdir()) == []  # the server's temporary folder is gone


def test_the_sandbox_command_fails_when_its_zookeeper_dies(
        tmp_path: Path, kadmin_process: KadminProcesses) -> None:
    command, _ = _sandbox_command(kadmin_process)
    (jvm,) = _children(command.pid)
    os.kill(jvm, signal.SIGKILL)
    rest, err = command.communicate(timeout=60)
    assert command.returncode == 1, err
    assert err.startswith("kadmin: error: the sandbox's ZooKeeper stopped unexpectedly"), err
    assert rest == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_sandbox_of_200k_partitions_loads_completely(kazoo_session: Session) -> None:
    # how long it takes is a benchmark's business (bench/bench_zk_read.py times start + load)
    snapshot = synthetic_cluster(brokers=12, topics=200, partitions=1000, replication_factor=3)
    with Sandbox(snapshot) as box, kazoo_session(box.connect_string) as client:
        topics = sorted(client.get_children(paths.BROKER_TOPICS))
        assert len(topics) == 200
        assert len(client.get_children(paths.partitions(topics[-1]))) == 1000
        assert state(client, topics[-1], 999) == snapshot.states[topics[-1]][999]


# --- a record on a full disk ---------------------------------------------------------------------


@contextmanager
def small_disk(folder: Path) -> Iterator[Path]:
    """A 4 KiB tmpfs mounted at ``folder`` (the test runs as root, as the suite does)."""
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_full_disk_stops_the_record_whole_and_the_controller_goes_on(
        zk: KazooClient, cluster: Callable[..., SimulatedController], tmp_path: Path) -> None:
    """The record fills the disk: recording stops once, saying why, the file ends with the last
    whole line, and the controller keeps acting (no traceback, no retried step)."""
    with small_disk(tmp_path / "disk") as disk:
        record = disk / "controller.jsonl"
        padding = b'{"kind":"padding"}\n'
        record.write_bytes(padding * (4000 // len(padding)))  # a line more fills the disk
        before = record.read_bytes()
        controller = cluster(latency=0.01, record_path=record)
        submit(zk, PartitionMove("orders", 0, (4, 5, 6)))
        eventually(lambda: reassigning(zk) is None, "the first move done")
        submit(zk, PartitionMove("orders", 1, (1, 5, 6)))
        eventually(lambda: reassigning(zk) is None, "the second move done")

        assert topic_doc(zk, "orders")["partitions"]["1"] == [1, 5, 6]
        failure = controller.record_failure
        assert failure is not None and str(record) in failure and "recording stopped" in failure
        kept = record.read_bytes()
        assert kept.startswith(before) and kept.endswith(b"\n")
        assert all(json.loads(line) for line in kept.splitlines())  # whole lines only
        assert [e.kind for e in controller.events].count("partition_reassigned") == 2
