"""``reassign --metrics-file``: the Prometheus text file a run keeps current, read with
prometheus_client's own parser at every progress event of a run against the real ZooKeeper and
the simulated controller, and held to the journal the run writes and to the schedule's model."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kadmin import schedule, synthetic
from kadmin.events import (
    BatchDone,
    Event,
    ExecutionPlanned,
    Finished,
    ThrottleCleared,
    ThrottleSet,
    Waiting,
)
from kadmin.executor import ExecutionSettings, PlanFiles, execute_reassignment
from kadmin.executor.transfers import transfers
from kadmin.model import ClusterSnapshot, ReassignmentPlan
from kadmin.plans import plan_stats
from kadmin.progress_metrics import MetricsFile
from kadmin.sandbox import read_events
from kadmin.sizes import snapshot_sizes
from tests.helpers import write_plan

pytestmark = pytest.mark.zk

THROTTLE = 2_000_000


def sized_cluster(seed: int = 7) -> ClusterSnapshot:
    """8 brokers, 120 partitions of a few kilobytes (copied in milliseconds at THROTTLE)."""
    cluster = synthetic.synthetic_cluster(brokers=8, topics=12, partitions=10,
                                          replication_factor=3, seed=seed)
    rng = random.Random(seed)
    return dataclasses.replace(cluster, sizes={
        t: {p: int(2000 * rng.lognormvariate(0, 1.2)) + 1 for p in parts}
        for t, parts in cluster.topics.items()})


def read_metrics(path: Path) -> dict[tuple[str, str | None], float]:
    """``(sample name, state label)`` -> value, by prometheus_client's text parser."""
    out = {}
    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            assert sample.labels["plan"] == "p.json"
            out[sample.name, sample.labels.get("state")] = sample.value
    return out


def test_metrics_file_follows_the_run_and_its_journal(start_sandbox, tmp_path):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(), "random", 50, seed=3)
    box = start_sandbox(cluster, latency=0.0)
    plan_path = write_plan(tmp_path / "p.json", moves)
    plan = ReassignmentPlan(tuple(sorted(moves)))
    sizes = snapshot_sizes(cluster)
    assert sizes is not None
    metrics_path = tmp_path / "kadmin.prom"
    metrics = MetricsFile(metrics_path, "p.json")
    journal_path = tmp_path / "p.journal.json"
    samples: list[tuple[Event, dict, dict | None]] = []

    def emit(event: Event) -> None:
        # the executor waits in emit: the file and the journal are read as the run left them
        metrics(event)
        journal = json.loads(journal_path.read_text()) if journal_path.exists() else None
        samples.append((event, read_metrics(metrics_path), journal))

    outcome = execute_reassignment(box.client, plan, PlanFiles(plan_path), ExecutionSettings(
        batch_size=8, throttle=THROTTLE, health_gate=False), emit, sizes)
    assert outcome.ok, outcome.failures
    journal = json.loads(journal_path.read_text())
    total = len(plan.moves)
    expected_bytes = plan_stats(plan, cluster, sizes).bytes_moved
    # the schedule's model, batch by batch, from the batches the journal recorded
    loads = [schedule.load_of(transfers([plan.moves[i] for i in batch], cluster, sizes))[0]
             for batch in journal["batches"]]
    assert len(loads) > 3, "the plan must run in several batches"
    throttle = 0.0
    last_update = 0.0
    kinds = set()
    for event, m, journal_then in samples:
        kinds.add(type(event))
        assert m["kadmin_reassign_partitions", "total"] == total
        assert (m["kadmin_reassign_partitions", "done"]
                + m["kadmin_reassign_partitions", "remaining"]) == total
        assert m["kadmin_reassign_bytes", "total"] == expected_bytes
        assert (m["kadmin_reassign_bytes", "done"]
                + m["kadmin_reassign_bytes", "remaining"]) == expected_bytes
        assert m["kadmin_reassign_batches", None] == len(loads)
        assert m["kadmin_reassign_last_update_timestamp_seconds", None] >= last_update
        last_update = m["kadmin_reassign_last_update_timestamp_seconds", None]
        if isinstance(event, ThrottleSet):
            throttle = event.rate
        elif isinstance(event, ThrottleCleared):
            throttle = 0.0
        assert m["kadmin_reassign_throttle_bytes_per_second", None] == throttle
        done = m["kadmin_reassign_partitions", "done"]
        batch = int(m["kadmin_reassign_batch", None])
        if isinstance(event, ExecutionPlanned):
            assert journal_then is None  # written with the first submission
            assert done == 0
            assert m["kadmin_reassign_eta_seconds", None] == pytest.approx(sum(loads) / THROTTLE)
        elif isinstance(event, Waiting):
            assert journal_then is not None
            assert batch == event.batch == journal_then["batches_submitted"]
            assert done == event.done
            assert journal_then["partitions_done"] <= done <= (
                journal_then["partitions_done"] + journal_then["in_flight"])
        elif isinstance(event, BatchDone):
            assert journal_then is not None
            assert batch == event.batch == journal_then["batches_done"]
            assert done == event.done == journal_then["partitions_done"]
            assert m["kadmin_reassign_eta_seconds", None] == pytest.approx(
                sum(loads[batch:]) / THROTTLE)
        if not isinstance(event, Finished):
            assert m["kadmin_reassign_finished", None] == 0
    assert {ExecutionPlanned, ThrottleSet, Waiting, BatchDone, Finished} <= kinds
    final = read_metrics(metrics_path)
    assert final["kadmin_reassign_finished", None] == 1
    assert final["kadmin_reassign_failed_partitions", None] == 0
    assert final["kadmin_reassign_partitions", "done"] == total == journal["partitions_done"]
    assert final["kadmin_reassign_partitions", "remaining"] == 0
    assert final["kadmin_reassign_bytes", "remaining"] == 0
    assert final["kadmin_reassign_eta_seconds", None] == 0
    assert final["kadmin_reassign_batch", None] == len(loads)


