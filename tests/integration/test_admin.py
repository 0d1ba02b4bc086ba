"""kadmin.zk.admin against a real ZooKeeper: atomic submits and the watch-driven waits.

Where the controller's behaviour is the point, the sandbox's SimulatedController plays it; where
it is not (restarts, expiry, failover, deadlines), the test itself writes what a controller would.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

import pytest
from kazoo.client import KazooClient

from kadmin import plans
from kadmin.embedded import EmbeddedZooKeeper
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    Conflict,
    OperationFailed,
    PartitionMove,
    PartitionState,
    PlanKind,
    TopicPartition,
)
from kadmin.sandbox import Sandbox
from kadmin.zk import admin, codec, paths
from kadmin.zk.session import ZkSettings, session
from tests.helpers import eventually

pytestmark = pytest.mark.zk

FAR = 120.0
"""A deadline no healthy test comes near: only the watch ends these waits."""

MOVES = (
    PartitionMove("foo", 0, (1, 2), ("any", "any")),
    PartitionMove("foo", 1, (2, 3), ("/data/a", "any")),
    PartitionMove("bar", 3, (3, 1)),
    PartitionMove("bar", 4, (1, 3)),
)


CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b) for b in (1, 2, 3, 4)},
    topics={"foo": {0: (3, 4), 1: (4, 1)}, "bar": {p: (1, 2) for p in range(5)}},
    # bar-0 is led by its second replica: what a preferred replica election repairs
    states={"bar": {0: PartitionState(leader=2, isr=(1, 2))}},
    controller=1,
)
"""Every entry of MOVES changes this cluster's replicas."""


@pytest.fixture
def other(zk_connect: str, kazoo_session: Callable[[str], AbstractContextManager[KazooClient]]
          ) -> Iterator[KazooClient]:
    """A second session on the same chroot: another kadmin process, or the controller."""
    with kazoo_session(zk_connect) as client:
        yield client


@pytest.fixture
def sandbox(zk_connect: str) -> Iterator[Callable[..., Sandbox]]:
    """Starts CLUSTER and its simulated controller in this test's chroot (options: Sandbox's)."""
    hosts, _, chroot = zk_connect.partition("/")
    started: list[Sandbox] = []

    def start(**options: Any) -> Sandbox:
        started.append(Sandbox(CLUSTER, zookeeper=hosts, chroot="/" + chroot, **options).start())
        return started[-1]

    yield start
    for box in started:
        box.stop()


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=4) as executor:
        yield executor


class Watcher:
    """Runs a wait in the background and collects its updates, so a test can act between them."""

    def __init__(self, pool: ThreadPoolExecutor, wait: Callable[..., Any], *args: Any,
                 **kwargs: Any) -> None:
        self.updates: list[admin.WaitUpdate] = []
        self._queue: queue.Queue[admin.WaitUpdate] = queue.Queue()
        self.future: Future[Any] = pool.submit(wait, *args, on_update=self._queue.put, **kwargs)

    def until(self, wanted: Callable[[admin.WaitUpdate], bool]) -> admin.WaitUpdate:
        """The first update (from now on) that ``wanted`` accepts."""
        while True:
            update = self._queue.get(timeout=60)
            self.updates.append(update)
            if wanted(update):
                return update

    def result(self) -> Any:
        value = self.future.result(timeout=90)
        while not self._queue.empty():
            self.updates.append(self._queue.get_nowait())
        return value


def _controller(client: KazooClient, broker: int) -> None:
    client.create(paths.CONTROLLER, codec.encode_controller(broker), ephemeral=True,
                  makepath=True)


# --- submitting --------------------------------------------------------------------------------


def test_submit_reassignment_writes_exactly_the_znode_format(zk: KazooClient) -> None:
    admin.submit_reassignment(zk, MOVES)

    data, _ = zk.get(paths.REASSIGN_PARTITIONS)
    assert data == (
        b'{"version":1,"partitions":['
        b'{"topic":"foo","partition":0,"replicas":[1,2]},'
        b'{"topic":"foo","partition":1,"replicas":[2,3]},'
        b'{"topic":"bar","partition":3,"replicas":[3,1]},'
        b'{"topic":"bar","partition":4,"replicas":[1,3]}]}'
    )


