"""The Spark planner on a real local[2] Spark: its plan is the single-machine plan, batch for batch.

The reference is what ``kadmin plan generate`` computes (``placement.place`` and the diff of
``cli.plan.proposed_plan``) cut by ``plans.reassignment_batches``. Snapshots are generated with
uneven partition counts, mixed replication factors, replicas on an unregistered broker and the
lines shuffled, and the job's tuning constants are shrunk so that even these small inputs run
through many input splits, many sorted Spark partitions and many driver windows.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pyspark
import pytest

from kadmin import placement, plans, snapshots
from kadmin.model import (
    Broker,
    ClusterSnapshot,
    Conflict,
    InvalidInput,
    OperationFailed,
    PartitionMove,
    Reassignment,
    TopicAssignment,
)
from kadmin.operations import folder
from kadmin.operations.generate import proposed_plan
from kadmin.operations.planfiles import load_reassignment
from kadmin.placement import PlacementOptions, Strategy
from kadmin.spark import plan as spark_plan
from kadmin.spark import submit
from kadmin.zk import codec

pytestmark = pytest.mark.spark

BATCH_SIZE = 37
MAX_BYTES = 2_500
DEAD_BROKER = 99
"""Holds replicas in the snapshot but is not registered: it must count in the stats."""


PARTITIONS_PER_TASK = 800
"""Partitions per sorted Spark partition in this module's jobs (the conftest's small_units)."""


def random_topics(rng: random.Random, n: int, broker_ids: Sequence[int]
                  ) -> dict[str, TopicAssignment]:
    alphabet = "abcXYZ019._-"
    topics: dict[str, TopicAssignment] = {}
    while len(topics) < n:
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        if name in (".", ".."):
            continue
        rf = rng.choice((1, 2, 3, 3, 3))
        count = rng.choice((1, 2, 3, 5, 8, 13, 40))
        ids = rng.sample(range(count + 3), count)  # partition ids with gaps
        topics[name] = {p: tuple(rng.sample(broker_ids, rf)) for p in ids}
    return topics


def write_cluster(folder: Path, brokers: dict[int, Broker], topics: dict[str, TopicAssignment],
                  seed: int) -> Path:
    order = list(topics)
    random.Random(seed).shuffle(order)  # the job must sort; the file need not be
    snapshots.write_snapshot_dir(folder, brokers, ((t, topics[t], {}) for t in order))
    return folder


@pytest.fixture(scope="module")
def racked_cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """9 brokers on 3 racks; 400 topics, 1 to 40 partitions, RF 1 to 3; broker 99 unregistered."""
    rng = random.Random(7)
    brokers = {b: Broker(b, host=f"h{b}", port=9092, rack=f"rack-{b % 3}") for b in range(9)}
    topics = random_topics(rng, 400, [*brokers, DEAD_BROKER])
    return write_cluster(tmp_path_factory.mktemp("racked") / "snap", brokers, topics, seed=1)


def reference(cluster: Path, topics: Sequence[str] | None, brokers: Sequence[int] | None,
              options: PlacementOptions, batch_size: int = BATCH_SIZE, max_bytes: int = MAX_BYTES
              ) -> tuple[list[list[PartitionMove]], int, plans.PlanStats]:
    """The single-machine plan: batches, unchanged partitions and stats."""
    snapshot = snapshots.read_snapshot(cluster)
    names = sorted(snapshot.topics) if topics is None else list(topics)
    ids = sorted(snapshot.brokers) if brokers is None else brokers
    plan, unchanged = proposed_plan(snapshot, names, [snapshot.brokers[b] for b in ids], options)
    batches = plans.reassignment_batches(plan.moves, batch_size, max_bytes)
    return [list(b) for b in batches], unchanged, plans.plan_stats(plan, snapshot)


def spark_batches(out: Path, manifest: spark_plan.Manifest) -> list[list[PartitionMove]]:
    return [list(codec.decode_reassignment((out / b.file).read_bytes()))
            for b in manifest.batches]


CASES = {
    "roundrobin": (None, None, PlacementOptions()),
    "roundrobin-start-index": (None, None, PlacementOptions(start_index=7)),
    "kafka-rack-aware": (None, None, PlacementOptions(strategy=Strategy.KAFKA)),
    "kafka-fixed-start-no-racks": (None, None, PlacementOptions(
        strategy=Strategy.KAFKA, start_index=4, start_partition=2, rack_aware=False)),
    "kafka-rf-change": (None, None, PlacementOptions(strategy=Strategy.KAFKA,
                                                     replication_factor=2)),
    "broker-subset": (None, [0, 1, 2, 3, 4, 5], PlacementOptions(strategy=Strategy.KAFKA)),
    "roundrobin-rf-up": (None, [1, 3, 5, 7], PlacementOptions(replication_factor=4)),
}


@pytest.mark.parametrize("case", CASES)
def test_plan_is_the_single_machine_plan(spark, racked_cluster, tmp_path, case):
    topics, brokers, options = CASES[case]
    out = tmp_path / "out"
    manifest = spark_plan.run_plan(racked_cluster, out, topics=topics, brokers=brokers, options=options,
                            batch_size=BATCH_SIZE, max_znode_bytes=MAX_BYTES)
    expected, unchanged, stats = reference(racked_cluster, topics, brokers, options)
    assert spark_batches(out, manifest) == expected
    assert len(expected) > 10
    assert manifest.unchanged == unchanged
    assert manifest.partitions == sum(map(len, expected))
    assert manifest.stats.brokers == stats.brokers
    assert (manifest.stats.replica_moves, manifest.stats.leader_changes) == (
        stats.replica_moves, stats.leader_changes)


def test_topic_subset(spark, racked_cluster, tmp_path):
    every = sorted(snapshots.read_snapshot(racked_cluster).topics)
    subset = random.Random(3).sample(every, 60)
    options = PlacementOptions(strategy=Strategy.ROUNDROBIN, start_index=2)
    manifest = spark_plan.run_plan(racked_cluster, tmp_path / "out", topics=subset + subset[:5],
                            options=options, batch_size=BATCH_SIZE, max_znode_bytes=MAX_BYTES)
    expected, unchanged, stats = reference(racked_cluster, subset, None, options)
    assert spark_batches(tmp_path / "out", manifest) == expected
    assert {m.topic for batch in expected for m in batch} <= set(subset)
    assert (manifest.topics, manifest.unchanged) == (60, unchanged)
    assert manifest.stats.brokers == stats.brokers  # unselected topics count before and after


def test_unchanged_partitions_are_left_out(spark, tmp_path):
    """A cluster already placed by the rule: nothing moves except what was disturbed."""
    brokers = {b: Broker(b) for b in range(4)}
    names = [f"t{i:02d}" for i in range(30)]
    current = {t: dict(enumerate(placement.roundrobin_replicas(range(4), 6, 2, 6 * i)))
               for i, t in enumerate(names)}
    placed = current["t03"][1]
    current["t03"][1] = placed[::-1]  # disturbed: this one partition must move back
    cluster = write_cluster(tmp_path / "snap", brokers, current, seed=2)
    manifest = spark_plan.run_plan(cluster, tmp_path / "out", options=PlacementOptions())
    assert (manifest.partitions, manifest.unchanged, manifest.topics) == (1, 179, 30)
    assert spark_batches(tmp_path / "out", manifest) == [[PartitionMove("t03", 1, placed)]]


def test_manifest_and_batch_files(spark, racked_cluster, tmp_path):
    options = PlacementOptions(strategy=Strategy.KAFKA)
    out = tmp_path / "plans" / "big"
    manifest = spark_plan.run_plan(racked_cluster, out, options=options, batch_size=BATCH_SIZE,
                            max_znode_bytes=MAX_BYTES)
    doc = json.loads((out / "manifest.json").read_text())
    assert doc == manifest.document()
    names = [b["file"] for b in doc["batches"]]
    assert names == [f"batch-{i:05d}.json" for i in range(1, len(names) + 1)]
    assert sorted(p.name for p in out.iterdir()) == sorted([*names, "manifest.json"])
    for entry in doc["batches"]:
        data = (out / entry["file"]).read_bytes()
        plan = plans.parse_plan(json.loads(data), None)  # a valid Kafka reassignment file
        assert len(plan.moves) == entry["partitions"] <= BATCH_SIZE
        assert len(data) == entry["bytes"] <= MAX_BYTES
        assert data == codec.encode_reassignment(plan.moves)  # the file is the znode payload
    snapshot = snapshots.read_snapshot(racked_cluster)
    assert doc["topics"] == len(snapshot.topics)
    assert doc["placed"] == snapshot.partition_count == doc["partitions"] + doc["unchanged"]
    assert doc["partitions"] == sum(b["partitions"] for b in doc["batches"])
    assert doc["brokers"][0] == {"broker": 0, **{k: v for k, v in doc["brokers"][0].items()
                                                 if k != "broker"}}
    assert {b["broker"] for b in doc["brokers"]} == {*range(9), DEAD_BROKER}
    assert doc["options"] == {
        "strategy": "kafka", "replication_factor": None, "start_index": None,
        "start_partition": 0, "rack_aware": True, "target_brokers": list(range(9)),
        "all_topics": True, "batch_size": BATCH_SIZE, "max_znode_bytes": MAX_BYTES}
    for name in ("brokers.json", "topics.jsonl"):
        content = (racked_cluster / name).read_bytes()
        assert doc["input"][name] == {"bytes": len(content),
                                      "sha256": hashlib.sha256(content).hexdigest()}
    # what `kadmin reassign --plan <folder>` executes is the single-machine plan
    merged, anchor = load_reassignment(out)
    expected, _, _ = reference(racked_cluster, None, None, options)
    assert merged.moves == tuple(m for batch in expected for m in batch)
    assert anchor == out / "manifest.json"


def test_refuses_an_existing_out_unless_forced(spark, racked_cluster, tmp_path):
    """Its own output folder is replaced with force only; a folder that is not (no
    manifest.json) never is, force or not: replacing it would delete what it holds."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep")
    for force in (False, True):
        with pytest.raises(InvalidInput, match=r"out is a folder without manifest.json"):
            spark_plan.run_plan(racked_cluster, out, force=force)
    assert (out / "precious.txt").read_text() == "keep"
    (out / "precious.txt").unlink()
    spark_plan.run_plan(racked_cluster, out, force=True)  # an empty folder is taken
    with pytest.raises(InvalidInput, match=r"out already exists \(use --force to overwrite\)"):
        spark_plan.run_plan(racked_cluster, out)
    manifest = spark_plan.run_plan(racked_cluster, out, force=True)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [b.file for b in manifest.batches] + ["manifest.json"])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temp or old folder left


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_failure_while_writing_leaves_nothing_that_looks_finished(
        spark, racked_cluster, tmp_path, monkeypatch):
    written = []
    real_write = folder.write_batch

    def write_then_fail(folder, number, entries):
        if number == 3:
            raise OSError(28, "No space left on device")
        written.append(real_write(folder, number, entries))
        return written[-1]

    monkeypatch.setattr(folder, "write_batch", write_then_fail)
    with pytest.raises(OperationFailed, match=r"cannot write .*/out: No space left on device"):
        spark_plan.run_plan(racked_cluster, tmp_path / "out", batch_size=BATCH_SIZE,
                     max_znode_bytes=MAX_BYTES)
    assert len(written) == 2  # the failure came after batch files had been written
    assert leftovers(tmp_path) == []


