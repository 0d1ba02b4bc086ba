"""the clusters operators quoted, built as an operator would have them: shared by
tests/cli/test_cli_quoted_clusters.py (small clusters of the same shapes, held to the integer
program in every run) and bench/bench_quoted_clusters.py (the issue's sizes)."""

from __future__ import annotations

import random
from collections.abc import Mapping

from kadmin.model import Broker, ClusterSnapshot, Replicas
from kadmin.placement import PlacementOptions, Strategy, place
from kadmin.snapshots import snapshot_to_document
from kadmin.synthetic import synthetic_cluster

Topics = dict[str, dict[int, Replicas]]
Racks = dict[int, str]


def kafka_created(brokers: int, shape: Mapping[str, tuple[int, int]], seed: int) -> Topics:
    """Topics ``name -> (partitions, replication factor)`` as ``kafka-topics.sh --create``
    places them on brokers ``0..brokers-1`` (AdminUtils.assignReplicasToBrokersRackUnaware):
    a start index and a replica shift drawn at random per topic (seeded here), the shift bumped
    at every multiple of the broker count."""
    rng = random.Random(seed)
    topics: Topics = {}
    for name, (partitions, rf) in shape.items():
        start, shift = rng.randrange(brokers), rng.randrange(brokers)
        placed: dict[int, Replicas] = {}
        for p in range(partitions):
            if p > 0 and p % brokers == 0:
                shift += 1
            first = (p + start) % brokers
            placed[p] = (first, *((first + 1 + (shift + j) % (brokers - 1)) % brokers
                                  for j in range(rf - 1)))
        topics[name] = placed
    return topics


def one_added_to_eleven(topics: int) -> Topics:
    """Topics of 20 partitions (RF 3) created on brokers 0-10; broker 11 is new."""
    return kafka_created(11, {f"t{i:03d}": (20, 3) for i in range(topics)}, seed=0)


def skewed(topics: int) -> Topics:
    """kadmin.synthetic's 12 brokers, topics of 20 partitions (RF 3) created as the cluster
    grew (the skew scenario of bench_rebalance_vs_kafka_utils.py)."""
    return {t: dict(p) for t, p in synthetic_cluster(12, topics, 20, 3, seed=1).topics.items()}


NEW_RACK: Racks = {b: "a" if b < 3 else "b" if b < 6 else "c" for b in range(7)}


def new_rack(partitions: int = 180) -> Topics:
    """Racks a {0,1,2}, b {3,4,5} and a new rack c {6}: every partition (RF 2) spans a and b."""
    return {"t": {p: (p % 3, 3 + (p * 7) % 3) for p in range(partitions)}}


THREE_RACKS: Racks = {**{b: f"r{b % 3}" for b in range(21)}, 21: "r0"}
"""21 brokers in 3 racks of 7, and broker 21 new in the first rack."""


def three_racks_of_seven(topics: int, not_spanning: int) -> Topics:
    """Topics of 20 partitions (RF 3) placed rack-aware by Kafka's rule on brokers 0-20, except
    ``not_spanning`` partitions placed before rack awareness (two replicas in one rack)."""
    current = {f"t{i:02d}": {p: (0, 0, 0) for p in range(20)} for i in range(topics)}
    placed: Topics = {t: dict(parts) for t, parts in place(
        current, sorted(current), [Broker(b, rack=THREE_RACKS[b]) for b in range(21)],
        PlacementOptions(strategy=Strategy.KAFKA)).items()}
    rng = random.Random(1)
    names = sorted(placed)
    for k in range(not_spanning):
        a, b = rng.sample([x for x in range(21) if THREE_RACKS[x] == "r1"], 2)
        placed[names[k % topics]][k // topics] = (a, b, rng.choice(
            [x for x in range(21) if THREE_RACKS[x] == "r2"]))
    return placed


T0 = [(0, 1), (0, 2), (0, 3), (1, 2), (4, 5), (4, 6), (5, 7), (6, 7)]
"""Topic t0: 8 partitions (RF 2) on 8 brokers, spread 2."""


def mixed_rf_with_t0() -> Topics:
    """Topics of replication factors 1 to 4 created while the cluster had brokers 0-3 (they
    crowd them), and t0 over all 8 brokers."""
    topics = kafka_created(4, {f"rf{rf}": (20, rf) for rf in range(1, 5)}, seed=3)
    topics["t0"] = dict(enumerate(T0))
    return topics


def document(topics: Topics, brokers: int, racks: Mapping[int, str] | None = None) -> dict:
    """A cluster file (``--cluster``) of ``brokers`` registered brokers holding ``topics``."""
    snapshot = ClusterSnapshot({b: Broker(b, f"h{b}", 9092, (racks or {}).get(b))
                                for b in range(brokers)}, topics)
    return snapshot_to_document(snapshot)


def table(topics: Topics) -> tuple[list[Replicas], list[int]]:
    """Partitions in topic order and each one's topic index, for the integer program."""
    names = sorted(topics)
    return ([topics[t][p] for t in names for p in sorted(topics[t])],
            [i for i, t in enumerate(names) for _ in topics[t]])
