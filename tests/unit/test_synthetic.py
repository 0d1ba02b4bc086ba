"""Synthetic clusters: shape, determinism, imbalance, argument checks, and the streamed folder."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kadmin import snapshots
from kadmin.model import Broker, ClusterSnapshot, InvalidInput, PartitionState
from kadmin.synthetic import synthetic_cluster, synthetic_sizes, write_synthetic_dir


def replica_counts(cluster: ClusterSnapshot) -> Counter[int]:
    return Counter(b for partitions in cluster.topics.values() for r in partitions.values()
                   for b in r)


def test_shape() -> None:
    cluster = synthetic_cluster(brokers=5, topics=8, partitions=4, replication_factor=3, racks=2)
    assert cluster.brokers == {b: Broker(b, f"broker-{b}", 9092, f"r{b % 2}") for b in range(5)}
    assert list(cluster.topics) == [f"topic-{i:06d}" for i in range(8)]
    assert cluster.partition_count == 32
    assert (cluster.controller, cluster.controller_epoch) == (0, 1)
    for name, partitions in cluster.topics.items():
        assert list(partitions) == [0, 1, 2, 3]
        for p, replicas in partitions.items():
            assert len(replicas) == len(set(replicas)) == 3
            assert set(replicas) <= set(range(5))
            assert cluster.states[name][p] == PartitionState(
                leader=replicas[0], isr=replicas, leader_epoch=0, controller_epoch=1)


def test_without_racks_and_custom_prefix() -> None:
    cluster = synthetic_cluster(3, 2, 1, 1, topic_prefix="bench.t")
    assert all(b.rack is None for b in cluster.brokers.values())
    assert list(cluster.topics) == ["bench.t-000000", "bench.t-000001"]


def test_replication_factor_equal_to_the_broker_count_uses_every_broker() -> None:
    cluster = synthetic_cluster(brokers=3, topics=5, partitions=7, replication_factor=3)
    assert all(sorted(r) == [0, 1, 2] for t in cluster.topics.values() for r in t.values())
    single = synthetic_cluster(brokers=1, topics=2, partitions=2, replication_factor=1)
    assert all(r == (0,) for t in single.topics.values() for r in t.values())


def test_deterministic_per_seed() -> None:
    a = synthetic_cluster(6, 30, 5, 2, racks=3, seed=7)
    assert a == synthetic_cluster(6, 30, 5, 2, racks=3, seed=7)
    assert a.topics != synthetic_cluster(6, 30, 5, 2, racks=3, seed=8).topics


def test_unbalanced_so_plans_have_work_to_do() -> None:
    cluster = synthetic_cluster(brokers=10, topics=300, partitions=10, replication_factor=3)
    replicas = replica_counts(cluster)
    leaders = Counter(r[0] for t in cluster.topics.values() for r in t.values())
    assert set(replicas) == set(range(10))  # every broker is used ...
    assert replicas[0] > 2 * replicas[9]  # ... but the first ones far more
    assert leaders[0] > 2 * leaders[9]


def test_the_snapshot_is_valid() -> None:
    cluster = synthetic_cluster(4, 10, 3, 2, racks=2)
    doc = snapshots.snapshot_to_document(cluster)
    assert snapshots.snapshot_from_document(doc, "synthetic") == cluster


@pytest.mark.parametrize(("brokers", "topics", "partitions", "rf", "racks", "message"), [
    (0, 1, 1, 1, 0, "brokers must be at least 1, got 0"),
    (3, -1, 1, 1, 0, "topics must be at least 0, got -1"),
    (3, 1, 0, 1, 0, "partitions must be at least 1, got 0"),
    (3, 1, 1, 0, 0, "replication factor must be between 1 and the number of brokers (3), got 0"),
    (3, 1, 1, 4, 0, "replication factor must be between 1 and the number of brokers (3), got 4"),
    (3, 1, 1, 1, 4, "racks must be between 0 and the number of brokers (3), got 4"),
    (3, 1, 1, 1, -1, "racks must be between 0 and the number of brokers (3), got -1"),
])
def test_invalid_arguments(brokers: int, topics: int, partitions: int, rf: int, racks: int,
                           message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        synthetic_cluster(brokers, topics, partitions, rf, racks=racks)
    assert str(info.value) == message


def test_invalid_prefix() -> None:
    with pytest.raises(InvalidInput) as info:
        synthetic_cluster(3, 1, 1, 1, topic_prefix="a b")
    assert str(info.value) == ("topic prefix 'a b' does not make legal topic names "
                               "(e.g. 'a b-000000')")
    with pytest.raises(InvalidInput, match="does not make legal topic names"):
        synthetic_cluster(3, 1, 1, 1, topic_prefix="t" * 249)  # 249 + 7 = 256 characters


def test_empty_cluster() -> None:
    cluster = synthetic_cluster(2, 0, 1, 1)
    assert cluster.topics == {} and cluster.partition_count == 0


def test_streamed_folder_is_the_same_cluster(tmp_path: Path) -> None:
    path = tmp_path / "snap"
    write_synthetic_dir(path, 7, 40, 6, 3, racks=3, seed=3)
    assert snapshots.read_snapshot(path) == synthetic_cluster(7, 40, 6, 3, racks=3, seed=3)
    assert len((path / "topics.jsonl").read_text().splitlines()) == 40
    with pytest.raises(InvalidInput, match="already exists"):
        write_synthetic_dir(path, 7, 40, 6, 3)
    write_synthetic_dir(path, 2, 1, 1, 1, force=True)
    assert snapshots.read_snapshot(path).partition_count == 1


def test_bad_arguments_write_nothing(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="replication factor"):
        write_synthetic_dir(tmp_path / "snap", 2, 1, 1, 3)
    assert list(tmp_path.iterdir()) == []


def test_synthetic_sizes_are_long_tailed_and_deterministic() -> None:
    snapshot = synthetic_cluster(brokers=6, topics=200, partitions=10, replication_factor=3)
    sizes = synthetic_sizes(snapshot, seed=1)
    assert synthetic_sizes(snapshot, seed=1) == sizes
    assert sizes.keys() == snapshot.topics.keys()
    values = sorted(v for partitions in sizes.values() for v in partitions.values())
    median = values[len(values) // 2]
    # a long tail: the largest partitions are orders of magnitude above the median
    assert values[-1] > 50 * median and values[0] < median / 50
    assert all(v >= 1 for v in values)
