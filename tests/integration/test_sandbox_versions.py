"""The sandbox's controller as Kafka 2.3 and 2.8 play a reassignment that goes wrong: what the
topic znode shows in flight, what a controller move recovers, what a new request for a moving
partition does, a target broker that dies, and a stale admin znode. Real ZooKeeper; assertions
on znode contents, waits on the controller's own steps (``catch_up``) or on the znodes."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from kadmin.kafka_version import KafkaVersion, parse_kafka_version
from kadmin.model import PartitionMove, PartitionState
from kadmin.sandbox import ManualClock, SimulatedController, controller_of, load_cluster
from kadmin.zk import codec, paths
from tests.helpers import KadminProcesses, eventually
from tests.integration.test_sandbox import (
    CLUSTER,
    Session,
    controller_session,  # noqa: F401  (a fixture used by `versioned`)
    reassigning,
    state,
    submit,
    topic_doc,
)

pytestmark = pytest.mark.zk

V23, V28 = parse_kafka_version("2.3"), parse_kafka_version("2.8")

Start = Callable[..., tuple[SimulatedController, ManualClock]]


@pytest.fixture
def versioned(controller_session: KazooClient) -> Iterator[Start]:  # noqa: F811
    """CLUSTER loaded as ``version`` writes its topic znodes, its controller started on a
    manual clock (moves take ``latency`` simulated seconds; nothing completes unless the test
    advances the clock)."""
    started: list[SimulatedController] = []

    def start(version: KafkaVersion, **options: Any) -> tuple[SimulatedController, ManualClock]:
        load_cluster(controller_session, CLUSTER, topic_version=version.topic_znode_version)
        clock = ManualClock()
        controller = SimulatedController(
            controller_session, controller_id=controller_of(CLUSTER), latency=1.0,
            clock=clock, kafka_version=version, **options)
        started.append(controller.start())
        return controller, clock

    yield start
    for controller in started:
        controller.stop()


def move_controller(zk: KazooClient, controller: SimulatedController) -> None:
    """``rmr /controller``: the brokers elect a controller again (here the same broker, with
    a new epoch and nothing in memory)."""
    before = codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0])
    zk.delete(paths.CONTROLLER)
    eventually(lambda: zk.exists(paths.CONTROLLER)
               and codec.decode_controller_epoch(zk.get(paths.CONTROLLER_EPOCH)[0]) > before,
               "a new controller elected")
    controller.catch_up()


def events(controller: SimulatedController, kind: str) -> list[dict[str, Any]]:
    return [e.detail for e in controller.events if e.kind == kind]


MOVING = PartitionMove("orders", 2, (3, 4, 6))   # from (3, 4, 5): 6 is added, 5 removed
HELD = PartitionMove("orders", 3, (4, 5, 1))     # from (4, 5, 6): 1 is added (stuck), 6 removed


def test_before_2_4_the_topic_znode_holds_the_union_and_nothing_more(
        zk: KazooClient, versioned: Start) -> None:
    versioned(V23)
    submit(zk, MOVING)

    eventually(lambda: topic_doc(zk, "orders")["partitions"]["2"] != [3, 4, 5], "the move started")
    doc = topic_doc(zk, "orders")
    assert doc == {"version": 1, "partitions": {
        "0": [1, 2, 3], "1": [2, 3, 4], "2": [3, 4, 6, 5], "3": [4, 5, 6]}}


def test_before_2_4_a_deleted_admin_znode_comes_back_from_the_controllers_memory(
        zk: KazooClient, versioned: Start) -> None:
    controller, clock = versioned(V23, stuck_brokers=[1])
    submit(zk, MOVING, HELD)
    eventually(lambda: topic_doc(zk, "orders")["partitions"]["3"] == [4, 5, 1, 6],
               "both moves started")

    zk.delete(paths.REASSIGN_PARTITIONS)
    clock.advance(1.0)  # MOVING completes; the controller writes what it still holds

    eventually(lambda: reassigning(zk) == [HELD], "the znode re-created from memory")
    assert topic_doc(zk, "orders")["partitions"]["2"] == [3, 4, 6]
    assert events(controller, "reassignment_rewritten")[0]["partitions"] == 1
    assert len(events(controller, "reassign_submitted")) == 1  # its own write is no request


def test_before_2_4_a_controller_move_forgets_the_move_and_the_originals_shrink_it_back(
        zk: KazooClient, versioned: Start) -> None:
    controller, clock = versioned(V23, stuck_brokers=[1])
    submit(zk, HELD)
    eventually(lambda: topic_doc(zk, "orders")["partitions"]["3"] == [4, 5, 1, 6],
               "the move started")

    zk.delete(paths.REASSIGN_PARTITIONS)
    move_controller(zk, controller)
    controller.start_broker(CLUSTER.brokers[1])  # even were it to catch up now: forgotten
    clock.advance(5.0)
    controller.catch_up()
    assert reassigning(zk) is None
    assert topic_doc(zk, "orders")["partitions"]["3"] == [4, 5, 1, 6]  # the union, for good

    submit(zk, PartitionMove("orders", 3, (4, 5, 6)))  # the originals, in their order

    eventually(lambda: reassigning(zk) is None, "the revert done")
    assert topic_doc(zk, "orders")["partitions"]["3"] == [4, 5, 6]
    assert state(zk, "orders", 3).isr == (4, 5, 6)


def started_then_dropped(zk: KazooClient, move: PartitionMove) -> None:
    """From 2.4: ``move`` submitted, begun (the topic znode lists replicas being added), and
    its /admin/reassign_partitions deleted under the controller."""
    submit(zk, move)
    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"], "the move started")
    zk.delete(paths.REASSIGN_PARTITIONS)


def test_from_2_4_a_controller_move_resumes_from_the_topic_znode(
        zk: KazooClient, versioned: Start) -> None:
    controller, clock = versioned(V28)
    started_then_dropped(zk, MOVING)
    move_controller(zk, controller)
    clock.advance(1.0)

    eventually(lambda: topic_doc(zk, "orders")["partitions"]["2"] == [3, 4, 6], "resumed")
    doc = topic_doc(zk, "orders")
    assert (doc["adding_replicas"], doc["removing_replicas"]) == ({}, {})
    assert reassigning(zk) is None  # never re-created
    assert state(zk, "orders", 2).isr == (3, 4, 6)


def test_from_2_4_the_originals_submitted_replace_the_move_in_flight(
        zk: KazooClient, versioned: Start) -> None:
    controller, _clock = versioned(V28, stuck_brokers=[1])
    started_then_dropped(zk, HELD)
    submit(zk, PartitionMove("orders", 3, (4, 5, 6)))

    eventually(lambda: reassigning(zk) is None, "the revert done")
    doc = topic_doc(zk, "orders")
    assert doc["partitions"]["3"] == [4, 5, 6]
    assert (doc["adding_replicas"], doc["removing_replicas"]) == ({}, {})
    assert events(controller, "reassignment_replaced") == [
        {"topic": "orders", "partition": 3, "replicas": [4, 5, 6]}]
    assert state(zk, "orders", 3).isr == (4, 5, 6)


def test_from_2_4_a_new_target_replaces_the_move_and_keeps_the_originals(
        zk: KazooClient, versioned: Start) -> None:
    _controller, _clock = versioned(V28, stuck_brokers=[1])
    started_then_dropped(zk, HELD)
    submit(zk, PartitionMove("orders", 3, (4, 5, 2)))

    # full set = target + originals not in it; 1 is no longer wanted
    eventually(lambda: topic_doc(zk, "orders")["adding_replicas"] == {"3": [2]}, "re-targeted")
    doc = topic_doc(zk, "orders")
    assert doc["partitions"]["3"] == [4, 5, 2, 6]
    assert doc["removing_replicas"] == {"3": [6]}


@pytest.mark.parametrize("version", [V23, V28], ids=str)
def test_a_target_broker_that_dies_mid_move_holds_the_partition(
        zk: KazooClient, versioned: Start, version: KafkaVersion) -> None:
    controller, clock = versioned(version)
    submit(zk, MOVING)
    eventually(lambda: topic_doc(zk, "orders")["partitions"]["2"] == [3, 4, 6, 5],
               "the move started")

    controller.kill_broker(6)
    clock.advance(60.0)
    controller.catch_up()

    assert reassigning(zk) == [MOVING]
    assert topic_doc(zk, "orders")["partitions"]["2"] == [3, 4, 6, 5]
    assert state(zk, "orders", 2) == PartitionState(leader=3, isr=(3, 4, 5), controller_epoch=3)


def test_from_2_4_a_stale_admin_znode_blocks_until_deleted(
        zk: KazooClient, versioned: Start) -> None:
    controller, _clock = versioned(V28)
    done = [PartitionMove("orders", 0, (1, 2, 3)), PartitionMove("orders", 1, (2, 3, 4))]
    controller.leave_stale(done)

    controller.catch_up()
    assert reassigning(zk) == done  # at their targets, and the znode stays
    with pytest.raises(NodeExistsError):
        submit(zk, MOVING)  # nothing new can be submitted

    zk.delete(paths.REASSIGN_PARTITIONS)  # no controller move needed from 2.4
    submit(zk, PartitionMove("orders", 3, (4, 6, 5)))
    eventually(lambda: reassigning(zk) is None, "a new request handled")
    assert topic_doc(zk, "orders")["partitions"]["3"] == [4, 6, 5]


def test_before_2_4_a_stale_admin_znode_needs_a_controller_move(
        zk: KazooClient, versioned: Start) -> None:
    controller, clock = versioned(V23)
    done = [PartitionMove("orders", 0, (1, 2, 3))]
    controller.leave_stale(done)
    zk.delete(paths.REASSIGN_PARTITIONS)  # deleting alone: the controller still holds it
    submit(zk, MOVING)
    eventually(lambda: topic_doc(zk, "orders")["partitions"]["2"] == [3, 4, 6, 5],
               "the move started")
    clock.advance(1.0)

    eventually(lambda: reassigning(zk) == done, "the stale entry written back")
    assert topic_doc(zk, "orders")["partitions"]["2"] == [3, 4, 6]

    zk.delete(paths.REASSIGN_PARTITIONS)
    move_controller(zk, controller)
    submit(zk, PartitionMove("orders", 3, (4, 6, 5)))
    eventually(lambda: reassigning(zk) is None, "the next request completes and leaves nothing")
    assert topic_doc(zk, "orders")["partitions"]["3"] == [4, 6, 5]


def test_the_sandbox_command_plays_kafka_2_3_with_a_stale_admin_znode(
        kadmin_process: KadminProcesses, kazoo_session: Session) -> None:
    command = kadmin_process("sandbox", "--port", "0", "--broker-count", "3", "--rack-count", "0",
                             "--topic-count", "2", "--partitions", "2", "--kafka-version", "2.3",
                             "--stale-reassignment", "--stuck-brokers", "2")
    assert command.stdout is not None
    lines = [command.stdout.readline() for _ in range(4)]
    assert "controller 0 (Kafka 2.3)" in lines[0], lines
    assert lines[1].startswith("stale /admin/reassign_partitions: 2 partition(s) of "), lines
    connect = lines[2].removeprefix("connect string: ").strip()
    with kazoo_session(connect) as client:
        topic = sorted(client.get_children(paths.BROKER_TOPICS))[0]
        doc = json.loads(client.get(paths.topic(topic))[0])
        assert doc["version"] == 1 and "adding_replicas" not in doc
        stale = codec.decode_reassignment(client.get(paths.REASSIGN_PARTITIONS)[0])
        assert [(m.partition, list(m.replicas)) for m in stale] == sorted(
            (int(p), r) for p, r in doc["partitions"].items())
    command.send_signal(signal.SIGTERM)
    _rest, err = command.communicate(timeout=60)
    assert command.returncode == 0, err


def test_the_sandbox_command_refuses_an_unknown_kafka_version(
        kadmin_process: KadminProcesses) -> None:
    command = kadmin_process("sandbox", "--port", "0", "--kafka-version", "2.x")
    _out, err = command.communicate(timeout=60)
    assert command.returncode == 2
    assert err.startswith("kadmin: error: --kafka-version: Kafka version '2.x': expected "
                          "MAJOR.MINOR"), err
