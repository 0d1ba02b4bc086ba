"""``kadmin cluster snapshot`` and ``kadmin status``: reading a cluster."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli import render
from kadmin.cli.common import (
    CapacityOpt,
    ClusterOpt,
    Connection,
    FolderSyntax,
    JsonOpt,
    SizesOpt,
    SkipUnreadableOpt,
    connects,
    load_cluster,
    output_path,
    partition_sizes,
    stdout_is_data,
    warn,
    write_stdout,
)
from kadmin.model import InvalidInput
from kadmin.operations import snapshot as snapshotting
from kadmin.operations import status as statuses

app = typer.Typer(help="Read a cluster.", no_args_is_help=True)


class SnapshotFormat(str, Enum):
    """``cluster snapshot --format``: one JSON file, or a folder of JSON Lines files."""

    JSON = "json"
    DIR = "dir"


@app.command()
@connects
def snapshot(
    zk: Connection,
    out_path: Annotated[Path, typer.Option("--out", "-o", parser=output_path,
                                           help="Snapshot file or folder to write ('-': the JSON "
                                                "file on stdout).")],
    cluster: ClusterOpt = None,
    fmt: Annotated[SnapshotFormat, typer.Option(
        "--format", help="json: one file; dir: brokers.json + topics.jsonl (+ states.jsonl), "
                         "for very large clusters and `kadmin spark plan`.")
    ] = SnapshotFormat.JSON,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing snapshot.")] = False,
    sizes_path: SizesOpt = None,
    json_output: JsonOpt = False,
    skip_unreadable: SkipUnreadableOpt = False,
) -> None:
    """Write the cluster's brokers, topics and partition states as a snapshot; --sizes embeds
    partition sizes (kafka-log-dirs.sh --describe output) so that rehearsals know them.

    Reads ZooKeeper with -z, or converts an existing snapshot with --cluster. Example:
    kadmin cluster snapshot -z zk1:2181/kafka --format dir --out snap/ --sizes log-dirs.txt
    """
    to_stdout = stdout_is_data(out_path)
    if fmt is SnapshotFormat.JSON and isinstance(out_path, FolderSyntax):
        raise InvalidInput(f"--out {out_path}/ names a folder: name the snapshot file (or give "
                           "--format dir for a snapshot folder)")
    snapshotting.check_output(out_path, fmt.value)
    data = load_cluster(cluster, zk, skip_unreadable=skip_unreadable)
    if sizes_path is not None:
        found = partition_sizes(sizes_path, data)
        data = snapshotting.with_sizes(data, found)
    snapshotting.write(data, out_path, fmt.value, force=force, stdout=write_stdout)
    render.summary(f"{len(data.brokers)} broker(s), {len(data.topics)} topic(s), "
                   f"{data.partition_count} partition(s) -> {out_path}",
                   {"snapshot": str(out_path), "format": fmt.value, "brokers": len(data.brokers),
                    "topics": len(data.topics), "partitions": data.partition_count},
                   json_output, to_stderr=to_stdout)


@connects
def status(
    zk: Connection,
    sizes_path: Annotated[Path | None, typer.Option(
        "--sizes", help="Partition sizes: the output of kafka-log-dirs.sh --describe (header "
                        "lines and all) or its JSON; adds the bytes on each broker.")] = None,
    capacity: CapacityOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Controller, live brokers, partition health and admin work in progress; with --capacity
    each broker's capacity and share of the replicas, and with --sizes too the part of its
    capacity in use (brokers above it are named).

    Example: kadmin status -z zk1:2181/kafka --sizes log-dirs.txt --capacity capacity.json
    """
    render.status(statuses.status(zk, sizes_path, capacity, warn), json_output)
