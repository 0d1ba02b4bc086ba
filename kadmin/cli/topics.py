"""``kadmin topics delete``: topics deleted through /admin/delete_topics."""

from __future__ import annotations

from typing import Annotated

import typer

from kadmin import plans
from kadmin.cli.common import (
    AllowInternalOpt,
    Connection,
    DryRunOpt,
    JsonOpt,
    JuteMaxBufferOpt,
    MaxZnodeBytesOpt,
    PlanOpt,
    TimeoutOpt,
    TopicsOpt,
    connects,
    out,
)
from kadmin.cli.render import print_json
from kadmin.cli.render.execution import finish, progress
from kadmin.model import DeletionPlan, OperationFailed, listed, sample_of
from kadmin.operations import execute as executing
from kadmin.operations.selection import split_names

app = typer.Typer(help="Topic operations.", no_args_is_help=True, rich_markup_mode=None)


@app.command("delete")
@connects
def delete_topics(
    zk: Connection,
    names: Annotated[list[str] | None, typer.Argument(help="Topics to delete.")] = None,
    topics: TopicsOpt = None,
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
    (or --topics old-events,tmp-1)
    """
    names = [*(names or []), *(split_names(topics, "--topics") if topics is not None else [])]
    request = executing.DeleteRequest(zk, tuple(names), plan_path, allow_internal,
                                      allow_reassigning, timeout, max_znode_bytes,
                                      jute_maxbuffer, dry_run)

    def confirmed(plan: DeletionPlan) -> bool:
        return yes or typer.confirm(f"Delete {len(plan.topics)} topic(s) and all their data: "
                                    f"{listed(plan.topics)}?", err=True)

    with progress(json_output) as emit:
        outcome = executing.delete_topics(request, emit, confirmed)
    if outcome is None:
        raise OperationFailed("deletion not confirmed; nothing was written")
    if isinstance(outcome, executing.DeletionDryRun):
        if json_output:
            shown = sample_of(outcome.plan.topics)
            print_json({"topics": list(shown.items), "more": shown.rest,
                        "count": len(outcome.plan.topics),
                        "transactions": outcome.transactions})
        else:
            out.print(f"would delete {len(outcome.plan.topics)} topic(s) in "
                      f"{outcome.transactions} transaction(s): {listed(outcome.plan.topics)}",
                      markup=False)
        return
    finish(outcome, timeout, json_output)