def test_reassign_cli_metrics_file_finished_and_refusals(kadmin, start_sandbox, tmp_path):
    cluster, moves = synthetic.synthetic_moves(sized_cluster(), "random", 12, seed=4)
    box = start_sandbox(cluster, latency=0.0)
    write_plan(tmp_path / "p.json", moves)
    # a link, a folder: refused before anything reaches ZooKeeper, nothing written through
    (tmp_path / "elsewhere.prom").write_text("kept\n")
    os.symlink(tmp_path / "elsewhere.prom", tmp_path / "link.prom")
    (tmp_path / "folder.prom").mkdir()
    for target, message in (("link.prom", "symbolic link"), ("folder.prom", "is a folder")):
        refused = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string,
                         "--metrics-file", target)
        assert refused.code == 2, refused.err
        assert message in refused.err and len(refused.err.strip().splitlines()) == 1
    assert (tmp_path / "elsewhere.prom").read_text() == "kept\n"
    assert not [e for e in read_events(tmp_path / "controller.jsonl")
                if e.kind == "reassign_submitted"]
    assert not (tmp_path / "p.journal.json").exists()
    # a dry run writes no metrics
    dry = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--dry-run",
                 "--metrics-file", "m.prom")
    assert dry.code == 0, dry.err
    assert not (tmp_path / "m.prom").exists()
    # a regular file from an earlier run is replaced; the run's end is marked
    (tmp_path / "m.prom").write_text("# old\n")
    run = kadmin("reassign", "--plan", "p.json", "-z", box.connect_string, "--batch-size", "5",
                 "--metrics-file", "m.prom")
    assert run.code == 0, run.err
    found = {}
    for family in text_string_to_metric_families((tmp_path / "m.prom").read_text()):
        for sample in family.samples:
            assert sample.labels["plan"] == "p.json"
            found[sample.name, sample.labels.get("state")] = sample.value
    assert found["kadmin_reassign_finished", None] == 1
    assert found["kadmin_reassign_partitions", "done"] == len(moves)
    assert found["kadmin_reassign_partitions", "remaining"] == 0
    assert found["kadmin_reassign_batches", None] == found["kadmin_reassign_batch", None] == 3
    # no sizes given (the snapshot read live carries none): no bytes; nothing left at the end
    assert ("kadmin_reassign_bytes", "total") not in found
    assert found["kadmin_reassign_eta_seconds", None] == 0
