"""``kadmin cluster snapshot`` and ``kadmin status``: reading a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from kadmin.cli import render
from kadmin.cli.common import (
    ClusterOpt,
    ConnectTimeoutOpt,
    JsonOpt,
    SessionTimeoutOpt,
    SizesOpt,
    SkipUnreadableOpt,
    ZookeeperOpt,
    connection,
    info,
    load_cluster,
    output_path,
    partition_sizes,
    stdout_is_data,
    write_stdout,
)
from kadmin.operations import snapshot as snapshotting
from kadmin.operations import status as statuses

app = typer.Typer(help="Read a cluster.", no_args_is_help=True)


@app.command()
def snapshot(
    out_path: Annotated[Path, typer.Option("--out", "-o", parser=output_path,
                                           help="Snapshot file or folder to write ('-': the JSON "
                                                "file on stdout).")],
    zookeeper: ZookeeperOpt = None,
    cluster: ClusterOpt = None,
    fmt: Annotated[str, typer.Option(
        "--format", help="json: one file; dir: brokers.json + topics.jsonl (+ states.jsonl), "
                         "for very large clusters and `kadmin spark plan`.")] = "json",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing snapshot.")] = False,
    sizes_path: SizesOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write the cluster's brokers, topics and partition states as a snapshot; --sizes embeds
    partition sizes (kafka-log-dirs.sh --describe output) so that rehearsals know them.

    Reads ZooKeeper with -z, or converts an existing snapshot with --cluster. Example:
    kadmin cluster snapshot -z zk1:2181/kafka --format dir --out snap/ --sizes log-dirs.txt
    """
    if fmt not in ("json", "dir"):
        raise typer.BadParameter("must be json or dir", param_hint="--format")
    to_stdout = stdout_is_data(out_path)
    snapshotting.check_output(out_path, fmt)
    data = load_cluster(cluster, zookeeper, connect_timeout, session_timeout,
                        skip_unreadable=skip_unreadable)
    if sizes_path is not None:
        found = partition_sizes(sizes_path, data)
        data = snapshotting.with_sizes(data, found)
    style: Literal["json", "dir"] = "dir" if fmt == "dir" else "json"
    snapshotting.write(data, out_path, style, force=force, stdout=write_stdout)
    info(f"{len(data.brokers)} broker(s), {len(data.topics)} topic(s), "
         f"{data.partition_count} partition(s) -> {out_path}", to_stderr=to_stdout)


def status(
    zookeeper: ZookeeperOpt = None,
    json_output: JsonOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    session_timeout: SessionTimeoutOpt = 30.0,
) -> None:
    """Controller, live brokers, partition health and admin work in progress.

    Example: kadmin status -z zk1:2181/kafka
    """
    render.status(statuses.status(connection(zookeeper, connect_timeout, session_timeout)),
                  json_output)
