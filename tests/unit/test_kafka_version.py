"""Kafka releases as kadmin tells their reassignment behaviour apart, and the sandbox's pure
rewriting of a topic znode in each release's shape."""

from __future__ import annotations

import json

import pytest

from kadmin.kafka_version import KafkaVersion, parse_kafka_version
from kadmin.sandbox.reassignment import in_flight, origin, rewrite_topic


@pytest.mark.parametrize(("text", "version", "kip455"), [
    ("2.3", KafkaVersion(2, 3), False), ("2.3.1", KafkaVersion(2, 3), False),
    ("2.4", KafkaVersion(2, 4), True), ("2.8.2", KafkaVersion(2, 8), True),
    ("0.10", KafkaVersion(0, 10), False), ("3.6", KafkaVersion(3, 6), True)])
def test_versions_parse_and_split_at_kip_455(text: str, version: KafkaVersion,
                                             kip455: bool) -> None:
    parsed = parse_kafka_version(text)
    assert parsed == version
    assert parsed.records_moves_in_topic is kip455
    assert parsed.topic_znode_version == (2 if kip455 else 1)
    assert str(parsed) == f"{version.major}.{version.minor}"


@pytest.mark.parametrize("text", ["", "2", "two.three", "2.x", "4.0", "0.7", "2.3.1.4"])
def test_anything_else_is_refused_with_what_was_expected(text: str) -> None:
    with pytest.raises(ValueError, match="Kafka version"):
        parse_kafka_version(text)


def test_before_2_4_the_topic_znode_gets_the_union_and_no_markers() -> None:
    doc = {"version": 1, "partitions": {"0": [1, 2, 3], "1": [2, 3, 4]}}
    written = json.loads(rewrite_topic(doc, {0: ((4, 2, 3), (1, 2, 3))}, {}, kip455=False))
    assert written == {"version": 1, "partitions": {"0": [4, 2, 3, 1], "1": [2, 3, 4]}}
    assert in_flight(written) == {}  # nothing in ZooKeeper says a move is in flight
    assert origin(written, 0) == (4, 2, 3, 1)  # nor which replicas were the originals


def test_from_2_4_the_markers_give_the_target_and_the_originals_back() -> None:
    doc = {"version": 2, "partitions": {"0": [1, 2, 3], "1": [2, 3, 4]},
           "adding_replicas": {}, "removing_replicas": {}, "topic_id": "abc"}
    written = json.loads(rewrite_topic(doc, {0: ((4, 2, 3), (1, 2, 3))}, {}))
    assert written["partitions"]["0"] == [4, 2, 3, 1]
    assert (written["adding_replicas"], written["removing_replicas"]) == ({"0": [4]}, {"0": [1]})
    assert written["topic_id"] == "abc"
    assert in_flight(written) == {0: (4, 2, 3)}
    assert origin(written, 0) == (2, 3, 1)  # the set; Kafka's order is target-first

    done = json.loads(rewrite_topic(written, {}, {0: (4, 2, 3)}))
    assert done["partitions"]["0"] == [4, 2, 3]
    assert (done["adding_replicas"], done["removing_replicas"]) == ({}, {})
    assert in_flight(done) == {}
