"""The cluster a command reads: a snapshot (file or folder) or ZooKeeper read live, the
ZooKeeper connection with this invocation's security options, and partition sizes."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kadmin import sizes, snapshots
from kadmin.model import ClusterSnapshot, InvalidInput
from kadmin.zk import security

if TYPE_CHECKING:  # kazoo is imported when a command connects: offline commands start without
    from kazoo.client import KazooClient

    from kadmin.zk import session


class Warn(Protocol):
    """Where an operation sends a warning: one line, and the items it names (sampled by the
    caller, a line each)."""

    def __call__(self, line: str, details: Iterable[str] = ()) -> None: ...


def no_warnings(line: str, details: Iterable[str] = ()) -> None:
    """A :class:`Warn` for callers that show no warnings."""


@dataclass(frozen=True)
class Connection:
    """A ZooKeeper connection as the operator gave it (``-z`` and the timeouts)."""

    zookeeper: str | None
    connect_timeout: float = 10.0
    session_timeout: float = 30.0
    limit: tuple[float, str] | None = None
    """The command's own bound on all its requests, connecting included (a monotonic
    deadline and the limit it stands for, as ``--timeout`` of a reader gives it: see
    :meth:`within`); None: each request bounded on its own."""

    def within(self, timeout: float | None) -> Connection:
        """This connection bounded by ``timeout`` seconds from now (None: as it is)."""
        if timeout is None:
            return self
        return dataclasses.replace(self, limit=(time.monotonic() + timeout,
                                                f"{timeout:g}s, the --timeout"))


@dataclass(frozen=True)
class ClusterSource:
    """``--cluster FILE`` or ``-z``: exactly one must be given."""

    cluster: Path | None = None
    connection: Connection = Connection(None)
    skip_unreadable: bool = False
    """With -z: go on without the znodes that cannot be decoded (each named in a warning)."""
    sizes: Path | None = None
    """``--sizes FILE``: partition sizes (kafka-log-dirs.sh --describe) fitted to the cluster."""

    @property
    def given(self) -> bool:
        return self.cluster is not None or bool(self.connection.zookeeper)


_security_options: ContextVar[security.SecuritySources | None] = ContextVar(
    "kadmin_zk_security_options", default=None)
"""Set by the root command's callback at every invocation. Not the Click context object:
Typer 0.2x runs a private copy of Click, whose current context Click's API cannot see."""


def use_security_options(options: security.SecuritySources) -> None:
    """The security options every ZooKeeper connection of this invocation uses."""
    _security_options.set(options)


def zk_settings(zookeeper: str | None, connect_timeout: float = 10.0,
                session_timeout: float = 30.0) -> session.ZkSettings:
    """The settings of a connection, credential files read: a bad connect string is an input
    error before any I/O."""
    from kadmin.zk import session
    if not zookeeper:
        raise InvalidInput("no ZooKeeper given: use -z/--zookeeper host:port[/chroot] "
                           "or set KADMIN_ZOOKEEPER")
    session.parse_connect_string(zookeeper)
    sources = _security_options.get() or security.SecuritySources()
    return session.ZkSettings(connect=zookeeper, connect_timeout=connect_timeout,
                              session_timeout=session_timeout,
                              security=security.from_sources(sources))


@contextmanager
def connected(connection: Connection, run_limit: tuple[float, str] | None = None
              ) -> Iterator[KazooClient]:
    """A ZooKeeper session, its settings (and credential files) read once. With ``run_limit``
    (a monotonic deadline and the limit it stands for; else the connection's own ``limit``) no
    request, the connect included, waits past the deadline."""
    from kadmin.zk import session
    with session.session(zk_settings(connection.zookeeper, connection.connect_timeout,
                                     connection.session_timeout),
                         run_limit=run_limit or connection.limit) as client:
        yield client


def read_cluster(source: ClusterSource, warn: Warn, *, states: bool = True) -> ClusterSnapshot:
    """The snapshot from ``--cluster`` or read live from ``-z``; exactly one must be given.
    ``states=False`` skips reading the per-partition states live (one znode each) when only the
    assignment matters; a snapshot is always read whole, states checked too.

    A znode read live that cannot be decoded stops the command (exit 1, naming it), because
    whatever it plans or writes would be made as if that topic, broker or state did not exist;
    ``skip_unreadable`` goes on without them, each named in one warning."""
    if source.cluster is not None and source.connection.zookeeper:
        raise InvalidInput("give either --cluster FILE or -z/--zookeeper, not both")
    if source.cluster is not None:
        return snapshots.read_snapshot(source.cluster)
    if not source.connection.zookeeper:
        raise InvalidInput("no cluster given: use --cluster FILE or -z/--zookeeper host:port")
    from kadmin.zk import reader
    with connected(source.connection) as client:
        live = reader.with_min_insync(client, reader.read_cluster(client, states=states))
    if live.unreadable and not source.skip_unreadable:
        raise reader.unreadable_error(
            live.unreadable, "nothing was planned or written (--skip-unreadable goes on without "
                             "them)")
    if live.unreadable:
        warn(f"skipped {len(live.unreadable)} znode(s) that cannot be decoded "
             "(--skip-unreadable):", (f"{path}: {reason}" for path, reason in live.unreadable))
    return live.snapshot


def optional_cluster(source: ClusterSource, warn: Warn, *, states: bool = True
                     ) -> ClusterSnapshot | None:
    """:func:`read_cluster` when ``--cluster`` or ``-z`` is given, else None (offline)."""
    return read_cluster(source, warn, states=states) if source.given else None


def partition_sizes(path: Path | None, snapshot: ClusterSnapshot, warn: Warn,
                    topics_read: Collection[str] | None = None) -> sizes.PartitionSizes | None:
    """``--sizes FILE`` fitted to ``snapshot`` (else the snapshot's own sizes, else None); the
    partitions counted as the median and those ignored go to ``warn``, a line each
    (``topics_read``: the topics ``snapshot`` holds, when not the whole cluster)."""
    found = sizes.resolve(path, snapshot)
    if found is not None:
        for line in sizes.warnings(found, topics_read):
            warn(line)
    return found