def test_second_reassignment_is_a_conflict_and_leaves_the_first_alone(zk: KazooClient) -> None:
    admin.submit_reassignment(zk, MOVES)
    before = zk.get(paths.REASSIGN_PARTITIONS)

    with pytest.raises(Conflict) as raised:
        admin.submit_reassignment(zk, [PartitionMove("baz", 0, (1,))])

    assert raised.value.exit_code == 3
    assert str(raised.value) == (
        "a reassignment is already in progress in /admin/reassign_partitions "
        "(4 partitions: foo-0, foo-1, bar-3 (and 1 more))")
    assert zk.get(paths.REASSIGN_PARTITIONS) == before


def test_ensure_idle_names_what_is_in_flight(zk: KazooClient) -> None:
    for kind in PlanKind:
        admin.ensure_idle(zk, kind)  # nothing in flight: no error

    zk.create(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(
        PartitionMove("t", p, (1,)) for p in range(1234)), makepath=True)
    zk.create(paths.PREFERRED_REPLICA_ELECTION, codec.encode_election(
        [TopicPartition("foo", 1)]), makepath=True)
    zk.create(paths.delete_topic("old"), makepath=True)
    zk.create(paths.delete_topic("older"), makepath=True)

    messages = {}
    for kind in PlanKind:
        with pytest.raises(Conflict) as raised:
            admin.ensure_idle(zk, kind)
        messages[kind] = str(raised.value)
    assert messages == {
        PlanKind.REASSIGN: "a reassignment is already in progress in /admin/reassign_partitions "
                           "(1,234 partitions: t-0, t-1, t-2 (and 1,231 more))",
        PlanKind.ELECTION: "a preferred replica election is already in progress in "
                           "/admin/preferred_replica_election (1 partition: foo-1)",
        PlanKind.DELETION: "topic deletions are already queued in /admin/delete_topics "
                           "(2 topics: old, older)",
    }


def test_ensure_idle_stops_on_an_unreadable_znode(zk: KazooClient) -> None:
    """Not a conflict (exit 3) nor idle: what is in flight is unknown (exit 1, named)."""
    zk.create(paths.REASSIGN_PARTITIONS, b"{not json", makepath=True)

    with pytest.raises(OperationFailed, match=r"^cannot decode /admin/reassign_partitions: not "
                                              r"JSON .*; what is in flight is unknown"):
        admin.ensure_idle(zk, PlanKind.REASSIGN)


def test_racing_submits_have_exactly_one_winner(zk: KazooClient, other: KazooClient,
                                                pool: ThreadPoolExecutor) -> None:
    mine, theirs = MOVES[:2], MOVES[2:]

    def submit(start: threading.Barrier, client: KazooClient,
               moves: tuple[PartitionMove, ...]) -> str:
        start.wait()
        try:
            admin.submit_reassignment(client, moves)
        except Conflict:
            return "lost"
        return "won"

    for _ in range(5):
        start = threading.Barrier(2)
        results = [pool.submit(submit, start, zk, mine), pool.submit(submit, start, other, theirs)]
        outcomes = [f.result(timeout=60) for f in results]

        assert sorted(outcomes) == ["lost", "won"]
        winner = mine if outcomes[0] == "won" else theirs
        assert zk.get(paths.REASSIGN_PARTITIONS)[0] == codec.encode_reassignment(winner)
        zk.delete(paths.REASSIGN_PARTITIONS)  # the controller's part, before the next round


def test_submit_election_writes_the_znode_and_refuses_a_second(zk: KazooClient) -> None:
    admin.submit_election(zk, [TopicPartition("foo", 1), TopicPartition("bar", 0)])
    before = zk.get(paths.PREFERRED_REPLICA_ELECTION)

    with pytest.raises(Conflict) as raised:
        admin.submit_election(zk, [TopicPartition("baz", 0)])

    assert before[0] == (b'{"version":1,"partitions":[{"topic":"foo","partition":1},'
                         b'{"topic":"bar","partition":0}]}')
    assert str(raised.value) == ("a preferred replica election is already in progress in "
                                 "/admin/preferred_replica_election (2 partitions: foo-1, bar-0)")
    assert zk.get(paths.PREFERRED_REPLICA_ELECTION) == before


