"""Everything kadmin shows a person: rich tables and progress bars, or JSON for machines."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kadmin.cli.common import err, out
from kadmin.events import (
    BatchDone,
    BatchResumed,
    BatchSubmitted,
    Event,
    ExecutionPlanned,
    Finished,
    HealthWait,
    ThrottleCleared,
    ThrottleSet,
    TimedOut,
    Waiting,
    event_to_json,
)
from kadmin.health import ClusterHealth
from kadmin.model import SHOWN, PartitionMove, TopicPartition, first_shown, shown_lines
from kadmin.plans import PlanStats, ValidationReport
from kadmin.units import human_bytes, human_duration
from kadmin.zk import paths
from kadmin.zk.config import EntityThrottle
from kadmin.zk.reader import InFlight


def sample(items: Sequence[object]) -> str:
    """The first few items on one line, then how many more (see :func:`kadmin.model.first_shown`)."""
    head, more = first_shown(items)
    return ", ".join(head) + (f" (and {more} more)" if more else "")


def validation_report(report: ValidationReport, source: str, as_json: bool, *,
                      strict: bool = False) -> None:
    """One line per problem, then the verdict; with ``strict`` warnings fail the plan too, so
    they go to stderr with the errors."""
    if as_json:
        out.print_json(data=report.to_json(strict))
        return
    for problem in report.problems:
        fatal = strict or problem.severity.value == "error"
        (err if fatal else out).print(f"{source}: {problem.severity.value}: {problem}",
                                      markup=False)
    kind = report.kind.value if report.kind else "unknown"
    verdict = ("valid" if report.ok(strict) else "INVALID" if report.errors
               else "INVALID (warnings fail with --strict)")
    out.print(f"{source}: {kind} plan {verdict} ({len(report.errors)} error(s), "
              f"{len(report.warnings)} warning(s))", markup=False)


def plan_stats(stats: PlanStats, as_json: bool) -> None:
    if as_json:
        out.print_json(data=dataclasses.asdict(stats))
        return
    moved = "" if stats.bytes_moved is None else f", {human_bytes(stats.bytes_moved)} to copy"
    table = Table(title=f"{stats.partitions} partition(s) in the plan, {stats.unchanged} unchanged, "
                        f"{stats.replica_moves} replica move(s), {stats.leader_changes} leader "
                        f"change(s){moved}")
    sized = stats.bytes_moved is not None
    for column in ("broker", "replicas before", "replicas after", "leaders before",
                   "leaders after") + (("bytes before", "bytes after") if sized else ()):
        table.add_column(column, justify="right")
    for load in stats.brokers:
        table.add_row(str(load.broker), str(load.replicas_before), str(load.replicas_after),
                      str(load.leaders_before), str(load.leaders_after),
                      *((human_bytes(load.bytes_before or 0), human_bytes(load.bytes_after or 0))
                        if sized else ()))
    out.print(table)


def batches(batch_list: Sequence[Sequence[PartitionMove]], as_json: bool,
            weigh: Callable[[PartitionMove], int] | None = None) -> None:
    """The batches a run would submit; with ``weigh`` (bytes a move copies) their bytes too."""
    def moved(b: Sequence[PartitionMove]) -> int | None:
        return None if weigh is None else sum(map(weigh, b))

    if as_json:
        out.print_json(data={"batches": [
            {"batch": i, "partitions": len(b), "bytes": moved(b), "first": str(b[0].tp),
             "last": str(b[-1].tp)} for i, b in enumerate(batch_list, start=1)]})
        return
    table = Table(title=f"{len(batch_list)} batch(es)")
    for column in ("batch", "partitions") + (("bytes",) if weigh else ()) + ("first", "last"):
        table.add_column(column)
    for i, b in enumerate(batch_list, start=1):
        size = moved(b)
        table.add_row(str(i), str(len(b)), *((human_bytes(size),) if size is not None else ()),
                      str(b[0].tp), str(b[-1].tp))
    out.print(table)


@contextmanager
def progress(as_json: bool) -> Iterator[Callable[[Event], None]]:
    """A sink for executor events: JSON lines on stdout, or a rich progress bar on stderr."""
    if as_json:
        def emit_json(event: Event) -> None:
            sys.stdout.write(json.dumps(event_to_json(event)) + "\n")
            sys.stdout.flush()
        yield emit_json
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[amount]}"),
                   TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=err,
                   transient=False)
    task = bar.add_task("starting", total=None, note="", amount="")
    sized = False  # with partition sizes the bar counts bytes, else partitions

    def count(done: int, total: float | None) -> None:
        bar.update(task, completed=done, total=total,
                   amount=f"{human_bytes(done)}/{human_bytes(total or 0)}" if sized
                   else f"{done}/{total}")

    def emit(event: Event) -> None:
        # shown from the first event on: a run refused before it (bad input, conflict)
        # leaves only its error on the terminal, not an empty bar
        nonlocal sized
        if not bar.live.is_started:
            bar.start()
        if isinstance(event, ExecutionPlanned):
            resumed = ", resuming an earlier run" if event.resumed else ""
            unit = "topic(s)" if event.operation == "delete" else "partition(s)"
            data = "" if event.bytes_total is None else f", {human_bytes(event.bytes_total)} to copy"
            bar.console.print(
                f"{event.operation}: {event.total} {unit}, {event.unchanged} need nothing, "
                f"{event.already_done} already done, {event.batches} batch(es) to run"
                f"{data}{resumed}", markup=False)
            sized = event.bytes_total is not None
            bar.update(task, description=event.operation)
            if sized:
                count(0, event.bytes_total)
            else:
                count(event.already_done, event.total)
        elif isinstance(event, BatchSubmitted | BatchResumed):
            verb = "resumed" if isinstance(event, BatchResumed) else "submitted"
            data = (f", {human_bytes(event.bytes)}"
                    if isinstance(event, BatchSubmitted) and event.bytes is not None else "")
            bar.update(task, note=f"batch {event.batch}/{event.batches} {verb} "
                                  f"({event.size}{data})")
        elif isinstance(event, HealthWait):
            bar.update(task, note=f"before batch {event.batch}: waiting while "
                                  f"{event.under_replicated} under-replicated and {event.offline} "
                                  f"offline partition(s) outside the plan recover "
                                  f"({', '.join(event.sample)})")
        elif isinstance(event, ThrottleSet):
            bar.console.print(f"batch {event.batch}: throttle {human_bytes(event.rate)}/s set on "
                              f"{event.brokers} broker(s), {event.topics} topic(s)", markup=False)
        elif isinstance(event, ThrottleCleared):
            bar.console.print(f"batch {event.batch}: kadmin's throttles removed from "
                              f"{event.entities} config(s)", markup=False)
        elif isinstance(event, Waiting):
            note = "waiting"
            if not event.connected:
                note = "ZooKeeper connection lost, reconnecting"
            elif event.controller is None:
                note = "no controller elected, waiting for one"
            if sized and event.bytes_done is not None:
                count(event.bytes_done, event.bytes_total)
                note += _byte_note(event)
            else:
                count(event.done, event.total)
            bar.update(task, note=f"batch {event.batch}: {event.remaining} left, {note}")
        elif isinstance(event, BatchDone):
            if sized and event.bytes_done is not None:
                count(event.bytes_done, bar.tasks[0].total)
            else:
                count(event.done, event.total)
            bar.update(task, note=f"batch {event.batch}/{event.batches} done")
        elif isinstance(event, TimedOut):
            bar.update(task, note=f"timed out with {event.remaining} still in flight")
        elif isinstance(event, Finished):
            bar.update(task, note="done" if event.ok else f"{event.failed} failed")

    try:
        yield emit
    finally:
        if bar.live.is_started:
            bar.stop()


def _byte_note(event: Waiting) -> str:
    """``; batch 1.2 GB/3 GB, 50 MB/s, ETA batch 36s, plan 5m10s``."""
    rate = "rate unknown yet" if event.rate is None else f"{human_bytes(event.rate)}/s"
    eta = ("" if event.eta is None or event.batch_eta is None else
           f", ETA batch {human_duration(event.batch_eta)}, plan {human_duration(event.eta)}")
    return (f"; batch {human_bytes(event.batch_bytes_done or 0)}/"
            f"{human_bytes(event.batch_bytes_total or 0)}, {rate}{eta}")


def throttles(in_force: Sequence[EntityThrottle], as_json: bool, title: str = "throttles"
              ) -> None:
    """Replication throttles per config entity, kadmin's own marked (capped list)."""
    if as_json:
        out.print_json(data={"throttles": [_throttle_doc(t) for t in in_force]})
        return
    if not in_force:
        out.print(f"{title}: none", markup=False)
        return
    table = Table(title=f"{title}: {len(in_force)} config(s)"
                        + (f", the first {SHOWN} shown" if len(in_force) > SHOWN else ""))
    for column in ("config", "throttle", "set by kadmin"):
        table.add_column(column)
    for entity in in_force[:SHOWN]:
        table.add_row(f"/config/{entity.entity}",
                      "\n".join(f"{k}={_short(v)}" for k, v in entity.values.items()) or "-",
                      "yes" if entity.own else "no")
    out.print(table)


