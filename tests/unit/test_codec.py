"""The admin znodes' ``partitions`` lists (a reassignment's, an election's) decode alike: each
entry's topic and partition checked by the same rules, every error naming the entry."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kadmin.model import PartitionMove, TopicPartition
from kadmin.zk import codec

DECODERS: dict[str, Callable[[bytes | None], tuple[object, ...]]] = {
    "reassignment": codec.decode_reassignment, "election": codec.decode_election}


def test_both_read_back_what_kadmin_writes() -> None:
    moves = (PartitionMove("orders", 0, (1, 2, 0)), PartitionMove("pay.ments", 7, (0, 5)))
    assert codec.decode_reassignment(codec.encode_reassignment(moves)) == moves
    tps = (TopicPartition("orders", 0), TopicPartition("pay.ments", 7))
    assert codec.decode_election(codec.encode_election(tps)) == tps


@pytest.mark.parametrize("decode", DECODERS.values(), ids=DECODERS.keys())
@pytest.mark.parametrize(("payload", "message"), [
    (b'{"version":1,"partitions":{}}', "partitions must be a list"),
    (b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]},3]}',
     "partitions[1] must be an object"),
    (b'{"version":1,"partitions":[{"topic":5,"partition":0,"replicas":[1]}]}',
     "partitions[0].topic must be a string, got 5"),
    (b'{"version":1,"partitions":[{"topic":"t","partition":-1,"replicas":[1]}]}',
     "partitions[0].partition"),
])
def test_an_entry_that_breaks_a_rule_is_named(decode: Callable[[bytes | None], object],
                                              payload: bytes, message: str) -> None:
    with pytest.raises(codec.DecodeError) as error:
        decode(payload)
    assert str(error.value).startswith(message), str(error.value)


def test_a_reassignment_entry_needs_its_replicas_after_its_topic_and_partition() -> None:
    with pytest.raises(codec.DecodeError, match=r"^partitions\[0\]\.replicas"):
        codec.decode_reassignment(b'{"version":1,"partitions":[{"topic":"t","partition":0}]}')
    with pytest.raises(codec.DecodeError, match=r"^partitions\[0\]\.topic"):
        codec.decode_reassignment(b'{"version":1,"partitions":[{"partition":0}]}')


def test_a_value_in_a_decoders_message_is_json_escaped_and_cut_short() -> None:
    """Beyond ASCII escaped ("²" is no digit Kafka writes); a megabyte cut to 60 characters."""
    with pytest.raises(codec.DecodeError) as error:
        codec.decimal_id("²", "broker id")
    assert str(error.value).startswith('broker id "\\u00b2" is not a non-negative integer')
    with pytest.raises(codec.DecodeError) as error:
        codec.decode_reassignment(b'{"version":1,"partitions":[{"topic":"' + b"x" * 10_000
                                  + b'","partition":0,"replicas":"' + b"y" * 10_000 + b'"}]}')
    assert str(error.value) == ("partitions[0].replicas must be a list of broker ids, got "
                                '"' + "y" * 56 + "...")
