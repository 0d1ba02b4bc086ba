"""``--capacity FILE`` as a careless operator or an odd file system hands it over, on every
command that reads one: a folder, a device behind a symlink, a dangling symlink, a named pipe,
an empty or binary file, JSON that is not JSON, numbers that are no capacity. Each is one
``kadmin: error:`` line naming the file (and, inside the document, the JSON path), exit 2, and
nothing written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import KadminProcesses

Run = Callable[..., Any]

CLUSTER = {"version": 1, "brokers": {str(b): {"host": f"h{b}", "port": 9092} for b in range(4)},
           "topics": {"t": {"0": [0, 1], "1": [1, 2], "2": [2, 0]}}}
PLAN = {"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [3, 2]}]}

COMMANDS = {
    "plan rebalance": ["plan", "rebalance", "--cluster", "cluster.json", "--out", "new.json"],
    "plan stats": ["plan", "stats", "--plan", "plan.json", "--cluster", "cluster.json"],
    # the file is read before connecting: no ZooKeeper needed to be refused
    "status": ["status", "-z", "127.0.0.1:1", "--connect-timeout", "0.5"],
}


def bad_file(tmp_path: Path, kind: str) -> tuple[str, str]:
    """Make the capacity file of ``kind``; its name and the message expected."""
    texts = {
        "empty": ("", "empty.json is empty, expected a JSON document"),
        "binary": ("\udcff\udcfe{", "binary.json: not UTF-8"),
        "repeated key": ('{"0": 5, "0": 6}',
                         'repeated key.json: not valid JSON (duplicate key "0" in the object '
                         'at $)'),
        "NaN": ('{"0": NaN}', "NaN.json: not valid JSON (NaN is not a JSON value)"),
        "overflow": ('{"0": 1e400}', 'overflow.json: $["0"]: expected a capacity in bytes'),
        "Infinity MB": ('{"brokerCapacities":[{"brokerId":"-1","capacity":{"DISK":"Infinity"}}]}',
                        "Infinity MB.json: $.brokerCapacities[0].capacity.DISK: expected a size "
                        "in MB (a positive number), got 'Infinity'"),
        "negative log dir": ('{"brokerCapacities":[{"brokerId":"-1","capacity":{"DISK":'
                             '{"/d1":"10","/d2":"-5"}}}]}',
                             "negative log dir.json: $.brokerCapacities[0].capacity.DISK"
                             "[\"/d2\"]: expected a size in MB"),
        "no default": ('{"0": 10, "1": 10}',
                       "no default.json: no capacity for broker(s) 2, 3 and no default "
                       "(brokerId -1)"),
        "a list": ("[1, 2]", "a list.json: $: expected Cruise Control's"),
        "beyond int32": ('{"-1": 5, "2147483648": 5}',
                         'beyond int32.json: $["2147483648"]: expected a broker id (the decimal '
                         'of an integer from 0 to 2147483647, without leading zeros, or -1 for '
                         "the default), got '2147483648'"),
        "leading zeros": ('{"brokerCapacities":[{"brokerId":"007","capacity":{"DISK":"1"}}]}',
                          "leading zeros.json: $.brokerCapacities[0].brokerId: expected a broker "
                          "id (the decimal of an integer from 0 to 2147483647, without leading "
                          "zeros, or -1 for the default), got '007'"),
        "spaced": ('{"-1": 5, " 7": 5}', "spaced.json: $[\" 7\"]: expected a broker id"),
        "signed": ('{"-1": 5, "+7": 5}', 'signed.json: $["+7"]: expected a broker id'),
        "boolean": ('{"-1": true}', 'boolean.json: $["-1"]: expected a capacity in bytes (a '
                    'positive integer), got true'),
        "null id": ('{"brokerCapacities":[{"brokerId":null,"capacity":{"DISK":"1"}}]}',
                    "null id.json: $.brokerCapacities[0].brokerId: expected a broker id (the "
                    "decimal of an integer from 0 to 2147483647, without leading zeros, or -1 "
                    "for the default), got null"),
    }
    if kind in texts:
        text, message = texts[kind]
        (tmp_path / f"{kind}.json").write_bytes(text.encode("utf-8", "surrogateescape"))
        return f"{kind}.json", message
    if kind == "folder":
        (tmp_path / "folder").mkdir()
        return "folder", "folder is a folder, expected a file"
    if kind == "device symlink":
        (tmp_path / "zero").symlink_to("/dev/zero")
        return "zero", "zero is a device, not a regular file"
    if kind == "dangling symlink":
        (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
        return "gone", "gone: no such file"
    raise AssertionError(kind)


KINDS = ["empty", "binary", "repeated key", "NaN", "overflow", "Infinity MB", "negative log dir",
         "no default", "a list", "folder", "device symlink", "dangling symlink", "beyond int32",
         "leading zeros", "spaced", "signed", "boolean", "null id"]


def setup(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(("kind", "command"), [
    (kind, command) for kind in KINDS for command in sorted(COMMANDS)
    # status learns its brokers from ZooKeeper: tests/cli/test_cli_capacity.py checks that one
    if (kind, command) != ("no default", "status")])
def test_a_bad_capacity_file_is_one_line_and_nothing_is_written(
        kind: str, command: str, kadmin: Run, tmp_path: Path) -> None:
    setup(tmp_path)
    name, message = bad_file(tmp_path, kind)
    before = listing(tmp_path)
    run = kadmin(*COMMANDS[command], "--capacity", name)
    assert run.code == 2, (run.out, run.err)
    assert len(run.err.splitlines()) == 1 and "Traceback" not in run.err
    assert run.err.startswith(f"kadmin: error: {message}"), run.err
    assert listing(tmp_path) == before


def test_a_symlink_to_a_good_capacity_file_is_followed(kadmin: Run, tmp_path: Path) -> None:
    """A link to a regular file is how configuration is often deployed: it is read."""
    setup(tmp_path)
    (tmp_path / "real.json").write_text(json.dumps({"-1": 10**12, "3": 3 * 10**12}))
    (tmp_path / "capacity.json").symlink_to(tmp_path / "real.json")
    run = kadmin(*COMMANDS["plan rebalance"], "--capacity", "capacity.json", "--json")
    assert run.code == 0, run.err
    # the capacities were read through the link: broker 3, three times the others, ends with
    # three times their replicas (one of each partition), brokers 0-2 with one each
    after = {b["broker"]: b["replicas_after"] for b in json.loads(run.out)["brokers"]}
    assert after == {0: 1, 1: 1, 2: 1, 3: 3}
    written = json.loads((tmp_path / "new.json").read_text())["partitions"]
    assert all(3 in entry["replicas"] for entry in written)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_named_pipe_as_capacity_file_is_refused_without_blocking(
        command: str, tmp_path: Path, kadmin_process: KadminProcesses) -> None:
    """As a separate process with a time limit: a kadmin that opened the pipe for reading would
    block until a writer came."""
    setup(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    run = kadmin_process.run(*COMMANDS[command], "--capacity", "pipe", cwd=tmp_path, timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        "kadmin: error: pipe is a named pipe (FIFO), not a regular file"]
    assert not (tmp_path / "new.json").exists()


STRANGERS = {"-1": 10**12, "3": 10**12, "9": 10**12, "16": 10**12}
"""Brokers 9 and 16 are not in the cluster (0-3): a fleet-wide file, or a typo."""


@pytest.mark.parametrize("command", ["plan rebalance", "plan stats"])
def test_capacities_of_brokers_outside_the_cluster_are_named_in_a_warning(
        command: str, kadmin: Run, tmp_path: Path) -> None:
    setup(tmp_path)
    (tmp_path / "capacity.json").write_text(json.dumps(STRANGERS))
    run = kadmin(*COMMANDS[command], "--capacity", "capacity.json")
    assert run.code == 0, run.err
    assert run.err.splitlines() == [
        "kadmin: warning: capacity.json: broker(s) 9, 16 are not in the cluster; their "
        "capacities are not used"]


def test_a_capacity_file_of_the_cluster_brokers_warns_of_nothing(kadmin: Run,
                                                                 tmp_path: Path) -> None:
    setup(tmp_path)
    (tmp_path / "capacity.json").write_text(json.dumps({"-1": 10**12, "3": 10**12}))
    run = kadmin(*COMMANDS["plan rebalance"], "--capacity", "capacity.json")
    assert run.code == 0 and run.err == "", run.err


@pytest.mark.spark
def test_spark_rebalance_refuses_a_capacity_file_before_spark_starts(kadmin: Run,
                                                                     tmp_path: Path) -> None:
    """A master no Spark accepts: had Spark started first, its error would be the one shown.
    The file lacks a capacity for brokers 2 and 3, which only the snapshot's brokers tell."""
    from kadmin import snapshots
    setup(tmp_path)
    snapshots.write_snapshot(snapshots.read_snapshot(tmp_path / "cluster.json"),
                             tmp_path / "snap", fmt="dir")
    (tmp_path / "capacity.json").write_text(json.dumps({"0": 10**12, "1": 10**12}))
    run = kadmin("spark", "rebalance", "--cluster", "snap", "--out", "out", "--master",
                 "nowhere://", "--capacity", "capacity.json")
    assert run.code == 2, run.err
    assert run.err.splitlines() == ["kadmin: error: capacity.json: no capacity for broker(s) "
                                    "2, 3 and no default (brokerId -1)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.spark
def test_spark_rebalance_names_capacities_of_brokers_outside_the_cluster(kadmin: Run,
                                                                         tmp_path: Path) -> None:
    from kadmin import snapshots
    setup(tmp_path)
    snapshots.write_snapshot(snapshots.read_snapshot(tmp_path / "cluster.json"),
                             tmp_path / "snap", fmt="dir")
    (tmp_path / "capacity.json").write_text(json.dumps(STRANGERS))
    run = kadmin("spark", "rebalance", "--cluster", "snap", "--out", "out", "--capacity",
                 "capacity.json", "--json")
    assert run.code == 0, run.err
    assert ("kadmin: warning: capacity.json: broker(s) 9, 16 are not in the cluster; their "
            "capacities are not used") in run.err.splitlines()
    assert (tmp_path / "out" / "manifest.json").is_file()
