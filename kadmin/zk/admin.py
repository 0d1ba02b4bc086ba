"""Submit one admin request to the controller atomically, then wait for the controller to act.

Submitting is a single ``create`` (or a single transaction for deletions): ZooKeeper decides
which of two racing kadmin processes wins, so no check-then-write gap exists. An existing admin
znode is never overwritten or deleted; it belongs to whoever created it and to the controller.

Waiting is one loop for the three operations (:func:`wait_until`): every read arms a ZooKeeper
watch in the same round trip, so a change that lands after the read wakes the loop at once,
and a slow safety poll catches anything a watch could miss. The controller rewrites the
reassignment znode once per finished partition; reading only when woken coalesces those
rewrites instead of fetching a megabyte-sized payload for each.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from kazoo.client import KazooClient
from kazoo.exceptions import (
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
)
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import WatchedEvent
from kazoo.security import ACL, ANYONE_ID_UNSAFE, Permissions

from kadmin.model import (
    Conflict,
    KadminError,
    OperationFailed,
    PartitionMove,
    PlanKind,
    TopicPartition,
    listed,
)
from kadmin.zk import codec, paths, security, session

T = TypeVar("T")

READ_WINDOW = 10.0
"""Longest one read of the wait loop may take on a connection that stays up but does not answer
(a stalled server, until kazoo's heartbeat gives the connection up)."""

AFTER_DEADLINE = 2.0
"""Longest a read may run past the operator's --timeout: the first read of a wait that starts
at or after its deadline, and the reads that name what is left once it has passed. Enough for a
server that answers, even on a busy machine; a frozen one costs no more, so the limit holds
within a second or two."""

_SAMPLE = 3
"""How many names a Conflict message shows before eliding the rest."""


class ZkCalls:
    """The few kazoo calls this module makes, each bounded by ``until`` (monotonic seconds) and,
    for reads, arming ``watch`` in the same request so no change slips between read and watch.

    Bounded because kazoo queues a request made while it reconnects and sends it once a server
    answers: a plain synchronous call blocks for as long as ZooKeeper stays away, past any
    deadline. A call unanswered by ``until`` raises ConnectionLoss like a dropped one. ``unsure``
    records that a write's outcome is unknown: it may have been applied before the drop.

    ``while_connected`` calls end with the connection they were made on. kazoo fails the
    requests it holds when the connection drops, but one made while it reconnects (a retry, or
    a call that raced the drop) is only queued, and its result stays open until a server
    answers. Such a call raises ConnectionLoss at once instead; the request itself still goes
    out after the reconnect, and its answer is dropped.
    """

    def __init__(self, client: KazooClient, until: float,
                 watch: Callable[[WatchedEvent], None] | None = None, *,
                 while_connected: bool = False) -> None:
        self.client = client
        self.until = until
        self.watch = watch
        self.while_connected = while_connected
        self.unsure = False

    def _result(self, pending: IAsyncResult) -> Any:
        # Checked after the request was made: connected now means it was queued before any
        # later drop, so kazoo fails it if the connection drops while it is answered.
        if self.while_connected and not self.client.connected:
            raise ConnectionLoss("ZooKeeper connection lost")
        return session.reply(pending, self.until)

    def _write(self, pending: IAsyncResult) -> Any:
        try:
            return self._result(pending)
        except (ConnectionLoss, SessionExpiredError):
            self.unsure = True
            raise

    def data(self, path: str) -> bytes | None:
        """The payload, or None when the znode does not exist (then nothing is watched)."""
        try:
            return self._result(self.client.get_async(path, watch=self.watch))[0]
        except NoNodeError:
            return None

    def exist(self, paths_: Iterable[str]) -> list[bool]:
        """Existence of each path, pipelined; the watch sees creation as well as deletion."""
        pending = [self.client.exists_async(p, watch=self.watch) for p in paths_]
        return [self._result(p) is not None for p in pending]

    def children(self, path: str) -> list[str]:
        try:
            return self._result(self.client.get_children_async(path, watch=self.watch))
        except NoNodeError:
            return []

    def acls(self, path: str) -> list[ACL] | None:
        """The znode's ACL, or None when it does not exist."""
        try:
            return self._result(self.client.get_acls_async(path))[0]
        except NoNodeError:
            return None

    def create(self, path: str, data: bytes, acl: Sequence[ACL] | None) -> None:
        self._write(self.client.create_async(path, data, acl=_acl(acl), makepath=True))

    def ensure_path(self, path: str, acl: Sequence[ACL] | None) -> None:
        self._result(self.client.ensure_path_async(path, acl=_acl(acl)))  # idempotent: never unsure

    def create_all(self, paths_: Sequence[str], acl: Sequence[ACL] | None) -> list[object]:
        """One transaction creating an empty znode at each path: one result (or error) each."""
        tx = self.client.transaction()
        for path in paths_:
            tx.create(path, b"", acl=_acl(acl))
        return self._write(tx.commit_async())


def _acl(acl: Sequence[ACL] | None) -> list[ACL] | None:
    return None if acl is None else list(acl)


def _creation_acl(calls: ZkCalls, path: str) -> list[ACL] | None:
    """The ACL of a znode kadmin creates at ``path``: Kafka's (CREATOR_ALL + world READ) when
    the nearest existing ancestor is not world-writable - /admin of a cluster run with
    ``zookeeper.set.acl=true`` - since an open znode there would let anyone rewrite the request
    the controller acts on. Else None: the client's default (Kafka's with ``--zk-acl``, else
    open)."""
    parent = path
    acls = None
    while acls is None and parent != "/":  # created with makepath: the nearest existing decides
        parent = parent.rsplit("/", 1)[0] or "/"
        acls = calls.acls(parent)
    world_writable = any(a.id == ANYONE_ID_UNSAFE and a.perms & Permissions.CREATE
                         for a in acls or ())
    return None if world_writable else list(security.kafka_acl())


def _with_retries(client: KazooClient, what: str, call: Callable[[ZkCalls], T]) -> T:
    """Run ``call`` under the session retry policy; an outage that outlasts it is one line that
    names the znode and says when a write may have been applied anyway."""
    until, limit = session.request_limit(client)
    calls = ZkCalls(client, until)
    try:
        return session.retrying(until, limit)(call, calls)
    except session.REFUSED as exc:
        raise session.not_authorized(what, exc) from None
    except OperationFailed as exc:
        if not session.gave_up(exc):
            raise
        unsure = "; it may have been applied before the connection dropped" if calls.unsure else ""
        raise OperationFailed(f"{what}: {exc}{unsure}") from exc.__cause__


# --- what is in flight -------------------------------------------------------------------------


@dataclass(frozen=True)
class _AdminZnode:
    """A single-znode admin request: where it lives and how to name its contents."""

    path: str
    operation: str
    decode: Callable[[bytes | None], tuple[object, ...]]


_ZNODES = {
    PlanKind.REASSIGN: _AdminZnode(
        paths.REASSIGN_PARTITIONS, "a reassignment", codec.decode_reassignment),
    PlanKind.ELECTION: _AdminZnode(
        paths.PREFERRED_REPLICA_ELECTION, "a preferred replica election", codec.decode_election),
}


def _counted(names: Sequence[str], noun: str) -> str:
    """``1,234 partitions: foo-0, foo-1, bar-3, ...``: enough to recognise whose work it is."""
    plural = noun if len(names) == 1 else noun + "s"
    return f"{len(names):,} {plural}: {listed(names, _SAMPLE)}" if names else f"0 {noun}s"


def _entry_name(entry: object) -> str:
    return str(entry.tp) if isinstance(entry, PartitionMove) else str(entry)


def _deletions_message(queued: Sequence[str]) -> str:
    return (f"topic deletions are already queued in {paths.DELETE_TOPICS} "
            f"({_counted(sorted(queued), 'topic')})")


def _busy(calls: ZkCalls, kind: PlanKind, *, decoded: bool = False) -> str | None:
    """One line naming the operation of ``kind`` in flight, or None when there is none. With
    ``decoded`` a znode that cannot be decoded is an OperationFailed naming it (exit 1): what
    it holds, and so whether partitions are moving, is unknown."""
    if kind is PlanKind.DELETION:
        queued = calls.children(paths.DELETE_TOPICS)
        return _deletions_message(queued) if queued else None
    znode = _ZNODES[kind]
    data = calls.data(znode.path)
    if data is None:
        return None
    try:
        what = _counted([_entry_name(e) for e in znode.decode(data)], "partition")
    except codec.DecodeError as exc:
        if decoded:
            raise OperationFailed(f"cannot decode {znode.path}: {exc}; what is in flight is "
                                  "unknown, so nothing was written") from None
        what = f"unreadable content: {exc}"
    return f"{znode.operation} is already in progress in {znode.path} ({what})"


def ensure_idle(client: KazooClient, kind: PlanKind) -> None:
    """Refuse (Conflict, exit 3) to start while an operation of the same kind is in flight; an
    admin znode that cannot be decoded stops it too (OperationFailed, exit 1)."""
    path = paths.DELETE_TOPICS if kind is PlanKind.DELETION else _ZNODES[kind].path
    busy = _with_retries(client, f"reading {path}",
                         lambda calls: _busy(calls, kind, decoded=True))
    if busy:
        raise Conflict(busy)


def in_progress(client: KazooClient, kind: PlanKind) -> str | None:
    """The line naming an operation of ``kind`` in flight, None when there is none or when
    ZooKeeper cannot say, nor what it holds (never raises): for a run that failed before it
    submitted anything, to tell whether a racing operation is why (a conflict, exit 3)."""
    # often asked at a deadline that has passed: a read of its own, as those that name what
    # is left at a deadline (AFTER_DEADLINE), on the connection it finds
    calls = ZkCalls(client, time.monotonic() + AFTER_DEADLINE, while_connected=True)
    try:
        return _busy(calls, kind, decoded=True)
    except (KadminError, KazooException):
        return None


# --- submitting --------------------------------------------------------------------------------


def _create_admin_znode(client: KazooClient, kind: PlanKind, data: bytes,
                        acl: Sequence[ACL] | None) -> None:
    """One atomic create. A create whose reply was lost may have been applied: if the retry then
    finds a znode with exactly our bytes, it is ours; anything else belongs to someone else."""
    znode = _ZNODES[kind]

    def create(calls: ZkCalls) -> None:
        try:
            calls.create(znode.path, data, acl if acl is not None
                         else _creation_acl(calls, znode.path))
        except NodeExistsError:
            if calls.unsure and calls.data(znode.path) == data:
                return
            raise Conflict(_busy(calls, kind)
                           or f"{znode.operation} is already in progress in {znode.path}") from None

    _with_retries(client, f"creating {znode.path}", create)


def submit_reassignment(client: KazooClient, moves: Sequence[PartitionMove], *,
                        acl: Sequence[ACL] | None = None) -> None:
    """Create /admin/reassign_partitions with ``moves`` (never their ``log_dirs``)."""
    if not moves:
        raise ValueError("submit_reassignment needs at least one partition")
    _create_admin_znode(client, PlanKind.REASSIGN, codec.encode_reassignment(moves), acl)


def submit_election(client: KazooClient, partitions: Sequence[TopicPartition], *,
                    acl: Sequence[ACL] | None = None) -> None:
    """Create /admin/preferred_replica_election listing ``partitions``."""
    if not partitions:
        raise ValueError("submit_election needs at least one partition")
    _create_admin_znode(client, PlanKind.ELECTION, codec.encode_election(partitions), acl)


def submit_deletions(client: KazooClient, topics: Sequence[str], *,
                     acl: Sequence[ACL] | None = None, queued_before: Sequence[str] = ()) -> None:
    """Queue every topic in one transaction, so the controller sees all of them or none.
    ``plans.deletion_batches`` says how many topics one transaction can hold.

    Refuses while any deletion is queued but the markers this operation queued in its earlier
    transactions (``queued_before``): the wait that follows could not tell this request's
    progress from the other one's. A transaction whose reply was lost was applied if, on retry,
    each of its topics is queued or already deleted.
    """
    if not topics:
        raise ValueError("submit_deletions needs at least one topic")
    ours = set(queued_before)
    partial = (f"; {len(ours):,} topic{'' if len(ours) == 1 else 's'} of this deletion "
               f"{'was' if len(ours) == 1 else 'were'} queued before this") if ours else ""

    def commit(calls: ZkCalls) -> None:
        markers_acl = acl if acl is not None else _creation_acl(calls, paths.delete_topic(topics[0]))
        calls.ensure_path(paths.DELETE_TOPICS, markers_acl)
        queued = calls.children(paths.DELETE_TOPICS)
        if calls.unsure and _queued_or_gone(calls, topics, queued):
            return
        others = set(queued) - ours
        if others:
            raise Conflict(_deletions_message(sorted(others)) + partial)
        results = calls.create_all([paths.delete_topic(t) for t in topics], markers_acl)
        # A failed transaction reports the failing operation's error and rolls back the rest.
        errors = [(name, r) for name, r in zip(topics, results, strict=True)
                  if isinstance(r, Exception)
                  and not isinstance(r, (RolledBackError, RuntimeInconsistency))]
        if errors:
            name, error = errors[0]
            if isinstance(error, session.REFUSED):
                raise session.not_authorized(f"creating {paths.delete_topic(name)}", error)
            if isinstance(error, NodeExistsError):
                raise Conflict((_busy(calls, PlanKind.DELETION)
                                or f"topic {name} is already queued for deletion") + partial)
            raise OperationFailed(f"could not create {paths.delete_topic(name)}: "
                                  f"{type(error).__name__}{partial or '; no deletion was queued'}")

    _with_retries(client, f"queueing deletions in {paths.DELETE_TOPICS}", commit)


def _queued_or_gone(calls: ZkCalls, chunk: Sequence[str], queued: Sequence[str]) -> bool:
    """True when a transaction queueing ``chunk`` was applied: the controller may already have
    deleted some of its topics, markers and all, since."""
    waiting = set(queued)
    rest = [t for t in chunk if t not in waiting]
    return not any(calls.exist([paths.topic(t) for t in rest]))


# --- waiting -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WaitUpdate:
    """What the waiter tells its caller each time something it can see changes."""

    remaining: int
    """Partitions (or topics) the controller has not finished yet."""
    controller: int | None
    """The active controller's broker id; None while there is none (failover in progress)."""
    connected: bool
    """False while kazoo is reconnecting: the counts are then as last seen."""
    remaining_weight: int | None = None
    """What is left weighs this much (bytes to copy), when the caller weighs entries."""


def _ignore(_: WaitUpdate) -> None:
    """Default for callers that do not report progress."""


def _controller(calls: ZkCalls) -> int | None:
    """The active controller. ``exists`` first, so its watch also reports a new controller."""
    if not calls.exist([paths.CONTROLLER])[0]:
        return None
    try:
        return codec.decode_controller(calls.data(paths.CONTROLLER))
    except codec.DecodeError:
        return None  # a /controller kadmin cannot read names no controller it can report


def wait_until(client: KazooClient, probe: Callable[[ZkCalls], T], done: Callable[[T], bool],
               remaining: Callable[[T], int], *, what: str, deadline: float,
               on_update: Callable[[WaitUpdate], None] = _ignore,
               safety_poll: float = 5.0, weight: Callable[[T], int] | None = None) -> T:
    """Probe until ``done(value)`` or the monotonic ``deadline``; return the last value read.

    Woken by the watches the probe's reads arm, by every connection state change (kazoo drops
    all watches when the connection drops, so a reconnect means: read again, which re-arms them),
    and by the safety poll. Reads run only while connected and end with the connection: a drop,
    however short, is reported at once (``connected=False``, the counts as last seen) and
    waited out until the reconnect wakes the loop, bounded by the deadline. Retrying the read
    instead would leave it queued in kazoo, blind to the outage, until the server is back.

    Only the first read may outlast the deadline, by at most AFTER_DEADLINE, so that a wait
    started late still answers with what is left; no read starts once the deadline has passed,
    as it could not be answered in time. ``what`` names the znode if nothing could be read at
    all.
    """
    wake = threading.Event()

    def on_event(_: object) -> None:  # a watch firing or a connection state change
        wake.set()

    def read(calls: ZkCalls) -> tuple[T, int | None]:
        return probe(calls), _controller(calls)

    client.add_listener(on_event)
    last: tuple[T] | None = None  # a 1-tuple, since T itself may be None
    controller: int | None = None
    reported: WaitUpdate | None = None
    try:
        while True:
            # Cleared before client.connected is read: kazoo sets that before it calls the
            # listeners, so a reconnect after this read still wakes the wait below.
            wake.clear()
            fresh = False
            if client.connected:
                now = time.monotonic()
                until = now + max(safety_poll, READ_WINDOW)
                # past the deadline only the first read, and only briefly: without it there
                # would be no answer to return
                until = min(until, deadline if last is not None
                            else max(deadline, now + AFTER_DEADLINE))
                try:
                    value, controller = read(ZkCalls(client, until, on_event,
                                                     while_connected=True))
                except session.RETRYABLE:
                    pass  # lost with the connection, or unanswered in time: read when woken
                else:
                    last, fresh = (value,), True
            if last is not None:
                update = WaitUpdate(remaining(last[0]), controller, fresh,
                                    None if weight is None else weight(last[0]))
                if update != reported:
                    on_update(update)
                    reported = update
                if fresh and done(last[0]):
                    return last[0]
            left = deadline - time.monotonic()
            if left <= 0:
                if last is None:
                    raise OperationFailed(
                        f"ZooKeeper unreachable: could not read {what} before --timeout ran out")
                return last[0]
            wake.wait(min(safety_poll, left))
            if last is not None and time.monotonic() >= deadline:
                return last[0]  # a read now would have no time left to be answered
    finally:
        client.remove_listener(on_event)


def _wait_admin_znode(client: KazooClient, kind: PlanKind, deadline: float,
                      on_update: Callable[[WaitUpdate], None], safety_poll: float,
                      weigh: Callable[[Any], int] | None = None) -> tuple[object, ...] | None:
    """Wait for the controller to delete a single-znode request: None once it has, else its
    entries at the deadline (the znode is left alone either way)."""
    znode = _ZNODES[kind]

    def probe(calls: ZkCalls) -> tuple[object, ...] | None:
        data = calls.data(znode.path)
        try:
            return None if data is None else znode.decode(data)
        except codec.DecodeError as exc:
            raise OperationFailed(f"{znode.path}: {exc}") from None

    def weight(left: tuple[object, ...] | None) -> int:
        assert weigh is not None
        return 0 if left is None else sum(map(weigh, left))

    return wait_until(client, probe, lambda left: left is None,
                      lambda left: 0 if left is None else len(left), what=znode.path,
                      deadline=deadline, on_update=on_update, safety_poll=safety_poll,
                      weight=None if weigh is None else weight)


def wait_reassignment(client: KazooClient, *, deadline: float,
                      on_update: Callable[[WaitUpdate], None] = _ignore,
                      safety_poll: float = 5.0,
                      weigh: Callable[[PartitionMove], int] | None = None
                      ) -> tuple[PartitionMove, ...]:
    """Wait for the controller to delete /admin/reassign_partitions. Returns ``()`` when it has,
    else the entries still in it at the deadline. With ``weigh`` (bytes a move copies) every
    update also says what the entries left weigh."""
    left = _wait_admin_znode(client, PlanKind.REASSIGN, deadline, on_update, safety_poll, weigh)
    return cast(tuple[PartitionMove, ...], left or ())


def wait_election(client: KazooClient, *, deadline: float,
                  on_update: Callable[[WaitUpdate], None] = _ignore,
                  safety_poll: float = 5.0) -> bool:
    """Wait for the controller to delete /admin/preferred_replica_election; True when it has."""
    return _wait_admin_znode(client, PlanKind.ELECTION, deadline, on_update, safety_poll) is None


def wait_deletions(client: KazooClient, topics: Sequence[str], *, deadline: float,
                   on_update: Callable[[WaitUpdate], None] = _ignore,
                   safety_poll: float = 5.0) -> tuple[str, ...]:
    """Wait until every topic's deletion marker and its /brokers/topics znode are gone; returns
    the topics still present at the deadline.

    A topic counts as deleted once both were seen gone: producers with auto-creation enabled
    may recreate it a moment later, and that new topic is not this deletion's business.
    """
    pending = list(dict.fromkeys(topics))

    def probe(calls: ZkCalls) -> tuple[str, ...]:
        queued = set(calls.children(paths.DELETE_TOPICS))
        present = calls.exist(paths.topic(t) for t in pending)
        pending[:] = [t for t, exists in zip(pending, present, strict=True)
                      if exists or t in queued]
        return tuple(pending)

    return wait_until(client, probe, lambda left: not left, len, what=paths.DELETE_TOPICS,
                      deadline=deadline, on_update=on_update, safety_poll=safety_poll)
