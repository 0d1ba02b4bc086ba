"""``kadmin plan report`` and ``plan validate --report DIR``: plans validated against a cluster
and drawn as one self-contained HTML page (:mod:`kadmin.plan_report`).

Each plan is read and validated as ``plan validate`` does (one at a time, a verdict each); a
valid reassignment plan is then counted as ``plan stats`` counts it and its batches composed as
``reassign`` would compose them (the same limits, the same model), so the page shows what a run
would do. Plotly is the extra ``kadmin[report]``: without it, :class:`MissingExtra` says which
extra to install before anything is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kadmin import files, schedule
from kadmin.balance.capacity import Capacities
from kadmin.executor import transfers as transfer_model
from kadmin.model import (
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    OperationFailed,
    ReassignmentPlan,
)
from kadmin.operations import validate as validating
from kadmin.operations.capacity import read_capacities
from kadmin.operations.source import ClusterSource, Warn, partition_sizes, read_cluster
from kadmin.plan_report import figures
from kadmin.plans import changed_moves
from kadmin.sizes import PartitionSizes
from kadmin.units import human_bytes, parse_bytes, parse_rate
from kadmin.verdicts import Verdict

REPORT_EXTRA_HINT = "pip install 'kadmin[report]'"


class MissingExtra(OperationFailed):
    """The charting library is not installed."""


def page_module() -> object:
    """:mod:`kadmin.plan_report.page`, which needs Plotly (the ``report`` extra)."""
    try:
        from kadmin.plan_report import page
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "plotly":
            raise
        raise MissingExtra(f"kadmin plan report needs Plotly, which is not installed "
                           f"({REPORT_EXTRA_HINT})") from None
    return page


@dataclass(frozen=True)
class ReportSettings:
    """How a reassignment plan is weighed and batched on the page: ``reassign``'s limits (its
    defaults unless given) and ``plan stats``' lower bound."""

    capacity: Path | None = None
    throttle: str | None = None
    """As typed (``50MB``): with sizes, each batch's predicted duration."""
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    max_batch_bytes: str | None = None
    """As typed; needs partition sizes."""
    max_moves_per_broker: int | None = None
    rack_aware: bool = True


@dataclass(frozen=True)
class ReportRequest:
    plans: Sequence[Path]
    """Plan files, folders of plans, Spark plan folders, as ``plan validate`` takes them."""
    out: Path
    """The HTML file to write."""
    force: bool = False
    """Replace an existing regular file."""
    settings: ReportSettings = ReportSettings()
    allow_rf_change: bool = False
    allow_internal: bool = False


@dataclass(frozen=True)
class Reported:
    """The page written: its path, the plans drawn on it, how many of them are invalid."""

    path: Path
    plans: int
    invalid: int


class Reporter:
    """Figures of a verdict against the cluster it was reached against (with its sizes); the
    settings are read and checked when this is made, before any cluster is read."""

    def __init__(self, settings: ReportSettings) -> None:
        self.rack_aware = settings.rack_aware
        self.capacities: Capacities | None = (None if settings.capacity is None
                                              else read_capacities(settings.capacity))
        self.rate = None if settings.throttle is None else parse_rate(settings.throttle)
        max_batch_bytes = (None if settings.max_batch_bytes is None
                           else parse_bytes(settings.max_batch_bytes, "--max-batch-bytes"))
        self.limits = transfer_model.limits(settings.batch_size, settings.max_znode_bytes,
                                            max_batch_bytes, settings.max_moves_per_broker)
        words = [f"--batch-size {settings.batch_size}"]
        if max_batch_bytes is not None:
            words.append(f"--max-batch-bytes {human_bytes(max_batch_bytes)}")
        if settings.max_moves_per_broker is not None:
            words.append(f"--max-moves-per-broker {settings.max_moves_per_broker}")
        self.limits_text = ", ".join(words)

    def figures(self, verdict: Verdict, snapshot: ClusterSnapshot, sizes: PartitionSizes | None
                ) -> figures.PlanFigures:
        report = verdict.report
        judged = figures.verdict_of(report)
        plan = report.plan
        if plan is None:
            return figures.refused(verdict.plan, report.kind, judged)
        if isinstance(plan, ElectionPlan):
            return figures.election(verdict.plan, plan, snapshot, judged)
        if isinstance(plan, DeletionPlan):
            return figures.deletion(verdict.plan, plan, snapshot, sizes, judged)
        assert isinstance(plan, ReassignmentPlan)
        stats = validating.stats_of(plan, snapshot, sizes, rack_aware=self.rack_aware,
                                    capacities=self.capacities)
        changed, _ = changed_moves(plan, snapshot)
        transfers = transfer_model.transfers(changed, snapshot, sizes)
        composed = schedule.compose(transfers, self.limits)
        return figures.reassignment(verdict.plan, plan, snapshot, stats, transfers, composed,
                                    judged, sized=sizes is not None, rate=self.rate,
                                    limits=self.limits_text)


