"""Brokers replaced one for one: same position, nothing else moves."""

from __future__ import annotations

import pytest

from kadmin.balance.replace import pairs_of, replace_brokers
from kadmin.model import Broker, ClusterSnapshot, InvalidInput, PartitionMove

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, rack=f"r{b % 2}") for b in range(1, 9)},
    topics={"a": {0: (3, 1, 2), 1: (1, 3, 4), 2: (1, 2, 5)}, "b": {0: (4, 3, 7), 1: (2, 4, 6)}})


def test_every_replica_moves_to_its_replacement_in_the_same_position() -> None:
    result = replace_brokers(SNAPSHOT, pairs_of([3, 4], [8, 6]))
    assert result.plan.moves == (PartitionMove("a", 0, (8, 1, 2)),
                                 PartitionMove("a", 1, (1, 8, 6)),
                                 PartitionMove("b", 0, (6, 8, 7)))
    assert result.clashes == ("b-1: [2, 4, 6] already holds [6]",)
    assert result.moved == {3: 3, 4: 2} and result.led == {3: 1, 4: 1}


def test_a_partition_already_holding_the_replacement_is_a_clash() -> None:
    result = replace_brokers(SNAPSHOT, {3: 7})
    assert result.clashes == ("b-0: [4, 3, 7] already holds [7]",)
    assert [m.tp.topic + str(m.partition) for m in result.plan.moves] == ["a0", "a1"]


def test_a_replacement_in_another_rack_is_named() -> None:
    assert replace_brokers(SNAPSHOT, {3: 5}).rack_changes == ()
    assert replace_brokers(SNAPSHOT, {3: 8}).rack_changes == (
        "broker 8 is in rack 'r0', broker 3 is in rack 'r1': the topics' rack spread changes",)


def test_a_replacement_without_a_rack_says_so_in_words() -> None:
    snapshot = ClusterSnapshot(brokers={**SNAPSHOT.brokers, 9: Broker(9)}, topics=SNAPSHOT.topics)
    assert replace_brokers(snapshot, {3: 9}).rack_changes == (
        "broker 9 has no rack, broker 3 is in rack 'r1': the topics' rack spread changes",)


@pytest.mark.parametrize(("brokers", "replacements", "message"), [
    ([3, 4], [7], "give one replacement per broker"),
    ([3, 3], [7, 8], "--broker: a broker named twice"),
    ([3, 4], [7, 7], "--with: a broker named twice"),
    ([3, 7], [7, 8], "broker(s) 7 both replaced and replacing")])
def test_pairs_must_be_one_for_one(brokers: list[int], replacements: list[int],
                                   message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        pairs_of(brokers, replacements)
