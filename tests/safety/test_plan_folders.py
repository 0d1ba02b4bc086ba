"""A Spark output folder is its manifest and its batch files, which must agree: a member outside
the folder (``../x.json``, ``/etc/passwd``), a batch file the manifest does not list, one listed
twice, or a partition count the file does not hold is an error naming the file; and a folder
named together with its own manifest.json is one plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kadmin.model import Broker, ClusterSnapshot
from kadmin.snapshots import write_snapshot

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={"a": {0: (0, 1), 1: (1, 2)}, "b": {0: (2, 3), 1: (3, 0)}},
    controller=0, controller_epoch=1)
BATCHES = {"batch-00001.json": [("a", 0, [1, 2])], "batch-00002.json": [("b", 1, [0, 1])]}


def folder(tmp_path: Path, listed: list[Any] | None = None,
           extra: dict[str, list[Any]] | None = None) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    entries = []
    for name, moves in {**BATCHES, **(extra or {})}.items():
        (out / name).write_text(json.dumps({"version": 1, "partitions": [
            {"topic": t, "partition": p, "replicas": r} for t, p, r in moves]}))
        if name in BATCHES:
            entries.append({"file": name, "partitions": len(moves),
                            "bytes": (out / name).stat().st_size})
    (out / "manifest.json").write_text(json.dumps({
        "version": 1, "kind": "reassign", "batches": entries if listed is None else listed}))
    write_snapshot(CLUSTER, tmp_path / "c.json")
    return out


def entry(name: str, partitions: int = 1) -> dict[str, Any]:
    return {"file": name, "partitions": partitions, "bytes": 1}


@pytest.mark.parametrize(("listed", "extra", "words"), [
    ([entry("batch-00001.json"), entry("../x.json")], None, ["../x.json", "not a batch file"]),
    ([entry("batch-00001.json"), entry("/etc/passwd")], None, ["/etc/passwd", "not a batch file"]),
    ([entry("batch-00001.json"), entry("sub/batch.json")], None, ["sub/batch.json"]),
    ([entry("batch-00001.json")], None, ["batch-00002.json", "not in manifest.json"]),
    ([entry("batch-00001.json"), entry("batch-00002.json"), entry("batch-00001.json")], None,
     ["batch-00001.json is listed twice"]),
    ([entry("batch-00001.json"), entry("batch-00002.json", 7)], None,
     ["batch-00002.json: 1 partition(s), where manifest.json says 7"]),
    (None, {"batch-00003.json": [("a", 1, [2, 3])]}, ["batch-00003.json", "not in manifest"]),
])
def test_a_folder_and_its_manifest_agree_or_it_is_an_error(
        kadmin: Any, tmp_path: Path, listed: list[Any] | None,
        extra: dict[str, list[Any]] | None, words: list[str]) -> None:
    (tmp_path / "x.json").write_text('{"version":1,"partitions":[]}')
    out = folder(tmp_path, listed, extra)
    for command in (("plan", "validate", str(out), "--cluster", "c.json"),
                    ("plan", "stats", "--plan", str(out), "--cluster", "c.json")):
        run = kadmin(*command)
        assert run.code == 2, (command, run.out, run.err)
        assert all(w in run.out + run.err for w in words), (command, run.out, run.err)
        assert "internal error" not in run.err


def test_a_folder_named_with_its_manifest_is_one_plan(kadmin: Any, tmp_path: Path) -> None:
    out = folder(tmp_path)
    run = kadmin("plan", "validate", str(out), str(out / "manifest.json"), "--cluster", "c.json",
                 "--strict", "--json")
    assert run.code == 0, (run.out, run.err)
    verdicts = [json.loads(line) for line in run.out.splitlines()]
    assert len(verdicts) == 1 and verdicts[0]["valid"] and verdicts[0]["warning_count"] == 0


def test_a_partition_in_two_batch_files_names_both(kadmin: Any, tmp_path: Path) -> None:
    out = folder(tmp_path, extra=None)
    twin = out / "batch-00002.json"
    twin.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "a", "partition": 0, "replicas": [1, 2]}]}))
    run = kadmin("plan", "validate", str(out), "--cluster", "c.json")
    assert run.code == 2
    assert "a-0: is in more than one batch file: " in run.out + run.err
    assert "batch-00001.json and " in run.out + run.err and "batch-00002.json" in run.out + run.err


@pytest.mark.parametrize("args", [
    ["plan", "deletion", "--cluster", "c.json", "--topics", "a,b,a"],
    ["plan", "generate", "--cluster", "c.json", "--topics", "a,a"],
])
def test_a_name_given_twice_is_refused_as_an_id_given_twice_is(kadmin: Any, tmp_path: Path,
                                                                args: list[str]) -> None:
    write_snapshot(CLUSTER, tmp_path / "c.json")
    run = kadmin(*args)
    assert run.code == 2, (run.out, run.err)
    assert "given more than once" in run.err and "a" in run.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]
