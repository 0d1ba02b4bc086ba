"""``kadmin spark plan``: the bulk planner on Spark (local[*] by default)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kadmin import placement, plans
from kadmin.cli.common import (
    JuteMaxBufferOpt,
    MaxZnodeBytesOpt,
    named_output,
    out,
    split_ints,
    split_names,
)
from kadmin.cli.plan import topics_to_move
from kadmin.files import read_json
from kadmin.model import InvalidInput

app = typer.Typer(help="Plan at scale with PySpark.", no_args_is_help=True)


@app.command("plan")
def plan(
    cluster: Annotated[Path, typer.Option("--cluster", help="Snapshot folder (brokers.json, "
                                          "topics.jsonl); see `kadmin cluster snapshot --format dir`.")],
    out_dir: Annotated[Path, typer.Option("--out", parser=named_output,
                                          help="Output folder (batch files + manifest).")],
    topics: Annotated[str | None, typer.Option("--topics")] = None,
    topics_file: Annotated[Path | None, typer.Option("--topics-file")] = None,
    all_topics: Annotated[bool, typer.Option("--all-topics")] = False,
    brokers: Annotated[str | None, typer.Option("--brokers")] = None,
    strategy: Annotated[placement.Strategy, typer.Option("--strategy")]
    = placement.Strategy.ROUNDROBIN,
    replication_factor: Annotated[int | None, typer.Option("--replication-factor")] = None,
    start_index: Annotated[int | None, typer.Option("--start-index", min=0)] = None,
    start_partition: Annotated[int, typer.Option("--start-partition", min=0)] = 0,
    disable_rack_aware: Annotated[bool, typer.Option("--disable-rack-aware")] = False,
    master: Annotated[str, typer.Option("--master", help="Spark master URL.")] = "local[*]",
    batch_size: Annotated[int, typer.Option("--batch-size", min=1)] = 1000,
    max_znode_bytes: MaxZnodeBytesOpt = 1_000_000,
    jute_maxbuffer: JuteMaxBufferOpt = plans.JUTE_MAXBUFFER,
    force: Annotated[bool, typer.Option("--force")] = False,
) -> None:
    """Compute a balanced plan for a very large cluster on Spark, written as znode-sized batch
    files plus a manifest that `kadmin reassign --plan` executes.

    Example: kadmin spark plan --cluster snap/ --all-topics --out plans/big/
    """
    from kadmin.spark.job import run_plan  # pyspark starts a JVM: only when this command runs

    if sum([topics is not None, topics_file is not None, all_topics]) != 1:
        raise InvalidInput("choose exactly one of --topics, --topics-file and --all-topics")
    plans.check_znode_limit(max_znode_bytes, jute_maxbuffer)
    selected = (None if all_topics else topics_to_move(read_json(topics_file), str(topics_file))
                if topics_file else split_names(topics, "--topics"))
    options = placement.PlacementOptions(
        strategy=strategy, replication_factor=replication_factor, start_index=start_index,
        start_partition=start_partition, rack_aware=not disable_rack_aware)
    manifest = run_plan(cluster, out_dir, topics=selected,
                        brokers=split_ints(brokers, "--brokers") if brokers else None,
                        options=options, master=master, batch_size=batch_size,
                        max_znode_bytes=max_znode_bytes, force=force)
    out.print(f"{manifest.partitions} partition(s) in {len(manifest.batches)} batch file(s) "
              f"-> {out_dir}/manifest.json", markup=False)
