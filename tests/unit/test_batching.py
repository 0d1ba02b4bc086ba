"""Batching: every batch is a znode payload (or, for deletions, a transaction) ZooKeeper accepts,
measured in the codec's own bytes and in the request kazoo sends."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.protocol.serialization import Create, Transaction
from kazoo.security import ACL, OPEN_ACL_UNSAFE

from kadmin import plans
from kadmin.model import InvalidInput, PartitionMove, TopicPartition
from kadmin.zk import codec, paths
from kadmin.zk.security import kafka_acl

TOPICS = st.text("abcxyz._-", min_size=1, max_size=40)
MOVES = st.lists(st.builds(
    PartitionMove, TOPICS, st.integers(0, 10_000),
    st.lists(st.integers(0, 100_000), min_size=1, max_size=6, unique=True).map(tuple),
    st.none()), max_size=60)
REASSIGN_OVERHEAD = len(codec.REASSIGNMENT_PREFIX) + len(codec.REASSIGNMENT_SUFFIX)


def flatten(batches: Sequence[Sequence[object]]) -> list[object]:
    return [item for batch in batches for item in batch]


@settings(max_examples=300)
@given(moves=MOVES, max_items=st.integers(1, 25), slack=st.integers(0, 3000))
def test_reassignment_batches_fit_and_cover_the_input(moves: list[PartitionMove], max_items: int,
                                                      slack: int) -> None:
    # the smallest limit every single entry fits, plus some room
    largest = max((len(codec.encode_reassignment([m])) for m in moves),
                  default=REASSIGN_OVERHEAD + 1)
    max_bytes = largest + slack
    batches = plans.reassignment_batches(moves, max_items, max_bytes)
    assert flatten(batches) == moves
    for i, batch in enumerate(batches):
        assert 1 <= len(batch) <= max_items
        assert len(codec.encode_reassignment(batch)) <= max_bytes
        if i + 1 < len(batches):  # greedy: the next entry would not have fitted
            grown = [*batch, batches[i + 1][0]]
            assert len(grown) > max_items or len(codec.encode_reassignment(grown)) > max_bytes


@settings(max_examples=200)
@given(partitions=st.lists(st.builds(TopicPartition, TOPICS, st.integers(0, 10_000)), max_size=60),
       max_items=st.integers(1, 25), slack=st.integers(0, 2000))
def test_election_batches_fit_and_cover_the_input(partitions: list[TopicPartition],
                                                  max_items: int, slack: int) -> None:
    max_bytes = slack + max((len(codec.encode_election([tp])) for tp in partitions), default=40)
    batches = plans.election_batches(partitions, max_items, max_bytes)
    assert flatten(batches) == partitions
    for i, batch in enumerate(batches):
        assert 1 <= len(batch) <= max_items
        assert len(codec.encode_election(batch)) <= max_bytes
        if i + 1 < len(batches):
            grown = [*batch, batches[i + 1][0]]
            assert len(grown) > max_items or len(codec.encode_election(grown)) > max_bytes


def test_sizes_are_exact_at_the_boundary() -> None:
    moves = [PartitionMove("t", p, (1, 2, 3)) for p in range(10)]
    whole = len(codec.encode_reassignment(moves))
    assert plans.reassignment_batches(moves, 100, whole) == [moves]
    split = plans.reassignment_batches(moves, 100, whole - 1)
    assert [len(b) for b in split] == [9, 1]


def test_count_limit_alone() -> None:
    assert plans.batches(list(range(7)), lambda i: 1, 2, 3, 1000) == [[0, 1, 2], [3, 4, 5], [6]]


def test_byte_arithmetic_counts_commas_and_envelope() -> None:
    # envelope 2 + entries of 3 bytes + commas: 2+3=5, 2+3+1+3=9, 2+3+1+3+1+3=13
    three = lambda i: 3  # noqa: E731
    assert [len(b) for b in plans.batches(list(range(6)), three, 2, 100, 9)] == [2, 2, 2]
    assert [len(b) for b in plans.batches(list(range(6)), three, 2, 100, 12)] == [2, 2, 2]
    assert [len(b) for b in plans.batches(list(range(6)), three, 2, 100, 13)] == [3, 3]
    # without separators (the ops of a transaction): 2+3+3+3=11
    assert [len(b) for b in plans.batches(list(range(6)), three, 2, 100, 11, separator=0)] == [3, 3]


def test_empty_input_has_no_batches() -> None:
    assert plans.reassignment_batches([]) == []
    assert plans.election_batches([]) == []


def test_entry_too_large_names_the_partition() -> None:
    big = PartitionMove("big", 3, tuple(range(1000)))
    with pytest.raises(InvalidInput, match=r"^big-3: its entry alone takes \d+ bytes, more than "
                                           r"the maximum znode size of 1000$"):
        plans.reassignment_batches([PartitionMove("small", 0, (1,)), big], 10, 1000)
    with pytest.raises(InvalidInput, match=r"^foo-1: its entry alone"):
        plans.election_batches([TopicPartition("foo", 1)], 10, 40)


@pytest.mark.parametrize(("max_items", "max_bytes", "message"), [
    (0, 1_000_000, "batch size must be at least 1, got 0"),
    (-5, 1_000_000, "batch size must be at least 1, got -5"),
    (10, REASSIGN_OVERHEAD, f"maximum znode size {REASSIGN_OVERHEAD} bytes is too small: the "
                            f"admin document's envelope alone takes {REASSIGN_OVERHEAD}"),
])
def test_impossible_limits_are_refused(max_items: int, max_bytes: int, message: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        plans.reassignment_batches([PartitionMove("t", 0, (1,))], max_items, max_bytes)
    assert str(raised.value) == message


def test_a_hundred_thousand_partitions_by_default_limits() -> None:
    """Kafka-sized input with the executor's defaults: 1000 partitions or 1 MB per znode."""
    moves = [PartitionMove(f"topic-{p % 300:03d}", p // 300, (p % 9, (p + 1) % 9, (p + 2) % 9))
             for p in range(100_000)]
    batches = plans.reassignment_batches(moves)
    assert [len(b) for b in batches] == [1000] * 100
    assert flatten(batches) == moves
    small = plans.reassignment_batches(moves, 100_000, 500_000)
    assert all(len(codec.encode_reassignment(b)) <= 500_000 for b in small)
    assert flatten(small) == moves and len(small) > 1


def multi_request_bytes(chroot: str, topics: Sequence[str], acl: Sequence[ACL]) -> int:
    """The exact size of the multi request kazoo sends for these markers: length prefix, request
    header (xid, type), then the transaction as kazoo serializes it."""
    ops = Transaction([Create(chroot + paths.delete_topic(t), b"", list(acl), 0) for t in topics])
    return 4 + 8 + len(ops.serialize())


@pytest.mark.parametrize("acl", [OPEN_ACL_UNSAFE, kafka_acl()], ids=["open", "kafka"])
@settings(max_examples=200)
@given(topics=st.lists(st.text(min_size=1, max_size=249), min_size=1, max_size=40, unique=True),
       chroot=st.sampled_from(["", "/kafka", "/a/much/longer/chroot/of/some/cluster"]),
       max_bytes=st.integers(200, 20_000))
def test_deletion_batches_fit_the_request_kazoo_sends(acl: Sequence[ACL], topics: list[str],
                                                       chroot: str, max_bytes: int) -> None:
    try:
        batches = plans.deletion_batches(topics, max_bytes, chroot)
    except InvalidInput:  # a single topic too long for this limit: checked below
        assert any(multi_request_bytes(chroot, [t], kafka_acl()) > max_bytes - 21 for t in topics)
        return
    assert flatten(batches) == topics
    for batch in batches:
        assert multi_request_bytes(chroot, batch, acl) <= max_bytes


def test_deletion_batches_cut_thousands_of_long_names() -> None:
    topics = [f"{i:06d}".ljust(249, "x") for i in range(4000)]  # a 1.3 MB request in one piece

    batches = plans.deletion_batches(topics, 1_000_000, "/kafka")

    assert len(batches) == 2 and flatten(batches) == topics
    assert 900_000 < multi_request_bytes("/kafka", batches[0], kafka_acl()) <= 1_000_000
    assert multi_request_bytes("/kafka", topics, kafka_acl()) > 1_048_575  # jute.maxbuffer
