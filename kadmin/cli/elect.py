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
    out,
)
from kadmin.cli.render.execution import finish, progress
from kadmin.model import ElectionPlan, listed
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
    if isinstance(outcome, ElectionPlan):
        out.print(f"would elect preferred leaders for {len(outcome.partitions)} partition(s): "
                  f"{listed(outcome.partitions)}", markup=False)
        return
    finish(outcome, timeout, json_output)
