"""Throttle entries of a batch, merged into config maps and taken out again; rates as typed."""

from __future__ import annotations

import pytest

from kadmin import throttles as t
from kadmin.model import InvalidInput, PartitionMove, TopicPartition
from kadmin.units import human_bytes, human_duration, parse_bytes, parse_rate


@pytest.mark.parametrize(("text", "value"), [
    ("50000000", 50_000_000), ("50MB", 50_000_000), ("50M", 50_000_000), ("50mb/s", 50_000_000),
    ("10MiB", 10 * 2**20), ("10Mi", 10 * 2**20), ("1.5G", 1_500_000_000), ("500k", 500_000),
    ("500 KB", 500_000), ("2GiB", 2 * 2**30), ("1T", 10**12)])
def test_rates_as_operators_type_them(text: str, value: int) -> None:
    assert parse_rate(text) == value


@pytest.mark.parametrize("text", ["", "fast", "50XB", "-5M", "0", "0.1", "1e9", "9" * 30])
def test_bad_rates_are_one_line(text: str) -> None:
    with pytest.raises(InvalidInput, match=r"^--throttle: ") as info:
        parse_rate(text)
    assert "\n" not in str(info.value)


def test_bytes_print_the_way_they_are_typed() -> None:
    assert human_bytes(1_500_000_000) == "1.5 GB" and parse_bytes("1.5 GB", "x") == 1_500_000_000
    assert human_bytes(999) == "999 B"
    assert human_duration(3725) == "1h02m05s" and human_duration(42.4) == "42s"


def test_batch_throttle_is_spec_section_5() -> None:
    current = {TopicPartition("orders", 0): (1, 2, 3), TopicPartition("orders", 10): (2, 3, 4),
               TopicPartition("logs", 1): (5, 6), TopicPartition("logs", 2): (5, 6)}
    batch = t.batch_throttle([PartitionMove("orders", 0, (4, 2, 3)),
                              PartitionMove("orders", 10, (2, 3, 5)),
                              PartitionMove("logs", 1, (6, 5)),        # reorder: moves no data
                              PartitionMove("logs", 2, (5, 6))], current)  # unchanged
    assert batch.replicas == {
        "orders": {t.LEADER_REPLICAS: ("0:1", "0:2", "0:3", "10:2", "10:3", "10:4"),
                   t.FOLLOWER_REPLICAS: ("0:4", "10:5")},
        "logs": {t.LEADER_REPLICAS: ("1:5", "1:6")}}
    assert batch.brokers == (1, 2, 3, 4, 5, 6)


def test_merge_keeps_what_is_there_and_removal_takes_out_only_kadmins() -> None:
    config = {"retention.ms": "1000", t.LEADER_REPLICAS: "0:1, 7:7", t.LEADER_RATE: "42"}
    merged, record = t.add(config, t.Record(), {t.LEADER_REPLICAS: ["0:1", "0:2"],
                                                t.FOLLOWER_REPLICAS: ["0:4"]},
                           {t.LEADER_RATE: "100", t.FOLLOWER_RATE: "100"})
    assert merged == {"retention.ms": "1000", t.LEADER_REPLICAS: "0:1,7:7,0:2",
                      t.FOLLOWER_REPLICAS: "0:4", t.LEADER_RATE: "100", t.FOLLOWER_RATE: "100"}
    assert record == t.Record({t.LEADER_REPLICAS: ("0:2",), t.FOLLOWER_REPLICAS: ("0:4",)},
                              {t.LEADER_RATE: ("100", "42"), t.FOLLOWER_RATE: ("100", None)})
    assert t.add(merged, record, {t.LEADER_REPLICAS: ["0:2"]},
                 {t.LEADER_RATE: "100"}) == (merged, record)  # idempotent
    assert t.Record.from_json(record.to_json()) == record

    # an operator adds an entry meanwhile, and another rate: both are theirs and stay
    merged[t.LEADER_REPLICAS] += ",9:9"
    merged[t.FOLLOWER_RATE] = "5"
    cleared, left = t.remove_own(merged, record)
    assert cleared == {"retention.ms": "1000", t.LEADER_REPLICAS: "0:1,7:7,9:9",
                       t.LEADER_RATE: "42", t.FOLLOWER_RATE: "5"}
    assert not left
    assert t.remove_all(merged, record)[0] == {"retention.ms": "1000"}


def test_all_replicas_throttled_already_adds_nothing() -> None:
    merged, record = t.add({t.FOLLOWER_REPLICAS: "*"}, t.Record(),
                           {t.FOLLOWER_REPLICAS: ["0:4"]}, {})
    assert merged == {t.FOLLOWER_REPLICAS: "*"} and not record


def test_two_owners_never_take_out_what_the_other_needs() -> None:
    config = {t.LEADER_REPLICAS: "7:7", t.LEADER_RATE: "42"}
    a = t.add_for("a", {t.LEADER_REPLICAS: ["0:1", "0:2"]}, {t.LEADER_RATE: "10"})
    b = t.add_for("b", {t.LEADER_REPLICAS: ["0:2", "0:3"]}, {t.LEADER_RATE: "20"})
    merged, record = b(*a(config, t.Records()))
    assert merged == {t.LEADER_REPLICAS: "7:7,0:1,0:2,0:3", t.LEADER_RATE: "20"}
    assert record.owners["b"] == t.Record({t.LEADER_REPLICAS: ("0:2", "0:3")},
                                          {t.LEADER_RATE: ("20", "42")})
    assert t.Records.from_json(record.to_json()) == record

    # a ends first: the entry b holds and b's rate stay
    after_a, left = t.remove_for("a")(merged, record)
    assert after_a == {t.LEADER_REPLICAS: "7:7,0:2,0:3", t.LEADER_RATE: "20"}
    assert list(left.owners) == ["b"]
    after_b, none = t.remove_for("b")(after_a, left)
    assert after_b == config and not none

    # b ends first while a's rate is the one in force: a's value comes back, then the operator's
    a_on_top, record = a(*b(config, t.Records()))
    assert a_on_top[t.LEADER_RATE] == "10"
    after_b, left = t.remove_for("b")(a_on_top, record)
    assert after_b[t.LEADER_RATE] == "10"
    assert t.remove_for("a")(after_b, left)[0] == config
    assert t.remove_kadmins(a_on_top, record) == (config, t.Records())


def test_a_record_of_one_owner_reads_as_the_legacy_owners_and_set_rates_keeps_the_previous() -> None:
    legacy = t.Records.from_json({"version": 1, "replicas": {},
                                  "rates": {t.LEADER_RATE: {"value": "10", "previous": "42"}}})
    assert list(legacy.owners) == [t.LEGACY_OWNER]
    changed, record = t.set_rates({t.LEADER_RATE: "99", t.FOLLOWER_RATE: "99"})(
        {t.LEADER_RATE: "10"}, legacy)
    assert changed == {t.LEADER_RATE: "99", t.FOLLOWER_RATE: "99"}
    assert record.owners[t.LEGACY_OWNER].rates == {t.LEADER_RATE: ("99", "42")}
    assert record.owners[t.SET_OWNER].rates == {t.FOLLOWER_RATE: ("99", None)}
    assert t.remove_kadmins(changed, record)[0] == {t.LEADER_RATE: "42"}
