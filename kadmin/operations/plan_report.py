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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kadmin import files, schedule
from kadmin.balance.capacity import Capacities, read_capacities
from kadmin.executor import transfers as model
from kadmin.model import (
    ClusterSnapshot,
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    OperationFailed,
    ReassignmentPlan,
)
from kadmin.operations import validate as validating
from kadmin.operations.source import partition_sizes
from kadmin.plan_report import figures
from kadmin.plans import changed_moves
from kadmin.units import human_bytes
from kadmin.verdicts import Verdict

REPORT_EXTRA_HINT = "pip install 'kadmin[report]'"
COMPOSE_LIMIT = 100_000
"""Partitions to move above which the page's batches are consecutive slices of the plan, not
composed: the composition's greedy pass costs batches x brokers per partition (a million
partitions over a thousand brokers: tens of minutes), which a report should not wait for."""


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
class ReportRequest:
    plans: Sequence[Path]
    """Plan files, folders of plans, Spark plan folders, as ``plan validate`` takes them."""
    sizes: Path | None = None
    capacity: Path | None = None
    throttle: int | None = None
    """Bytes/s: with sizes, each batch's predicted duration."""
    batch_size: int = 1000
    max_znode_bytes: int = 1_000_000
    max_batch_bytes: int | None = None
    max_moves_per_broker: int | None = None
    rack_aware: bool = True
    allow_rf_change: bool = False
    allow_internal: bool = False

    def limits_text(self) -> str:
        words = [f"--batch-size {self.batch_size}"]
        if self.max_batch_bytes is not None:
            words.append(f"--max-batch-bytes {human_bytes(self.max_batch_bytes)}")
        if self.max_moves_per_broker is not None:
            words.append(f"--max-moves-per-broker {self.max_moves_per_broker}")
        return ", ".join(words)


@dataclass(frozen=True)
class Written:
    path: Path
    plans: int
    invalid: int


class Reporter:
    """Figures of each verdict of a run against one cluster, with its sizes and capacities."""

    def __init__(self, request: ReportRequest, snapshot: ClusterSnapshot,
                 warn: Callable[[str], None]) -> None:
        self.request, self.snapshot = request, snapshot
        self.sizes = partition_sizes(request.sizes, snapshot, warn)
        self.capacities: Capacities | None = (None if request.capacity is None
                                              else read_capacities(request.capacity))

    def figures(self, verdict: Verdict) -> figures.PlanFigures:
        report, request, snapshot = verdict.report, self.request, self.snapshot
        judged = figures.verdict_of(report)
        plan = report.plan
        if plan is None:
            return figures.refused(verdict.plan, report.kind, judged)
        if isinstance(plan, ElectionPlan):
            return figures.election(verdict.plan, plan, snapshot, judged)
        if isinstance(plan, DeletionPlan):
            return figures.deletion(verdict.plan, plan, snapshot, self.sizes, judged)
        assert isinstance(plan, ReassignmentPlan)
        stats = validating.stats_of(plan, snapshot, self.sizes, rack_aware=request.rack_aware,
                                    capacities=self.capacities)
        changed, _ = changed_moves(plan, snapshot)
        transfers = model.transfers(changed, snapshot, self.sizes)
        limits = model.limits(request.batch_size, request.max_znode_bytes,
                              request.max_batch_bytes, request.max_moves_per_broker)
        notes = []
        if len(transfers) <= COMPOSE_LIMIT:
            composed = schedule.compose(transfers, limits)
        else:
            composed = schedule.consecutive(transfers, limits)
            notes.append(f"{len(transfers):,} partitions to move: the batches shown are "
                         f"consecutive slices of the plan (composing more than "
                         f"{COMPOSE_LIMIT:,} takes too long for a report); reassign --dry-run "
                         "shows the composed batches a run submits, never slower than these")
        return figures.reassignment(verdict.plan, plan, snapshot, stats, transfers, composed,
                                    judged, sized=self.sizes is not None, rate=request.throttle,
                                    limits=request.limits_text(), notes=notes)


def report(request: ReportRequest, snapshot: Callable[[], ClusterSnapshot], out: Path,
           force: bool, warn: Callable[[str], None]) -> Written:
    """Validate and draw every plan of ``request`` on one page written to ``out``."""
    page = page_module()
    files.check_target(out, force)
    loaded: list[ClusterSnapshot] = []

    def cluster() -> ClusterSnapshot:
        loaded.append(snapshot())
        return loaded[0]

    verdicts = validating.validate_plans(_validate_request(request), cluster)
    drawn: list[figures.PlanFigures] = []
    reporter: Reporter | None = None
    for verdict in verdicts:
        reporter = reporter or Reporter(request, loaded[0], warn)
        drawn.append(reporter.figures(verdict))
    title = (f"kadmin plan report: {drawn[0].name}" if len(drawn) == 1
             else f"kadmin plan report: {len(drawn)} plans")
    files.atomic_write_bytes(out, page.render(drawn, title).encode(),  # type: ignore[attr-defined]
                             force=force)
    return Written(out, len(drawn), sum(not f.verdict.valid for f in drawn))


def _validate_request(request: ReportRequest) -> validating.ValidateRequest:
    return validating.ValidateRequest(tuple(request.plans), None, request.allow_rf_change,
                                      request.allow_internal)


def report_each(verdicts: Iterable[Verdict], folder: Path,
                snapshot: Callable[[], ClusterSnapshot | None],
                warn: Callable[[str], None]) -> Iterator[Verdict]:
    """``plan validate --report DIR``: ``verdicts`` passed on as they come, the report of each
    written to ``folder`` first (``<plan path>.html``, its folders joined by ``__``); a report
    replaces only a regular file of that name. ``snapshot`` is the run's cluster (read once)."""
    page = page_module()
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise InvalidInput(f"--report {folder}: not a folder (name a folder, new or existing)")
    reporter: Reporter | None = None
    names: set[str] = set()
    for verdict in verdicts:
        if reporter is None:
            cluster = snapshot()
            if cluster is None:
                raise InvalidInput("--report needs the cluster: give --cluster FILE or -z")
            reporter = Reporter(ReportRequest(()), cluster, warn)
        name = _report_name(verdict.plan, names)
        html = page.render([reporter.figures(verdict)],  # type: ignore[attr-defined]
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
