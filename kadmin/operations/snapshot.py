"""``cluster snapshot``: the cluster's brokers, topics and partition states (and, given, the
partition sizes) as a snapshot file or folder."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kadmin import files, snapshots
from kadmin.model import ClusterSnapshot, InvalidInput
from kadmin.operations.planfiles import Stdout, to_stdout
from kadmin.operations.source import ClusterSource, Warn, partition_sizes, read_cluster
from kadmin.sizes import PartitionSizes


@dataclass(frozen=True)
class SnapshotRequest:
    out: Path
    """The file or folder to write (``-``: the JSON file on stdout)."""
    fmt: Literal["json", "dir"] = "json"
    force: bool = False


@dataclass(frozen=True)
class Taken:
    """What ``cluster snapshot`` wrote."""

    path: Path
    fmt: str
    brokers: int
    topics: int
    partitions: int


def take(request: SnapshotRequest, source: ClusterSource, stdout: Stdout, warn: Warn) -> Taken:
    """The cluster ``source`` names (with ``source.sizes``: carrying those partition sizes)
    written as a snapshot file or folder."""
    check_output(request.out, request.fmt)
    data = read_cluster(source, warn)
    if source.sizes is not None:
        data = with_sizes(data, partition_sizes(source.sizes, data, warn))
    write(data, request.out, request.fmt, force=request.force, stdout=stdout)
    return Taken(request.out, request.fmt, len(data.brokers), len(data.topics),
                 data.partition_count)


def with_sizes(snapshot: ClusterSnapshot, found: PartitionSizes | None) -> ClusterSnapshot:
    """The snapshot carrying the measured partition sizes (none found: no sizes)."""
    return dataclasses.replace(snapshot, sizes=found.measured if found else {})


def check_output(out_path: Path, fmt: str) -> None:
    """A snapshot folder cannot go to stdout."""
    if to_stdout(out_path) and fmt == "dir":
        raise InvalidInput("--out -: a snapshot folder cannot go to stdout; name a folder")


def write(snapshot: ClusterSnapshot, out_path: Path, fmt: Literal["json", "dir"], *,
          force: bool, stdout: Stdout) -> None:
    """The snapshot as a JSON file (``-``: to ``stdout``) or a snapshot folder."""
    if to_stdout(out_path):
        stdout([files.dumps_json(snapshots.snapshot_to_document(snapshot)).decode()])
    else:
        snapshots.write_snapshot(snapshot, out_path, fmt=fmt, force=force)