def report(request: ReportRequest, source: ClusterSource, warn: Warn) -> Reported:
    """Validate and draw every plan of ``request`` on one page written to ``request.out``,
    against the cluster ``source`` names (read once; with its partition sizes: bytes, and with
    a throttle each batch's predicted duration)."""
    page = page_module()
    if request.settings.max_batch_bytes is not None and source.sizes is None:
        raise InvalidInput("--max-batch-bytes needs partition sizes: give --sizes FILE")
    files.check_target(request.out, request.force)
    reporter = Reporter(request.settings)
    chosen = validating.plan_paths(request.plans)
    with files.gc_paused():
        snapshot = read_cluster(source, warn)
        sizes = partition_sizes(source.sizes, snapshot, warn)
        drawn = [reporter.figures(verdict, snapshot, sizes) for verdict in validating.verdicts_of(
            chosen, snapshot, validating.ValidateRequest(
                tuple(request.plans), None, request.allow_rf_change, request.allow_internal))]
        title = (f"kadmin plan report: {drawn[0].name}" if len(drawn) == 1
                 else f"kadmin plan report: {len(drawn)} plans")
        html = page.render(drawn, title)  # type: ignore[attr-defined]
    files.atomic_write_bytes(request.out, html.encode(), force=request.force)
    return Reported(request.out, len(drawn), sum(not f.verdict.valid for f in drawn))


def validate_with_reports(request: validating.ValidateRequest, folder: Path,
                          source: ClusterSource, warn: Warn) -> Iterator[Verdict]:
    """``plan validate --report DIR``: the verdicts of :func:`validating.validate_plans`, as they
    come, the report of each written to ``folder`` first (``<plan path>.html``, its folders
    joined by ``__``); a report replaces only a regular file of that name. The cluster (which
    the reports need) is read once, for the verdicts and the reports. The inputs are checked
    before anything is read."""
    page = page_module()
    if not source.given:
        raise InvalidInput("--report needs the cluster: give --cluster FILE or -z")
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise InvalidInput(f"--report {folder}: not a folder (name a folder, new or existing)")
    return _reported(page, request, folder, source, warn)


def _reported(page: object, request: validating.ValidateRequest, folder: Path,
              source: ClusterSource, warn: Warn) -> Iterator[Verdict]:
    chosen = validating.plan_paths(request.plans)
    snapshot = read_cluster(source, warn)
    sizes = partition_sizes(source.sizes, snapshot, warn)
    reporter = Reporter(ReportSettings())
    names: set[str] = set()
    for verdict in validating.verdicts_of(chosen, snapshot, request):
        name = _report_name(verdict.plan, names)
        html = page.render([reporter.figures(verdict, snapshot, sizes)],  # type: ignore[attr-defined]
                           f"kadmin plan report: {verdict.plan}")
        files.atomic_write_bytes(folder / name, html.encode(), force=True)
        yield verdict


def _report_name(plan: str, taken: set[str]) -> str:
    """A file name for the report of ``plan`` (a path as named): unique within the run."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", plan.strip("/").replace("/", "__")) or "plan"
    name, n = f"{stem}.html", 1
    while name in taken:
        n += 1
        name = f"{stem}-{n}.html"
    taken.add(name)
    return name
