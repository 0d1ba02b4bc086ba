"""Partition sizes from kafka-log-dirs.sh output, fitted to a cluster; sizes in snapshots;
bytes in plan stats and batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kadmin import executor, plans, sizes, snapshots
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionMove,
    Reassignment,
    ReassignmentPlan,
    TopicPartition,
)

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b) for b in (0, 1, 2)},
    topics={"orders": {0: (0, 1), 1: (1, 2)}, "web-logs-eu": {0: (2, 0), 1: (0, 1), 2: (1, 2)}})

LOG_DIRS = {"version": 1, "brokers": [
    {"broker": 0, "logDirs": [{"logDir": "/data/k", "error": None, "partitions": [
        {"partition": "orders-0", "size": 1000, "offsetLag": 0, "isFuture": False},
        {"partition": "web-logs-eu-0", "size": 300, "offsetLag": 0, "isFuture": False},
        {"partition": "web-logs-eu-1", "size": 700, "offsetLag": 0, "isFuture": False}]}]},
    {"broker": 1, "logDirs": [
        {"logDir": "/data/a", "error": None, "partitions": [
            {"partition": "orders-0", "size": 1200, "offsetLag": 0, "isFuture": False},
            {"partition": "orders-1", "size": 50, "offsetLag": 0, "isFuture": False},
            {"partition": "gone-0", "size": 9, "offsetLag": 0, "isFuture": False}]},
        {"logDir": "/data/b", "error": None, "partitions": [
            {"partition": "orders-1", "size": 99999, "offsetLag": 0, "isFuture": True}]},
        {"logDir": "/data/c", "error": "org.apache.kafka.common.errors.KafkaStorageException",
         "partitions": []}]}]}

TOOL_OUTPUT = ("Querying brokers for log directories information\n"
               "Received log directory information from brokers 0,1,2\n"
               + json.dumps(LOG_DIRS) + "\n")


def write(tmp_path: Path, text: str, name: str = "sizes.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text", [TOOL_OUTPUT, json.dumps(LOG_DIRS)], ids=["tool", "json"])
def test_sizes_are_the_largest_non_future_replica(tmp_path: Path, text: str) -> None:
    found = sizes.read_sizes(write(tmp_path, text), CLUSTER)

    assert found.measured == {"orders": {0: 1200, 1: 50}, "web-logs-eu": {0: 300, 1: 700}}
    assert found.missing == (TopicPartition("web-logs-eu", 2),)
    assert found.median == 300  # the lower median of 50, 300, 700, 1200
    assert found[TopicPartition("web-logs-eu", 2)] == 300
    assert found.ignored == (TopicPartition("gone", 0),)
    assert len(found) == 5 and found.total() == 1200 + 50 + 300 + 700 + 300
    assert TopicPartition("nope", 0) not in found
    lines = sizes.warnings(found)
    assert lines[0].endswith("no size for 1 partition(s), counted as the median 300 bytes: "
                             "web-logs-eu-2")
    assert lines[1].endswith("1 partition(s) not in the cluster, ignored: gone-0")
    # only the plan's topics read (reassign --sizes): others are outside the plan, not missing
    scoped = sizes.warnings(found, {"orders", "web-logs-eu"})
    assert scoped[1].endswith("1 partition(s) of topics outside the plan, ignored: gone-0")
    assert not any("not in the cluster" in line for line in scoped)


@pytest.mark.parametrize(("doc", "message"), [
    ({"version": 1}, r"\$: expected an object with a \"brokers\" list"),
    ({"version": 1, "brokers": [{"broker": 0}]}, r"\$.brokers\[0\]: expected an object with a "
                                                 r"\"logDirs\" list"),
    ({"version": 1, "brokers": [{"broker": 0, "logDirs": [{"partitions": [
        {"partition": "orders", "size": 1, "isFuture": False}]}]}]},
     r"\$.brokers\[0\].logDirs\[0\].partitions\[0\].partition: 'orders' is not"),
    ({"version": 1, "brokers": [{"broker": 0, "logDirs": [{"partitions": [
        {"partition": "orders-0", "size": -1, "isFuture": False}]}]}]},
     r"partitions\[0\].size: expected a size in bytes \(an integer >= 0\), got -1"),
    ({"version": 1, "brokers": [{"broker": 0, "logDirs": [{"partitions": [
        {"partition": "orders-0", "size": "1", "isFuture": False}]}]}]}, r"got '1'"),
    ({"version": 2, "brokers": []}, r"\$.version: unsupported version 2"),
])
def test_bad_size_files_are_one_line_naming_the_place(tmp_path: Path, doc: object,
                                                       message: str) -> None:
    path = write(tmp_path, json.dumps(doc))
    with pytest.raises(InvalidInput, match=message) as info:
        sizes.read_sizes(path, CLUSTER)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_truncated_and_foreign_size_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"sizes.txt: not valid JSON"):
        sizes.read_sizes(write(tmp_path, TOOL_OUTPUT[:-40]), CLUSTER)
    with pytest.raises(InvalidInput, match=r"no JSON document found"):
        sizes.read_sizes(write(tmp_path, "Querying brokers for log directories information\n"),
                         CLUSTER)
    foreign = {"version": 1, "brokers": [{"broker": 0, "logDirs": [{"partitions": [
        {"partition": "other-0", "size": 1, "isFuture": False}]}]}]}
    with pytest.raises(InvalidInput, match=r"sizes none of the cluster's 5 partitions"):
        sizes.read_sizes(write(tmp_path, json.dumps(foreign)), CLUSTER)


@pytest.mark.parametrize("fmt", ["json", "dir"])
def test_snapshots_carry_sizes_both_formats(tmp_path: Path, fmt: str) -> None:
    found = sizes.read_sizes(write(tmp_path, TOOL_OUTPUT), CLUSTER)
    sized = ClusterSnapshot(CLUSTER.brokers, CLUSTER.topics, sizes=found.measured)
    target = tmp_path / f"snap-{fmt}"
    snapshots.write_snapshot(sized, target, fmt="dir" if fmt == "dir" else "json")

    back = snapshots.read_snapshot(target)
    assert back == sized
    again = sizes.snapshot_sizes(back)
    assert again is not None and dict(again) == dict(found)


def test_a_snapshot_size_of_an_unknown_partition_is_refused() -> None:
    doc = {"version": 1, "brokers": {"0": {}}, "topics": {"orders": {"0": [0]}},
           "sizes": {"orders": {"1": 5}}}
    with pytest.raises(InvalidInput, match=r"c.json: \$.sizes.orders.1: topic orders has no "
                                           r"partition 1"):
        snapshots.snapshot_from_document(doc, "c.json")
    doc["sizes"] = {"orders": {"0": -5}}
    with pytest.raises(InvalidInput, match=r"\$.sizes.orders.0: must be a size in bytes"):
        snapshots.snapshot_from_document(doc, "c.json")


def test_plan_stats_count_bytes_moved_and_per_broker() -> None:
    found = sizes.sizes_for({"orders": {0: 1000, 1: 50}, "web-logs-eu": {0: 300, 1: 700, 2: 10}},
                            CLUSTER, "s")
    plan = ReassignmentPlan((PartitionMove("orders", 0, (2, 1)),          # +2: 1000 bytes
                             PartitionMove("web-logs-eu", 1, (1, 0)),     # reorder: 0 bytes
                             PartitionMove("web-logs-eu", 2, (0, 1))))    # +0: 10 bytes
    stats = plans.plan_stats(plan, CLUSTER, found)

    assert stats.bytes_moved == 1000 + 10
    by_broker = {b.broker: (b.bytes_before, b.bytes_after) for b in stats.brokers}
    assert by_broker == {0: (1000 + 300 + 700, 300 + 700 + 10),
                         1: (1000 + 50 + 700 + 10, 1000 + 50 + 700 + 10),
                         2: (50 + 300 + 10, 1000 + 50 + 300)}
    assert plans.plan_stats(plan, CLUSTER).bytes_moved is None


def test_batches_are_bounded_by_the_bytes_they_move() -> None:
    moves = [PartitionMove("t", p, (1,)) for p in range(6)]
    weight = {0: 40, 1: 40, 2: 40, 3: 500, 4: 10, 5: 10}
    batches = plans.reassignment_batches(moves, 1000, 1_000_000,
                                         moved_bytes=lambda m: weight[m.partition],
                                         max_moved_bytes=100)
    assert [[m.partition for m in b] for b in batches] == [[0, 1], [2], [3], [4, 5]]


def test_a_move_in_flight_weighs_what_it_copies_from_its_original_replicas() -> None:
    """A batch an interrupted run left in flight: the topic znode lists target and old replicas
    together, which already hold every target replica; the copy still to make is measured from
    the original replicas (Kafka 2.4+'s adding_replicas)."""
    moving = ClusterSnapshot(
        CLUSTER.brokers, {**CLUSTER.topics, "orders": {0: (2, 1, 0), 1: (1, 2)}},
        reassigning={"orders": {0: Reassignment(target=(2, 1), original=(1, 0))}})
    found = {TopicPartition("orders", 0): 1000, TopicPartition("orders", 1): 50}
    assert executor.weigh_move(found, moving, PartitionMove("orders", 0, (2, 1))) == 1000
    assert executor.weigh_move(found, moving, PartitionMove("orders", 1, (0, 2))) == 50
