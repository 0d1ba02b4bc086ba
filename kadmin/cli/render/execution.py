"""What ``reassign``, ``verify``, ``elect`` and ``topics delete`` show: a dry run's schedule,
the progress of a run (a rich bar, or JSON lines), and its end."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kadmin.cli.common import err, out, print_sampled, write_stdout
from kadmin.cli.render import cell, print_json
from kadmin.cli.render.plan import plan_stats, plan_stats_doc
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
from kadmin.executor import ElectionDryRun, Outcome
from kadmin.model import OperationFailed, and_more, listed, sample_of
from kadmin.operations.execute import ReassignDryRun
from kadmin.schedule import load_of
from kadmin.units import human_bytes, human_duration


def dry_run(dry: ReassignDryRun, as_json: bool) -> None:
    """A reassignment's dry run: the journal's contradictions, the counts the run would start
    with, the schedule it would follow, then the plan's stats, and the partitions it would fail
    on (stderr). With ``as_json`` one document: the schedule's fields, the counts, ``stats``,
    ``contradicted`` and ``would_fail``."""
    scheduled = dry.scheduled
    contradicted = scheduled.contradicted
    if as_json:
        failing = sample_of(dry.would_fail)
        print_json({**_schedule_doc(dry), "total": dry.stats.partitions,
                    "need_nothing": scheduled.unchanged, "already_done": scheduled.already_done,
                    "batch_count": dry.batch_count, "in_flight": dry.in_flight,
                    "resumed": dry.resumed,
                    "stats": plan_stats_doc(dry.stats),
                    "contradicted": [str(tp) for tp in contradicted.items],
                    "contradicted_count": contradicted.total,
                    "would_fail": list(failing.items), "would_fail_count": failing.total})
        return
    if contradicted.total:
        err.print(contradicted_line([str(tp) for tp in contradicted.items], contradicted.total)
                  .replace("submitting them again", "a run submits them again"),
                  markup=False, soft_wrap=True)
    to_submit = sum(map(len, scheduled.batches))
    out.print(f"reassign --dry-run: {dry.stats.partitions} partition(s), {scheduled.unchanged} need "
              f"nothing, {scheduled.already_done} already done, {dry.batch_count} batch(es) to "
              f"run: {to_submit} partition(s) to submit"
              + (f", {dry.in_flight} in flight to wait on" if dry.in_flight else "")
              + (", resuming an earlier run" if dry.resumed else ""),
              markup=False, soft_wrap=True)
    schedule(dry)
    plan_stats(dry.stats, False)
    print_sampled(err, dry.would_fail, "would fail: ")


def _schedule_doc(dry: ReassignDryRun) -> dict[str, Any]:
    scheduled, throttle, predicted = dry.scheduled, dry.throttle, dry.predicted
    needs = [*(() if scheduled.sized else ("--sizes",)), *(() if throttle else ("--throttle",))]
    rows = [(i, b, None if predicted is None else predicted.batches[i - 1])
            for i, b in enumerate(scheduled.batches, start=1)]
    views = scheduled.transfers
    return {
            "batches": [{
                "batch": i, "partitions": len(b),
                "bytes": sum(t.work for t in views[i - 1]) if scheduled.sized else None,
                "busiest_broker": load_of(views[i - 1])[1],
                "predicted_seconds": None if p is None else p.seconds,
                "lower_bound_seconds": None if p is None else p.lower_bound_seconds,
                "first": str(b[0].tp), "last": str(b[-1].tp)} for i, b, p in rows],
            "partitions": sum(map(len, views)),
            "bytes": sum(t.work for v in views for t in v) if scheduled.sized else None,
            "busiest_broker": load_of(t for v in views for t in v)[1],
            "predicted_seconds": None if predicted is None else predicted.seconds,
            "lower_bound_seconds": None if predicted is None else predicted.lower_bound_seconds,
            "prediction_needs": needs,
            "throttle": throttle}


def schedule(dry: ReassignDryRun) -> None:
    """The batches a run would submit: partitions, bytes (with sizes), busiest broker and, with
    sizes and a throttle, the modelled duration next to the lower bound."""
    scheduled, throttle, predicted = dry.scheduled, dry.throttle, dry.predicted
    timed = throttle is not None and scheduled.sized
    needs = [*(() if scheduled.sized else ("--sizes",)), *(() if throttle else ("--throttle",))]
    rows = [(i, b, None if predicted is None else predicted.batches[i - 1])
            for i, b in enumerate(scheduled.batches, start=1)]
    views = scheduled.transfers
    table = Table(title=f"{len(rows)} batch(es)")
    for column in ("batch", "partitions", *(("bytes",) if scheduled.sized else ()),
                   "busiest broker", *(("predicted",) if timed else ()), "first", "last"):
        table.add_column(column)
    shown = sample_of(rows)
    for i, b, p in shown.items:
        view = views[i - 1]
        table.add_row(str(i), str(len(b)),
                      *((human_bytes(sum(t.work for t in view)),) if scheduled.sized else ()),
                      str(load_of(view)[1] if view else "-"),
                      *((human_duration(p.seconds),) if p is not None else ()),
                      cell(str(b[0].tp)), cell(str(b[-1].tp)))
    if shown.rest:
        table.add_row(and_more(shown.rest))
    out.print(table)
    every = [t for view in views for t in view]
    busiest = load_of(every)[1]
    plan_line = (f"plan: {len(every)} partition(s) in {len(rows)} batch(es)"
                 + (f", {human_bytes(sum(t.work for t in every))} to copy" if scheduled.sized
                    else "")
                 + ("" if busiest is None else f", busiest broker {busiest}"))
    if predicted is not None:
        out.print(f"{plan_line}; predicted {human_duration(predicted.seconds)} at "
                  f"{human_bytes(predicted.rate)}/s (lower bound "
                  f"{human_duration(predicted.lower_bound_seconds)}, "
                  f"{predicted.seconds / predicted.lower_bound_seconds:.2f}x)"
                  if predicted.lower_bound_seconds else f"{plan_line}; nothing to copy",
                  markup=False, soft_wrap=True)
    else:
        out.print(plan_line + "; no predicted duration: it needs "
                  + " and ".join({"--sizes": "--sizes FILE (the partitions' sizes)",
                                  "--throttle": "--throttle RATE"}[n] for n in needs),
                  markup=False, soft_wrap=True)


PLAIN_INTERVAL = 60.0
"""Without a terminal, the seconds between two lines saying what a wait is at."""


def contradicted_line(partitions: Sequence[str], count: int) -> str:
    """The partitions a journal records submitted that the live cluster shows neither at their
    target nor moving."""
    more = f" (and {count - len(partitions):,} more)" if count > len(partitions) else ""
    return (f"reassign: the journal records {count:,} partition(s) as submitted that are neither "
            f"at their target nor moving: {', '.join(partitions)}{more}; submitting them again")


def election_dry_run(dry: ElectionDryRun, as_json: bool) -> None:
    """What ``elect --dry-run`` shows: the partitions a real run would submit (those not led by
    their preferred replica), the rest needing nothing, and those it would fail on (stderr)."""
    total, pending = len(dry.plan.partitions), dry.pending
    if as_json:
        shown, failing = sample_of(pending), sample_of(dry.failures)
        print_json({"partitions": total, "need_nothing": total - len(pending),
                    "to_elect": [str(tp) for tp in shown.items], "to_elect_count": len(pending),
                    "to_elect_more": shown.rest, "batches": dry.batches,
                    "would_fail": list(failing.items), "would_fail_count": failing.total})
        return
    out.print(f"would elect preferred leaders for {len(pending)} partition(s) in {dry.batches} "
              f"batch(es), {total - len(pending)} need nothing (led by their preferred replica)"
              + (f": {listed(pending)}" if pending else ""), markup=False, soft_wrap=True)
    print_sampled(err, dry.failures, "would fail: ")


@contextmanager
def progress(as_json: bool) -> Iterator[Callable[[Event], None]]:
    """A sink for executor events: JSON lines on stdout, or a rich progress bar on stderr."""
    if as_json:
        def emit_json(event: Event) -> None:
            write_stdout([json.dumps(event_to_json(event)) + "\n"])
        yield emit_json
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[amount]}"),
                   TextColumn("{task.fields[note]}"), TimeElapsedColumn(), console=err,
                   transient=False)
    task = bar.add_task("starting", total=None, note="", amount="")
    sized = False  # with partition sizes the bar counts bytes, else partitions
    # without a terminal the bar shows nothing until the end: its notes become lines, one per
    # batch event and, while waiting, one per PLAIN_INTERVAL
    plain = not err.is_terminal
    said = -PLAIN_INTERVAL

    def note(text: str, *, waiting: bool = False) -> None:
        nonlocal said
        bar.update(task, note=text)
        if plain and (not waiting or time.monotonic() - said >= PLAIN_INTERVAL):
            said = time.monotonic()
            bar.console.print(text, markup=False)

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
            if event.contradicted_count:
                bar.console.print(contradicted_line(event.contradicted, event.contradicted_count),
                                  markup=False, soft_wrap=True)
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
            note(f"batch {event.batch}/{event.batches} {verb} ({event.size}{data})")
        elif isinstance(event, HealthWait):
            note(f"before batch {event.batch}: waiting while {event.under_replicated} "
                 f"under-replicated and {event.offline} offline partition(s)"
                 + (f" and {event.unreadable} with an unreadable state znode"
                    if event.unreadable else "")
                 + f" outside the plan recover ({', '.join(event.sample)})", waiting=True)
        elif isinstance(event, ThrottleSet):
            bar.console.print(f"batch {event.batch}: throttle {human_bytes(event.rate)}/s set on "
                              f"{event.brokers} broker(s), {event.topics} topic(s)", markup=False)
        elif isinstance(event, ThrottleCleared):
            bar.console.print(f"batch {event.batch}: kadmin's throttles removed from "
                              f"{event.entities} config(s)", markup=False)
        elif isinstance(event, Waiting):
            state = "waiting"
            if not event.connected:
                state = "ZooKeeper connection lost, reconnecting"
            elif event.controller is None:
                state = "no controller elected, waiting for one"
            if sized and event.bytes_done is not None:
                count(event.bytes_done, event.bytes_total)
                state += _byte_note(event)
            else:
                count(event.done, event.total)
            note(f"batch {event.batch}: {event.remaining} left, {state}", waiting=True)
        elif isinstance(event, BatchDone):
            if sized and event.bytes_done is not None:
                count(event.bytes_done, bar.tasks[0].total)
            else:
                count(event.done, event.total)
            note(f"batch {event.batch}/{event.batches} done")
        elif isinstance(event, TimedOut):
            note(f"timed out with {event.remaining} still in flight")
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


def finish(outcome: Outcome, timeout: float | None, as_json: bool = False) -> None:
    """Exit code and summary line; with --json stdout carries only the JSON events. A timeout
    names one line per partition still in flight, the count the progress reported."""
    if outcome.timed_out:
        raise OperationFailed(
            f"{outcome.operation}: timed out after {timeout:g}s (--timeout); "
            f"{len(outcome.failures)} still in flight (the znode is left for the controller; "
            "run the same command again to keep waiting)", details=outcome.failures)
    if outcome.failures:
        raise OperationFailed(f"{outcome.operation}: {len(outcome.failures)} of {outcome.total} "
                              "failed", details=outcome.failures)
    (err if as_json else out).print(f"{outcome.operation}: all {outcome.total} done", markup=False)
