"""Reading a live cluster from a real ZooKeeper: every Kafka version, broken znodes, scale."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.serialization import GetData

from kadmin.embedded import EmbeddedZooKeeper
from kadmin.model import (
    Broker,
    OperationFailed,
    PartitionMove,
    PartitionState,
    Reassignment,
    TopicPartition,
)
from kadmin.zk import codec, paths, reader
from kadmin.zk.reader import InFlight
from kadmin.zk.session import ZkSettings, session
from tests.helpers import eventually

pytestmark = pytest.mark.zk


def load(zk: KazooClient, nodes: Mapping[str, bytes], batch: int = 500) -> None:
    """Create znodes in mapping order (parents first), a few hundred per transaction."""
    items = list(nodes.items())
    for start in range(0, len(items), batch):
        transaction = zk.transaction()
        for path, data in items[start:start + batch]:
            transaction.create(path, data)
        outcomes = transaction.commit()
        assert not any(isinstance(o, Exception) for o in outcomes), (items[start][0], outcomes)


def topic_nodes(name: str, data: bytes, states: Mapping[int, bytes]) -> dict[str, bytes]:
    nodes = {paths.topic(name): data, paths.partitions(name): b""}
    for p, state in states.items():
        nodes[paths.partition(name, p)] = b""
        nodes[paths.partition_state(name, p)] = state
    return nodes


SKELETON = {"/brokers": b"", paths.BROKER_IDS: b"", paths.BROKER_TOPICS: b"", paths.ADMIN: b""}

BROKERS = {
    # v1 (0.8): host and port only
    1: b'{"jmx_port":-1,"timestamp":"1452068227537","host":"h1","version":1,"port":9092}',
    # v2: endpoints
    2: b'{"jmx_port":-1,"timestamp":"1452068227537","endpoints":["PLAINTEXT://h2:9092"],'
       b'"host":"h2","version":2,"port":9092}',
    # v3 with and without rack
    3: b'{"version":3,"host":"h3","port":9092,"jmx_port":9999,"timestamp":"1",'
       b'"endpoints":["PLAINTEXT://h3:9092"],"rack":"r1"}',
    30: b'{"version":3,"host":"h30","port":9092,"jmx_port":-1,"timestamp":"1",'
        b'"endpoints":["PLAINTEXT://h30:9092"]}',
    # v4: listener map, rack
    4: b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":'
       b'["PLAINTEXT://h4:9092"],"rack":"r2","jmx_port":-1,"host":"h4","timestamp":"1",'
       b'"port":9092,"version":4}',
    # v5: SSL only, so host is null and only the endpoints say where; unknown keys ignored
    5: b'{"features":{},"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":'
       b'["SSL://h5.example.com:9093"],"rack":"r3","jmx_port":-1,"host":null,"timestamp":"1",'
       b'"port":-1,"version":5}',
}

EXPECTED_BROKERS = {
    1: Broker(1, "h1", 9092),
    2: Broker(2, "h2", 9092),
    3: Broker(3, "h3", 9092, "r1"),
    4: Broker(4, "h4", 9092, "r2"),
    5: Broker(5, "h5.example.com", 9093, "r3"),
    30: Broker(30, "h30", 9092),
}


def test_reads_every_broker_topic_and_state_version(zk: KazooClient) -> None:
    nodes = dict(SKELETON)
    nodes.update({paths.broker(i): data for i, data in BROKERS.items()})
    nodes.update(topic_nodes(
        "v1", b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}',
        {0: b'{"controller_epoch":20,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2,3]}',
         # Kafka 3.2+ adds leader_recovery_state; unknown keys are ignored
         1: b'{"controller_epoch":21,"leader":2,"version":1,"leader_epoch":0,"isr":[2],'
            b'"leader_recovery_state":0,"future_key":{"x":1}}'}))
    nodes.update(topic_nodes(
        "v2", b'{"version":2,"partitions":{"0":[3,4]},"adding_replicas":{"0":[4]},'
              b'"removing_replicas":{}}',
        {0: b'{"leader":3,"isr":[3]}'}))
    nodes.update(topic_nodes(
        "v3", b'{"version":3,"topic_id":"0Ljr6bFjQpG_MeW4P1iHGQ","partitions":{"0":[5,1]},'
              b'"adding_replicas":{},"removing_replicas":{}}', {}))
    nodes[paths.CONTROLLER] = b'{"version":1,"brokerid":3,"timestamp":"1452068227409"}'
    nodes[paths.CONTROLLER_EPOCH] = b"20"
    load(zk, nodes)

    live = reader.read_cluster(zk)

    # v3-0 has no state znode yet (a topic being created): reported, never counted nowhere
    assert live.unreadable == (("/brokers/topics/v3/partitions/0/state", reader.NO_STATE),)
    assert live.snapshot.brokers == EXPECTED_BROKERS
    assert list(live.snapshot.brokers) == sorted(EXPECTED_BROKERS)
    assert live.snapshot.topics == {"v1": {0: (1, 2, 3), 1: (2, 3, 1)}, "v2": {0: (3, 4)},
                                    "v3": {0: (5, 1)}}
    # v2-0 is being reassigned from [3] to [3, 4] (Kafka 2.4+ records it in the topic znode)
    assert live.snapshot.reassigning == {"v2": {0: Reassignment(target=(3, 4), original=(3,))}}
    assert live.snapshot.states == {
        "v1": {0: PartitionState(1, (1, 2, 3), leader_epoch=4, controller_epoch=20),
               1: PartitionState(2, (2,), leader_epoch=0, controller_epoch=21)},
        "v2": {0: PartitionState(3, (3,))},
    }
    assert live.snapshot.controller == 3
    assert live.snapshot.controller_epoch == 20
    assert live.in_flight == InFlight(None, None, ())


def test_reassignments_in_flight_are_read_from_the_topic_znodes(zk: KazooClient) -> None:
    """docs/znodes.md: partitions = target + the replicas being removed; target = partitions minus
    removing_replicas, original = partitions minus adding_replicas."""
    nodes = dict(SKELETON)
    nodes.update(topic_nodes(
        "moving", b'{"version":2,"partitions":{"0":[1,2,5,0],"1":[2,3,4],"2":[4,5,6]},'
                  b'"adding_replicas":{"0":[5],"2":[]},"removing_replicas":{"0":[0],"1":[4]}}',
        {}))
    nodes.update(topic_nodes(
        "settled", b'{"version":3,"topic_id":"x","partitions":{"0":[1]},"adding_replicas":{},'
                   b'"removing_replicas":{}}', {}))
    load(zk, nodes)

    live = reader.read_cluster(zk, states=False)  # no state znodes here

    assert live.unreadable == ()
    assert live.snapshot.topics["moving"] == {0: (1, 2, 5, 0), 1: (2, 3, 4), 2: (4, 5, 6)}
    assert live.snapshot.reassigning == {"moving": {
        0: Reassignment(target=(1, 2, 5), original=(1, 2, 0)),
        1: Reassignment(target=(2, 3), original=(2, 3, 4)),  # shrinking: nothing added
    }}  # "2": [] adds nothing: partition 2 is settled
    assert live.snapshot.settled_replicas(TopicPartition("moving", 0)) == (1, 2, 0)
    # and written back as Kafka writes it (what a sandbox loading the snapshot needs)
    again = codec.encode_topic(live.snapshot.topics["moving"], version=2,
                               reassigning=live.snapshot.reassigning["moving"])
    assert again == (b'{"version":2,"partitions":{"0":[1,2,5,0],"1":[2,3,4],"2":[4,5,6]},'
                     b'"adding_replicas":{"0":[5]},"removing_replicas":{"0":[0],"1":[4]}}')
    assert live.snapshot.settled_replicas(TopicPartition("settled", 0)) == (1,)


@pytest.mark.parametrize(("payload", "reason"), [
    (b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"0":[7]},"removing_replicas":{}}',
     "adding_replicas of partition 0 has [7], not among its replicas [1, 2]"),
    (b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"3":[1]},"removing_replicas":{}}',
     "adding_replicas names partition 3, which partitions does not list"),
    (b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{"0":[1,2]}}',
     "partition 0 would have no replica after its reassignment"),
    (b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":{"0":[1]},'
     b'"removing_replicas":{"0":[1]}}', "partition 0 both adds and removes [1]"),
    (b'{"version":2,"partitions":{"0":[1,2]},"adding_replicas":[],"removing_replicas":{}}',
     "adding_replicas must be an object of partition id -> replica list"),
])
def test_a_reassignment_kafka_could_not_have_written_is_unreadable(
        zk: KazooClient, payload: bytes, reason: str) -> None:
    load(zk, {**SKELETON, **topic_nodes("t", payload, {})})
    live = reader.read_cluster(zk)
    assert live.unreadable == (("/brokers/topics/t", reason),)
    assert live.snapshot.topics == {} and live.snapshot.reassigning == {}


def test_controller_written_as_a_bare_integer(zk: KazooClient) -> None:
    load(zk, {paths.CONTROLLER: b"160", paths.CONTROLLER_EPOCH: b"7\n"})
    live = reader.read_cluster(zk)
    assert (live.snapshot.controller, live.snapshot.controller_epoch) == (160, 7)


def test_empty_tree_reads_as_an_empty_cluster(zk: KazooClient) -> None:
    live = reader.read_cluster(zk)
    assert live.snapshot.brokers == {}
    assert live.snapshot.topics == {}
    assert live.snapshot.controller is None
    assert live.snapshot.controller_epoch is None
    assert live.in_flight == InFlight(None, None, ())
    assert live.unreadable == ()


def test_unreadable_znodes_are_reported_and_the_rest_returned(zk: KazooClient) -> None:
    nodes = dict(SKELETON)
    nodes[paths.broker(1)] = BROKERS[1]
    # a live broker whose registration kadmin cannot read: still registered, so still live
    nodes[paths.broker(2)] = b'{"version":4,"host":"h2","port":"9092"}'
    nodes[f"{paths.BROKER_IDS}/not-an-id"] = BROKERS[2]
    nodes.update(topic_nodes("good", b'{"version":1,"partitions":{"0":[1]}}',
                             {0: b'{"leader":1,"isr":[1]}'}))
    nodes.update(topic_nodes("broken", b'{"version":1,"partitions":', {}))
    # a repeated key hides the first value: refused, not "the last one wins"
    nodes.update(topic_nodes("twice", b'{"version":1,"partitions":{"0":[7],"0":[1]}}', {}))
    # a znode name Kafka could not have created (a snapshot of it could not be read back)
    nodes.update(topic_nodes("bad topic", b'{"version":1,"partitions":{"0":[1]}}', {}))
    nodes.update(topic_nodes("bad-state", b'{"version":1,"partitions":{"0":[1],"1":[1]}}',
                             {0: b'{"leader":1,"isr":[1]}', 1: b'{"isr":[1]}'}))
    nodes[paths.CONTROLLER] = b'{"version":1,"brokerid":"one"}'
    load(zk, nodes)

    live = reader.read_cluster(zk)

    assert live.snapshot.brokers == {1: Broker(1, "h1", 9092), 2: Broker(2)}
    assert live.snapshot.topics == {"good": {0: (1,)}, "bad-state": {0: (1,), 1: (1,)}}
    assert live.snapshot.states == {"good": {0: PartitionState(1, (1,))},
                                    "bad-state": {0: PartitionState(1, (1,))}}
    assert live.snapshot.controller is None
    unreadable = dict(live.unreadable)
    assert set(unreadable) == {
        "/brokers/ids/not-an-id", "/brokers/ids/2", "/brokers/topics/broken",
        "/brokers/topics/twice", "/brokers/topics/bad topic",
        "/brokers/topics/bad-state/partitions/1/state", "/controller",
    }
    assert unreadable["/brokers/topics/broken"].startswith("not JSON")
    assert unreadable["/brokers/ids/2"] == (
        'port must be an integer, got "9092" (broker 2 is registered, so it counts as live; its '
        "host, port and rack are unknown)")
    assert unreadable["/brokers/topics/bad topic"] == (
        "illegal topic name \"bad topic\": Kafka allows only ASCII letters, digits, '.', '_' and "
        "'-'")
    assert unreadable["/brokers/topics/twice"] == (
        'not JSON kadmin can read (duplicate key "0" in the object at $.partitions)')
    assert unreadable["/brokers/topics/bad-state/partitions/1/state"] == "missing leader"
    assert "brokerid must be an integer" in unreadable["/controller"]


def test_in_flight_admin_requests_are_decoded(zk: KazooClient) -> None:
    reassignment = (PartitionMove("foo", 1, (0, 1, 3)), PartitionMove("bar", 0, (2,)))
    election = (TopicPartition("foo", 1), TopicPartition("bar", 0))
    load(zk, {
        paths.ADMIN: b"",
        paths.REASSIGN_PARTITIONS: codec.encode_reassignment(reassignment),
        paths.PREFERRED_REPLICA_ELECTION: codec.encode_election(election),
        paths.DELETE_TOPICS: b"",
        paths.delete_topic("old"): b"",
        paths.delete_topic("older"): b"",
    })
    expected = InFlight(reassignment, election, ("old", "older"))
    assert reader.read_in_flight(zk) == expected
    assert reader.read_cluster(zk).in_flight == expected


def test_an_undecodable_admin_request_stops_read_in_flight(zk: KazooClient) -> None:
    load(zk, {paths.ADMIN: b"", paths.REASSIGN_PARTITIONS: b'{"version":1,"partitions":{}}'})
    with pytest.raises(OperationFailed,
                       match=r"^cannot decode /admin/reassign_partitions: partitions must be"):
        reader.read_in_flight(zk)
    live = reader.read_cluster(zk)
    assert live.in_flight.reassignment is None
    assert [path for path, _ in live.unreadable] == ["/admin/reassign_partitions"]


def test_read_assignments_and_states_of_chosen_partitions(zk: KazooClient) -> None:
    nodes = dict(SKELETON)
    nodes.update(topic_nodes("a", b'{"version":1,"partitions":{"0":[1,2],"1":[2,1]}}',
                             {0: b'{"leader":1,"isr":[1,2]}', 1: b'{"leader":2,"isr":[2]}'}))
    nodes.update(topic_nodes("b", b'{"version":1,"partitions":{"0":[3]}}', {}))
    nodes.update(topic_nodes("c", b'{"version":1,"partitions":{"0":[3]}}', {}))
    load(zk, nodes)

    assert reader.read_assignments(zk, ["b", "a", "missing"]) == {
        "a": {0: (1, 2), 1: (2, 1)}, "b": {0: (3,)}}
    assert reader.read_states(zk, [TopicPartition("a", 1), TopicPartition("b", 0),
                                   TopicPartition("missing", 0)]) == {
        TopicPartition("a", 1): PartitionState(2, (2,))}

    live = reader.read_cluster(zk, topics=["a", "missing"], states=False)
    assert live.snapshot.topics == {"a": {0: (1, 2), 1: (2, 1)}}
    assert live.snapshot.states == {}


def test_narrow_reads_refuse_undecodable_znodes(zk: KazooClient) -> None:
    load(zk, {**SKELETON, **topic_nodes("t", b"[1,2]", {})})
    with pytest.raises(OperationFailed, match=r"^cannot decode /brokers/topics/t: expected a JSON"):
        reader.read_assignments(zk, ["t"])


def test_the_chroot_is_honoured(zk_server: Any, zk_connect: str, zk: KazooClient) -> None:
    load(zk, {**SKELETON, **topic_nodes("inside", b'{"version":1,"partitions":{"0":[1]}}', {})})
    root = zk_connect[zk_connect.index("/"):]
    connect = zk_server.connect_string
    # a decoy cluster next to ours, and one at the chroot's parent level
    with session(ZkSettings(connect)) as client:
        load(client, {f"{root}/other": b"", f"{root}/other/brokers": b"",
                      f"{root}/other/brokers/topics": b"",
                      f"{root}/other/brokers/topics/outside": b'{"version":1,"partitions":{}}'})
        # without the chroot the cluster's topics are not where kadmin looks
        assert "inside" not in reader.read_cluster(client).snapshot.topics
    with session(ZkSettings(zk_connect)) as client:
        assert set(reader.read_cluster(client).snapshot.topics) == {"inside"}
    with session(ZkSettings(f"{zk_connect}/other")) as client:
        assert set(reader.read_cluster(client).snapshot.topics) == {"outside"}


def big_cluster(topics: int, partitions: int) -> dict[str, bytes]:
    nodes = dict(SKELETON)
    nodes.update({paths.broker(b): codec.encode_broker(Broker(b, rack=f"r{b % 3}"))
                  for b in range(6)})
    for t in range(topics):
        assignment = {p: tuple((t + p + r) % 6 for r in range(3)) for p in range(partitions)}
        nodes.update(topic_nodes(
            f"topic-{t:04d}", codec.encode_topic(assignment),
            {p: codec.encode_state(PartitionState(r[0], r)) for p, r in assignment.items()}))
    return nodes


def test_reads_twenty_thousand_partitions(zk: KazooClient) -> None:
    topics, partitions = 200, 100
    started = time.perf_counter()
    load(zk, big_cluster(topics, partitions))
    loaded = time.perf_counter()

    live = reader.read_cluster(zk)

    elapsed = time.perf_counter() - loaded
    total = topics * partitions
    print(f"\nloaded {total} partitions in {loaded - started:.1f}s; read_cluster: "
          f"{total / elapsed:,.0f} partitions/s ({elapsed:.2f}s)")
    assert live.snapshot.partition_count == total
    assert sum(len(s) for s in live.snapshot.states.values()) == total
    assert live.snapshot.state(TopicPartition("topic-0007", 42)) == PartitionState(
        (7 + 42) % 6, tuple((7 + 42 + r) % 6 for r in range(3)))
    assert live.unreadable == ()


def pull_the_plug(client: KazooClient, at_read: int, outage: Callable[[], None]) -> None:
    """A real outage at a known point of a read: ``outage`` runs right before the request
    holding the client's ``at_read``-th getData is sent (a multiRead holds many), while the
    earlier ones are in flight."""
    send = client._call
    reads = itertools.count(1)

    def send_that_pulls_the_plug(request: Any, result: Any) -> object:
        operations = getattr(request, "operations", (request,))
        if any(isinstance(op, GetData) and next(reads) == at_read for op in operations):
            outage()
        return send(request, result)

    client._call = send_that_pulls_the_plug  # type: ignore[method-assign]


def test_a_read_survives_the_server_restarting_midway(own_zk_server: EmbeddedZooKeeper) -> None:
    with session(ZkSettings(own_zk_server.connect_string)) as client:
        load(client, big_cluster(50, 100))
        restart = threading.Thread(target=own_zk_server.restart, kwargs={"down_for": 1.0})

        def restart_in_the_background() -> None:
            restart.start()
            # the requests sent so far are in flight when the connection goes
            eventually(lambda: not client.connected, "the connection lost")

        pull_the_plug(client, 2500, restart_in_the_background)
        try:
            live = reader.read_cluster(client)
        finally:
            restart.join()
        assert live.snapshot.partition_count == 5000
        assert sum(len(s) for s in live.snapshot.states.values()) == 5000
        assert live.unreadable == ()


def test_a_read_gives_up_when_the_server_stays_away(own_zk_server: EmbeddedZooKeeper,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """kazoo holds the requests of a client that reconnects until a server answers; the read
    must end with kadmin's error after the retry window instead (60 s, 3 s here)."""
    monkeypatch.setattr("kadmin.zk.session.DEFAULT_RETRY_SECONDS", 3.0)
    with session(ZkSettings(own_zk_server.connect_string)) as client:
        load(client, big_cluster(5, 10))
        pull_the_plug(client, 20, own_zk_server.stop)  # and it never comes back
        started = time.monotonic()
        with pytest.raises(OperationFailed, match=r"^ZooKeeper did not answer within 3s, kadmin's "
                                                  r"limit for one request \(ConnectionLoss\)$"):
            reader.read_cluster(client)
        assert time.monotonic() - started < 3.0 * 2 + 5  # the first wait and the retries' window
