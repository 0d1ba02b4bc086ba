"""Every problem of every entry in one run: a schema or structure error in one entry never hides
what the cluster says about the others (or about the same entry), for a plan file and for a
Spark output folder alike, bounded as every list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kadmin import plans
from kadmin.model import LIST_LIMIT, Broker, ClusterSnapshot, PlanKind
from kadmin.snapshots import snapshot_to_document

CLUSTER = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(1, 5)},
    topics={"orders": {0: (1, 2), 1: (2, 3)}, "logs": {0: (3, 4)}},
    controller=1, controller_epoch=1)
ENTRIES = [
    {"topic": "nosuch", "partition": 0, "replicas": [1, 2]},   # unknown topic
    {"topic": "orders", "partition": 0, "replicas": [1, 1]},   # a broker twice
    {"topic": "orders", "partition": 1, "replicas": [1, 99]},  # an unknown broker
    {"topic": "logs", "partition": 0, "replicas": [77, 77]},   # twice, and unknown
]


def messages(report: plans.ValidationReport) -> list[str]:
    return [str(p) for p in report.errors]


def test_schema_and_cluster_errors_together() -> None:
    report = plans.validate({"version": 1, "partitions": ENTRIES}, PlanKind.REASSIGN, CLUSTER)
    found = messages(report)
    assert report.plan is None and report.error_count == 5, found
    assert any("orders-0" in m and "listed more than once in [1, 1]" in m for m in found)
    assert any("logs-0" in m and "listed more than once in [77, 77]" in m for m in found)
    assert any(m.startswith("nosuch: unknown topic nosuch") for m in found)
    assert "orders-1: broker(s) 99 of replicas [1, 99] not registered in /brokers/ids" in found
    assert "logs-0: broker(s) 77 of replicas [77, 77] not registered in /brokers/ids" in found


def test_the_cluster_errors_of_a_broken_plan_stay_bounded() -> None:
    entries = [{"topic": "orders", "partition": 0, "replicas": [1, 1]},
               *({"topic": "gone", "partition": p, "replicas": [1, 99]}
                 for p in range(3 * LIST_LIMIT))]
    report = plans.validate({"version": 1, "partitions": entries}, PlanKind.REASSIGN, CLUSTER)
    assert len(report.errors) == LIST_LIMIT
    assert report.error_count == 2 + 3 * LIST_LIMIT  # the duplicate, the topic, each broker


def test_plan_validate_reports_all_of_them(kadmin: Any, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps(snapshot_to_document(CLUSTER)))
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "partitions": ENTRIES}))
    run = kadmin("plan", "validate", "p.json", "--cluster", "c.json", "--json")
    assert run.code == 2
    assert json.loads(run.out)["error_count"] == 5
    # a Spark output folder: one batch file with the broken entries, one sound
    folder = tmp_path / "out"
    folder.mkdir()
    batch = folder / "batch-00001.json"
    batch.write_text(json.dumps({"version": 1, "partitions": ENTRIES}))
    (folder / "manifest.json").write_text(json.dumps({
        "version": 1, "kind": "reassign", "batches": [
            {"file": batch.name, "partitions": len(ENTRIES), "bytes": batch.stat().st_size}]}))
    run = kadmin("plan", "validate", "out", "--cluster", "c.json", "--json")
    assert run.code == 2, run.err
    assert json.loads(run.out)["error_count"] == 5, run.out
