"""``kadmin demo``: the main job end to end on a sandbox, as an operator lives it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.common import (
    SERVING_JSON_HELP,
    BrokerCountOpt,
    ForceOpt,
    LatencyMsOpt,
    LatencyOpt,
    ParallelismOpt,
    PartitionsOpt,
    RackCountOpt,
    RfOpt,
    TopicCountOpt,
    count,
    latency_seconds,
    named_output,
    out,
    print_serving,
)
from kadmin.cli.render.execution import progress
from kadmin.cli.render.plan import validation_report
from kadmin.cli.render.rebalance import rebalanced
from kadmin.cli.render.status import status
from kadmin.operations.demo import DemoRequest, Executed, Started, Validated, run_demo
from kadmin.operations.rebalance import Rebalanced
from kadmin.operations.sandbox import SyntheticCluster


def demo(
    brokers: BrokerCountOpt = SyntheticCluster.brokers,
    racks: RackCountOpt = SyntheticCluster.racks,
    topics: TopicCountOpt = SyntheticCluster.topics,
    partitions: PartitionsOpt = SyntheticCluster.partitions,
    replication_factor: RfOpt = SyntheticCluster.replication_factor,
    latency: LatencyOpt = 0.15,
    latency_ms: LatencyMsOpt = None,
    parallelism: ParallelismOpt = 25,
    batch_size: Annotated[int, typer.Option(
        "--batch-size", parser=count(1), help="Partitions per znode when the plan runs.")] = 60,
    out_dir: Annotated[Path, typer.Option("--out", "-o", parser=named_output,
                                          help="Folder the plans go to.")] = Path("plans"),
    force: ForceOpt = False,
    json_output: Annotated[bool, typer.Option(
        "--json", help=SERVING_JSON_HELP + " No story is told; the exit code says whether "
                                           "every step succeeded.")] = False,
) -> None:
    """The main job end to end on the embedded default, as an operator lives it: a cluster that
    just got a new broker, a retired topic deleted, a rebalance plan with the fewest moves, its
    validation, its execution with progress and a preferred replica election at the end, and the
    status showing the new broker carrying its share and every topic even."""
    request = DemoRequest(SyntheticCluster(brokers, racks, topics, partitions, replication_factor),
                          latency_seconds(latency, latency_ms), parallelism, batch_size, out_dir,
                          force)
    failed = False
    for heading, result in run_demo(request, lambda: progress(as_json=False)):
        if json_output:
            if isinstance(result, Started):
                print_serving(result.connect_string, result.zookeeper_pid)
            failed = failed or (isinstance(result, Executed) and not result.ok)
            continue
        if heading is not None:
            out.rule(heading)
        if isinstance(result, Started):
            out.print(f"embedded ZooKeeper + simulated controller at {result.connect_string}",
                      markup=False)
        elif isinstance(result, Executed):
            out.print(f"{result.what}: {'done' if result.ok else 'failed'}", markup=False)
            failed = failed or not result.ok
        elif isinstance(result, Rebalanced):
            rebalanced(result, as_json=False)
        elif isinstance(result, Validated):
            validation_report(result.report, str(result.path), as_json=False)
        else:
            status(result, as_json=False)
    if failed:
        raise typer.Exit(1)
