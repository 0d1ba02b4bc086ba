"""The operator's everyday story against a real ZooKeeper and the simulated controller: a broker
was just added; `plan rebalance`, `plan validate`, `reassign`, `elect`, and the new broker
carries its share of replicas and leaderships."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kadmin.model import Broker, ClusterSnapshot
from kadmin.synthetic import synthetic_cluster
from kadmin.zk import codec, paths

pytestmark = pytest.mark.zk


def grown_cluster() -> ClusterSnapshot:
    """Five loaded brokers and a sixth that just joined, empty."""
    old = synthetic_cluster(brokers=5, topics=4, partitions=9, replication_factor=3, seed=5)
    brokers = {**old.brokers, 5: Broker(5, "broker-5", 9092)}
    return ClusterSnapshot(brokers, old.topics, old.states, old.controller, old.controller_epoch)


def test_a_new_broker_takes_its_share_end_to_end(kadmin, start_sandbox, tmp_path):
    box = start_sandbox(grown_cluster(), latency=0.01)
    zk = box.connect_string
    run = kadmin("plan", "rebalance", "-z", zk, "--out", "p.json", "--json")
    assert run.code == 0, run.err
    summary = json.loads(run.out)
    assert summary["replica_moves"] == summary["lower_bound"] > 0
    assert summary["after"]["replica_spread"] == 0  # 108 replicas on 6 brokers

    assert kadmin("plan", "validate", "p.json", "-z", zk).code == 0
    run = kadmin("reassign", "--plan", "p.json", "-z", zk, "--timeout", "120")
    assert run.code == 0, run.err
    run = kadmin("elect", "--all-topics", "-z", zk, "--timeout", "120")
    assert run.code == 0, run.err

    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for topic in box.snapshot.topics:
        for partition, members in codec.decode_topic(
                box.client.get(paths.topic(topic))[0]).items():
            replicas.update(members)
            state = codec.decode_state(
                box.client.get(paths.partition_state(topic, partition))[0])
            leaders[state.leader] += 1
    assert sorted(replicas.values()) == [18] * 6
    assert max(leaders.values()) - min(leaders.values()) <= 1 and leaders[5] >= 6

    again = kadmin("plan", "rebalance", "-z", zk)
    assert again.code == 0 and again.out.startswith("nothing to move"), again.out


def test_a_dead_broker_read_from_zookeeper_must_be_named(kadmin, start_sandbox, tmp_path):
    snapshot = grown_cluster()
    box = start_sandbox(snapshot, latency=0.01)
    box.controller.kill_broker(2)  # its registration goes; its replicas stay
    run = kadmin("plan", "rebalance", "-z", box.connect_string, "--out", "p.json")
    assert run.code == 2
    assert "broker(s) 2 hold replicas but are not registered" in run.err
    assert not (tmp_path / "p.json").exists()
    run = kadmin("plan", "rebalance", "-z", box.connect_string, "--remove-brokers", "2",
                 "--out", "p.json", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["after"]["elsewhere"] == 0
