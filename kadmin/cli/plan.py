"""``kadmin plan``: generate, validate and inspect plan files, offline or against a live cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin import files, placement
from kadmin.cli import render
from kadmin.cli.common import (
    AllTopicsDefaultOpt,
    AllTopicsOpt,
    BrokersOpt,
    ClusterOpt,
    ConnectTimeoutOpt,
    ForceOpt,
    JsonOpt,
    LeadersOpt,
    MaxMovesOpt,
    OutOpt,
    RackOpt,
    RemoveBrokersOpt,
    SessionTimeoutOpt,
    SizesOpt,
    SkipUnreadableOpt,
    TopicsFileOpt,
    TopicsOpt,
    ZookeeperOpt,
    info,
    load_cluster,
    out,
    partition_sizes,
    stdout_is_data,
    write_stdout,
)
from kadmin.model import PlanKind
from kadmin.operations import generate as generating
from kadmin.operations import validate as validating
from kadmin.operations.generate import GenerateRequest, Output
from kadmin.operations.rebalance import RebalanceRequest, rebalance
from kadmin.operations.selection import TopicSelection, optional_ints

app = typer.Typer(help="Generate, validate and inspect plan files.", no_args_is_help=True)


@app.command()
def generate(
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    brokers: Annotated[str | None, typer.Option(
        "--brokers", help="Target broker ids, comma-separated (default: every broker).")] = None,
    strategy: Annotated[placement.Strategy, typer.Option(
        "--strategy", help="roundrobin: the seed's rule; kafka: AdminUtils (rack-aware).")
    ] = placement.Strategy.ROUNDROBIN,
    replication_factor: Annotated[int | None, typer.Option(
        "--replication-factor", help="Default: every partition keeps its own replica count.")] = None,
    start_index: Annotated[int | None, typer.Option(
        "--start-index", min=0, help="roundrobin: first counter value; kafka: fixedStartIndex.")
    ] = None,
    start_partition: Annotated[int, typer.Option(
        "--start-partition", min=0, help="kafka: startPartitionId.")] = 0,
    disable_rack_aware: Annotated[bool, typer.Option("--disable-rack-aware")] = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Generate a balanced reassignment plan and its rollback file.

    Example: kadmin plan generate --cluster cluster.json --all-topics --strategy kafka
    """
    options = placement.PlacementOptions(
        strategy=strategy, replication_factor=replication_factor, start_index=start_index,
        start_partition=start_partition, rack_aware=not disable_rack_aware)
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                                states=False, skip_unreadable=skip_unreadable)
        made = generating.generate(
            snapshot, GenerateRequest(TopicSelection(topics, topics_file, all_topics), brokers,
                                      options),
            Output(out_path, force, write_stdout))
    # only --replication-factor changes one; the plan must then be run with --allow-rf-change
    rf_changes = 0 if replication_factor is None else made.rf_changes
    render.generated(made, rf_changes, json_output, to_stderr=stdout_is_data(out_path))


