"""``kadmin spark plan`` and ``kadmin spark rebalance``: the bulk planners on Spark (local[*] by
default)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from kadmin import placement, plans
from kadmin.balance.part import PRICE_ROUNDS
from kadmin.cli.common import (
    AllTopicsDefaultOpt,
    AllTopicsOpt,
    BatchSizeOpt,
    BrokersOpt,
    CapacityOpt,
    EvenTopicsOpt,
    JsonOpt,
    JuteMaxBufferOpt,
    LeadersOpt,
    MaxMovesOpt,
    MaxZnodeBytesOpt,
    PlacementRfOpt,
    PriceRoundsOpt,
    RackOpt,
    RemoveBrokersOpt,
    StartIndexOpt,
    StartPartitionOpt,
    StrategyOpt,
    TargetBrokersOpt,
    TopicsFileOpt,
    TopicsOpt,
    TopicSpreadOpt,
    named_output,
    warn,
)
from kadmin.cli.render import summary
from kadmin.cli.render.rebalance import rebalanced
from kadmin.cli.render.spark import planner_progress
from kadmin.embedded import SPARK_EXTRA_HINT
from kadmin.model import OperationFailed
from kadmin.operations.generate import SparkPlanRequest, SparkRun, spark_generate
from kadmin.operations.rebalance import spark_rebalance
from kadmin.operations.selection import TopicSelection, optional_ints
from kadmin.requests import RebalanceRequest


@contextmanager
def needs_pyspark() -> Iterator[None]:
    """PySpark is an extra (``kadmin[spark]``): without it, one line saying how to get it."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in ("pyspark", "py4j"):
            raise
        raise OperationFailed(f"kadmin spark needs PySpark, which is not installed "
                              f"({SPARK_EXTRA_HINT})") from None


app = typer.Typer(help="Plan at scale with PySpark.", no_args_is_help=True,
                   rich_markup_mode=None)

ClusterDirOpt = Annotated[Path, typer.Option(
    "--cluster", help="Snapshot folder (brokers.json, topics.jsonl); see `kadmin cluster "
                      "snapshot --format dir`.")]
OutDirOpt = Annotated[Path, typer.Option("--out", "-o", parser=named_output,
                                          help="Output folder (batch files + manifest).")]
MasterOpt = Annotated[str, typer.Option("--master", help="Spark master URL.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output folder.")]
VerboseOpt = Annotated[bool, typer.Option(
    "--verbose", help="Show Spark's own log (log4j, JVM notices) instead of kadmin's progress.")]


@app.command("plan")
def plan(
    cluster: ClusterDirOpt,
    out_dir: OutDirOpt,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    brokers: TargetBrokersOpt = None,
    strategy: StrategyOpt = placement.Strategy.ROUNDROBIN,
    replication_factor: PlacementRfOpt = None,
    start_index: StartIndexOpt = None,
    start_partition: StartPartitionOpt = 0,
    disable_rack_aware: RackOpt = False,
    master: MasterOpt = "local[*]",
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Compute a balanced plan for a very large cluster on Spark, written as znode-sized batch
    files plus a manifest that `kadmin reassign --plan` executes.

    Example: kadmin spark plan --cluster snap/ --all-topics --out plans/big/
    """
    options = placement.PlacementOptions(
        strategy=strategy, replication_factor=replication_factor, start_index=start_index,
        start_partition=start_partition, rack_aware=not disable_rack_aware)
    request = SparkPlanRequest(cluster, out_dir, TopicSelection(topics, topics_file, all_topics),
                               brokers, options)
    with needs_pyspark(), planner_progress() as progress:
        planned = spark_generate(request, SparkRun(master, batch_size, max_znode_bytes, force,
                                                   verbose, jute_maxbuffer=jute_maxbuffer),
                                 progress=None if verbose else progress)
    summary(f"{planned.partitions} partition(s) in {planned.batches} batch file(s) "
            f"-> {planned.manifest}",
            {"manifest": str(planned.manifest), "partitions": planned.partitions,
             "batches": planned.batches}, json_output)


@app.command("rebalance")
def rebalance(
    cluster: ClusterDirOpt,
    out_dir: OutDirOpt,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsDefaultOpt = False,
    brokers: BrokersOpt = None,
    remove_brokers: RemoveBrokersOpt = None,
    leaders: LeadersOpt = True,
    max_moves: MaxMovesOpt = None,
    disable_rack_aware: RackOpt = False,
    capacity: CapacityOpt = None,
    topic_spread: TopicSpreadOpt = None,
    even_topics: EvenTopicsOpt = True,
    price_rounds: PriceRoundsOpt = PRICE_ROUNDS,
    master: MasterOpt = "local[*]",
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    force: ForceOpt = False,
    json_output: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """`kadmin plan rebalance` for clusters too big for one machine: the fewest replica moves
    that balance replicas and preferred leaders, written as znode-sized batch files plus a
    manifest that `kadmin reassign --plan` executes.

    Example: kadmin spark rebalance --cluster snap/ --remove-brokers 7 --out plans/drain-7/
    """
    request = RebalanceRequest(
        TopicSelection(topics, topics_file, all_topics),
        optional_ints(brokers, "--brokers"), optional_ints(remove_brokers, "--remove-brokers"),
        leaders=leaders, max_moves=max_moves, rack_aware=not disable_rack_aware,
        capacity=capacity, topic_spread=topic_spread, even_topics=even_topics)
    with needs_pyspark(), planner_progress() as progress:
        figures = spark_rebalance(cluster, out_dir, request,
                                  SparkRun(master, batch_size, max_znode_bytes, force, verbose,
                                           price_rounds, jute_maxbuffer),
                                  progress=None if verbose else progress, warn=warn)
    rebalanced(figures, json_output)
