"""Commands that change a cluster: ``reassign``, ``verify``, ``elect``, ``topics delete``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin import executor, plans
from kadmin.cli import render
from kadmin.cli.common import (
    RATE_FORMS,
    AllowInternalOpt,
    AllowRfChangeOpt,
    BatchSizeOpt,
    Connection,
    JsonOpt,
    JuteMaxBufferOpt,
    MaxBatchBytesOpt,
    MaxMovesPerBrokerOpt,
    MaxZnodeBytesOpt,
    SizesOpt,
    connects,
    err,
    named_output,
    number,
    out,
    print_sampled,
    warn,
)
from kadmin.events import Event
from kadmin.health_gate import FULL_READ_INTERVAL
from kadmin.model import (
    DeletionPlan,
    ElectionPlan,
    InvalidInput,
    OperationFailed,
    PlanKind,
    listed,
)
from kadmin.operations import execute as executing
from kadmin.operations.planfiles import load_plan, load_reassignment
from kadmin.operations.selection import split_names
from kadmin.progress_metrics import MetricsFile
from kadmin.units import parse_bytes, parse_rate

topics_app = typer.Typer(help="Topic operations.", no_args_is_help=True)

PlanOpt = Annotated[Path | None, typer.Option("--plan", help="Plan file.")]
TimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", parser=number(0.0),
    help="Seconds to wait for the controller in all (default: no limit).")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Show what would be done; write nothing.")]


def _finish(outcome: executor.Outcome, settings: executor.ExecutionSettings,
            as_json: bool = False) -> None:
    """Exit code and summary line; with --json stdout carries only the JSON events. A timeout
    names one line per partition still in flight, the count the progress reported."""
    if outcome.timed_out:
        raise OperationFailed(
            f"{outcome.operation}: timed out after {settings.timeout:g}s (--timeout); "
            f"{len(outcome.failures)} still in flight (the znode is left for the controller; "
            "run the same command again to keep waiting)", details=outcome.failures)
    if outcome.failures:
        raise OperationFailed(f"{outcome.operation}: {len(outcome.failures)} of {outcome.total} "
                              "failed", details=outcome.failures)
    (err if as_json else out).print(f"{outcome.operation}: all {outcome.total} done", markup=False)


@connects
def reassign(
    zk: Connection,
    plan_path: Annotated[Path, typer.Option("--plan", help="Reassignment plan file, or a "
                                            "`kadmin spark plan` folder / manifest.")],
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    timeout: TimeoutOpt = None,
    dry_run: DryRunOpt = False,
    allow_rf_change: AllowRfChangeOpt = False,
    throttle: Annotated[str | None, typer.Option(
        "--throttle", help=f"Replication throttle for each batch, bytes/s: {RATE_FORMS}. Set "
                           "before a batch, removed after it (spec section 5).")] = None,
    sizes_path: SizesOpt = None,
    max_batch_bytes: MaxBatchBytesOpt = None,
    max_moves_per_broker: MaxMovesPerBrokerOpt = None,
    elect: Annotated[bool, typer.Option(
        "--elect", help="Once every batch is complete, elect the preferred leader of the "
                        "partitions whose first replica the plan changes (in znode-sized "
                        "batches, as `kadmin elect`); partitions that cannot be elected are "
                        "named with the reason, exit 1.")] = False,
    no_health_gate: Annotated[bool, typer.Option(
        "--no-health-gate", help="Do not wait before each batch while partitions outside the "
                                 "plan are under-replicated or offline.")] = False,
    health_interval: Annotated[float, typer.Option(
        "--health-interval", parser=number(0.0),
        help="Seconds between the health gate's reads of every partition state; between them "
             "it reads the live brokers only, and a broker lost or back forces a full read.")
    ] = FULL_READ_INTERVAL,
    metrics_file: Annotated[Path | None, typer.Option(
        "--metrics-file", parser=named_output,
        help="Keep this Prometheus text file (node_exporter's textfile collector: name it "
             "*.prom in its folder) current during the run: partitions and bytes done and "
             "remaining, the batch, the throttle, the predicted seconds left, marked finished "
             "at the end. Replaces only a regular file; a dry run writes none.")] = None,
    json_output: JsonOpt = False,
) -> None:
    """Execute a reassignment plan in batches and wait until the controller has finished.

    Batches are composed for the shortest run (the busiest broker bounds every batch); those
    that restore redundancy run first. Interrupted runs resume the same schedule: run the same
    command again. Example:
    kadmin reassign --plan plans/reassign-x.json -z zk1:2181/kafka --throttle 50MB --timeout 3600
    """
    plans.check_znode_limit(max_znode_bytes, jute_maxbuffer)
    plan, anchor = load_reassignment(plan_path)
    if max_batch_bytes is not None and sizes_path is None:
        raise InvalidInput("--max-batch-bytes needs partition sizes: give --sizes FILE")
    settings = executor.ExecutionSettings(
        batch_size=batch_size, max_znode_bytes=max_znode_bytes, timeout=timeout,
        allow_rf_change=allow_rf_change,
        throttle=None if throttle is None else parse_rate(throttle),
        health_gate=not no_health_gate, health_interval=health_interval,
        max_batch_bytes=None if max_batch_bytes is None else parse_bytes(
            max_batch_bytes, "--max-batch-bytes"),
        max_moves_per_broker=max_moves_per_broker, elect=elect)
    request = executing.ReassignRequest(plan, anchor, zk, settings, sizes_path, dry_run)
    metrics = (None if metrics_file is None or dry_run
               else MetricsFile(metrics_file, str(plan_path)))
    with render.progress(json_output) as show:
        def emit(event: Event) -> None:
            if metrics is not None:
                metrics(event)
            show(event)

        try:
            outcome = executing.reassign(request, emit, warn)
        finally:
            if metrics is not None:
                metrics.close()
    if isinstance(outcome, executing.ReassignDryRun):
        render.schedule(outcome.scheduled, settings.throttle, json_output)
        render.plan_stats(outcome.stats, json_output)
        return
    _finish(outcome, settings, json_output)


@connects
def verify(
    zk: Connection,
    plan_path: Annotated[Path, typer.Option("--plan", help="Reassignment plan file or folder.")],
    json_output: JsonOpt = False,
) -> None:
    """Report each partition of a plan as complete, in progress, not started or failed.

    Exit 0 when all are complete, else 1 with a last line that says whether partitions failed
    or are only unfinished (waiting, or running reassign, finishes those).
    Example: kadmin verify --plan plans/reassign-x.json -z zk1:2181"""
    plan, result = executing.verify(plan_path, zk)
    counts = {"complete": len(result.complete), "in_progress": len(result.in_progress),
              "not_started": len(result.not_started), "failed": len(result.failures)}
    if json_output:
        render.print_json({**{key: [str(tp) for tp in tps] for key, tps in (
            ("complete", result.complete), ("in_progress", result.in_progress),
            ("not_started", result.not_started))}, "failed": list(result.failures),
            "counts": counts})
    else:
        out.print(", ".join(f"{key.replace('_', ' ')}: {n}" for key, n in counts.items())
                  + f" (of {len(plan.moves)})", markup=False)
        for label, tps in (("in progress", result.in_progress),
                           ("not started", result.not_started)):
            if tps:
                out.print(f"{label}: {listed(tps)}", markup=False)
        print_sampled(err, result.failures, "failed: ")
    if result.failures:
        raise OperationFailed(f"{len(result.failures)} partition(s) of the plan failed")
    if not result.ok:
        raise OperationFailed(
            f"the plan is not complete yet: {counts['in_progress']} in progress, "
            f"{counts['not_started']} not started; wait, or run 'kadmin reassign --plan "
            f"{plan_path}' to submit the rest")


@connects
def elect(
    zk: Connection,
    plan_path: PlanOpt = None,
    topics: Annotated[str | None, typer.Option("--topics", help="Comma-separated topics.")] = None,
    all_partitions: Annotated[bool, typer.Option(
        "--all-topics", help="Every partition of every topic.")] = False,
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    timeout: TimeoutOpt = None,
    dry_run: DryRunOpt = False,
    json_output: JsonOpt = False,
) -> None:
    """Run a preferred replica election and report partitions still not led by their preferred
    replica, with the reason. Example: kadmin elect --all-topics -z zk1:2181 --timeout 300"""
    if sum([plan_path is not None, topics is not None, all_partitions]) != 1:
        raise InvalidInput("choose exactly one of --plan, --topics and --all-topics")
    plans.check_znode_limit(max_znode_bytes, jute_maxbuffer)
    explicit = load_plan(plan_path, PlanKind.ELECTION) if plan_path else None
    names = split_names(topics, "--topics")
    settings = executor.ExecutionSettings(batch_size=batch_size, max_znode_bytes=max_znode_bytes,
                                          timeout=timeout)
    assert explicit is None or isinstance(explicit, ElectionPlan)
    with render.progress(json_output) as emit:
        outcome = executing.elect(explicit, names, zk, settings, emit, dry_run=dry_run)
    if isinstance(outcome, ElectionPlan):
        out.print(f"would elect preferred leaders for {len(outcome.partitions)} partition(s): "
                  f"{listed(outcome.partitions)}", markup=False)
        return
    _finish(outcome, settings, json_output)


@topics_app.command("delete")
@connects
def delete_topics(
    zk: Connection,
    names: Annotated[list[str] | None, typer.Argument(help="Topics to delete.")] = None,
    plan_path: PlanOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    allow_internal: AllowInternalOpt = False,
    allow_reassigning: Annotated[bool, typer.Option(
        "--allow-reassigning",
        help="Queue the deletion even while a reassignment moves some of the topics' "
             "partitions (the controller then deletes them once the move ends).")] = False,
    timeout: TimeoutOpt = None,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    dry_run: DryRunOpt = False,
    json_output: JsonOpt = False,
) -> None:
    """Delete topics through /admin/delete_topics and wait until they are gone.

    The markers go in one transaction, or in several when they would pass --max-znode-bytes
    (thousands of topics).

    Example: kadmin topics delete old-events tmp-1 -z zk1:2181 --yes
    """
    if bool(names) == (plan_path is not None):
        raise InvalidInput("give topic names or --plan FILE (one of them)")
    plans.check_znode_limit(max_znode_bytes, jute_maxbuffer)
    plan = load_plan(plan_path, PlanKind.DELETION) if plan_path else plans.deletion_plan_for(
        list(names or []))
    assert isinstance(plan, DeletionPlan)
    settings = executor.ExecutionSettings(timeout=timeout, allow_internal=allow_internal,
                                          allow_reassigning=allow_reassigning,
                                          max_znode_bytes=max_znode_bytes)
    def confirmed(plan: DeletionPlan) -> bool:
        return yes or typer.confirm(f"Delete {len(plan.topics)} topic(s) and all their data: "
                                    f"{listed(plan.topics)}?", err=True)

    with render.progress(json_output) as emit:
        outcome = executing.delete_topics(
            plan, zk, settings, emit, confirmed, dry_run=dry_run)
    if outcome is None:
        raise OperationFailed("deletion not confirmed; nothing was written")
    if isinstance(outcome, executing.DeletionDryRun):
        out.print(f"would delete {len(plan.topics)} topic(s) in {outcome.transactions} "
                  f"transaction(s): {listed(plan.topics)}", markup=False)
        return
    _finish(outcome, settings, json_output)
