"""One rule for numbers and id lists on every command line.

Numbers: finite decimals, computed exactly (``--rate 9223372036854775807``, Java's
Long.MAX_VALUE, is what Kafka accepts), and ``inf``, ``nan`` and the like refused with the same
message by every numeric option. Id lists: an id given twice is refused naming it, by every
option that takes broker ids. All before anything connects or is written."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kadmin import units
from kadmin.model import Broker, ClusterSnapshot, InvalidInput
from kadmin.zk import paths

CLUSTER = Path(__file__).resolve().parent.parent / "corpus" / "cluster.json"
NOWHERE = "127.0.0.1:1"  # nothing listens: a command that got that far would say so

Run = Callable[..., Any]

FLOAT_OPTIONS = {
    "--connect-timeout": ["status", "-z", NOWHERE],
    "--session-timeout": ["status", "-z", NOWHERE],
    "--timeout": ["reassign", "--plan", "plan.json", "-z", NOWHERE],
    "--health-interval": ["reassign", "--plan", "plan.json", "-z", NOWHERE],
    "--latency": ["sandbox", "--port", "0"],
    "--latency-ms": ["sandbox", "--port", "0"],
    "--time-scale": ["sandbox", "--port", "0"],
}
NOT_NUMBERS = ["inf", "-inf", "nan", "NaN", "Infinity", "1e999", "0x10", "1_000", "", "ten",
               "\u0661\u0662", "\uff11\uff12", "1\u00a0"]  # Arabic-Indic, fullwidth digits
COUNT_OPTIONS = {
    "--batch-size": ["reassign", "--plan", "plan.json", "-z", NOWHERE],
    "--max-moves-per-broker": ["reassign", "--plan", "plan.json", "-z", NOWHERE],
    "--max-moves": ["plan", "rebalance", "--cluster", "c.json"],
    "--replication-factor": ["plan", "generate", "--cluster", "c.json", "--all-topics"],
    "--port": ["sandbox"],
}
NOT_COUNTS = ["1_000", "\u0661\u0662", "\uff11\uff12", "0x10", "1e3", "1.0", "", "ten"]


@pytest.mark.parametrize("value", NOT_NUMBERS)
@pytest.mark.parametrize("option", sorted(FLOAT_OPTIONS))
def test_every_numeric_option_refuses_what_is_no_finite_number_alike(
        option: str, value: str, kadmin: Run, tmp_path: Path) -> None:
    run = kadmin(*FLOAT_OPTIONS[option], f"{option}={value}")
    assert run.code == 2, (run.out, run.err)
    assert run.err.startswith(f"kadmin: error: Invalid value for '{option}': "), run.err
    if value == "1e999":
        assert "is too large to be a number" in run.err or "more than the maximum" in run.err
    else:
        assert " is not a number" in run.err and "a finite decimal number" in run.err, run.err
    assert len(run.err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", NOT_COUNTS)
@pytest.mark.parametrize("option", sorted(COUNT_OPTIONS))
def test_every_count_option_takes_ascii_decimal_digits_only(
        option: str, value: str, kadmin: Run, tmp_path: Path) -> None:
    run = kadmin(*COUNT_OPTIONS[option], f"{option}={value}")
    assert run.code == 2, (run.out, run.err)
    assert run.err.startswith(f"kadmin: error: Invalid value for '{option}': "), run.err
    assert "is not a whole number (ASCII decimal digits" in run.err, run.err
    assert len(run.err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["\u0661\u0662", "\uff11\uff12MB", "1\u00a0MB"])
def test_rates_and_sizes_take_ascii_digits_only(value: str) -> None:
    for parse in (units.parse_rate, lambda text, what: units.parse_bytes(text, what)):
        with pytest.raises(InvalidInput, match="is not a byte"):
            parse(value, "--throttle")


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--connect-timeout", "0.01", "'0.01' is less than the minimum 0.1 seconds"),
    ("--connect-timeout", "3601", "'3601' is more than the maximum 3600 seconds"),
    ("--timeout", "-1", "'-1' is less than the minimum 0 seconds"),
    ("--latency-ms", "-0.5", "'-0.5' is less than the minimum 0 milliseconds"),
    ("--time-scale", "0", "'0' is less than the minimum 0.001"),
])
def test_a_number_out_of_range_says_which_bound(option: str, value: str, message: str,
                                                kadmin: Run) -> None:
    run = kadmin(*FLOAT_OPTIONS[option], f"{option}={value}")
    assert run.code == 2
    assert message in run.err, run.err


@pytest.mark.parametrize(("text", "value"), [
    ("9223372036854775807", 2**63 - 1), ("9223372036854775807/s", 2**63 - 1),
    ("9223372036854775806", 2**63 - 2), ("9223372036.854775807G", 2**63 - 1),
    ("8388608TiB", 2**63), ("1.5G", 1_500_000_000), ("0.001k", 1),
])
def test_rates_are_computed_exactly(text: str, value: int) -> None:
    if value > units.JAVA_LONG_MAX:
        with pytest.raises(InvalidInput, match="more than Kafka can take"):
            units.parse_rate(text, "--rate")
    else:
        assert units.parse_rate(text, "--rate") == value


@pytest.mark.parametrize("text", ["9223372036854775808", "inf", "nan", "1e3", "-5", "1e999MB"])
def test_rates_kafka_cannot_take_are_refused_by_name(text: str) -> None:
    with pytest.raises(InvalidInput, match=r"^--rate: "):
        units.parse_rate(text, "--rate")


@pytest.mark.zk
def test_throttle_set_takes_long_max_value_as_kafka_does(
        start_sandbox: Callable[..., Any], kadmin: Run) -> None:
    box = start_sandbox(ClusterSnapshot(brokers={b: Broker(b) for b in (1, 2)},
                                        topics={"t": {0: (1, 2)}}), latency=0.0)
    run = kadmin("throttle", "set", "--rate", "9223372036854775807", "--brokers", "1", "-z",
                 box.connect_string)
    assert run.code == 0, run.err
    config = json.loads(box.client.get(paths.config("brokers/1"))[0])["config"]
    assert config["leader.replication.throttled.rate"] == "9223372036854775807"


ID_OPTIONS = {
    "throttle set --brokers": ["throttle", "set", "--rate", "1MB", "-z", NOWHERE, "--brokers"],
    "plan generate --brokers": ["plan", "generate", "--cluster", "cluster.json", "--all-topics",
                                "--brokers"],
    "plan rebalance --brokers": ["plan", "rebalance", "--cluster", "cluster.json", "--brokers"],
    "plan rebalance --remove-brokers": ["plan", "rebalance", "--cluster", "cluster.json",
                                        "--remove-brokers"],
    "spark plan --brokers": ["spark", "plan", "--cluster", "snap", "--all-topics", "--out", "o",
                             "--brokers"],
    "spark rebalance --brokers": ["spark", "rebalance", "--cluster", "snap", "--out", "o",
                                  "--brokers"],
    "spark rebalance --remove-brokers": ["spark", "rebalance", "--cluster", "snap", "--out",
                                         "o", "--remove-brokers"],
}


@pytest.mark.parametrize(("ids", "repeated"), [("0,0", 0), ("0,1,1,2", 1), ("1,2,01", 1),
                                               ("3, 3", 3)])
@pytest.mark.parametrize("option", sorted(ID_OPTIONS))
def test_an_id_given_twice_is_refused_naming_it(option: str, ids: str, repeated: int,
                                                kadmin: Run, tmp_path: Path) -> None:
    shutil.copyfile(CLUSTER, tmp_path / "cluster.json")
    before = sorted(tmp_path.iterdir())
    run = kadmin(*ID_OPTIONS[option], ids)
    flag = option.split()[-1]
    assert run.code == 2, (run.out, run.err)
    assert run.err.splitlines() == [
        f"kadmin: error: {flag}: broker id {repeated} is given more than once"], run.err
    assert sorted(tmp_path.iterdir()) == before
