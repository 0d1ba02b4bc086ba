"""``kadmin spark plan`` and ``kadmin spark rebalance``: the bulk planners on Spark (local[*] by
default)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin import placement, plans
from kadmin.balance.rebalance import Rebalance
from kadmin.cli import render
from kadmin.cli.common import (
    JsonOpt,
    JuteMaxBufferOpt,
    MaxZnodeBytesOpt,
    named_output,
    out,
    split_ints,
    split_names,
)
from kadmin.cli.execute import BatchSizeOpt
from kadmin.cli.plan import TopicsFileOpt, TopicsOpt, topics_to_move
from kadmin.cli.rebalance import (
    AllTopicsOpt,
    BrokersOpt,
    LeadersOpt,
    MaxMovesOpt,
    RackOpt,
    RemoveBrokersOpt,
)
from kadmin.files import read_json
from kadmin.model import InvalidInput

app = typer.Typer(help="Plan at scale with PySpark.", no_args_is_help=True)

ClusterDirOpt = Annotated[Path, typer.Option(
    "--cluster", help="Snapshot folder (brokers.json, topics.jsonl); see `kadmin cluster "
                      "snapshot --format dir`.")]
OutDirOpt = Annotated[Path, typer.Option("--out", parser=named_output,
                                          help="Output folder (batch files + manifest).")]
MasterOpt = Annotated[str, typer.Option("--master", help="Spark master URL.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output folder.")]
VerboseOpt = Annotated[bool, typer.Option(
    "--verbose", help="Show Spark's own log (log4j, JVM notices) instead of kadmin's progress.")]


def _selection(topics: str | None, topics_file: Path | None, all_topics: bool,
               default_all: bool) -> list[str] | None:
    """The selected topics (None: all): one of --topics, --topics-file and --all-topics, or
    none of them when every topic is the default."""
    given = sum([topics is not None, topics_file is not None, all_topics])
    if given > 1 or (given == 0 and not default_all):
        raise InvalidInput("choose exactly one of --topics, --topics-file and --all-topics")
    if topics_file is not None:
        return topics_to_move(read_json(topics_file), str(topics_file))
    return split_names(topics, "--topics") if topics is not None else None


@app.command("plan")
def plan(
    cluster: ClusterDirOpt,
    out_dir: OutDirOpt,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: Annotated[bool, typer.Option("--all-topics")] = False,
    brokers: Annotated[str | None, typer.Option("--brokers")] = None,
    strategy: Annotated[placement.Strategy, typer.Option("--strategy")]
    = placement.Strategy.ROUNDROBIN,
    replication_factor: Annotated[int | None, typer.Option("--replication-factor")] = None,
    start_index: Annotated[int | None, typer.Option("--start-index", min=0)] = None,
    start_partition: Annotated[int, typer.Option("--start-partition", min=0)] = 0,
    disable_rack_aware: Annotated[bool, typer.Option("--disable-rack-aware")] = False,
    master: MasterOpt = "local[*]",
    batch_size: BatchSizeOpt = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    force: ForceOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Compute a balanced plan for a very large cluster on Spark, written as znode-sized batch
    files plus a manifest that `kadmin reassign --plan` executes.

    Example: kadmin spark plan --cluster snap/ --all-topics --out plans/big/
    """
    from kadmin.spark.job import run_plan  # pyspark starts a JVM: only when this command runs

    selected = _selection(topics, topics_file, all_topics, default_all=False)
    plans.check_znode_limit(max_znode_bytes, jute_maxbuffer)
    options = placement.PlacementOptions(
        strategy=strategy, replication_factor=replication_factor, start_index=start_index,
        start_partition=start_partition, rack_aware=not disable_rack_aware)
    with render.planner_progress() as progress:
        manifest = run_plan(cluster, out_dir, topics=selected,
                            brokers=split_ints(brokers, "--brokers") if brokers else None,
                            options=options, master=master, batch_size=batch_size,
                            max_znode_bytes=max_znode_bytes, force=force, verbose=verbose,
                            progress=None if verbose else progress)
    out.print(f"{manifest.partitions} partition(s) in {len(manifest.batches)} batch file(s) "
              f"-> {out_dir}/manifest.json", markup=False)


@app.command("rebalance")
def rebalance(
    cluster: ClusterDirOpt,
    out_dir: OutDirOpt,
    topics: TopicsOpt = None,
    topics_file: TopicsFileOpt = None,
    all_topics: AllTopicsOpt = False,
    brokers: BrokersOpt = None,
    remove_brokers: RemoveBrokersOpt = None,
    leaders: LeadersOpt = True,
    max_moves: MaxMovesOpt = None,
    disable_rack_aware: RackOpt = False,
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
    from kadmin.spark.rebalance import Options, run_rebalance  # starts a JVM: only here

    plans.check_znode_limit(max_znode_bytes, jute_maxbuffer)
    options = Options(
        topics=_selection(topics, topics_file, all_topics, default_all=True),
        brokers=split_ints(brokers, "--brokers") if brokers is not None else None,
        remove=split_ints(remove_brokers, "--remove-brokers") if remove_brokers is not None
        else None,
        leaders=leaders, max_moves=max_moves, rack_aware=not disable_rack_aware)
    with render.planner_progress() as progress:
        manifest = run_rebalance(cluster, out_dir, options, master=master,
                                 batch_size=batch_size, max_znode_bytes=max_znode_bytes,
                                 force=force, verbose=verbose,
                                 progress=None if verbose else progress)
    result = Rebalance({}, manifest.replica_moves, manifest.lower_bound, manifest.leader_changes,
                       manifest.planned.unplaced, manifest.planned.partial)
    render.rebalanced(render.Rebalanced(result, manifest.topics, manifest.partitions,
                                        manifest.before, manifest.after, resized=False,
                                        drained={b: (n, None)
                                                 for b, n in manifest.drained.items()},
                                        limits=None if max_moves is None
                                        else f"--max-moves {max_moves}"),
                      out_dir / "manifest.json", json_output, folder=True)
