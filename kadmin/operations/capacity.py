"""``--capacity FILE``: the capacity file read, and parsed by the pure
:mod:`kadmin.balance.capacity`; the brokers it names that the cluster lacks, reported."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from kadmin import files
from kadmin.balance.capacity import Capacities, parse_capacities
from kadmin.model import ClusterSnapshot
from kadmin.operations.source import Warn


def read_capacities(path: Path) -> Capacities:
    """``--capacity FILE``: either format (see :mod:`kadmin.balance.capacity`)."""
    return parse_capacities(files.read_json(path), str(path))


def warn_strangers(capacities: Capacities | None, brokers: Collection[int] | ClusterSnapshot,
                   warn: Warn) -> None:
    """:meth:`Capacities.strangers`'s warning, if any, to ``warn`` (none without a capacity
    file); ``brokers``: the cluster's, or a snapshot (:func:`cluster_brokers`)."""
    if capacities is None:
        return
    strangers = capacities.strangers(cluster_brokers(brokers) if isinstance(
        brokers, ClusterSnapshot) else brokers)
    if strangers is not None:
        warn(strangers)


def cluster_brokers(snapshot: ClusterSnapshot) -> set[int]:
    """The brokers of a cluster: registered, or holding replicas."""
    return set(snapshot.brokers) | {b for parts in snapshot.topics.values()
                                    for replicas in parts.values() for b in replicas}