def test_an_entry_too_big_for_a_znode_fails_midway_and_keeps_the_old_folder(
        spark, tmp_path, monkeypatch):
    """The oversized entry sorts last, so it is met only after batches have been written: the
    error is the single-machine one, and a forced run keeps the previous folder intact."""
    brokers = {b: Broker(b) for b in range(3)}
    topics = {f"a{i:04d}": {0: (0,)} for i in range(1000)} | {"z" * 200: {0: (0,)}}
    cluster = write_cluster(tmp_path / "snap", brokers, topics, seed=3)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "manifest.json").write_text("{}")
    options = PlacementOptions(replication_factor=3)
    snapshot = snapshots.read_snapshot(cluster)
    plan, _ = proposed_plan(snapshot, sorted(topics), list(brokers.values()), options)
    with pytest.raises(InvalidInput) as expected:
        plans.reassignment_batches(plan.moves, 10, 200)
    written = []
    real_write = folder.write_batch

    def write(folder, number, entries):
        written.append(real_write(folder, number, entries))
        return written[-1]

    monkeypatch.setattr(folder, "write_batch", write)
    with pytest.raises(InvalidInput) as error:
        spark_plan.run_plan(cluster, tmp_path / "out", options=options, batch_size=10,
                     max_znode_bytes=200, force=True)
    assert str(error.value) == str(expected.value)
    assert "more than the maximum znode size of 200" in str(error.value)
    assert len(written) > 10
    assert leftovers(tmp_path) == ["out", "snap"]
    assert leftovers(tmp_path / "out") == ["manifest.json"]


