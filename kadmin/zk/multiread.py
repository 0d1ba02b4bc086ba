"""Many reads per round trip: ZooKeeper's multiRead (opcode 22, servers 3.6+), with pipelined
single reads for older servers (docs/multiread.md).

Built on kazoo's protocol layer as kazoo's own ``Transaction`` (opcode 14) is: :class:`MultiRead`
serializes kazoo's ``GetData``/``GetChildren`` requests behind ``MultiHeader`` records and kazoo's
connection sends it, matches its answer and hands it back through an ``IAsyncResult``, so the
session, its retries, chroot, ACL identity, SASL and TLS are kazoo's, unchanged.

:func:`read` is the one way kadmin reads many znodes. It yields ``(path, tag, value)`` in request
order (``value``: the payload for a getData, the child names for a getChildren); a znode that does
not exist (or vanished since it was listed) is skipped, any other refusal fails with its path.

Sizes. A request of many paths, and its answer of many payloads, each stay well under the
server's ``jute.maxbuffer`` (1 MiB by default; the Java client refuses answers above it):

- a request holds at most MAX_OPS reads and REQUEST_BYTES bytes;
- its answer is planned to hold at most ANSWER_BYTES: a read whose size the caller knows (the
  ``Stat.dataLength`` of an earlier read) counts with that size, any other with the largest
  payload of its kind seen so far in this read. Until answers have been seen a batch grows from
  one read, doubling with the answers received (TCP's slow start), so a read of large topic
  znodes never starts with a batch of guesses. An answer can only exceed ANSWER_BYTES when it
  holds a payload larger than any seen before; the batches after it shrink at once.

Old servers. A server before 3.6 answers opcode 22 with UNIMPLEMENTED and closes the connection
(``UnimplementedRequestProcessor`` in ZooKeeper 3.4 and 3.5); one that only closes it is caught
too: a probe that loses the connection twice while a plain read between succeeds. Each session
probes once, before its first multiRead; a session that lands on an old server later (a rolling
downgrade, an ensemble of mixed versions) finds out from the answer to a batch. Either way the
session then reads znode by znode, pipelined (:func:`pipelined`), and says so once on the
``kadmin.zk`` logger (shown with ``--verbose``).

Measured on 2 cores shared with the server (bench/bench_zk_read.py, bench/RESULTS.md): MAX_OPS
and WINDOW below; pipelined single reads are the fallback's speed.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections import deque, namedtuple
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import EXCEPTIONS, KazooException, NoNodeError, UnimplementedError
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.serialization import (
    GetChildren,
    GetData,
    MultiHeader,
    int_struct,
    multiheader_struct,
    read_buffer,
    read_string,
    stat_struct,
)
from kazoo.protocol.states import ZnodeStat

from kadmin.model import OperationFailed
from kadmin.zk import session

log = logging.getLogger("kadmin.zk")

T = TypeVar("T")

OPCODE = 22
MAX_OPS = 250
"""Reads in one request (bench_zk_read.py: throughput is flat from about 100 to 1,000)."""
WINDOW = 8
"""multiRead requests in flight: enough to keep the server busy while kadmin decodes."""
SINGLES_WINDOW = 2000
"""Single requests in flight on the fallback path (as before multiRead)."""
REQUEST_BYTES = 256 * 1024
"""Most bytes of one request (paths and headers)."""
ANSWER_BYTES = 512 * 1024
"""Most bytes planned for one answer: half the default jute.maxbuffer."""

_HEADER = multiheader_struct.size  # type, done, err
_STAT = stat_struct.size
_GET_DATA_ANSWER = _HEADER + 4 + _STAT  # header, buffer length, stat; plus the payload
_REQUEST = _HEADER + 4 + 1  # header, string length, watch flag; plus the path
_CHILDREN_GUESS = 64 * 1024
"""What a getChildren answer is planned at: listings are few (the brokers, the topics), and one
listing is one answer however long it is."""
_DONE = multiheader_struct.pack(-1, True, -1)


class Op(NamedTuple):
    """One read: getData of ``path`` (getChildren with ``children``); ``size``, when known, is
    its payload's length (``Stat.dataLength`` of an earlier read); with ``stat`` a getData's
    value is ``(payload, ZnodeStat)``, as kazoo's ``get`` returns it."""

    path: str
    children: bool = False
    size: int | None = None
    stat: bool = False