def test_submit_deletions_queues_one_empty_child_per_topic(zk: KazooClient) -> None:
    admin.submit_deletions(zk, ["foo", "bar"])

    assert sorted(zk.get_children(paths.DELETE_TOPICS)) == ["bar", "foo"]
    assert zk.get(paths.delete_topic("foo"))[0] == b""


def test_submit_deletions_refuses_while_any_deletion_is_queued(zk: KazooClient) -> None:
    zk.create(paths.delete_topic("other"), makepath=True)

    with pytest.raises(Conflict) as raised:
        admin.submit_deletions(zk, ["foo", "bar"])

    assert str(raised.value) == ("topic deletions are already queued in /admin/delete_topics "
                                 "(1 topic: other)")
    assert zk.get_children(paths.DELETE_TOPICS) == ["other"]


def test_submit_deletions_is_all_or_none(zk: KazooClient) -> None:
    # "b/c" needs a parent marker that does not exist: that one create fails inside the
    # transaction, and the valid markers before and after it must not appear either.
    with pytest.raises(OperationFailed, match=r"^could not create /admin/delete_topics/b/c: "
                                              r"NoNodeError; no deletion was queued$"):
        admin.submit_deletions(zk, ["a", "b/c", "d"])

    assert zk.get_children(paths.DELETE_TOPICS) == []


def test_racing_deletions_of_one_topic_have_exactly_one_winner(
        zk: KazooClient, other: KazooClient, pool: ThreadPoolExecutor) -> None:
    start = threading.Barrier(2)

    def submit(client: KazooClient, topics: list[str]) -> str:
        start.wait()
        try:
            admin.submit_deletions(client, topics)
        except Conflict:
            return "lost"
        return "won"

    outcomes = [f.result(timeout=60) for f in [pool.submit(submit, zk, ["a", "shared"]),
                                                pool.submit(submit, other, ["shared", "b"])]]

    assert sorted(outcomes) == ["lost", "won"]
    expected = ["a", "shared"] if outcomes[0] == "won" else ["b", "shared"]
    assert sorted(zk.get_children(paths.DELETE_TOPICS)) == expected


# --- waiting on the simulated controller --------------------------------------------------------


def test_wait_follows_the_controller_partition_by_partition(
        zk: KazooClient, sandbox: Callable[..., Sandbox]) -> None:
    sandbox(latency=0.5, parallelism=1)  # one partition at a time, half a second each
    admin.submit_reassignment(zk, MOVES)
    updates: list[admin.WaitUpdate] = []

    assert admin.wait_reassignment(zk, deadline=time.monotonic() + FAR,
                                   on_update=updates.append, safety_poll=30.0) == ()

    counts = [u.remaining for u in updates]
    assert counts == sorted(counts, reverse=True) and counts[-1] == 0
    assert len(counts) >= 3  # the shrinking znode was seen, not just its end
    assert {u.controller for u in updates} == {1}
    topics = {t: codec.decode_topic(zk.get(paths.topic(t))[0]) for t in ("foo", "bar")}
    assert all(topics[m.topic][m.partition] == m.replicas for m in MOVES)
    assert not zk.exists(paths.REASSIGN_PARTITIONS)


def test_wait_returns_the_partitions_a_stuck_broker_holds_back(
        zk: KazooClient, sandbox: Callable[..., Sandbox]) -> None:
    sandbox(latency=0.05, stuck_brokers=[3])  # every move that adds broker 3 stays

    admin.submit_reassignment(zk, MOVES)
    left = admin.wait_reassignment(zk, deadline=time.monotonic() + 3, safety_poll=0.5)

    assert left == tuple(m._replace(log_dirs=None) for m in MOVES if m.tp != ("foo", 0))
    assert codec.decode_reassignment(zk.get(paths.REASSIGN_PARTITIONS)[0]) == left


def test_wait_rides_out_a_controller_failover(zk: KazooClient, sandbox: Callable[..., Sandbox],
                                              pool: ThreadPoolExecutor) -> None:
    box = sandbox(latency=1.0, parallelism=1)
    admin.submit_reassignment(zk, MOVES)
    waiter = Watcher(pool, admin.wait_reassignment, zk, deadline=time.monotonic() + FAR,
                     safety_poll=30.0)
    waiter.until(lambda u: u.controller == 1)

    box.controller.resign()  # the failover in two steps, each one seen before the next
    waiter.until(lambda u: u.controller is None)
    box.controller.elect(2)

    assert waiter.result() == ()
    controllers = [u.controller for u in waiter.updates]
    assert controllers.index(None) < controllers.index(2)  # gone, then the new one reported


