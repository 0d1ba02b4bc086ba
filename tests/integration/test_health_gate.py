"""The health gate against a real ZooKeeper: a full read of every partition state before the
first batch and then at most once per interval, the live brokers in between, and a broker lost
forcing a full read at once. The gate's clock is a fake the test moves, and a deadline already
passed makes a closed gate fail at once, so nothing here waits on this machine's speed."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from kadmin.events import Event, HealthWait
from kadmin.health_gate import HealthGate
from kadmin.model import Broker, ClusterSnapshot, OperationFailed, PartitionState
from kadmin.sandbox.loading import load_cluster
from kadmin.zk import codec, paths

pytestmark = pytest.mark.zk

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in (1, 2, 3)},
    topics={"orders": {0: (1, 2), 1: (2, 3)}, "web-logs": {0: (3, 1)}},
    controller=1, controller_epoch=1)
LAGGING = paths.partition_state("web-logs", 0)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def cluster(zk: KazooClient) -> Iterator[KazooClient]:
    load_cluster(zk, CLUSTER)
    yield zk


def gate_for(zk: KazooClient, clock: FakeClock) -> HealthGate:
    return HealthGate(zk, lambda tp: tp.topic != "orders", interval=60.0, clock=clock)


def lag(zk: KazooClient) -> None:
    """web-logs-0, outside the plan, drops broker 1 from its ISR."""
    zk.set(LAGGING, codec.encode_state(PartitionState(3, (3,), 0, 1)))


def test_between_full_reads_the_gate_reads_only_the_live_brokers(cluster: KazooClient) -> None:
    clock, events = FakeClock(), list[Event]()
    gate = gate_for(cluster, clock)
    gate.wait(1, time.monotonic(), events.append)  # healthy: the first full read passes
    lag(cluster)
    clock.now += 59.0
    gate.wait(2, time.monotonic(), events.append)  # within the interval, same brokers: open
    assert events == []

    clock.now += 1.0  # the interval is over: the next batch reads every state and waits
    with pytest.raises(OperationFailed) as failed:
        gate.wait(3, time.monotonic(), events.append)
    assert events == [HealthWait(3, 1, 0, ("web-logs-0",))]
    assert str(failed.value).startswith("reassign: timed out before batch 3 while 1 "
                                        "partition(s) outside the plan stayed under-replicated")
    assert failed.value.details == ("web-logs-0",)


def test_a_broker_lost_forces_a_full_read_at_once(cluster: KazooClient) -> None:
    clock, events = FakeClock(), list[Event]()
    gate = gate_for(cluster, clock)
    gate.wait(1, time.monotonic(), events.append)
    lag(cluster)
    cluster.delete(paths.broker(2))  # broker 2 gone: orders (in the plan) is no concern, but
    with pytest.raises(OperationFailed):  # the gate reads everything and finds web-logs-0
        gate.wait(2, time.monotonic(), events.append)
    assert events == [HealthWait(2, 1, 0, ("web-logs-0",))]


def test_the_plans_own_partitions_never_close_the_gate(cluster: KazooClient) -> None:
    cluster.set(paths.partition_state("orders", 1),
                codec.encode_state(PartitionState(2, (2,), 0, 1)))
    events: list[Event] = []
    gate_for(cluster, FakeClock()).wait(1, time.monotonic(), events.append)
    assert events == []


def test_an_undecodable_state_outside_the_plan_holds_the_gate_until_it_reads_healthy(
        cluster: KazooClient) -> None:
    """A state znode that cannot be decoded says nothing of the partition's leader: the gate
    must not count it healthy unseen. It names it, waits on it, and opens once it decodes."""
    cluster.set(LAGGING, b"{not json")
    events: list[Event] = []
    gate = gate_for(cluster, FakeClock())
    with pytest.raises(OperationFailed) as failed:
        gate.wait(1, time.monotonic(), events.append)
    assert events == [HealthWait(1, 0, 0, ("web-logs-0",), 1)]
    assert "under-replicated, offline or unreadable" in str(failed.value)
    assert failed.value.details == ("web-logs-0",)

    cluster.set(LAGGING, codec.encode_state(PartitionState(3, (3, 1), 0, 1)))
    events.clear()
    gate.wait(2, time.monotonic(), events.append)  # readable and healthy again: open
    assert events == []


def test_an_undecodable_state_inside_the_plan_is_no_concern_of_the_gate(
        cluster: KazooClient) -> None:
    cluster.set(paths.partition_state("orders", 0), b"\xff\xfe")
    events: list[Event] = []
    gate_for(cluster, FakeClock()).wait(1, time.monotonic(), events.append)
    assert events == []
