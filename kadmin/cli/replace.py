"""``kadmin plan replace``: brokers replaced one for one, and its report."""

from __future__ import annotations

from typing import Annotated

import typer

from kadmin import files
from kadmin.cli import render
from kadmin.cli.common import (
    ClusterOpt,
    Connection,
    ForceOpt,
    JsonOpt,
    OutOpt,
    SkipUnreadableOpt,
    cluster_source,
    connects,
    err,
    out,
    warn,
    write_stdout,
)
from kadmin.model import listed
from kadmin.operations.generate import Output
from kadmin.operations.replace import Replaced, ReplaceRequest, replace
from kadmin.operations.selection import split_ints
from kadmin.operations.source import read_cluster


@connects
def plan_replace(
    zk: Connection,
    brokers: Annotated[str, typer.Option(
        "--broker", help="The brokers to replace, comma-separated (registered or not: a dead "
                         "broker's replicas move too).")],
    replacements: Annotated[str, typer.Option(
        "--with", help="Their replacements, comma-separated, in the same order: each replica "
                       "on the n-th --broker moves to the n-th --with, in the same position of "
                       "its list.")],
    allow_unregistered: Annotated[bool, typer.Option(
        "--allow-unregistered", help="Plan onto replacements not registered in /brokers/ids "
                                     "yet (the plan then validates as a file only).")] = False,
    cluster: ClusterOpt = None,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Replace brokers one for one: every replica on a replaced broker moves to its
    replacement in the same position of its list (so the replacement leads what it led);
    nothing else moves. Writes the plan and its rollback; a replacement in another rack is a
    warning.

    Example: kadmin plan replace --broker 3 --with 7 -z zk1:2181/kafka -o plans/replace-3.json;
    then kadmin reassign --plan plans/replace-3.json -z zk1:2181/kafka --elect
    """
    request = ReplaceRequest(tuple(split_ints(brokers, "--broker")),
                             tuple(split_ints(replacements, "--with")), allow_unregistered)
    snapshot = read_cluster(cluster_source(cluster, zk, skip_unreadable), warn, states=False)
    done = replace(snapshot, request, Output(out_path, force, write_stdout))
    _report(done, json_output)


def _report(done: Replaced, as_json: bool) -> None:
    r, written = done.result, done.written
    rollback = files.sibling(written, ".rollback.json") if written else None
    for line in r.rack_changes:
        warn(line)
    if done.unregistered:
        warn(f"broker(s) {listed(done.unregistered)} not registered: the moves wait for them")
    if as_json and (written or not r.plan.moves):  # else the plan went to stdout
        render.print_json({
            "plan": str(written) if written else None,
            "rollback": str(rollback) if rollback else None,
            "pairs": [{"broker": a, "with": b, "replicas": r.moved[a], "preferred_leader": r.led[a]}
                      for a, b in done.pairs.items()],
            "partitions": len(r.plan.moves), "rack_changes": list(r.rack_changes)})
        return
    console = out if written or not r.plan.moves else err
    if not r.plan.moves:
        console.print(f"nothing to move: no replica on broker(s) {listed(done.pairs)}; no plan "
                      "written", markup=False)
        return
    console.print(f"{len(r.plan.moves)} partition(s) to move: " + ", ".join(
        f"{a} -> {b}: {r.moved[a]} replica(s), {r.led[a]} preferred leader(s)"
        for a, b in done.pairs.items()), markup=False)
    if written:
        console.print(f"plan {written}, rollback {rollback} (the way back)", markup=False)
        console.print(f"next: kadmin reassign --plan {written} --elect", markup=False)
