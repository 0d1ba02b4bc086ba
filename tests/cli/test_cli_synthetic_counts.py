"""The synthetic cluster's counts, shared by ``kadmin sandbox`` and ``kadmin demo``: refused in
the words of the options, with the counts the user typed (the demo's cluster holds one broker
fewer than --broker-count: the new one starts empty, but the messages name what was typed)."""

from __future__ import annotations

from typing import Any

import pytest

from kadmin.operations.sandbox import SyntheticCluster


@pytest.mark.parametrize(("args", "message"), [
    (["--broker-count", "3", "--rack-count", "4", "--replication-factor", "2"],
     "--rack-count must be at most --broker-count (3), got 4"),
    (["--broker-count", "3", "--rack-count", "4"],
     "--replication-factor must be at most --broker-count less the 1 that joins (2), got 3; "
     "--rack-count must be at most --broker-count (3), got 4"),
    (["--broker-count", "3", "--replication-factor", "3"],
     "--replication-factor must be at most --broker-count less the 1 that joins (2), got 3"),
    (["--broker-count", "1", "--replication-factor", "1", "--rack-count", "0"],
     "--broker-count must be at least 2 (1 broker(s) join a cluster of at least one), got 1"),
])
def test_demo_names_the_counts_typed(kadmin: Any, args: list[str], message: str) -> None:
    run = kadmin("demo", *args)
    assert run.code == 2 and run.err == f"kadmin: error: {message}\n", run.err
    assert run.out == ""


def test_sandbox_names_the_counts_typed(kadmin: Any) -> None:
    run = kadmin("sandbox", "--broker-count", "2", "--rack-count", "3", "--replication-factor",
                 "2", "--port", "0")
    assert run.code == 2
    assert run.err == "kadmin: error: --rack-count must be at most --broker-count (2), got 3\n"


def test_the_demo_may_have_as_many_racks_as_brokers() -> None:
    """3 brokers in 3 racks: two hold the replicas, the new one gets the third rack."""
    grown = SyntheticCluster(brokers=3, racks=3, topics=2, partitions=2,
                             replication_factor=2).snapshot(empty=1)
    assert {b: broker.rack for b, broker in grown.brokers.items()} == {0: "r0", 1: "r1", 2: "r2"}
    assert {b for parts in grown.topics.values() for r in parts.values() for b in r} == {0, 1}


def test_both_commands_offer_the_same_counts(kadmin: Any, monkeypatch: Any) -> None:
    """The same options, help and defaults (one definition, in SyntheticCluster)."""
    monkeypatch.setenv("COLUMNS", "200")
    helps = [kadmin(command, "--help").out.splitlines() for command in ("demo", "sandbox")]
    options = ["--broker-count", "--rack-count", "--topic-count", "--partitions",
               "--replication-factor"]
    entries = [[_entry(h, o) for o in options] for h in helps]
    assert entries[0] == entries[1]
    assert "[default: 6]" in entries[0][0] and "[default: 3]" in entries[0][4]
    demo_json, sandbox_json = (_entry(h, "--json") for h in helps)
    assert demo_json.startswith(sandbox_json) and "connect string" in sandbox_json


def _entry(help_lines: list[str], option: str) -> str:
    """An option's entry in --help: its line and the indented lines that follow, joined."""
    start = next(i for i, line in enumerate(help_lines) if line.strip().startswith(option))
    words = [help_lines[start].strip()]
    for line in help_lines[start + 1:]:
        if not line.strip() or line.strip().startswith("-"):
            break
        words.append(line.strip())
    return " ".join(words)