class MultiRead(namedtuple("MultiRead", "operations with_stat")):
    """The multiRead request: kazoo's read requests framed as kazoo's ``Transaction`` frames its
    writes. kazoo's connection calls ``serialize`` and, on the answer, ``deserialize``.
    ``operations``: kazoo ``GetData``/``GetChildren`` requests; ``with_stat``: positions of the
    getData reads whose Stat is wanted."""

    __slots__ = ()
    type = OPCODE
    operations: tuple[GetData | GetChildren, ...]
    with_stat: frozenset[int]

    def serialize(self) -> bytes:
        parts = []
        for op in self.operations:
            parts.append(MultiHeader(op.type, False, -1).serialize())
            parts.append(op.serialize())
        parts.append(_DONE)
        return b"".join(parts)

    def deserialize(self, buffer: bytes, offset: int) -> tuple[list[Any], int]:
        """One result per operation, in order: the payload (``bytes | None``) of a getData,
        the names of a getChildren, or the kazoo exception of a failed read; and the answer's
        size in bytes."""
        results: list[Any] = []
        unpack = multiheader_struct.unpack_from
        while True:
            kind, done, _ = unpack(buffer, offset)
            offset += _HEADER
            if done:
                break
            if kind == GetData.type:
                data, offset = read_buffer(buffer, offset)
                if len(results) in self.with_stat:
                    results.append((data, ZnodeStat._make(stat_struct.unpack_from(buffer,
                                                                                  offset))))
                else:
                    results.append(data)
                offset += _STAT
            elif kind == GetChildren.type:
                count = int_struct.unpack_from(buffer, offset)[0]
                offset += 4
                names = []
                for _ in range(max(count, 0)):
                    name, offset = read_string(buffer, offset)
                    names.append(name)
                results.append(names)
            elif kind == -1:
                code = int_struct.unpack_from(buffer, offset)[0]
                offset += 4
                results.append(EXCEPTIONS[code]())
            else:
                raise ValueError(f"multiRead answer with an operation of type {kind}")
        if len(results) != len(self.operations):
            raise ValueError(f"multiRead answer with {len(results)} results for "
                             f"{len(self.operations)} reads")
        return results, len(buffer)


@dataclass
class ReadStats:
    """What a read sent and received (for tests and the benchmark)."""

    requests: int = 0
    reads: int = 0
    largest_answer: int = 0
    answers_over_budget: int = 0
    batch_sizes: list[int] = field(default_factory=list)


# --- once per session: does the server know opcode 22? ------------------------------------------

_SUPPORT: weakref.WeakKeyDictionary[KazooClient, bool] = weakref.WeakKeyDictionary()


def supported(client: KazooClient) -> bool:
    """Whether this session reads with multiRead: probed on first use, then remembered."""
    known = _SUPPORT.get(client)
    if known is None:
        known = _SUPPORT[client] = _probe(client)
        if not known:
            _say_unsupported(client)
    return known


def _mark_unsupported(client: KazooClient) -> None:
    if _SUPPORT.get(client) is not False:
        _SUPPORT[client] = False
        _say_unsupported(client)


def _say_unsupported(client: KazooClient) -> None:
    hosts = ",".join(f"{host}:{port}" for host, port in client.hosts)
    log.info("ZooKeeper at %s does not answer multiRead (opcode 22, servers 3.6+): reading "
             "znode by znode, pipelined (slower)", hosts)


def _full(client: KazooClient, path: str) -> str:
    root = client.chroot or ""
    if not root:
        return path
    return root if path == "/" else root + path


def _send(client: KazooClient, ops: Iterable[Op]) -> IAsyncResult:
    ops = list(ops)
    request = MultiRead(tuple(GetChildren(_full(client, op.path), None) if op.children
                              else GetData(_full(client, op.path), None) for op in ops),
                        frozenset(i for i, op in enumerate(ops) if op.stat))
    result = client.handler.async_result()
    client._call(request, result)
    return result


def _probe(client: KazooClient, limit: tuple[float, str] | None = None) -> bool:
    """One multiRead of the chroot itself. Any answer to it (even "no node", "no access") says
    the server knows the opcode; UNIMPLEMENTED says it does not. A connection lost on the probe
    may be chance: after a plain read succeeds, a second probe lost the same way decides.
    ``limit``: the request's own (:func:`session.request_limit`) when it probes for one."""
    until, name = limit or session.request_limit(client)
    calls = session.retrying(until, name)
    for _ in range(2):
        try:
            session.reply(_send(client, [Op("/")]), until)
            return True
        except UnimplementedError:
            # the server closes the connection after this answer: wait until kazoo is back
            calls(lambda: session.reply(client.exists_async("/"), until))
            return False
        except session.RETRYABLE:
            calls(lambda: session.reply(client.exists_async("/"), until))
        except KazooException as error:
            raise OperationFailed(f"ZooKeeper refused a multiRead request: "
                                  f"{type(error).__name__}") from error
    return False


