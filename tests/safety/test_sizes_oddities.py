"""Sizes files that read but are odd: a partition number Kafka would not
print (``t0-00``), a partition listed twice in one log dir, a line before the JSON that is not
one of kafka-log-dirs.sh's two header lines. Each is read as before and named in a warning,
one line per kind, bounded (the first partitions and a count of the rest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kadmin import sizes
from kadmin.model import Broker, ClusterSnapshot, TopicPartition

CLUSTER = ClusterSnapshot(brokers={b: Broker(b) for b in (0, 1)},
                          topics={"t0": {0: (0, 1), 1: (1, 0)}, "t-1": {0: (0, 1)}})
HEADER = ("Querying brokers for log directories information\n"
          "Received log directory information from brokers 0,1\n")


def log_dirs(*dirs: list[dict[str, Any]]) -> str:
    return json.dumps({"version": 1, "brokers": [
        {"broker": 0, "logDirs": [{"logDir": f"/data/{i}", "error": None, "partitions": d}
                                  for i, d in enumerate(dirs)]}]})


def entry(name: str, size: int, future: bool = False) -> dict[str, Any]:
    return {"partition": name, "size": size, "offsetLag": 0, "isFuture": future}


def read(tmp_path: Path, text: str) -> sizes.PartitionSizes:
    path = tmp_path / "sizes.txt"
    path.write_text(text)
    return sizes.read_sizes(path, CLUSTER)


def test_a_clean_file_has_no_notes(tmp_path: Path) -> None:
    found = read(tmp_path, HEADER + log_dirs([entry("t0-0", 5), entry("t0-1", 6),
                                              entry("t-1-0", 7)]))
    assert found.notes == () and sizes.warnings(found) == ()


@pytest.mark.parametrize("name", ["t0-00", "t0-01", "t0-0001"])
def test_a_partition_number_with_leading_zeros_is_read_and_named(name: str,
                                                                 tmp_path: Path) -> None:
    found = read(tmp_path, log_dirs([entry(name, 5), entry("t-1-0", 7)]))
    number = int(name.rsplit("-", 1)[1])
    assert found[TopicPartition("t0", number)] == 5
    assert found.notes == (f"{tmp_path / 'sizes.txt'}: 1 partition name(s) with a partition "
                           f"number Kafka does not write (leading zeros), read as: "
                           f"{name!r} as t0-{number}",)


def test_a_partition_twice_in_one_log_dir_is_named_and_the_larger_kept(tmp_path: Path) -> None:
    found = read(tmp_path, log_dirs([entry("t0-0", 5), entry("t0-0", 9), entry("t0-1", 1)],
                                    [entry("t0-1", 3, future=True)]))
    assert found[TopicPartition("t0", 0)] == 9
    assert found.notes == (f"{tmp_path / 'sizes.txt'}: 1 partition(s) listed twice in one log "
                           "dir, the larger size kept: t0-0 in broker 0 '/data/0'",)


def test_the_same_partition_in_two_brokers_is_no_oddity(tmp_path: Path) -> None:
    doc = json.loads(log_dirs([entry("t0-0", 5)]))
    doc["brokers"].append({"broker": 1, "logDirs": [
        {"logDir": "/data/0", "error": None, "partitions": [entry("t0-0", 6)]}]})
    found = read(tmp_path, json.dumps(doc))
    assert found.notes == () and found[TopicPartition("t0", 0)] == 6


@pytest.mark.parametrize("lines", [
    "Querying brokers for log directory information\n",  # one word off
    "SLF4J: Class path contains multiple SLF4J bindings.\n" + HEADER,
    "Received log directory information from brokers 0,1\nsomething else\n",
])
def test_a_line_before_the_json_that_is_not_kafkas_is_named(lines: str, tmp_path: Path) -> None:
    found = read(tmp_path, lines + log_dirs([entry("t0-0", 5)]))
    assert found[TopicPartition("t0", 0)] == 5
    assert len(found.notes) == 1
    assert "line(s) before the JSON that kafka-log-dirs.sh does not print, ignored: line " \
        in found.notes[0]


def test_notes_are_bounded_with_a_count(tmp_path: Path) -> None:
    many = [entry(f"t0-{i:03}", i) for i in range(150)]  # t0-000 .. t0-099 have leading zeros
    junk = "".join(f"junk {i}\n" for i in range(40))
    found = read(tmp_path, junk + log_dirs(many + many[:30]))
    assert len(found.notes) == 3
    assert all(len(note) < 1000 for note in found.notes)
    assert "130 partition name(s)" in found.notes[1] and "(and 120 more)" in found.notes[1]
    assert "30 partition(s) listed twice" in found.notes[2]
    assert "(and 20 more)" in found.notes[2]
    assert "40 line(s)" in found.notes[0] and "(and 30 more)" in found.notes[0]


def test_the_commands_show_the_notes_as_warnings(tmp_path: Path, kadmin: Any) -> None:
    from kadmin import snapshots
    snapshots.write_snapshot(CLUSTER, tmp_path / "cluster.json")
    (tmp_path / "sizes.txt").write_text("garbage line\n" + log_dirs(
        [entry("t0-00", 5), entry("t0-00", 4), entry("t0-1", 6), entry("t-1-0", 1)]))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t0", "partition": 0, "replicas": [1, 0]}]}))
    run = kadmin("plan", "stats", "plan.json", "--cluster", "cluster.json", "--sizes",
                 "sizes.txt")
    assert run.code == 0, run.err
    warnings = [line for line in run.err.splitlines() if line.startswith("kadmin: warning: ")]
    assert len(warnings) == 3, run.err
    assert "'t0-00' as t0-0" in warnings[1]
    assert "t0-0 in broker 0 '/data/0'" in warnings[2]


@pytest.mark.parametrize(("field", "value", "said"), [
    ("isFuture", None, "expected true or false, got null"),
    ("isFuture", 1, "expected true or false, got 1"),
    ("size", True, "expected a size in bytes (an integer >= 0), got true"),
    ("size", [5], "expected a size in bytes (an integer >= 0), got a list"),
    ("partition", False, "expected \"<topic>-<id>\", got false"),
])
def test_a_wrong_value_is_said_as_json_spells_it(field: str, value: Any, said: str,
                                                 tmp_path: Path) -> None:
    """Never Python's True/None or a list's repr: the file's own spelling, or its kind."""
    bad = {**entry("t0-0", 5), field: value}
    with pytest.raises(sizes.InvalidInput) as refused:
        read(tmp_path, HEADER + log_dirs([bad]))
    assert str(refused.value).endswith(f".{field}: {said}"), str(refused.value)
