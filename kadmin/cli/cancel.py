"""``kadmin reassign --cancel``: its options beyond reassign's, and its report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli import render
from kadmin.cli.common import Connection, err, number, out, print_sampled
from kadmin.kafka_version import KafkaVersion, parse_kafka_version
from kadmin.model import InvalidInput, KadminError, OperationFailed, ReassignmentPlan, listed
from kadmin.operations import stuck as stuck_ops
from kadmin.operations.cancel import Cancelled, CancelRequest, cancel
from kadmin.reverting import CancelPlan, Step
from kadmin.stuck import DEFAULT_STUCK_AFTER

CancelOpt = Annotated[bool, typer.Option(
    "--cancel", help="Stop now: every partition still moving (of --plan, else every "
                     "reassignment in flight) goes back to its original replicas in their "
                     "original order, kadmin's throttles are removed. Before Kafka 2.4 the "
                     "originals come from the plan's rollback file or --rollback, and the "
                     "controller is moved (/controller deleted).")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
RollbackOpt = Annotated[Path | None, typer.Option(
    "--rollback", help="With --cancel: the original replicas (a rollback file, Kafka's "
                       "reassignment format); default: the plan's rollback file beside it.")]
KafkaVersionOpt = Annotated[str | None, typer.Option(
    "--kafka-version", help="With --cancel: the Kafka release the controller runs (2.3, "
                            "2.8, ...), needed only when ZooKeeper does not show it.")]
RepairStaleOpt = Annotated[bool, typer.Option(
    "--repair-stale", help="Remove a stale /admin/reassign_partitions (every partition it lists "
                           "at its target with its ISR complete, yet still there) after "
                           "checking each entry; before Kafka 2.4 also move the controller.")]
StuckAfterOpt = Annotated[float, typer.Option(
    "--stuck-after", parser=number(0.0),
    help="Seconds a target replica may stay out of the ISR, while other partitions of the "
         "request finish, before it is named as stuck.")]
STUCK_AFTER = DEFAULT_STUCK_AFTER
AllOrNothingOpt = Annotated[bool, typer.Option(
    "--all-or-nothing", help="With --cancel: do nothing when some partition cannot be "
                             "reverted safely (default: revert the others).")]


def version_option(text: str | None) -> KafkaVersion | None:
    if text is None:
        return None
    try:
        return parse_kafka_version(text)
    except ValueError as exc:
        raise InvalidInput(f"--kafka-version: {exc}") from None


def _what_happens(plan: CancelPlan) -> str:
    steps = "; ".join(step.value for step in plan.steps)
    return (f"revert {len(plan.reverts)} partition(s) to their original replicas "
            f"({listed([r.tp for r in plan.reverts])}): {steps}")


def run(zk: Connection, plan: ReassignmentPlan | None, anchor: Path | None,
        rollback: Path | None, kafka_version: str | None, all_or_nothing: bool,
        timeout: float | None, dry_run: bool, yes: bool, as_json: bool) -> None:
    request = CancelRequest(zk, plan, anchor, rollback, version_option(kafka_version),
                            all_or_nothing, timeout, dry_run)
    say = err if as_json else out

    def confirmed(found: CancelPlan) -> bool:
        if yes or (not found.reverts and Step.DELETE_ADMIN_ZNODE not in found.steps):
            return True
        return typer.confirm(f"{_what_happens(found)}. Go on?", err=True)

    result = cancel(request, confirmed, lambda line: say.print(line, markup=False))
    if result is None:
        raise OperationFailed("cancel not confirmed; nothing was written")
    _report(result, as_json)


def report_stuck(zk: Connection, topics: set[str] | None, stuck_after: float) -> list[str]:
    """Each reassignment among ``topics`` that cannot finish, a line each on stderr with its
    cause and repair; returns the lines. Best effort, after an operation that did not finish:
    when ZooKeeper cannot be read now (maybe why it did not finish) nothing is added, and the
    operation's own error stays the one reported."""
    try:
        found = stuck_ops.diagnose_live(zk, topics, stuck_after)
    except KadminError:
        return []
    lines = [str(s) for s in found]
    print_sampled(err, lines, "")
    return lines


def repair(zk: Connection, kafka_version: str | None, timeout: float | None, dry_run: bool,
           as_json: bool) -> None:
    say = err if as_json else out
    done = stuck_ops.repair_stale(zk, version_option(kafka_version), dry_run,
                                  lambda line: say.print(line, markup=False), timeout)
    verb = "would delete" if dry_run else "deleted"
    line = (f"{verb} the stale /admin/reassign_partitions ({done.partitions} complete "
            f"partition(s))" + ("; controller moved" if done.controller_moved and not dry_run
                                else "; the controller must move too" if done.controller_moved
                                else "") + f" ({done.evidence})")
    render.summary(line, {"dry_run": dry_run, "partitions": done.partitions,
                          "controller_moved": done.controller_moved and not dry_run,
                          "controller_move_needed": done.controller_moved,
                          "evidence": done.evidence}, as_json)


def _release(plan: CancelPlan) -> str | None:
    """The behaviour the cancel followed: "2.4+" or "before 2.4" (None: not needed)."""
    if plan.version is None:
        return None
    return "2.4+" if plan.version.records_moves_in_topic else "before 2.4"


def _report(result: Cancelled, as_json: bool) -> None:
    plan = result.plan
    if as_json:
        render.print_json({
            "kafka_release": _release(plan), "evidence": result.evidence,
            "dry_run": not result.ran,
            "steps": [s.value for s in plan.steps],
            "reverted": [{"topic": r.tp.topic, "partition": r.tp.partition,
                          "from": list(r.current), "to": list(r.original),
                          "order_recorded": r.recorded}
                         for r in plan.reverts],
            "not_reverted": [{"topic": k.tp.topic, "partition": k.tp.partition,
                              "reason": k.reason} for k in plan.kept],
            "failures": list(result.failures), "timed_out": result.timed_out,
            "throttles_cleared": list(result.throttles_cleared)})
    else:
        verb = "reverted" if result.ran else "would revert"
        release = _release(plan)
        out.print(f"Kafka {release or 'release not needed'} ({result.evidence}); {verb} {len(plan.reverts)} "
                  f"partition(s)", markup=False)
        print_sampled(out, [f"{r.tp}: {list(r.current)} -> {list(r.original)}" + (
            "" if r.recorded else " (in the order the topic znode keeps: give --plan or "
            "--rollback for the order before the plan)") for r in plan.reverts], "  ")
        if not result.ran:
            out.print(f"steps: {'; '.join(s.value for s in plan.steps)}", markup=False)
        elif result.throttles_cleared:
            out.print(f"throttles removed from {len(result.throttles_cleared)} config(s)",
                      markup=False)
    print_sampled(err, [str(k) for k in plan.kept], "")
    if result.timed_out:
        raise OperationFailed("cancel: timed out (--timeout) waiting for the controller; run "
                              "the same command again to keep waiting",
                              details=result.failures)
    if result.failures:
        raise OperationFailed(f"cancel: {len(result.failures)} partition(s) not back at their "
                              "original replicas", details=result.failures)
    if plan.kept:
        raise OperationFailed(f"cancel: {len(plan.kept)} partition(s) not reverted (named "
                              "above); they go on moving")
