"""``kadmin cluster snapshot``: a cluster written as a snapshot file or folder."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from kadmin.cli.common import (
    ClusterOpt,
    Connection,
    FolderSyntax,
    JsonOpt,
    ReadTimeoutOpt,
    SizesOpt,
    SkipUnreadableOpt,
    cluster_source,
    connects,
    output_path,
    stdout_is_data,
    warn,
    write_stdout,
)
from kadmin.cli.render import summary
from kadmin.model import InvalidInput
from kadmin.operations import snapshot as snapshotting

app = typer.Typer(help="Read a cluster.", no_args_is_help=True,
                   rich_markup_mode=None)


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
    timeout: ReadTimeoutOpt = None,
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
    taken = snapshotting.take(
        snapshotting.SnapshotRequest(out_path, fmt.value, force),
        cluster_source(cluster, zk.within(timeout), skip_unreadable, sizes_path), write_stdout,
        warn)
    summary(f"{taken.brokers} broker(s), {taken.topics} topic(s), "
            f"{taken.partitions} partition(s) -> {taken.path}",
            {"snapshot": str(taken.path), "format": taken.fmt, "brokers": taken.brokers,
             "topics": taken.topics, "partitions": taken.partitions},
            json_output, to_stderr=to_stdout)
