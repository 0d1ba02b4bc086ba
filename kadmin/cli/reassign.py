"""``kadmin reassign``: a reassignment plan executed in batches."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin import plans
from kadmin.cli import cancel as cancelling
from kadmin.cli.common import (
    RATE_FORMS,
    AllowRfChangeOpt,
    BatchSizeOpt,
    Connection,
    DryRunOpt,
    JsonOpt,
    JuteMaxBufferOpt,
    MaxBatchBytesOpt,
    MaxMovesPerBrokerOpt,
    MaxZnodeBytesOpt,
    SizesOpt,
    TimeoutOpt,
    connects,
    named_output,
    number,
    warn,
)
from kadmin.cli.render.execution import dry_run as dry_run_summary
from kadmin.cli.render.execution import finish, progress
from kadmin.health_gate import FULL_READ_INTERVAL
from kadmin.model import InvalidInput, OperationFailed
from kadmin.operations import execute as executing
from kadmin.operations.planfiles import load_reassignment


@connects
def reassign(
    zk: Connection,
    plan_path: Annotated[Path | None, typer.Option(
        "--plan", help="Reassignment plan file, or a `kadmin spark plan` folder / manifest "
                       "(with --cancel: only its partitions; default there: every "
                       "reassignment in flight).")] = None,
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    timeout: TimeoutOpt = None,
    dry_run: DryRunOpt = False,
    allow_rf_change: AllowRfChangeOpt = False,
    throttle: Annotated[str | None, typer.Option(
        "--throttle", help=f"Replication throttle for each batch, bytes/s: {RATE_FORMS}. Set "
                           "before a batch, removed after it (docs/execution.md).")] = None,
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
    cancel: cancelling.CancelOpt = False,
    yes: cancelling.YesOpt = False,
    rollback: cancelling.RollbackOpt = None,
    kafka_version: cancelling.KafkaVersionOpt = None,
    all_or_nothing: cancelling.AllOrNothingOpt = False,
    repair_stale: cancelling.RepairStaleOpt = False,
    stuck_after: cancelling.StuckAfterOpt = cancelling.STUCK_AFTER,
) -> None:
    """Execute a reassignment plan in batches and wait until the controller has finished.

    Batches are composed for the shortest run (the busiest broker bounds every batch); those
    that restore redundancy run first. Interrupted runs resume the same schedule: run the same
    command again. Example:
    kadmin reassign --plan plans/reassign-x.json -z zk1:2181/kafka --throttle 50MB --timeout 3600

    Stop now: kadmin reassign --cancel --plan plans/reassign-x.json -z zk1:2181/kafka
    """
    running = {"--throttle": throttle, "--sizes": sizes_path, "--elect": elect or None,
               "--max-batch-bytes": max_batch_bytes, "--max-moves-per-broker":
               max_moves_per_broker, "--metrics-file": metrics_file}
    if cancel and repair_stale:
        raise InvalidInput("give --cancel or --repair-stale, not both")
    if repair_stale:
        given = [name for name, value in {**running, "--plan": plan_path, "--rollback": rollback,
                                          "--all-or-nothing": all_or_nothing or None}.items()
                 if value is not None]
        if given:
            raise InvalidInput(f"--repair-stale takes no {given[0]} (it only removes a stale "
                               "znode)")
        cancelling.repair(zk, kafka_version, timeout, dry_run, json_output)
        return
    if cancel:
        given = [name for name, value in running.items() if value is not None]
        if given:
            raise InvalidInput(f"--cancel takes no {given[0]} (it only puts partitions back)")
        plan_or_none, anchor_or_none = (None, None) if plan_path is None else load_reassignment(
            plan_path)
        cancelling.run(zk, plan_or_none, anchor_or_none, rollback, kafka_version,
                       all_or_nothing, timeout, dry_run, yes, json_output)
        return
    only_cancel = {"--yes": yes or None, "--rollback": rollback,
                   "--kafka-version": kafka_version, "--all-or-nothing": all_or_nothing or None}
    given = [name for name, value in only_cancel.items() if value is not None]
    if given:
        raise InvalidInput(f"{given[0]} goes with --cancel")
    if plan_path is None:
        raise InvalidInput("which plan? give --plan FILE")
    request = executing.ReassignRequest(
        plan_path, zk, batch_size=batch_size, max_znode_bytes=max_znode_bytes,
        jute_maxbuffer=jute_maxbuffer, timeout=timeout, allow_rf_change=allow_rf_change,
        throttle=throttle, sizes=sizes_path, max_batch_bytes=max_batch_bytes,
        max_moves_per_broker=max_moves_per_broker, elect=elect,
        health_gate=not no_health_gate, health_interval=health_interval,
        metrics_file=metrics_file, dry_run=dry_run)
    with progress(json_output) as emit:
        outcome = executing.reassign(request, emit, warn)
    if isinstance(outcome, executing.ReassignDryRun):
        dry_run_summary(outcome, json_output)
        if outcome.would_fail:
            raise OperationFailed(f"reassign: {len(outcome.would_fail)} of {outcome.stats.partitions} "
                                  "would fail", details=outcome.would_fail)
        return
    if not outcome.ok and not any("ZooKeeper did not answer" in f for f in outcome.failures):
        # (ZooKeeper down at the deadline: no diagnosis, which would only wait to connect)
        cancelling.report_stuck(zk, {m.topic for m in load_reassignment(plan_path)[0].moves},
                                stuck_after)
    finish(outcome, timeout, json_output)