@app.command()
def validate(
    plan_file: Annotated[Path, typer.Argument(
        help="Plan file to check, or a `kadmin spark` output folder or its manifest.json.")],
    kind: Annotated[PlanKind | None, typer.Option("--kind", help="Default: detected.")] = None,
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    allow_rf_change: Annotated[bool, typer.Option("--allow-rf-change")] = False,
    allow_internal: Annotated[bool, typer.Option("--allow-internal")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too.")] = False,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Check a plan against its schema and, with --cluster or -z, the cluster (the CI dry run).

    Exit 0 when valid, 2 when not. Example: kadmin plan validate plans/x.json --cluster c.json
    """
    report = validating.validate(
        validating.ValidateRequest(plan_file, kind, allow_rf_change, allow_internal),
        lambda: load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                             skip_unreadable=skip_unreadable)
        if cluster is not None or zookeeper else None)
    render.validation_report(report, str(plan_file), json_output, strict=strict)
    if not report.ok(strict):
        raise typer.Exit(2)


@app.command()
def stats(
    plan_file: Annotated[Path, typer.Argument(
        help="Reassignment plan file, or a `kadmin spark` output folder or its manifest.json.")],
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    sizes_path: SizesOpt = None,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Per-broker replica and leader counts before and after a reassignment plan; with
    partition sizes also bytes moved and bytes per broker.

    Example: kadmin plan stats plans/x.json --cluster cluster.json --sizes log-dirs.txt
    """
    snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout, states=False,
                            skip_unreadable=skip_unreadable)
    render.plan_stats(validating.stats(plan_file, snapshot, partition_sizes(sizes_path, snapshot)),
                      json_output)


@app.command()
def election(
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    all_topics: AllTopicsOpt = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write a preferred replica election plan for the given topics (or every partition)."""
    snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                            skip_unreadable=skip_unreadable)
    plan, written = generating.election(snapshot, TopicSelection(topics, None, all_topics),
                                        Output(out_path, force, write_stdout))
    if not plan.partitions:
        info("nothing to elect: the selected topics have no partitions; no plan written",
             to_stderr=stdout_is_data(out_path))
        return
    if written:
        out.print(f"{len(plan.partitions)} partition(s); plan {written}", markup=False)


@app.command()
def deletion(
    topics: Annotated[str, typer.Option("--topics", help="Comma-separated topics to delete.")],
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    allow_internal: Annotated[bool, typer.Option("--allow-internal")] = False,
    out_path: OutOpt = None,
    force: ForceOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write a topic deletion plan ({"version":1,"topics":[...]}), validated first."""
    plan = generating.deletion_plan(topics)
    snapshot = (load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                             skip_unreadable=skip_unreadable)
                if cluster is not None or zookeeper else None)
    written = generating.deletion(plan, snapshot, Output(out_path, force, write_stdout),
                                  allow_internal=allow_internal)
    if written:
        out.print(f"{len(plan.topics)} topic(s); plan {written}", markup=False)


@app.command("rebalance")
def plan_rebalance(
    cluster: ClusterOpt = None,
    zookeeper: ZookeeperOpt = None,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsDefaultOpt = False,
    brokers: BrokersOpt = None,
    remove_brokers: RemoveBrokersOpt = None,
    replication_factor: Annotated[int | None, typer.Option(
        "--replication-factor", min=1,
        help="Change the replication factor of the selected topics instead: an increase keeps "
             "every replica and the leader and adds replicas on the least loaded brokers; a "
             "decrease drops followers from the most loaded.")] = None,
    leaders: LeadersOpt = True,
    max_moves: MaxMovesOpt = None,
    max_leader_changes: Annotated[int | None, typer.Option(
        "--max-leader-changes", min=0, help="At most N partitions change preferred leader "
                                            "(moving a leader's replica counts).")] = None,
    disable_rack_aware: RackOpt = False,
    sizes_path: SizesOpt = None,
    balance: Annotated[str, typer.Option(
        "--balance", help="replicas: replica counts per broker with the fewest moves (the "
                          "default); bytes: bytes per broker within one largest partition of "
                          "each other, moving as few bytes as it finds (needs sizes).")
    ] = "replicas",
    out_path: OutOpt = None,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Balance replicas and preferred leaders with the fewest replica moves, and write the plan
    and its rollback file.

    Examples: kadmin plan rebalance -z zk1:2181/kafka (fix skew, or fill new brokers);
    kadmin plan rebalance -z zk1:2181/kafka --remove-brokers 5 (drain broker 5)
    """
    if balance not in ("replicas", "bytes"):
        raise typer.BadParameter("must be replicas or bytes", param_hint="--balance")
    request = RebalanceRequest(
        TopicSelection(topics, topics_file, all_topics),
        optional_ints(brokers, "--brokers"), optional_ints(remove_brokers, "--remove-brokers"),
        replication_factor=replication_factor, leaders=leaders, max_moves=max_moves,
        max_leader_changes=max_leader_changes, rack_aware=not disable_rack_aware,
        by_bytes=balance == "bytes")
    request.check()
    with files.gc_paused():  # millions of acyclic tuples and dicts: the collector only slows it
        snapshot = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                                states=False, skip_unreadable=skip_unreadable)
        figures = rebalance(snapshot, request, partition_sizes(sizes_path, snapshot),
                            Output(out_path, force, write_stdout))
    render.rebalanced(figures, json_output)
