"""Replica placement: Kafka's own expectations, an oracle port of AdminUtils, and properties."""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kadmin.model import Broker, InvalidInput, Replicas, TopicAssignment
from kadmin.placement import (
    BrokerRing,
    PlacementOptions,
    Strategy,
    assign_replicas_to_brokers,
    place,
    place_topic,
    replication_factor_of,
    roundrobin_replicas,
    topic_offsets,
)


def racked(mapping: Mapping[int, str | None]) -> list[Broker]:
    return [Broker(i, rack=r) for i, r in mapping.items()]


def plain(*ids: int) -> list[Broker]:
    return [Broker(i) for i in ids]


# --- Oracle: AdminUtils.assignReplicasToBrokers transliterated line by line (Kafka 2.8-3.x) ---


def kafka_oracle(
    brokers: list[Broker], n_partitions: int, rf: int, fixed_start_index: int, start_partition_id: int
) -> dict[int, list[int]]:
    ordered = sorted(brokers, key=lambda b: b.id)
    ret: dict[int, list[int]] = {}
    current = max(0, start_partition_id)
    shift = fixed_start_index

    def replica_index(first: int, second_shift: int, j: int, n: int) -> int:
        return (first + 1 + (second_shift + j) % (n - 1)) % n

    if all(b.rack is None for b in ordered):
        blist = [b.id for b in ordered]
        for _ in range(n_partitions):
            if current > 0 and current % len(blist) == 0:
                shift += 1
            first = (current + fixed_start_index) % len(blist)
            buf = [blist[first]]
            for j in range(rf - 1):
                buf.append(blist[replica_index(first, shift, j, len(blist))])
            ret[current] = buf
            current += 1
        return ret
    rack_map = {b.id: b.rack for b in ordered}
    num_racks = len(set(rack_map.values()))
    inverse: dict[str | None, list[int]] = {}
    for i, r in rack_map.items():
        inverse.setdefault(r, []).append(i)
    iterators = {r: iter(sorted(ids)) for r, ids in inverse.items()}
    racks = sorted(iterators)  # type: ignore[type-var]
    arranged: list[int] = []
    rack_index = 0
    while len(arranged) < len(rack_map):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            arranged.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    n = len(arranged)
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            shift += 1
        first = (current + fixed_start_index) % n
        leader = arranged[first]
        buf = [leader]
        racks_with = {rack_map[leader]}
        brokers_with = {leader}
        k = 0
        for _j in range(rf - 1):
            done = False
            while not done:
                broker = arranged[replica_index(first, shift * num_racks, k, n)]
                rack = rack_map[broker]
                if (rack not in racks_with or len(racks_with) == num_racks) and (
                    broker not in brokers_with or len(brokers_with) == n
                ):
                    buf.append(broker)
                    racks_with.add(rack)
                    brokers_with.add(broker)
                    done = True
                k += 1
        ret[current] = buf
        current += 1
    return ret


def as_map(replicas: list[Replicas], start_partition_id: int = 0) -> dict[int, list[int]]:
    start = max(0, start_partition_id)
    return {start + k: list(r) for k, r in enumerate(replicas)}


# --- Kafka's own test expectations ---


SPEC_EXAMPLE = {
    0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
    5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
}  # fmt: skip


@pytest.mark.parametrize("start_partition_id", [0, -1])
def test_spec_example_kafka_test_replica_assignment(start_partition_id: int) -> None:
    # AdminTest/AdminRackAwareTest.testReplicaAssignment and the AdminUtils javadoc table.
    got = assign_replicas_to_brokers(plain(0, 1, 2, 3, 4), 10, 3, 0, start_partition_id)
    assert as_map(got) == SPEC_EXAMPLE


def test_brokers_are_sorted_by_id_first() -> None:
    got = assign_replicas_to_brokers(plain(4, 2, 0, 3, 1), 10, 3, 0)
    assert as_map(got) == SPEC_EXAMPLE


