"""multiRead (opcode 22) against a real ZooKeeper: the same answers as single reads, sizes kept
under the budget, chroot and ACLs, and the fallback for servers before 3.6 (a proxy in front of
the real server that answers opcode 22 as ZooKeeper 3.5 does)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from kadmin.model import Broker, OperationFailed, PartitionState, TopicPartition
from kadmin.zk import codec, multiread, paths, reader
from kadmin.zk.multiread import Op, ReadStats
from kadmin.zk.session import ZkSettings, session
from tests.integration.test_reader import SKELETON, load, topic_nodes
from tests.integration.zk_proxy import OldServerProxy

pytestmark = pytest.mark.zk


def big_topic(partitions: int, brokers: int = 1000) -> dict[int, tuple[int, ...]]:
    return {p: (p % brokers, (p + 1) % brokers, (p + 2) % brokers) for p in range(partitions)}


def mixed_cluster(huge: int = 12_000) -> dict[str, bytes]:
    """Present, missing, undecodable, empty and large znodes side by side (``huge``: the
    partitions of the three large topics, which have one state znode each)."""
    nodes = dict(SKELETON)
    nodes.update({paths.broker(b): codec.encode_broker(Broker(b, f"h{b}", 9092))
                  for b in range(3)})
    nodes[f"{paths.BROKER_IDS}/7"] = b"{not json"
    for t in range(30):
        assignment: dict[int, tuple[int, ...]] = {p: ((t + p) % 3, (t + p + 1) % 3)
                                                  for p in range(4)}
        states = {p: codec.encode_state(PartitionState(r[0], r)) for p, r in assignment.items()
                  if (t + p) % 5}  # every fifth state znode missing
        if t == 3:
            states[1] = b'{"leader":1}'  # undecodable: no isr
        nodes.update(topic_nodes(f"t{t:02d}", codec.encode_topic(assignment), states))
    # three topics of ~250 KB each: one answer cannot hold them all
    for name in ("huge-a", "huge-b", "huge-c"):
        data = codec.encode_topic(big_topic(huge))
        nodes.update(topic_nodes(name, data, {0: codec.encode_state(PartitionState(0, (0, 1)))}))
    nodes.update(topic_nodes("broken", b"[]", {}))
    nodes[paths.CONTROLLER] = codec.encode_controller(1)
    nodes[paths.CONTROLLER_EPOCH] = b"4"
    return nodes


@pytest.fixture
def reading(zk_connect: str) -> Iterator[KazooClient]:
    """kadmin's own session on the test's chroot."""
    with session(ZkSettings(zk_connect)) as client:
        yield client


def singles(client: KazooClient, requests: list[tuple[Op, Any]]) -> list[tuple[str, Any, Any]]:
    return list(multiread._singles(client, iter(requests)))


def test_multiread_answers_what_single_reads_answer(zk: KazooClient,
                                                    reading: KazooClient) -> None:
    nodes = mixed_cluster()
    assert len(nodes[paths.topic("huge-a")]) > 200_000
    load(zk, nodes, batch=50)
    requests: list[tuple[Op, Any]] = [(Op(path), i) for i, path in enumerate(nodes)]
    requests += [(Op(path + "/missing"), -i) for i, path in enumerate(list(nodes)[:40])]
    requests += [(Op(parent, children=True), "children") for parent in
                 (paths.BROKER_IDS, paths.BROKER_TOPICS, "/nowhere", paths.partitions("t01"))]
    requests += [(Op(paths.topic("t01"), stat=True), "stat")]
    stats = ReadStats()

    assert multiread.supported(reading)
    many = list(multiread.read(reading, requests, stats))

    assert many == singles(reading, requests)
    expected = [(path, i, data) for i, (path, data) in enumerate(nodes.items())]
    assert [r for r in many if isinstance(r[1], int)] == expected
    assert stats.requests < len(requests) / 10
    value = many[-1][2]
    assert value[0] == nodes[paths.topic("t01")] and value[1].dataLength == len(value[0])


def test_read_cluster_is_the_same_through_multiread_and_single_reads(
        zk: KazooClient, reading: KazooClient) -> None:
    load(zk, mixed_cluster(), batch=50)
    assert multiread.supported(reading)
    many = reader.read_cluster(reading)
    multiread._SUPPORT[reading] = False
    one_by_one = reader.read_cluster(reading)

    assert many == one_by_one
    assert many.snapshot.partition_count == 30 * 4 + 3 * 12_000
    undecodable = {path for path, reason in many.unreadable if reason != reader.NO_STATE}
    assert undecodable == {"/brokers/ids/7", "/brokers/topics/broken",
                           "/brokers/topics/t03/partitions/1/state"}
    # a missing state znode is reported too (offline, leader unknown), never counted nowhere
    stateless = {path for path, reason in many.unreadable if reason == reader.NO_STATE}
    assert len(stateless) == sum(1 for t in range(30) for p in range(4) if not (t + p) % 5) \
        + 3 * (12_000 - 1)
    assert "/brokers/topics/t00/partitions/0/state" in stateless
    assert many.snapshot.brokers[7] == Broker(7)  # registered, unreadable: kept by id
    assert TopicPartition("t00", 0) not in {TopicPartition(t, p) for t, s in
                                            many.snapshot.states.items() for p in s}
    assert many.snapshot.controller == 1 and many.snapshot.controller_epoch == 4


def test_an_answer_stays_under_the_budget_once_sizes_are_known(
        zk: KazooClient, reading: KazooClient) -> None:
    """Large topic znodes: the read starts with one-znode requests and grows as answers come
    (slow start); with each znode's size known from a first read, no answer holds more than
    ANSWER_BYTES, however the znodes mix."""
    nodes = dict(SKELETON)
    sizes = {}
    for t in range(40):
        # every fourth topic is ~290 KB, the others ~10 bytes a partition
        data = codec.encode_topic(big_topic(14_000 if t % 4 == 0 else 8))
        sizes[paths.topic(f"t{t:02d}")] = len(data)
        nodes[paths.topic(f"t{t:02d}")] = data
    load(zk, nodes, batch=5)

    first = ReadStats()
    read = list(multiread.read(reading, [(path, None) for path in sizes], first))
    assert [(path, len(data)) for path, _, data in read] == list(sizes.items())
    # one answer holds at most one payload larger than those seen before it
    assert first.largest_answer <= multiread.ANSWER_BYTES + max(sizes.values())
    assert first.batch_sizes[0] == 1

    known = ReadStats()
    again = list(multiread.read(
        reading, [(Op(path, size=size), None) for path, size in sizes.items()], known))
    assert [data for _, _, data in again] == [data for _, _, data in read]
    assert known.answers_over_budget == 0
    assert known.largest_answer <= multiread.ANSWER_BYTES
    assert sum(sizes.values()) > 4 * multiread.ANSWER_BYTES
    assert len(known.batch_sizes) > 4  # split, although 40 reads fit one request by count


def test_a_znode_larger_than_the_budget_goes_alone(zk: KazooClient,
                                                   reading: KazooClient) -> None:
    big = b"x" * (multiread.ANSWER_BYTES + 1000)
    load(zk, {"/a": b"1", "/big": big, "/b": b"2"})
    stats = ReadStats()
    found = list(multiread.read(reading, [(Op("/a", size=1), 1), (Op("/big", size=len(big)), 2),
                                          (Op("/b", size=1), 3)], stats))
    assert found == [("/a", 1, b"1"), ("/big", 2, big), ("/b", 3, b"2")]
    assert stats.batch_sizes == [1, 1, 1]


def test_reads_through_the_chroot(zk_server: Any, zk_connect: str, zk: KazooClient) -> None:
    load(zk, {"/x": b"inside", "/x/y": b""})
    root = zk_connect[zk_connect.index("/"):]
    with session(ZkSettings(zk_connect)) as client:
        assert multiread.supported(client)
        assert list(multiread.read(client, [("/x", 0), (Op("/", children=True), 1)])) == [
            ("/x", 0, b"inside"), ("/", 1, ["x"])]
    with session(ZkSettings(zk_server.connect_string)) as client:
        assert list(multiread.read(client, [(f"{root}/x", 0), ("/x", 1)])) == [
            (f"{root}/x", 0, b"inside")]


def test_a_refused_read_names_its_znode_on_both_paths(zk: KazooClient,
                                                      reading: KazooClient) -> None:
    secret = [make_digest_acl("kafka", "secret", all=True)]
    load(zk, {"/open": b"1"})
    zk.create("/locked", b"2", acl=secret)
    requests = [(Op("/open"), 1), (Op("/locked"), 2)]
    try:
        with pytest.raises(OperationFailed, match=r"^cannot read /locked: NoAuthError$"):
            list(multiread.read(reading, requests))
        with pytest.raises(OperationFailed, match=r"^cannot read /locked: NoAuthError$"):
            singles(reading, requests)
    finally:
        zk.delete("/locked")  # the parent's ACL allows it; the chroot's cleanup could not list it


@pytest.mark.parametrize("mode", ["unimplemented", "close"])
def test_a_server_without_multiread_is_read_znode_by_znode(
        zk_server: Any, zk_connect: str, zk: KazooClient, mode: str,
        caplog: pytest.LogCaptureFixture) -> None:
    load(zk, mixed_cluster(huge=300), batch=50)
    with session(ZkSettings(zk_connect)) as client:
        direct = reader.read_cluster(client)
    chroot = zk_connect[zk_connect.index("/"):]
    proxy = OldServerProxy(zk_server.connect_string, mode=mode)
    try:
        with caplog.at_level(logging.INFO, logger="kadmin.zk"), \
                session(ZkSettings(proxy.connect_string + chroot)) as client:
            through_old = reader.read_cluster(client)
            again = reader.read_cluster(client)
            assert not multiread.supported(client)
        # a 3.5 server is asked once per session (twice when it only drops the connection:
        # a connection lost once may be chance)
        assert proxy.refused == (1 if mode == "unimplemented" else 2)
    finally:
        proxy.close()
    assert through_old == direct == again
    said = [r.getMessage() for r in caplog.records if r.name == "kadmin.zk"]
    assert len(said) == 1
    assert "does not answer multiRead (opcode 22, servers 3.6+)" in said[0]


@pytest.mark.parametrize("mode", ["unimplemented", "close"])
def test_a_session_that_lands_on_an_old_server_midway_finishes_one_by_one(
        zk_server: Any, zk_connect: str, zk: KazooClient, mode: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """The probe passed (a 3.6+ server), then a batch meets a server without multiRead (a
    mixed ensemble): that batch and the rest are read one by one, nothing lost or doubled."""
    load(zk, mixed_cluster(huge=300), batch=50)
    chroot = zk_connect[zk_connect.index("/"):]
    with session(ZkSettings(zk_connect)) as client:
        direct = reader.read_cluster(client)
    # the probe and the first requests pass: the 12th multiRead, in the middle of the topic
    # and state reads with others in flight behind it, is refused
    proxy = OldServerProxy(zk_server.connect_string, mode=mode, passes=12)
    try:
        with caplog.at_level(logging.INFO, logger="kadmin.zk"), \
                session(ZkSettings(proxy.connect_string + chroot)) as client:
            partitions = [TopicPartition(t, p) for t, a in direct.snapshot.topics.items()
                          for p in a]
            states = dict(reader._states(client, partitions, reader._Decoder(collect=True)))
            midway = reader.read_cluster(client)
            assert multiread._SUPPORT[client] is False
            # refused at least once: requests kazoo had queued but not sent when the
            # connection dropped go out on the next one, and are refused again
            assert proxy.refused >= 1 and proxy.passes == 0
    finally:
        proxy.close()
    assert midway == direct
    assert states == {TopicPartition(t, p): s for t, ps in direct.snapshot.states.items()
                      for p, s in ps.items()}
    assert len([r for r in caplog.records if r.name == "kadmin.zk"]) == 1


def test_verbose_says_once_that_the_server_makes_kadmin_read_znode_by_znode(
        kadmin: Any, zk_server: Any, zk_connect: str, zk: KazooClient) -> None:
    load(zk, mixed_cluster(huge=10), batch=50)
    chroot = zk_connect[zk_connect.index("/"):]
    proxy = OldServerProxy(zk_server.connect_string)
    try:
        quiet = kadmin("status", "-z", proxy.connect_string + chroot, "--json")
        told = kadmin("--verbose", "status", "-z", proxy.connect_string + chroot, "--json")
        direct = kadmin("status", "-z", zk_connect, "--json")
    finally:
        proxy.close()
    assert quiet.code == told.code == direct.code == 0, (quiet.err, told.err)
    assert quiet.out == told.out == direct.out
    assert "multiRead" not in quiet.err
    notices = [line for line in told.err.splitlines() if "multiRead" in line]
    assert notices == [f"kadmin: ZooKeeper at {proxy.connect_string} does not answer multiRead "
                       "(opcode 22, servers 3.6+): reading znode by znode, pipelined (slower)"]
