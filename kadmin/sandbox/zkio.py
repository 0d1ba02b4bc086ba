"""Pipelined ZooKeeper I/O for the sandbox: one round trip's latency per window, not per znode.

This is what lets a 200,000-partition cluster load well within a minute and lets the simulated
controller rewrite thousands of znodes per tick.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import (
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.interfaces import IAsyncResult

from kadmin.model import OperationFailed
from kadmin.zk import session

T = TypeVar("T")

WINDOW = 2000
"""Requests in flight at once when pipelining: enough to hide the round trip, few enough to
keep kazoo's queues and the server's memory small."""

TX_OPS = 1000
TX_BYTES = 256 * 1024
"""Bounds of one transaction (ZooKeeper refuses requests over jute.maxbuffer, ~1 MB)."""

TX_WINDOW = 8
"""Transactions in flight at once."""

REPLY_TIMEOUT = 30.0
"""Longest wait for one reply; a server that is away longer counts as a connection loss."""

CONNECTION_ERRORS = (ConnectionLoss, SessionExpiredError, ConnectionClosedError,
                     OperationTimeoutError)


def reply(pending: IAsyncResult) -> Any:
    """The reply, or the ZooKeeper error it carries (NoNode, BadVersion, ...) as a value;
    connection trouble raises, because then nothing that follows can succeed either."""
    try:
        return session.reply(pending, time.monotonic() + REPLY_TIMEOUT)
    except CONNECTION_ERRORS:
        raise
    except KazooException as exc:
        return exc


def pipelined(client: KazooClient, requests: Iterable[Callable[[], IAsyncResult]],
              window: int = WINDOW) -> list[Any]:
    """Send ``requests`` in windows of ``window``; replies (or errors) in request order.

    ZooKeeper answers one session's requests in order, so once the last of a window has its
    reply all of them have: one wake-up per window instead of one per request, which matters
    when kazoo's I/O thread and this one share the GIL."""
    out: list[Any] = []
    pending = iter(requests)
    while in_flight := [request() for request in itertools.islice(pending, window)]:
        in_flight[-1].wait(REPLY_TIMEOUT)
        out.extend(reply(result) for result in in_flight)
    return out


def expect(results: Sequence[Any], what: Sequence[str], ok: tuple[type[Exception], ...] = ()
           ) -> None:
    """Raise the first unexpected error of a pipelined batch, naming its znode."""
    for path, result in zip(what, results, strict=True):
        if isinstance(result, Exception) and not isinstance(result, ok):
            raise OperationFailed(f"{path}: {type(result).__name__}") from result


def delete_tree(client: KazooClient, root: str) -> None:
    """``rmr``, pipelined level by level: a topic with thousands of partitions goes in a few
    round trips (kazoo's ``delete(recursive=True)`` makes two per znode)."""
    levels = [[root]]
    while levels[-1]:
        children = pipelined(client, (partial(client.get_children_async, p) for p in levels[-1]))
        levels.append([f"{parent}/{child}" for parent, kids in zip(levels[-1], children, strict=True)
                       if not isinstance(kids, Exception) for child in kids])
    for level in reversed(levels[:-1]):
        expect(pipelined(client, (partial(client.delete_async, p) for p in level)), level,
               ok=(NoNodeError,))


def chunks(items: Iterable[T], size: Callable[[T], int]) -> Iterator[list[T]]:
    """Consecutive groups that each fit one transaction."""
    batch: list[T] = []
    total = 0
    for item in items:
        cost = size(item) + 64  # the op's header, roughly
        if batch and (len(batch) >= TX_OPS or total + cost > TX_BYTES):
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += cost
    if batch:
        yield batch