def test_input_errors_match_the_single_machine_planner(spark, racked_cluster, tmp_path):
    every = sorted(snapshots.read_snapshot(racked_cluster).topics)
    cases = [
        (["nope", every[0], "also-nope"], None, PlacementOptions()),
        ([f"ghost-{i:04d}" for i in range(1500)], None, PlacementOptions()),  # a capped list
        (None, None, PlacementOptions(replication_factor=10)),
        (None, [0, 1], PlacementOptions()),  # RF 3 topics on 2 brokers
        (None, [0, 1, 2, 3, 4, 5, 6, 7, 8], PlacementOptions(start_index=-1)),
    ]
    snapshot = snapshots.read_snapshot(racked_cluster)
    for topics, brokers, options in cases:
        ids = brokers or sorted(snapshot.brokers)
        with pytest.raises(InvalidInput) as expected:
            placement.place(snapshot.topics, topics or every, [snapshot.brokers[b] for b in ids],
                            options)
        with pytest.raises(InvalidInput) as error:
            spark_plan.run_plan(racked_cluster, tmp_path / "out", topics=topics, brokers=brokers,
                         options=options)
        assert str(error.value) == str(expected.value)
        assert error.value.details == expected.value.details
        assert error.value.more == expected.value.more
        assert not (tmp_path / "out").exists()
    with pytest.raises(InvalidInput, match=r"--brokers: unknown broker id\(s\) \[42\]"):
        spark_plan.run_plan(racked_cluster, tmp_path / "out", brokers=[1, 42])
    with pytest.raises(InvalidInput, match="batch size must be at least 1"):
        spark_plan.run_plan(racked_cluster, tmp_path / "out", batch_size=0)