def test_election_and_deletion_against_the_controller(
        zk: KazooClient, sandbox: Callable[..., Sandbox]) -> None:
    sandbox(latency=0.1)

    admin.submit_election(zk, [TopicPartition("bar", 0)])
    assert admin.wait_election(zk, deadline=time.monotonic() + FAR) is True
    assert codec.decode_state(zk.get(paths.partition_state("bar", 0))[0]).leader == 1

    admin.submit_deletions(zk, ["foo", "bar"])
    assert admin.wait_deletions(zk, ["foo", "bar"], deadline=time.monotonic() + FAR) == ()
    assert zk.get_children(paths.BROKER_TOPICS) == []
    assert zk.get_children(paths.DELETE_TOPICS) == []


# --- waiting (the test plays the controller) ---------------------------------------------------


def test_wait_returns_as_soon_as_the_znode_is_deleted(zk: KazooClient, other: KazooClient,
                                                      pool: ThreadPoolExecutor) -> None:
    admin.submit_reassignment(zk, MOVES)
    safety_poll = 30.0
    started = time.monotonic()
    waiter = Watcher(pool, admin.wait_reassignment, zk, deadline=started + FAR,
                     safety_poll=safety_poll)
    waiter.until(lambda u: u.remaining == 4)

    other.delete(paths.REASSIGN_PARTITIONS)

    assert waiter.result() == ()
    # woken by the watch, not by the safety poll
    assert time.monotonic() - started < safety_poll / 2


def test_wait_reports_the_znode_shrinking(zk: KazooClient, other: KazooClient,
                                         pool: ThreadPoolExecutor) -> None:
    _controller(other, 7)
    admin.submit_reassignment(zk, MOVES)
    waiter = Watcher(pool, admin.wait_reassignment, zk, deadline=time.monotonic() + FAR,
                     safety_poll=30.0)
    waiter.until(lambda u: u.remaining == 4)

    for left in (3, 1):
        other.set(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(MOVES[-left:]))
        assert waiter.until(lambda u: True).remaining == left
    other.delete(paths.REASSIGN_PARTITIONS)

    assert waiter.result() == ()
    assert [u.remaining for u in waiter.updates] == [4, 3, 1, 0]
    assert {(u.controller, u.connected) for u in waiter.updates} == {(7, True)}


def test_wait_at_the_deadline_returns_what_is_left_and_leaves_the_znode(zk: KazooClient) -> None:
    admin.submit_reassignment(zk, MOVES)
    before = zk.get(paths.REASSIGN_PARTITIONS)

    # a deadline already past still gets one read: the caller learns what is left
    left = admin.wait_reassignment(zk, deadline=time.monotonic() - 1)

    assert left == tuple(m._replace(log_dirs=None) for m in MOVES)
    assert zk.get(paths.REASSIGN_PARTITIONS) == before


def test_the_deadline_is_not_reported_as_a_lost_connection(zk: KazooClient) -> None:
    admin.submit_reassignment(zk, MOVES)
    updates: list[admin.WaitUpdate] = []

    left = admin.wait_reassignment(zk, deadline=time.monotonic() + 1, on_update=updates.append,
                                   safety_poll=30.0)

    assert left == tuple(m._replace(log_dirs=None) for m in MOVES)
    # no read started at the deadline: it could not have been answered, and would have been
    # taken for a connection lost
    assert updates == [admin.WaitUpdate(4, None, True)]


def test_wait_reports_the_controller_leaving_and_coming_back(
        zk: KazooClient, other: KazooClient, pool: ThreadPoolExecutor) -> None:
    _controller(other, 1)
    admin.submit_reassignment(zk, MOVES)
    waiter = Watcher(pool, admin.wait_reassignment, zk, deadline=time.monotonic() + FAR,
                     safety_poll=30.0)
    waiter.until(lambda u: u.controller == 1)

    other.delete(paths.CONTROLLER)
    assert waiter.until(lambda u: u.controller != 1) == admin.WaitUpdate(4, None, True)
    assert not waiter.future.done()  # no controller is no reason to stop waiting

    _controller(other, 2)
    waiter.until(lambda u: u.controller == 2)
    other.delete(paths.REASSIGN_PARTITIONS)

    assert waiter.result() == ()


