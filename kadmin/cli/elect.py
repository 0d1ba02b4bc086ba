"""``kadmin elect``: a preferred replica election."""

from __future__ import annotations

from typing import Annotated

import typer

from kadmin import plans
from kadmin.cli.common import (
    BatchSizeOpt,
    Connection,
    DryRunOpt,
    JsonOpt,
    JuteMaxBufferOpt,
    MaxZnodeBytesOpt,
    PlanOpt,
    TimeoutOpt,
    connects,
)
from kadmin.cli.render.execution import election_dry_run, finish, progress
from kadmin.executor import ElectionDryRun
from kadmin.model import OperationFailed
from kadmin.operations import execute as executing


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
    request = executing.ElectRequest(zk, plan_path, topics, all_partitions, batch_size,
                                     max_znode_bytes, jute_maxbuffer, timeout, dry_run)
    with progress(json_output) as emit:
        outcome = executing.elect(request, emit)
    if isinstance(outcome, ElectionDryRun):
        election_dry_run(outcome, json_output)
        if outcome.failures:
            raise OperationFailed(f"elect: {len(outcome.failures)} of "
                                  f"{len(outcome.plan.partitions)} would fail",
                                  details=outcome.failures)
        return
    finish(outcome, timeout, json_output)