# --- batches -----------------------------------------------------------------------------------


class _Batcher:
    """Cuts a stream of reads into requests by the sizes above, learning the payload sizes of
    the reads whose sizes are not known from the answers."""

    def __init__(self) -> None:
        self.largest = 0
        """Largest payload seen so far among reads of unknown size."""
        self.answered = 0
        """Reads of unknown size answered so far: the slow start's allowance."""

    def saw(self, unknown_sizes: Iterable[int]) -> None:
        for size in unknown_sizes:
            self.answered += 1
            if size > self.largest:
                self.largest = size

    def limit(self) -> int:
        """Most reads of unknown size the next batch may hold."""
        return min(MAX_OPS, max(1, 2 * self.answered))

    def batches(self, requests: Iterator[tuple[Op, T]]) -> Iterator[list[tuple[Op, T]]]:
        pending: tuple[Op, T] | None = None
        while True:
            batch: list[tuple[Op, T]] = []
            request_bytes = answer_bytes = unknown = 0
            limit = self.limit()
            while len(batch) < MAX_OPS:
                if pending is None:
                    pending = next(requests, None)
                    if pending is None:
                        break
                op = pending[0]
                size = (_CHILDREN_GUESS if op.children
                        else _GET_DATA_ANSWER + (op.size if op.size is not None else self.largest))
                cost = _REQUEST + len(op.path) * 3  # UTF-8, at worst
                if batch and (request_bytes + cost > REQUEST_BYTES
                              or answer_bytes + size > ANSWER_BYTES
                              or (op.size is None and not op.children and unknown >= limit)):
                    break
                batch.append(pending)
                pending = None
                request_bytes += cost
                answer_bytes += size
                unknown += op.size is None and not op.children
            if not batch:
                return
            yield batch


# --- the read ----------------------------------------------------------------------------------


def read(client: KazooClient, requests: Iterable[tuple[Op | str, T]],
         stats: ReadStats | None = None) -> Iterator[tuple[str, T, Any]]:
    """Read every ``(op, tag)`` (a bare path is a getData of unknown size) and yield
    ``(path, tag, value)`` in request order, skipping znodes that do not exist.

    Up to WINDOW requests are in flight while the answers of earlier ones are consumed, so
    memory stays at a few answers and the requests may depend on earlier answers (the caller's
    iterator is pulled lazily). A request lost with the connection is sent again under
    :func:`session.retrying`; other refusals fail with the znode's path."""
    ops = ((op if isinstance(op, Op) else Op(op), tag) for op, tag in requests)
    if not supported(client):
        yield from _singles(client, ops)
        return
    batcher = _Batcher()
    in_flight: deque[tuple[list[tuple[Op, T]], IAsyncResult, tuple[float, str]]] = deque()
    batches = batcher.batches(ops)
    for batch in batches:
        in_flight.append((batch, _send(client, (op for op, _ in batch)),
                          session.request_limit(client)))
        if stats is not None:
            stats.requests += 1
            stats.reads += len(batch)
            stats.batch_sizes.append(len(batch))
        while len(in_flight) >= WINDOW or (in_flight and in_flight[0][1].ready()):
            yield from _settle(client, *in_flight.popleft(), batcher, stats)
        if _SUPPORT.get(client) is False:
            # the session landed on a server without multiRead: the rest one by one
            while in_flight:
                yield from _settle(client, *in_flight.popleft(), batcher, stats)
            yield from _singles(client, (request for batch in batches for request in batch))
            return
    while in_flight:
        yield from _settle(client, *in_flight.popleft(), batcher, stats)


def _settle(client: KazooClient, batch: list[tuple[Op, T]], pending: IAsyncResult,
            limit: tuple[float, str], batcher: _Batcher, stats: ReadStats | None
            ) -> Iterator[tuple[str, T, Any]]:
    answer = _answer(client, batch, pending, limit)
    if answer is None:
        yield from _singles(client, iter(batch))
        return
    results, size = answer
    if stats is not None:
        stats.largest_answer = max(stats.largest_answer, size)
        stats.answers_over_budget += size > ANSWER_BYTES
    batcher.saw(len(value[0] if op.stat else value)
                for (op, _), value in zip(batch, results, strict=True)
                if op.size is None and not op.children and not isinstance(value, Exception)
                and (value[0] if op.stat else value) is not None)
    for (op, tag), value in zip(batch, results, strict=True):
        if isinstance(value, KazooException):
            if isinstance(value, NoNodeError):
                continue
            raise OperationFailed(f"cannot read {op.path}: {type(value).__name__}") from value
        yield op.path, tag, value


