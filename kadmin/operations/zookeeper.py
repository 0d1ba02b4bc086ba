"""``kadmin zk serve``: a real ZooKeeper server from PySpark's bundled jars, up until the caller
lets it go."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kadmin.embedded import EmbeddedZooKeeper


@dataclass(frozen=True)
class ServeRequest:
    port: int = 2181
    """0 picks a free port."""
    data_dir: Path | None = None
    """Keep the data here; None: a temporary folder, removed at the end."""


@dataclass(frozen=True)
class Serving:
    """The server is up: where to reach it, and its process."""

    connect_string: str
    zookeeper_pid: int | None
    server: EmbeddedZooKeeper
    """The server itself, for the caller to serve until a stop signal."""


@contextmanager
def serving(request: ServeRequest) -> Iterator[Serving]:
    """The ZooKeeper of ``request``, up for the block, stopped after it (its temporary folder
    removed). A data folder that cannot be written is refused before it starts."""
    with EmbeddedZooKeeper(port=request.port, data_dir=request.data_dir) as server:
        yield Serving(server.connect_string, server.pid, server)