KAFKA_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_rack_alternated_broker_list() -> None:
    # AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
    assert BrokerRing.of(racked(KAFKA_RACKS)).rack_order == (0, 3, 1, 5, 4, 2)
    without_5 = {i: r for i, r in KAFKA_RACKS.items() if i != 5}
    assert BrokerRing.of(racked(without_5)).rack_order == (0, 3, 1, 4, 2)
    nine = {i: f"rack{i // 3 + 1}" for i in range(9)}  # the javadoc's 3x3 example
    assert BrokerRing.of(racked(nine)).rack_order == (0, 3, 6, 1, 4, 7, 2, 5, 8)


def test_kafka_rack_aware_expected_assignment() -> None:
    got = assign_replicas_to_brokers(racked(KAFKA_RACKS), 7, 3, 0, 0)
    assert as_map(got) == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
        6: [0, 4, 2],
    }  # fmt: skip


def check_replica_distribution(
    assignment: dict[int, list[int]],
    racks: dict[int, str],
    n_partitions: int,
    rf: int,
    verify_rack_aware: bool = True,
    verify_leaders: bool = True,
    verify_replicas: bool = True,
) -> None:
    """RackAwareTest.checkReplicaDistribution."""
    assert all(len(set(r)) == len(r) for r in assignment.values())
    if verify_rack_aware:
        assert [len({racks[b] for b in r}) for r in assignment.values()] == [rf] * n_partitions
    n_brokers = len(racks)
    if verify_leaders:
        leaders = Counter(r[0] for r in assignment.values())
        assert sorted(leaders.values()) == [n_partitions // n_brokers] * n_brokers
    if verify_replicas:
        replicas = Counter(b for r in assignment.values() for b in r)
        assert sorted(replicas.values()) == [n_partitions * rf // n_brokers] * n_brokers


SIX = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
UNEVEN_RACKS = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
TWELVE = {
    0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
    6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3",
}  # fmt: skip


# (racks, partitions, rf, start indexes, start partition id, flags) from AdminRackAwareTest;
# Kafka draws a random start index where none is given, so every possible one is checked.
KAFKA_DISTRIBUTION_CASES = [
    pytest.param(SIX, 6, 3, [2], 0, {}, id="testAssignmentWithRackAware"),
    pytest.param(SIX, 6, 3, range(6), 0, {}, id="testAssignmentWithRackAwareWithRandomStartIndex"),
    pytest.param(
        SIX, 13, 3, [0], 0, {"verify_leaders": False, "verify_replicas": False},
        id="testAssignmentWithRackAwareWithUnevenReplicas",
    ),
    pytest.param(
        UNEVEN_RACKS, 12, 3, range(6), -1, {"verify_replicas": False},
        id="testAssignmentWithRackAwareWithUnevenRacks",
    ),
    pytest.param(SIX, 12, 2, range(6), -1, {}, id="testAssignmentWith2ReplicasRackAware"),
    pytest.param(
        {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"},
        12, 2, range(6), 12, {}, id="testRackAwareExpansion",
    ),
    pytest.param(SIX, 6, 2, range(6), -1, {}, id="testAssignmentWith2ReplicasRackAwareWith6Partitions"),
    pytest.param(
        {0: "rack1", 1: "rack2", 4: "rack3"}, 3, 2, range(3), -1, {},
        id="testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers",
    ),
    pytest.param(TWELVE, 96, 3, range(12), -1, {}, id="testLargeNumberPartitionsAssignment"),
    pytest.param(
        {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}, 6, 4, [2], -1,
        {"verify_rack_aware": False, "verify_leaders": False, "verify_replicas": False},
        id="testSkipBrokerWithReplicaAlreadyAssigned",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("racks", "n_partitions", "rf", "start_indexes", "start_partition_id", "flags"),
    KAFKA_DISTRIBUTION_CASES,
)
def test_kafka_rack_aware_distribution(
    racks: dict[int, str],
    n_partitions: int,
    rf: int,
    start_indexes: range | list[int],
    start_partition_id: int,
    flags: dict[str, bool],
) -> None:
    for start_index in start_indexes:
        got = assign_replicas_to_brokers(racked(racks), n_partitions, rf, start_index, start_partition_id)
        assignment = as_map(got, start_partition_id)
        assert list(assignment) == [max(0, start_partition_id) + k for k in range(n_partitions)]
        assert all(len(r) == rf for r in assignment.values())
        check_replica_distribution(assignment, racks, n_partitions, rf, **flags)


@pytest.mark.parametrize(
    ("racks", "rf", "racks_per_partition"),
    [
        pytest.param(
            {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}, 5, 3,
            id="testMoreReplicasThanRacks",
        ),
        pytest.param(
            {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}, 2, 2,
            id="testLessReplicasThanRacks",
        ),
        pytest.param({i: "rack1" for i in range(6)}, 3, 1, id="testSingleRack"),
    ],
)
def test_kafka_racks_per_partition(racks: dict[int, str], rf: int, racks_per_partition: int) -> None:
    for start_index in range(len(racks)):
        got = assign_replicas_to_brokers(racked(racks), 6, rf, start_index)
        assert [len(r) for r in got] == [rf] * 6
        assert [len({racks[b] for b in r}) for r in got] == [racks_per_partition] * 6
        if racks_per_partition == 1:  # testSingleRack also checks one leader per broker
            assert sorted(r[0] for r in got) == sorted(racks)


def test_kafka_invalid_parameters() -> None:
    # AdminRackAwareTest.testReplicaAssignment / testAssignReplicasToBrokersWithInvalidParameters
    five = plain(0, 1, 2, 3, 4)
    with pytest.raises(InvalidInput, match=r"^replication factor 0 must be at least 1$"):
        assign_replicas_to_brokers(five, 10, 0, 0)
    with pytest.raises(InvalidInput, match=r"^replication factor 6 exceeds the 5 target brokers$"):
        assign_replicas_to_brokers(five, 10, 6, 0)
    with pytest.raises(InvalidInput, match=r"^number of partitions 0 must be at least 1$"):
        assign_replicas_to_brokers(five, 0, 3, 0)
    with pytest.raises(InvalidInput, match=r"^start index -1 must be at least 0$"):
        assign_replicas_to_brokers(five, 10, 3, -1)
    partial = racked({0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: None})
    with pytest.raises(InvalidInput, match=r"^brokers without a rack: 4 \(other brokers have one\)"):
        assign_replicas_to_brokers(partial, 10, 5, 0)
    # --disable-rack-aware: racks ignored, the plain rule applies.
    assert as_map(assign_replicas_to_brokers(partial, 10, 3, 0, rack_aware=False)) == SPEC_EXAMPLE


# --- The vectorised rule equals Kafka's per-partition loop ---


@st.composite
def broker_sets(draw: st.DrawFn, min_size: int = 1) -> list[Broker]:
    ids = draw(st.lists(st.integers(0, 60), min_size=min_size, max_size=14, unique=True))
    if draw(st.booleans()):
        return plain(*ids)
    return [Broker(i, rack=draw(st.sampled_from("abcd"))) for i in ids]


@settings(max_examples=300)
@given(
    brokers=broker_sets(),
    data=st.data(),
    n_partitions=st.integers(1, 70),
    start_index=st.integers(0, 40),
    start_partition_id=st.integers(-1, 60),
)
def test_kafka_rule_matches_oracle(
    brokers: list[Broker],
    data: st.DataObject,
    n_partitions: int,
    start_index: int,
    start_partition_id: int,
) -> None:
    rf = data.draw(st.integers(1, len(brokers)))
    got = assign_replicas_to_brokers(brokers, n_partitions, rf, start_index, start_partition_id)
    assert as_map(got, start_partition_id) == kafka_oracle(
        brokers, n_partitions, rf, start_index, start_partition_id
    )


# --- The seed's roundrobin rule ---


def test_roundrobin_seed_rule() -> None:
    # Sorted brokers [1, 2, 3]: counter g gets positions g, g+1 (mod 3).
    assert roundrobin_replicas([3, 1, 2], 4, 2, 1) == [(2, 3), (3, 1), (1, 2), (2, 3)]
    assert roundrobin_replicas([10, 20, 30, 40], 3, 4, 0) == [
        (10, 20, 30, 40), (20, 30, 40, 10), (30, 40, 10, 20),
    ]  # fmt: skip


@given(
    ids=st.lists(st.integers(0, 99), min_size=1, max_size=12, unique=True),
    data=st.data(),
    n_partitions=st.integers(1, 40),
    offset=st.integers(0, 500),
)
def test_roundrobin_formula(
    ids: list[int], data: st.DataObject, n_partitions: int, offset: int
) -> None:
    rf = data.draw(st.integers(1, len(ids)))
    ordered = sorted(ids)
    n = len(ids)
    expected = [
        tuple(ordered[(offset + k + j) % n] for j in range(rf)) for k in range(n_partitions)
    ]
    assert roundrobin_replicas(ids, n_partitions, rf, offset) == expected


def test_topic_offsets() -> None:
    assert topic_offsets([3, 1, 2], 5) == [5, 8, 9]
    assert topic_offsets([4]) == [0]
    assert topic_offsets([]) == []


# --- place() ---


@st.composite
def clusters(draw: st.DrawFn) -> tuple[dict[str, TopicAssignment], list[Broker]]:
    brokers = draw(broker_sets())
    n = len(brokers)
    topics = draw(
        st.dictionaries(
            st.text("abcxyz-", min_size=1, max_size=5),
            st.lists(st.integers(0, 40), min_size=1, max_size=25, unique=True),
            min_size=1,
            max_size=12,
        )
    )
    current = {
        t: {p: tuple(range(draw(st.integers(1, n)))) for p in ids} for t, ids in topics.items()
    }
    return current, brokers


@st.composite
def option_sets(draw: st.DrawFn, n_brokers: int) -> PlacementOptions:
    return PlacementOptions(
        strategy=draw(st.sampled_from(Strategy)),
        replication_factor=draw(st.none() | st.integers(1, n_brokers)),
        start_index=draw(st.none() | st.integers(0, 30)),
        start_partition=draw(st.integers(-1, 30)),
        rack_aware=draw(st.booleans()),
    )


@settings(max_examples=300)
@given(cluster=clusters(), data=st.data())
def test_place_properties(
    cluster: tuple[dict[str, TopicAssignment], list[Broker]], data: st.DataObject
) -> None:
    current, brokers = cluster
    options = data.draw(option_sets(len(brokers)))
    topics = data.draw(st.lists(st.sampled_from(sorted(current)), min_size=1))
    plan = place(current, topics, brokers, options)

    assert list(plan) == sorted(set(topics))
    broker_ids = {b.id for b in brokers}
    for topic, assignment in plan.items():
        assert sorted(assignment) == sorted(current[topic])  # same partitions, nothing invented
        rf = replication_factor_of(current[topic], options)
        for partition, replicas in assignment.items():
            # without --replication-factor no partition changes its replica count
            count = rf if options.replication_factor else len(current[topic][partition])
            assert len(replicas) == count
            assert len(set(replicas)) == count
            assert set(replicas) <= broker_ids

    # Determinism, whatever the order of brokers and topics.
    assert place(current, topics[::-1], brokers[::-1], options) == plan

    # Spark == single machine: per-topic placement at topic_offsets gives the same plan.
    names = sorted(set(topics))
    start = (options.start_index or 0) if options.strategy is Strategy.ROUNDROBIN else 0
    offsets = topic_offsets([len(current[t]) for t in names], start)
    ring = BrokerRing.of(brokers, options.rack_aware)
    for name, offset in zip(names, offsets, strict=True):
        rf = replication_factor_of(current[name], options)
        assert place_topic(current[name], ring, rf, offset, options) == plan[name]
        assert place_topic(current[name], brokers, rf, offset, options) == plan[name]


@settings(max_examples=200)
@given(
    brokers=broker_sets(min_size=2),
    counts=st.lists(st.integers(1, 23), min_size=1, max_size=30),
    strategy=st.sampled_from(Strategy),
    start_partition=st.integers(-1, 30),
    rack_aware=st.booleans(),
    data=st.data(),
)
def test_leaders_balanced_across_whole_plan(
    brokers: list[Broker],
    counts: list[int],
    strategy: Strategy,
    start_partition: int,
    rack_aware: bool,
    data: st.DataObject,
) -> None:
    # Many topics with uneven partition counts: leaders still differ by at most one per broker,
    # for roundrobin and for kafka without a fixed start index.
    current = {f"t{i:03d}": {p: (0,) for p in range(c)} for i, c in enumerate(counts)}
    rf = data.draw(st.integers(1, len(brokers)))
    options = PlacementOptions(strategy, rf, None, start_partition, rack_aware)
    plan = place(current, list(current), brokers, options)
    leaders = Counter(r[0] for a in plan.values() for r in a.values())
    per_broker = [leaders.get(b.id, 0) for b in brokers]
    assert max(per_broker) - min(per_broker) <= 1


@settings(max_examples=200)
@given(
    ids=st.lists(st.integers(0, 60), min_size=1, max_size=14, unique=True),
    data=st.data(),
    counts=st.lists(st.integers(1, 30), min_size=1, max_size=6),
)
def test_rack_aware_spreads_over_racks(
    ids: list[int], data: st.DataObject, counts: list[int]
) -> None:
    brokers = [Broker(i, rack=data.draw(st.sampled_from("abcd"))) for i in ids]
    n_racks = len({b.rack for b in brokers})
    rf = data.draw(st.integers(1, len(brokers)))
    current = {f"t{i}": {p: (0,) for p in range(c)} for i, c in enumerate(counts)}
    plan = place(current, list(current), brokers, PlacementOptions(Strategy.KAFKA, rf))
    rack = {b.id: b.rack for b in brokers}
    for assignment in plan.values():
        for replicas in assignment.values():
            racks = [rack[b] for b in replicas]
            # RF >= racks: every rack holds a replica; RF < racks: at most one per rack.
            assert len(set(racks)) == min(rf, n_racks)


def test_place_roundrobin_uses_one_global_counter() -> None:
    current = {"b": {0: (9,), 1: (9,)}, "a": {5: (9,), 2: (9,), 7: (9,)}}
    plan = place(current, ["b", "a"], plain(30, 10, 20), PlacementOptions(replication_factor=2))
    # a sorted first: partitions 2, 5, 7 get counters 0, 1, 2; then b's 0, 1 get 3, 4.
    assert plan == {
        "a": {2: (10, 20), 5: (20, 30), 7: (30, 10)},
        "b": {0: (10, 20), 1: (20, 30)},
    }
    started = place(current, ["a"], plain(10, 20, 30), PlacementOptions(start_index=2))
    assert started == {"a": {2: (30,), 5: (10,), 7: (20,)}}


def test_place_kafka_derives_start_from_counter_or_uses_the_given_one() -> None:
    five = plain(0, 1, 2, 3, 4)
    current = {"a": {p: (0, 1, 2) for p in range(3)}, "b": {p: (0, 1, 2) for p in range(10)}}
    derived = place(current, ["a", "b"], five, PlacementOptions(Strategy.KAFKA))
    assert derived["a"] == dict(enumerate(assign_replicas_to_brokers(five, 3, 3, 0)))
    assert derived["b"] == dict(enumerate(assign_replicas_to_brokers(five, 10, 3, 3)))
    fixed = place(
        current, ["a", "b"], five, PlacementOptions(Strategy.KAFKA, start_index=0, start_partition=2)
    )
    assert fixed["b"] == {
        p: r for p, r in zip(range(10), assign_replicas_to_brokers(five, 10, 3, 0, 2), strict=True)
    }
    assert fixed["b"][0] == tuple(SPEC_EXAMPLE[2])


def test_place_keeps_each_partition_replica_count_in_a_mixed_topic() -> None:
    """Placed with the largest count and cut back: no partition changes its replication factor
    (a plan that did would be refused by plan validate and reassign), leaders stay the rule's."""
    current = {"a": {0: (1,), 1: (1, 2, 3), 2: (2, 3)}}
    plan = place(current, ["a"], plain(1, 2, 3, 4), PlacementOptions())
    assert plan == {"a": {0: (1,), 1: (2, 3, 4), 2: (3, 4)}}
    # an explicit replication factor still applies to every partition
    plan = place(current, ["a"], plain(1, 2, 3, 4), PlacementOptions(replication_factor=3))
    assert plan == {"a": {0: (1, 2, 3), 1: (2, 3, 4), 2: (3, 4, 1)}}


CURRENT: dict[str, TopicAssignment] = {"foo": {0: (1, 2, 3), 1: (2, 3, 1)}, "bar": {0: (1,)}, "empty": {}}


@pytest.mark.parametrize(
    ("topics", "brokers", "options", "message"),
    [
        ([], plain(1, 2, 3), PlacementOptions(), "no topics to place"),
        (["foo", "nope"], plain(1, 2, 3), PlacementOptions(), "unknown topic nope"),
        (["zz", "nope"], plain(1, 2, 3), PlacementOptions(), r"unknown topic nope \(and 1 more\)"),
        (["foo"], [], PlacementOptions(), "no target brokers"),
        (["foo"], plain(1, 2, 2), PlacementOptions(), "duplicate broker id 2 in the target brokers"),
        (
            ["foo"], plain(1, 2, 3), PlacementOptions(replication_factor=0),
            "replication factor 0 of topic foo must be at least 1",
        ),
        (
            ["bar", "foo"], plain(1, 2), PlacementOptions(),
            "replication factor 3 of topic foo exceeds the 2 target brokers",
        ),
        (
            ["foo"], plain(1, 2, 3), PlacementOptions(replication_factor=4),
            "replication factor 4 of topic foo exceeds the 3 target brokers",
        ),
        (
            ["foo"], [Broker(1, rack="r1"), Broker(2), Broker(3, rack="r2"), Broker(4)],
            PlacementOptions(),
            r"brokers without a rack: 2, 4 \(other brokers have one\); "
            "disable rack awareness to place replicas anyway",
        ),
        (["foo"], plain(1, 2, 3), PlacementOptions(start_index=-1), "start index -1 must be at least 0"),
    ],
)  # fmt: skip
def test_place_invalid_input(
    topics: list[str], brokers: list[Broker], options: PlacementOptions, message: str
) -> None:
    with pytest.raises(InvalidInput, match=f"^{message}$") as raised:
        place(CURRENT, topics, brokers, options)
    assert raised.value.exit_code == 2
    assert "\n" not in str(raised.value)


def test_a_topic_without_partitions_has_nothing_to_place() -> None:
    """ZooKeeper can hold one (and a snapshot of it), so --all-topics must not fail on it."""
    plan = place(CURRENT, ["empty", "foo"], plain(1, 2, 3), PlacementOptions())
    assert plan["empty"] == {}
    assert plan["foo"] == place(CURRENT, ["foo"], plain(1, 2, 3), PlacementOptions())["foo"]


def test_unknown_topics_are_all_listed_in_details() -> None:
    with pytest.raises(InvalidInput) as raised:
        place(CURRENT, ["zz", "nope", "foo"], plain(1, 2, 3), PlacementOptions())
    assert raised.value.details == ("unknown topic nope", "unknown topic zz")


def test_partial_racks_are_ignored_without_rack_awareness() -> None:
    brokers = [Broker(1, rack="r1"), Broker(2), Broker(3, rack="r2")]
    options = PlacementOptions(Strategy.KAFKA, start_index=0, rack_aware=False)
    plan = place(CURRENT, ["foo"], brokers, options)
    assert plan == {"foo": {0: (1, 2, 3), 1: (2, 3, 1)}}


def test_broker_ring_survives_pickling() -> None:
    # Spark broadcasts the ring to its executors.
    ring = BrokerRing.of(racked(KAFKA_RACKS))
    copy = pickle.loads(pickle.dumps(ring))
    assert copy == ring
    assert list(copy.kafka(7, 3, 0)) == list(ring.kafka(7, 3, 0))
    assert list(copy.roundrobin(7, 3, 4)) == list(ring.roundrobin(7, 3, 4))