def _answer(client: KazooClient, batch: list[tuple[Op, T]], pending: IAsyncResult,
            limit: tuple[float, str]) -> tuple[list[Any], int] | None:
    """The answer to one multiRead, sent again if the connection was lost; None once the
    server turns out not to know multiRead. ``limit``: the request's, taken when it was
    sent, so neither the wait for earlier answers nor a lost connection restarts its clock."""
    until, name = limit
    try:
        try:
            return session.reply(pending, until)  # type: ignore[no-any-return]
        except session.RETRYABLE:
            # lost with the connection: by chance, or a server that drops it on opcode 22
            # (the probe tells, once the connection is back)
            if _SUPPORT.get(client) is False or not _probe(client, limit):
                _mark_unsupported(client)
                return None
            return session.retrying(until, name)(
                lambda: session.reply(_send(client, (op for op, _ in batch)), until))
    except UnimplementedError:
        _mark_unsupported(client)
        return None
    except KazooException as error:
        raise OperationFailed(f"cannot read {batch[0][0].path} and {len(batch) - 1} other "
                              f"znode(s): {type(error).__name__}") from error
    except ValueError as error:  # raised by MultiRead.deserialize in kazoo's thread
        raise OperationFailed(f"ZooKeeper's answer to a multiRead request could not be read "
                              f"({error}); reading {batch[0][0].path} and "
                              f"{len(batch) - 1} other znode(s)") from error


def _singles(client: KazooClient,
             requests: Iterator[tuple[Op, T]]) -> Iterator[tuple[str, T, Any]]:
    """The fallback: one request per znode, pipelined, the payload without its Stat."""
    def call(op: Op) -> IAsyncResult:
        return client.get_children_async(op.path) if op.children else client.get_async(op.path)

    for path, (op, tag), value in pipelined(call, ((op, (op, tag)) for op, tag in requests),
                                            SINGLES_WINDOW, key=lambda op: op.path,
                                            limit=lambda: session.request_limit(client)):
        yield path, tag, value if op.children or op.stat else value[0]


K = TypeVar("K")


def _request_limit() -> tuple[float, str]:
    """kadmin's limit for one request, from now (a caller with a client passes
    :func:`session.request_limit` instead, which a command's --timeout can shorten)."""
    return (time.monotonic() + session.DEFAULT_RETRY_SECONDS,
            f"{session.DEFAULT_RETRY_SECONDS:g}s, {session.REQUEST_LIMIT}")


def pipelined(call: Callable[[K], IAsyncResult], requests: Iterable[tuple[K, T]],
              window: int = SINGLES_WINDOW, key: Callable[[K], str] = str,
              limit: Callable[[], tuple[float, str]] = _request_limit
              ) -> Iterator[tuple[str, T, Any]]:
    """Run ``call(request)`` for every ``(request, tag)`` with at most ``window`` in flight,
    yielding ``(path, tag, value)`` in request order (``key`` gives a request's path;
    ``limit`` when a request must have been answered, taken as it is sent).

    Znodes that do not exist (or vanished since they were listed) are skipped. A request lost
    with the connection is retried on its own under :func:`session.retrying`, so a blip in the
    middle of a million reads neither fails nor restarts the whole read. Other errors (no ACL
    access, ...) fail with the znode's path.
    """
    in_flight: deque[tuple[K, T, IAsyncResult, tuple[float, str]]] = deque()

    def settle() -> Iterator[tuple[str, T, Any]]:
        request, tag, result, limit = in_flight.popleft()
        try:
            yield key(request), tag, _single_answer(call, request, key(request), result, limit)
        except NoNodeError:
            return

    for request, tag in requests:
        in_flight.append((request, tag, call(request), limit()))
        if len(in_flight) >= window:
            yield from settle()
    while in_flight:
        yield from settle()


def _single_answer(call: Callable[[K], IAsyncResult], request: K, path: str,
                   result: IAsyncResult, limit: tuple[float, str]) -> Any:
    """One read's value. Bounded, like its retries, by ``limit`` (taken when it was sent): a
    request kazoo holds through an outage would otherwise wait for as long as ZooKeeper stays
    away."""
    until, name = limit
    try:
        return session.reply(result, until)
    except session.RETRYABLE:
        return session.retrying(until, name)(lambda: session.reply(call(request), until))
    except NoNodeError:
        raise
    except KazooException as error:
        raise OperationFailed(f"cannot read {path}: {type(error).__name__}") from error