def _short(value: str) -> str:
    parts = value.split(",")
    return value if len(parts) <= SHOWN else ",".join(parts[:SHOWN]) + f",... ({len(parts)})"


def _throttle_doc(entity: EntityThrottle) -> dict[str, object]:
    return {"config": f"/config/{entity.entity}", "values": entity.values,
            "kadmin": entity.own.to_json() if entity.own else None}


def status(health: ClusterHealth, in_flight: InFlight, controller: int | None,
           epoch: int | None, brokers: Sequence[tuple[int, str | None]],
           unreadable: Sequence[tuple[str, str]], as_json: bool,
           in_force: Sequence[EntityThrottle] = ()) -> None:
    doc = {
        "controller": controller, "controller_epoch": epoch,
        "brokers": [{"id": b, "rack": r} for b, r in brokers],
        "topics": health.topics, "partitions": health.partitions,
        "under_replicated": [str(tp) for tp in health.under_replicated],
        "offline": [str(tp) for tp in health.offline],
        "not_preferred_leader": [str(tp) for tp in health.not_preferred],
        "reassignment_in_progress": None if in_flight.reassignment is None
        else [str(m.tp) for m in in_flight.reassignment],
        "reassigning": [{"partition": str(tp), "target": list(m.target),
                         "original": list(m.original)} for tp, m in health.reassigning],
        "election_in_progress": None if in_flight.election is None
        else [str(tp) for tp in in_flight.election],
        "deletions_in_progress": list(in_flight.deletions),
        "unreadable": [{"path": p, "reason": r} for p, r in unreadable],
        "throttles": [_throttle_doc(t) for t in in_force],
    }
    if as_json:
        out.print_json(data=doc)
        return
    table = Table(show_header=False, title="cluster status")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("controller", f"{controller} (epoch {epoch})" if controller is not None
                  else "none")
    table.add_row("live brokers", ", ".join(f"{b}" + (f" ({r})" if r else "") for b, r in brokers)
                  or "none")
    table.add_row("topics / partitions", f"{health.topics} / {health.partitions}")
    for label, tps in (("under-replicated", health.under_replicated),
                       ("offline", health.offline),
                       ("not led by preferred replica", health.not_preferred)):
        table.add_row(label, f"{len(tps)}" + (f": {sample(tps)}" if tps else ""))
    # an admin znode that exists but cannot be decoded is not "none": that would invite a
    # second operation while one may be running
    broken = {path for path, _ in unreadable}
    table.add_row("reassignment", _in_flight([m.tp for m in in_flight.reassignment])
                  if in_flight.reassignment is not None else
                  _absent(paths.REASSIGN_PARTITIONS, broken))
    table.add_row("moving (topic znodes)", f"{len(health.reassigning)}" + (
        ": " + sample([f"{tp} {list(m.original)} -> {list(m.target)}"
                       for tp, m in health.reassigning]) if health.reassigning else ""))
    table.add_row("preferred election", _in_flight(in_flight.election)
                  if in_flight.election is not None else
                  _absent(paths.PREFERRED_REPLICA_ELECTION, broken))
    table.add_row("topic deletions", sample(in_flight.deletions) if in_flight.deletions else "none")
    table.add_row("replication throttles",
                  f"{len(in_force)} config(s): {sample([f'/config/{t.entity}' for t in in_force])}"
                  if in_force else "none")
    out.print(table)
    for line in shown_lines([f"cannot decode {path}: {reason}" for path, reason in unreadable]):
        err.print(f"kadmin: warning: {line}", markup=False)


def _absent(path: str, unreadable: set[str]) -> str:
    return f"unreadable ({path} exists, see the warning)" if path in unreadable else "none"


def _in_flight(tps: Sequence[TopicPartition]) -> str:
    return f"in progress, {len(tps)} partition(s) remaining: {sample(tps)}"
