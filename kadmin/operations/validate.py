"""``plan validate`` and ``plan stats``: a plan file or plan folder checked, or summarised, alone
or against a cluster."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kadmin import files, plans
from kadmin.model import ClusterSnapshot, InvalidInput, PlanKind, TopicPartition
from kadmin.operations.folder import batch_files, plan_folder
from kadmin.operations.planfiles import load_reassignment


@dataclass(frozen=True)
class ValidateRequest:
    plan: Path
    """A plan file, or a plan folder or its manifest.json."""
    kind: PlanKind | None = None
    """None: detected from the document."""
    allow_rf_change: bool = False
    allow_internal: bool = False


def validate(request: ValidateRequest,
             snapshot: Callable[[], ClusterSnapshot | None]) -> plans.ValidationReport:
    """The report of a plan (a folder's batch files as one plan), against the cluster that
    ``snapshot`` reads, if any: it is read after the plan, so a bad plan path is named first."""
    manifest = plan_folder(request.plan)
    if manifest is not None and request.kind not in (None, PlanKind.REASSIGN):
        raise InvalidInput(f"{request.plan}: a plan folder holds a reassignment plan, not "
                           f"--kind {request.kind.value}")
    with files.gc_paused():  # a million entries and their values hold no reference cycles
        batches = ([(b.name, files.read_json(b)) for b in batch_files(manifest)] if manifest
                   else [])
        doc = None if manifest else files.read_json(request.plan)
        cluster = snapshot()
        if manifest:
            return plans.validate_batches(batches, cluster,
                                          allow_rf_change=request.allow_rf_change)
        return plans.validate(doc, request.kind, cluster, allow_rf_change=request.allow_rf_change,
                              allow_internal=request.allow_internal)


def stats(plan: Path, snapshot: ClusterSnapshot,
          sizes: Mapping[TopicPartition, int] | None) -> plans.PlanStats:
    """Per-broker figures of a reassignment plan (file or folder) over ``snapshot``. A partition
    or broker the cluster lacks would be counted as if it existed, so the plan is checked
    against the cluster; a replication factor change is only shown."""
    found, _ = load_reassignment(plan, snapshot, allow_rf_change=True)
    return plans.plan_stats(found, snapshot, sizes)
