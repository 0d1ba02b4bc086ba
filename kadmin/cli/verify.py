"""``kadmin verify``: each partition of a reassignment plan, complete or not."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.cancel import STUCK_AFTER, StuckAfterOpt
from kadmin.cli.common import (
    Connection,
    JsonOpt,
    ReadTimeoutOpt,
    connects,
    err,
    out,
    print_sampled,
)
from kadmin.cli.render import print_json
from kadmin.model import OperationFailed, listed
from kadmin.operations import execute as executing
from kadmin.operations import stuck as stuck_ops


@connects
def verify(
    zk: Connection,
    plan_path: Annotated[Path, typer.Option("--plan", help="Reassignment plan file or folder.")],
    json_output: JsonOpt = False,
    stuck_after: StuckAfterOpt = STUCK_AFTER,
    timeout: ReadTimeoutOpt = None,
) -> None:
    """Report each partition of a plan as complete, in progress, not started or failed.

    Exit 0 when all are complete, else 1 with a last line that says whether partitions failed
    or are only unfinished (waiting, or running reassign, finishes those).
    Example: kadmin verify --plan plans/reassign-x.json -z zk1:2181"""
    zk = zk.within(timeout)
    verified = executing.verify(executing.VerifyRequest(plan_path, zk))
    plan, result = verified.plan, verified.verification
    found = [] if result.ok else stuck_ops.diagnose_live(zk, {m.topic for m in plan.moves},
                                                          stuck_after)
    counts = {"complete": len(result.complete), "in_progress": len(result.in_progress),
              "not_started": len(result.not_started), "failed": len(result.failures)}
    if json_output:
        print_json({**{key: [str(tp) for tp in tps] for key, tps in (
            ("complete", result.complete), ("in_progress", result.in_progress),
            ("not_started", result.not_started))}, "failed": list(result.failures),
            "counts": counts, "stuck": [str(s) for s in found]})
    else:
        out.print(", ".join(f"{key.replace('_', ' ')}: {n}" for key, n in counts.items())
                  + f" (of {len(plan.moves)})", markup=False)
        for label, tps in (("in progress", result.in_progress),
                           ("not started", result.not_started)):
            if tps:
                out.print(f"{label}: {listed(tps)}", markup=False)
        print_sampled(err, result.failures, "failed: ")
        print_sampled(err, map(str, found), "")
    if result.failures:
        raise OperationFailed(f"{len(result.failures)} partition(s) of the plan failed")
    if not result.ok:
        raise OperationFailed(
            f"the plan is not complete yet: {counts['in_progress']} in progress, "
            f"{counts['not_started']} not started; "
            + (f"wait, or run 'kadmin reassign --plan {plan_path}' to submit the rest"
               if result.not_started else
               "every partition is submitted: wait for the controller (kadmin status shows "
               "what still moves)"))
