"""``plan validate FILE...`` and ``plan stats``. Validate: every plan named (files, folders of
plans, Spark planner output folders) checked in one process against one read of the cluster, a
verdict each; stats: a reassignment plan summarised against a cluster.

One plan is held at a time (its text, document and positions), so a run over a thousand files
takes the memory of the largest; what is kept across plans is the verdicts (each bounded) and,
with more than one plan, the partitions the reassignment plans move (to warn about two plans
moving one partition: they cannot run at once).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from kadmin import files, plans, verdicts
from kadmin.balance.capacity import Capacities
from kadmin.files import LocatedJson
from kadmin.model import (
    ClusterSnapshot,
    InvalidInput,
    PlanKind,
    ReassignmentPlan,
    TopicPartition,
)
from kadmin.operations.capacity import read_capacities, warn_strangers
from kadmin.operations.folder import (
    MANIFEST_FILE,
    batch_files,
    check_count,
    listed_batches,
    plan_folder,
)
from kadmin.operations.planfiles import load_reassignment
from kadmin.operations.source import (
    ClusterSource,
    Warn,
    optional_cluster,
    partition_sizes,
    read_cluster,
)
from kadmin.verdicts import Verdict

NOT_PLANS = (files.JOURNAL_SUFFIX,)
"""Files of a folder of plans that are not plans: the journals ``kadmin reassign`` keeps next
to the plan it runs."""


@dataclass(frozen=True)
class ValidateRequest:
    plans: Sequence[Path]
    """Plan files, folders of plans, plan folders (Spark output) or their manifest.json, as the
    operator named them."""
    kind: PlanKind | None = None
    """None: detected from each document."""
    allow_rf_change: bool = False
    allow_internal: bool = False


def plan_paths(paths: Sequence[Path]) -> list[Path]:
    """The plans to check, in the order named: a file as it is; a folder holding
    ``manifest.json`` (a Spark planner's output) as one plan; any other folder as the plans in
    it and its subfolders (``*.json`` but journals, names sorted, hidden entries and links to
    folders skipped). A path named twice is checked once, and a batch file of a Spark folder
    also named is checked as part of its folder only. A folder without any plan is an input
    error: a typo in a CI job must not pass as "all valid"."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir() and not (path / MANIFEST_FILE).exists():
            inside = list(_plans_in(path))
            if not inside:
                raise InvalidInput(f"{path} is a folder without plans (*.json files or kadmin "
                                   "spark output folders)")
            found.extend(inside)
        else:
            found.append(path)
    in_folders: set[str] = set()
    for path in found:
        manifest = _manifest_of(path)
        if manifest is not None:
            with suppress(InvalidInput):  # the folder's own verdict says why
                in_folders.update(os.path.realpath(b) for b in batch_files(manifest))
    seen: set[str] = set()
    out = []
    for path in found:
        # a folder and its own manifest.json name one plan
        real = os.path.realpath(_manifest_of(path) or path)
        if real in seen or (real in in_folders and _manifest_of(path) is None):
            continue
        seen.add(real)
        out.append(path)
    return out


def _manifest_of(path: Path) -> Path | None:
    try:
        return plan_folder(path)
    except InvalidInput:
        return None


def _plans_in(folder: Path) -> Iterator[Path]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise InvalidInput(f"{folder}: cannot list the folder ({exc.strerror})") from None
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if (entry / MANIFEST_FILE).exists():
                yield entry
            elif not entry.is_symlink():
                yield from _plans_in(entry)
        elif entry.name.endswith(".json") and not entry.name.endswith(NOT_PLANS):
            yield entry


def validate_plans(request: ValidateRequest, source: ClusterSource, warn: Warn
                   ) -> Iterator[Verdict]:
    """A verdict per plan of ``request.plans`` (as :func:`plan_paths` expands them), lazily:
    one plan is read, checked, placed and let go before the next. The cluster ``source`` names
    (if any) is read once, after the paths are known to name plans."""
    chosen = plan_paths(request.plans)
    yield from verdicts_of(chosen, optional_cluster(source, warn), request)


def verdicts_of(chosen: Sequence[Path], cluster: ClusterSnapshot | None,
                request: ValidateRequest) -> Iterator[Verdict]:
    """:func:`validate_plans` over plans already found (:func:`plan_paths`) and a cluster
    already read (None: offline), for callers that use that cluster again."""
    moved = verdicts.MovedBy() if len(chosen) > 1 else None
    for path in chosen:
        with files.gc_paused():  # a million entries and their values hold no reference cycles
            yield _verdict(path, cluster, request, moved)


def _verdict(path: Path, snapshot: ClusterSnapshot | None, options: ValidateRequest,
             moved: verdicts.MovedBy | None) -> Verdict:
    plan = str(path)
    try:
        manifest = plan_folder(path)
        if manifest is not None and options.kind not in (None, PlanKind.REASSIGN):
            raise InvalidInput(f"{plan}: a plan folder holds a reassignment plan, not --kind "
                               f"{options.kind.value}")
        listed = listed_batches(manifest) if manifest is not None else {path: None}
    except InvalidInput as exc:
        return verdicts.unreadable(plan, _unprefixed(str(exc), plan))
    batches = list(listed)
    sources: list[tuple[str, LocatedJson]] = []
    for batch in batches:
        try:
            sources.append((str(batch), files.read_json_located(batch)))
        except InvalidInput as exc:
            return verdicts.unreadable(plan, _unprefixed(str(exc), str(batch)),
                                       None if manifest is None else str(batch),
                                       getattr(exc, "at", None))
    for name, source in sources:
        entries = source.doc.get("partitions") if isinstance(source.doc, dict) else None
        try:
            check_count(Path(name), listed[Path(name)],
                        len(entries) if isinstance(entries, list) else 0)
        except InvalidInput as exc:
            return verdicts.unreadable(plan, _unprefixed(str(exc), name), name)
    if manifest is not None:
        report = plans.validate_batches([(name, source.doc) for name, source in sources],
                                        snapshot, allow_rf_change=options.allow_rf_change)
    else:
        report = plans.validate(sources[0][1].doc, options.kind, snapshot,
                                allow_rf_change=options.allow_rf_change,
                                allow_internal=options.allow_internal)
    if moved is not None:
        report = plans.with_problems(report, moved.warnings(plan, report.kind, sources))
    return verdicts.locate(plan, report, sources)


def _unprefixed(message: str, name: str) -> str:
    """A read error without the file name it starts with: the verdict names the file."""
    return message.removeprefix(f"{name}: ")


@dataclass(frozen=True)
class StatsRequest:
    plan: Path
    """A reassignment plan file or folder."""
    rack_aware: bool = True
    capacity: Path | None = None
    """A capacity file, for brokers of different sizes."""


def stats(request: StatsRequest, source: ClusterSource, warn: Warn) -> plans.PlanStats:
    """Per-broker figures of a reassignment plan (file or folder) over the cluster ``source``
    names (with its partition sizes: bytes too). A partition or broker the cluster lacks would
    be counted as if it existed, so the plan is checked against the cluster; a replication
    factor change is only shown. The lower bound is the one ``plan rebalance`` prints (racks
    unless ``rack_aware`` is off; ``capacity`` for brokers of different sizes)."""
    snapshot = read_cluster(source, warn, states=False)
    sizes = partition_sizes(source.sizes, snapshot, warn)
    capacities = None if request.capacity is None else read_capacities(request.capacity)
    warn_strangers(capacities, snapshot, warn)
    found, _ = load_reassignment(request.plan, snapshot, allow_rf_change=True)
    return stats_of(found, snapshot, sizes, rack_aware=request.rack_aware, capacities=capacities)


def stats_of(plan: ReassignmentPlan, snapshot: ClusterSnapshot,
             sizes: Mapping[TopicPartition, int] | None, *, rack_aware: bool = True,
             capacities: Capacities | None = None) -> plans.PlanStats:
    """:func:`stats` of a plan already read: the capacities of the brokers the plan's topics end
    on (plan_stats' targets) weigh the lower bound and the shares."""
    weights = None
    if capacities is not None:
        moved = {m.tp: m.replicas for m in plan.moves}
        topics = {m.topic for m in plan.moves} & set(snapshot.topics)
        ends = {b for t in topics for p, r in snapshot.topics[t].items()
                for b in moved.get(TopicPartition(t, p), r)}
        weights = capacities.weights(sorted(ends))
    return plans.plan_stats(plan, snapshot, sizes, rack_aware=rack_aware, weights=weights)