def test_wait_rides_out_a_server_restart(own_zk_server: EmbeddedZooKeeper,
                                         pool: ThreadPoolExecutor) -> None:
    hosts = own_zk_server.connect_string
    client, controller = KazooClient(hosts=hosts, timeout=30), KazooClient(hosts=hosts, timeout=30)
    for c in (client, controller):
        c.start(timeout=30)
    try:
        admin.submit_reassignment(client, MOVES)
        waiter = Watcher(pool, admin.wait_reassignment, client, deadline=time.monotonic() + FAR,
                         safety_poll=30.0)
        waiter.until(lambda u: u.remaining == 4)

        own_zk_server.restart(down_for=1.0)
        waiter.until(lambda u: not u.connected)
        waiter.until(lambda u: u.connected)  # back, and the watch re-armed by a fresh read
        controller.retry(controller.delete, paths.REASSIGN_PARTITIONS)

        assert waiter.result() == ()
    finally:
        for c in (client, controller):
            c.stop()
            c.close()


def test_a_read_cut_off_by_a_restart_ends_with_the_connection(
        own_zk_server: EmbeddedZooKeeper, pool: ThreadPoolExecutor) -> None:
    """The drop lands on a read (here the probe stops ZooKeeper right before it reads). That
    read ends with the connection: the outage is reported while it lasts, and the reconnect
    wakes the next read. Retried instead, it would wait in kazoo's queue, unreported, until the
    server is back or the read window (the safety poll, here two minutes) runs out."""
    settings = ZkSettings(own_zk_server.connect_string)
    with session(settings) as client, session(settings) as controller:
        admin.submit_reassignment(client, MOVES)
        reads = itertools.count()
        changed = threading.Event()

        def probe(calls: admin.ZkCalls) -> tuple[PartitionMove, ...] | None:
            if next(reads) == 1:
                # The change's watch event can reach this client before the set's own reply
                # reaches the controller; stopping the server in between would lose that reply.
                assert changed.wait(FAR)
                own_zk_server.stop()
            data = calls.data(paths.REASSIGN_PARTITIONS)
            return None if data is None else codec.decode_reassignment(data)

        waiter = Watcher(pool, admin.wait_until, client, probe, lambda left: left is None,
                         lambda left: len(left or ()), what=paths.REASSIGN_PARTITIONS,
                         deadline=time.monotonic() + FAR, safety_poll=FAR)
        waiter.until(lambda u: u.remaining == 4)
        controller.set(paths.REASSIGN_PARTITIONS, codec.encode_reassignment(MOVES[1:]))
        changed.set()

        assert waiter.until(lambda u: True) == admin.WaitUpdate(4, None, False)
        own_zk_server.start()
        assert waiter.until(lambda u: True) == admin.WaitUpdate(3, None, True)
        controller.retry(controller.delete, paths.REASSIGN_PARTITIONS)  # seen by the new watch

        assert waiter.result() is None


def test_deadline_bounds_the_wait_while_zookeeper_is_away(own_zk_server: EmbeddedZooKeeper,
                                                          pool: ThreadPoolExecutor) -> None:
    client = KazooClient(hosts=own_zk_server.connect_string, timeout=30)
    client.start(timeout=30)
    try:
        admin.submit_reassignment(client, MOVES)
        waiter = Watcher(pool, admin.wait_reassignment, client,
                         deadline=time.monotonic() + 5, safety_poll=30.0)
        waiter.until(lambda u: u.remaining == 4)

        own_zk_server.stop()  # and it never comes back

        assert waiter.until(lambda u: not u.connected) == admin.WaitUpdate(4, None, False)
        # the entries last seen, at the deadline, although no read can be answered
        assert waiter.result() == tuple(m._replace(log_dirs=None) for m in MOVES)
    finally:
        client.stop()
        client.close()