def test_partitions_in_flight_are_a_conflict_as_in_plan_generate(tmp_path):
    """Refused on the driver from reassigning.jsonl, before Spark is asked to do anything."""
    moving = ClusterSnapshot(
        brokers={b: Broker(b) for b in range(4)},
        topics={"a": {0: (0, 1, 2)}, "b": {0: (1, 2, 3, 0)}},
        reassigning={"b": {0: Reassignment(target=(1, 2, 3), original=(1, 2, 0))}})
    snapshots.write_snapshot(moving, tmp_path / "snap", fmt="dir")
    for topics in (None, ["a", "b"]):
        with pytest.raises(Conflict) as error:
            spark_plan.run_plan(tmp_path / "snap", tmp_path / "out", topics=topics)
        assert error.value.details == ("b-0 is being reassigned from [1, 2, 0] to [1, 2, 3]",)
        assert not (tmp_path / "out").exists()


def test_snapshot_errors_name_the_file_and_line(spark, racked_cluster, tmp_path):
    """Line numbers run over the whole file although the lines are read in many input splits."""
    lines = (racked_cluster / "topics.jsonl").read_bytes().splitlines(keepends=True)
    cluster = tmp_path / "snap"
    cluster.mkdir()
    (cluster / "brokers.json").write_bytes((racked_cluster / "brokers.json").read_bytes())

    def refused_alike(topics: list[bytes]) -> str:
        """The Spark job's error for these topics.jsonl lines, the one the sequential reader
        gives."""
        (cluster / "topics.jsonl").write_bytes(b"".join(topics))
        with pytest.raises(InvalidInput) as expected:
            list(snapshots.iter_topics_jsonl(cluster / "topics.jsonl"))
        with pytest.raises(InvalidInput) as error:
            spark_plan.run_plan(cluster, tmp_path / "out")
        assert str(error.value) == str(expected.value)
        return str(error.value)

    bad = [*lines[:300], b"\n", b'{"topic": "x", "partitions": {"0": []}}\n', *lines[300:]]
    assert "topics.jsonl:302: $.partitions.0: replicas must not be empty" in refused_alike(bad)
    refused_alike([*lines[:50], lines[330], *lines[50:]])  # a topic twice
    assert not (tmp_path / "out").exists()


def test_main_runs_the_cli_command(spark, racked_cluster, tmp_path, capsys):
    """``spark-submit kadmin/spark/submit.py ARGS`` calls ``main(ARGS)``."""
    out = tmp_path / "out"
    args = ["--cluster", str(racked_cluster), "--all-topics", "--strategy", "kafka",
            "--batch-size", str(BATCH_SIZE), "--max-znode-bytes", "2500", "--out", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        submit.main(args)
    assert exit_info.value.code == 0
    expected, _, _ = reference(racked_cluster, None, None, PlacementOptions(strategy=Strategy.KAFKA))
    assert f"{sum(map(len, expected))} partition(s) in {len(expected)} batch file(s)" \
        in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        submit.main(args)
    assert exit_info.value.code == 2
    assert "already exists (use --force to overwrite)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        submit.main([*args, "--force", "--json"])
    assert exit_info.value.code == 0
    assert json.loads(capsys.readouterr().out) == {
        "manifest": str(out / "manifest.json"), "partitions": sum(map(len, expected)),
        "batches": len(expected)}


def test_spark_submit(racked_cluster, tmp_path):
    """The real launcher, in its own JVM: the file runs as a script and the executors import
    kadmin from the zip the driver ships."""
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    script = Path(submit.__file__).resolve()
    chosen = sorted(snapshots.read_snapshot(racked_cluster).topics)[5:50:3]
    topics_file = tmp_path / "topics-to-move.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in chosen]}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # kadmin is not installed
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    out = tmp_path / "out"
    result = subprocess.run(
        [str(spark_submit), "--master", "local[2]", str(script), "--cluster", str(racked_cluster),
         "--topics-file", str(topics_file), "--strategy", "kafka", "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["all_topics"] is False and manifest["topics"] == len(chosen)
    expected, _, _ = reference(racked_cluster, chosen, None,
                               PlacementOptions(strategy=Strategy.KAFKA), 1000, 1_000_000)
    assert [m for b in manifest["batches"] for m in codec.decode_reassignment(
        (out / b["file"]).read_bytes())] == [m for b in expected for m in b]