def test_wait_rides_out_session_expiry(zk_connect: str, zk: KazooClient, other: KazooClient,
                                       pool: ThreadPoolExecutor) -> None:
    admin.submit_reassignment(zk, MOVES)
    waiter = Watcher(pool, admin.wait_reassignment, zk, deadline=time.monotonic() + FAR,
                     safety_poll=30.0)
    waiter.until(lambda u: u.remaining == 4)
    session_id = zk.client_id[0]

    # ZooKeeper's way to expire a session on purpose: join it from a second client and close it.
    thief = KazooClient(hosts=zk_connect, client_id=zk.client_id, timeout=30)
    thief.start(timeout=30)
    thief.stop()
    thief.close()
    # kazoo reconnects with a new session that has none of the old watches; the waiter re-reads
    eventually(lambda: zk.connected and zk.client_id[0] != session_id, "a new session")
    other.delete(paths.REASSIGN_PARTITIONS)

    assert waiter.result() == ()


def test_wait_election(zk: KazooClient, other: KazooClient, pool: ThreadPoolExecutor) -> None:
    admin.submit_election(zk, [TopicPartition("foo", 1)])
    assert admin.wait_election(zk, deadline=time.monotonic() + 2, safety_poll=0.1) is False
    assert zk.exists(paths.PREFERRED_REPLICA_ELECTION)

    waiter = Watcher(pool, admin.wait_election, zk, deadline=time.monotonic() + FAR,
                     safety_poll=30.0)
    waiter.until(lambda u: u.remaining == 1)
    other.delete(paths.PREFERRED_REPLICA_ELECTION)

    assert waiter.result() is True


def test_wait_deletions_needs_both_the_marker_and_the_topic_gone(
        zk: KazooClient, other: KazooClient, pool: ThreadPoolExecutor) -> None:
    for name in ("foo", "bar"):
        zk.create(paths.topic(name), codec.encode_topic({0: (1,)}), makepath=True)
    admin.submit_deletions(zk, ["foo", "bar", "never-existed"])
    waiter = Watcher(pool, admin.wait_deletions, zk, ["foo", "bar", "never-existed"],
                     deadline=time.monotonic() + FAR, safety_poll=30.0)
    waiter.until(lambda u: u.remaining == 3)

    other.delete(paths.delete_topic("never-existed"))  # unknown topic: marker just removed
    waiter.until(lambda u: u.remaining == 2)
    other.delete(paths.topic("foo"), recursive=True)  # topic gone, marker not yet
    other.delete(paths.topic("bar"), recursive=True)
    other.delete(paths.delete_topic("bar"))
    waiter.until(lambda u: u.remaining == 1)
    assert admin.wait_deletions(zk, ["foo", "bar"], deadline=time.monotonic() + 2,
                                safety_poll=0.1) == ("foo",)
    other.delete(paths.delete_topic("foo"))

    assert waiter.result() == ()


def test_thousands_of_long_topic_names_are_queued_in_transactions_that_fit(zk: KazooClient) -> None:
    topics = [f"{i:05d}".ljust(249, "x") for i in range(4000)]  # ~1.4 MB in one transaction
    batches = plans.deletion_batches(topics, 1_000_000, zk.chroot)
    assert len(batches) == 2

    queued: list[str] = []
    for batch in batches:
        admin.submit_deletions(zk, batch, queued_before=queued)
        queued += batch

    assert sorted(zk.get_children(paths.DELETE_TOPICS)) == topics


def test_a_later_transaction_that_fails_says_how_many_topics_are_queued(zk: KazooClient) -> None:
    admin.submit_deletions(zk, ["a", "b"])

    # "x/c" has no parent marker: its create fails, and "d" is rolled back with it
    with pytest.raises(OperationFailed, match=r"^could not create /admin/delete_topics/x/c: "
                                              r"NoNodeError; 2 topics of this deletion were "
                                              r"queued before this$"):
        admin.submit_deletions(zk, ["x/c", "d"], queued_before=["a", "b"])
    with pytest.raises(Conflict, match=r"^topic deletions are already queued in "
                                       r"/admin/delete_topics \(1 topic: b\); 1 topic of this "
                                       r"deletion was queued before this$"):
        admin.submit_deletions(zk, ["d"], queued_before=["a"])  # "b" is not ours here

    assert sorted(zk.get_children(paths.DELETE_TOPICS)) == ["a", "b"]
