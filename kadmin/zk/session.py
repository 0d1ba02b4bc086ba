"""Connect to ZooKeeper and the one retry policy every kadmin ZooKeeper call runs under.

Errors become kadmin's one-line errors here, so nothing above this module sees kazoo's
exceptions for the usual failures (bad connect string, unreachable server, missing chroot,
connection lost for too long).
"""

from __future__ import annotations

import logging
import re
import select
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import tenacity
from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionDropped,
    ConnectionLoss,
    InvalidACLError,
    NoAuthError,
    OperationTimeoutError,
    SessionClosedRequireSaslError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError, SequentialThreadingHandler
from kazoo.handlers.utils import fileobj_to_fd
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import KeeperState
from kazoo.retry import KazooRetry

from kadmin.model import InvalidInput, NotAuthorized, OperationFailed
from kadmin.zk.security import ZkSecurity, client_options, kerberos_hint, kerberos_reason, preflight

DEFAULT_RETRY_SECONDS = 60.0
RETRYABLE = (ConnectionLoss, SessionExpiredError, OperationTimeoutError)
"""Failures that say nothing about the request itself: the same call succeeds once the
connection (or a new session) is back."""

REFUSED = (NoAuthError, InvalidACLError, AuthFailedError, SessionClosedRequireSaslError)
"""Failures that say the request is not allowed: an ACL refuses it, the session has no
identity to own a znode created with CREATOR_ALL (ZooKeeper checks that before the parent's
ACL), the server refused the session's credentials, or it serves only authenticated sessions.
Retrying cannot help."""

# kazoo logs every dropped connection at WARNING; with no logging configured Python would print
# those to stderr in the middle of kadmin's own output. kadmin reports connection trouble itself.
logging.getLogger("kazoo").addHandler(logging.NullHandler())


def _quiet_kazoo_thread_end(args: threading.ExceptHookArgs) -> None:
    """kazoo's connection thread dies of an exception it does not expect when a SASL exchange
    fails in a way it does not know (a server enforcing authentication refuses the login with an
    error instead of dropping the connection). The client is closed then and kadmin reports the
    refused login itself; Python's default hook would print the thread's traceback in the
    middle of kadmin's output."""
    if args.thread is not None and args.thread.name.endswith("(zk_loop)"):
        logging.getLogger("kazoo").debug("connection thread ended", exc_info=args.exc_value)
        return
    _previous_excepthook(args)


_previous_excepthook = threading.excepthook
threading.excepthook = _quiet_kazoo_thread_end

_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)$")
_FORMAT = "expected host:port[,host:port...][/chroot]"


@dataclass(frozen=True)
class ZkTarget:
    """A parsed connect string: kazoo's host list and the chroot (None for the root)."""

    hosts: str
    chroot: str | None


def parse_connect_string(text: str) -> ZkTarget:
    """Parse Kafka's ``zookeeper.connect`` syntax, ``h1:2181,h2:2181/kafka``.

    Checked here rather than left to kazoo, which accepts a typo and then retries a host that
    cannot exist until the connect timeout.
    """
    text = text.strip()
    if not text:
        raise InvalidInput(f"ZooKeeper connect string is empty ({_FORMAT})")
    hosts_part, slash, chroot_part = text.partition("/")
    hosts = []
    for entry in hosts_part.split(","):
        host, port = _split_host_port(entry.strip(), text)
        hosts.append(f"{host}:{port}")
    chroot = None
    if slash:
        chroot = "/" + chroot_part
        segments = chroot_part.split("/")
        if any(s in ("", ".", "..") for s in segments) or "\0" in chroot_part:
            raise InvalidInput(
                f"bad chroot {chroot!r} in ZooKeeper connect string {text!r}: {_FORMAT}, the "
                "chroot a znode path like /kafka (no trailing '/', no empty, '.' or '..' parts)"
            )
    return ZkTarget(",".join(hosts), chroot)


def _split_host_port(entry: str, text: str) -> tuple[str, int]:
    host, colon, port_text = entry.rpartition(":")
    if not colon:  # "h1": ZooKeeper's default port (IPv6 needs brackets: "[::1]:2181")
        host, port_text = entry, "2181"
    if not host or not _HOST.match(host):
        raise InvalidInput(f"bad host {host!r} in ZooKeeper connect string {text!r} ({_FORMAT})")
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise InvalidInput(
            f"bad port {port_text!r} in ZooKeeper connect string {text!r} ({_FORMAT})"
        )
    return host, int(port_text)


def not_authorized(what: str, error: Exception) -> NotAuthorized:
    """The one line for a request ZooKeeper refused: ``what`` names the znode."""
    if isinstance(error, AuthFailedError):
        reason = "the server refused this session's credentials"
    elif isinstance(error, SessionClosedRequireSaslError):
        reason = "the server serves only SASL-authenticated sessions"
    elif isinstance(error, InvalidACLError):
        reason = "this session has no identity to own a znode created with Kafka's ACL"
    else:
        reason = "an ACL refuses this session"
    return NotAuthorized(
        f"{what}: not authorized by ZooKeeper ({reason}; kadmin must authenticate as a "
        "principal the ACLs allow, usually the Kafka brokers' own)"
    )


@dataclass(frozen=True)
class ZkSettings:
    """How to reach one ZooKeeper ensemble (the chroot is part of ``connect``)."""

    connect: str
    connect_timeout: float = 10.0
    session_timeout: float = 30.0
    security: ZkSecurity = field(default_factory=ZkSecurity)


_FD_SETSIZE = 1024


class _SelectHandler(SequentialThreadingHandler):
    """kazoo's threading handler, waiting with plain select(2) while the descriptors fit in an
    fd_set (a client has two).

    kazoo's own ``select`` creates, registers and closes a new epoll selector on every call, and
    its I/O loop calls it several times per request: on a large pipelined read that is half of
    the I/O thread's CPU, which shares the GIL with kadmin (bench/RESULTS.md: reads 1.3-2x
    faster). Above FD_SETSIZE, and for any error, kazoo's own path runs, so kazoo sees exactly
    the results and errors it was written for.
    """

    def select(self, *args: Any, **kwargs: Any) -> Any:
        rlist, wlist, xlist = args[:3]
        try:
            if all(fileobj_to_fd(f) < _FD_SETSIZE for f in (*rlist, *wlist, *xlist)):
                return select.select(*args, **kwargs)
        except (OSError, ValueError):
            pass
        return super().select(*args, **kwargs)


def new_client(hosts: str, session_timeout: float, **options: Any) -> KazooClient:
    """A kazoo client as kadmin runs them: the select(2) handler, reconnecting every 2 s at
    most (``reconnect_policy``); ``options`` go to KazooClient (security, ...)."""
    return KazooClient(hosts=hosts, timeout=session_timeout, handler=_SelectHandler(),
                       connection_retry=reconnect_policy(), **options)


def reconnect_policy() -> KazooRetry:
    """How a kazoo client retries a lost connection: forever, every 2 s at most.

    kazoo's default backoff grows to an hour: after an outage the client would sleep long after
    the server is back, and a session (30 s) would expire although the server kept it. A new
    object per client, because kazoo configures the one it is given.
    """
    return KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=2.0)


def connect(settings: ZkSettings, *, create_chroot: bool = False,
            run_limit: tuple[float, str] | None = None) -> KazooClient:
    """A started client whose paths are relative to the chroot, within the connect timeout:
    the session, the server's first answer (the login) and the chroot check all count.
    ``run_limit`` (a monotonic deadline and the limit it stands for, a command's --timeout)
    bounds the connect too when it comes first, and every request of the client after it
    (:func:`limit_run`).

    A missing chroot is an error unless ``create_chroot``: Kafka's brokers create it, so a
    missing one means a typo, and kadmin must never plan or write against an empty tree.
    """
    target = parse_connect_string(settings.connect)
    preflight(settings.security)
    # Connect to the root first: kazoo cannot tell "chroot missing" from "chroot empty".
    client = new_client(target.hosts, settings.session_timeout,
                        **client_options(settings.security))
    kerberos_failures = _kerberos_per_host(client) if settings.security.sasl else {}
    limit = f"{settings.connect_timeout:g}s, the --connect-timeout"
    until = time.monotonic() + settings.connect_timeout
    if run_limit is not None and run_limit[0] < until:
        until, limit = run_limit
    try:
        # Not client.start(timeout): past the timeout it stops the client and so waits for
        # kazoo's connection thread, which waits for a server that accepted the connection but
        # does not answer for as long as the session timeout.
        if not client.start_async().wait(max(0.0, until - time.monotonic())):
            raise OperationFailed(f"cannot reach ZooKeeper at {target.hosts} within {limit}")
        calls = retrying(until, limit)
        _check_login(client, target, settings.security, calls, until, kerberos_failures)
        if target.chroot is not None:
            if create_chroot:
                calls(lambda: reply(client.ensure_path_async(target.chroot), until))
            elif calls(lambda: reply(client.exists_async(target.chroot), until)) is None:
                raise OperationFailed(
                    f"chroot {target.chroot} does not exist on ZooKeeper at {target.hosts} "
                    "(check the connect string; Kafka's brokers create it on first start)"
                )
            # Safe only now, before any watch or ephemeral node exists on this client.
            client.chroot = target.chroot
    except BaseException:
        close(client)
        raise
    if run_limit is not None:
        limit_run(client, *run_limit)
    return client


def _kerberos_per_host(client: KazooClient) -> dict[str, str]:
    """Make a Kerberos failure on the client's side (no ticket for ``zookeeper/<host>``, the
    KDC unreachable, an expired ticket) move kazoo on to the next host of the ensemble, as a
    dropped connection does, instead of ending the connection for good; once every host has
    failed so, the login fails. Returns the reason per host, for the error.

    kazoo runs the SASL exchange in its connection handler and turns any such error into "auth
    failed", logged and then dropped; this wraps that one step of the handler
    (``_authenticate_with_sasl``) on this client only. Refusals by the server (a wrong
    DIGEST-MD5 password) are not Kerberos errors and pass as before."""
    failures: dict[str, str] = {}
    connection = client._connection
    authenticate = connection._authenticate_with_sasl
    hosts = {host for host, _ in client.hosts}

    def authenticate_or_next(host: str, timeout: float) -> None:
        try:
            authenticate(host, timeout)
        except Exception as exc:
            reason = kerberos_reason(exc) or kerberos_reason(exc.__cause__)
            if reason is None:
                raise
            failures[host] = reason
            if hosts <= set(failures):
                raise AuthFailedError(f"Kerberos: {reason}") from exc
            raise ConnectionDropped(f"Kerberos, trying the next host: {reason}") from exc
        failures.pop(host, None)

    connection._authenticate_with_sasl = authenticate_or_next
    return failures


def _check_login(client: KazooClient, target: ZkTarget, security: ZkSecurity,
                 calls: tenacity.Retrying, until: float,
                 kerberos_failures: dict[str, str] | None = None) -> None:
    """The first reply tells whether the server accepts this session. kazoo reports the
    connection up before the SASL exchange has run, and ends the connection for good when the
    exchange fails (the server drops it, or refuses it when it enforces authentication): the
    client is closed then, and retrying would only wait. A server that enforces authentication
    refuses the first request of a session without credentials."""

    def first_request() -> None:
        if client.client_state in (KeeperState.AUTH_FAILED, KeeperState.CLOSED):
            raise AuthFailedError("kazoo ended the connection in the SASL exchange")
        reply(client.exists_async("/"), until)

    try:
        calls(first_request)
    except OperationFailed:
        if kerberos_failures:  # the hosts left did not answer: the Kerberos reasons are news
            raise _kerberos_failed(target, security, kerberos_failures,
                                   "failed, and no other host answered") from None
        raise
    except REFUSED as exc:
        if kerberos_failures:
            raise _kerberos_failed(target, security, kerberos_failures,
                                   "failed on every host") from None
        if security.sasl:
            raise NotAuthorized(
                f"ZooKeeper at {target.hosts} refused the SASL login ({security.sasl_login}): "
                "wrong credentials, or SASL is not enabled on the server"
            ) from None
        raise not_authorized(f"ZooKeeper at {target.hosts}", exc) from None


def _kerberos_failed(target: ZkTarget, security: ZkSecurity, failures: dict[str, str],
                     how: str) -> NotAuthorized:
    """The Kerberos reason of each host that failed (one line each), and what to check."""
    reasons = sorted(set(failures.values()))
    return NotAuthorized(
        f"the Kerberos login to ZooKeeper at {target.hosts} ({security.sasl_login}, service "
        f"{dict(security.sasl).get('service')}) {how}: "
        f"{reasons[0] if len(reasons) == 1 else 'see below'}; {kerberos_hint(reasons[0])}",
        details=tuple(f"{host}: {reason}" for host, reason in sorted(failures.items())))


CLOSE_SECONDS = 1.0
"""Longest kadmin waits for a session to close. kazoo waits for the server to confirm, and a
server that stopped answering would hold kadmin for most of the session timeout; the server
expires the session on its own anyway."""


def close(client: KazooClient) -> None:
    """Stop and close ``client``, waiting at most CLOSE_SECONDS; a close that takes longer
    finishes in a daemon thread, so no limit kadmin promises waits on it."""

    def stop_and_close() -> None:
        client.stop()
        client.close()

    closing = threading.Thread(target=stop_and_close, name="kadmin-zk-close", daemon=True)
    closing.start()
    closing.join(CLOSE_SECONDS)


@contextmanager
def session(settings: ZkSettings, *, create_chroot: bool = False,
            run_limit: tuple[float, str] | None = None) -> Iterator[KazooClient]:
    """``connect`` for a ``with`` block; the session ends (ephemerals go) when it closes.
    ``run_limit``: see :func:`connect`."""
    client = connect(settings, create_chroot=create_chroot, run_limit=run_limit)
    try:
        yield client
    finally:
        close(client)


def reply(pending: IAsyncResult, until: float) -> Any:
    """The answer to a kazoo request, or ConnectionLoss once ``until`` (monotonic) has passed.

    kazoo holds a request made while it reconnects and sends it once a server answers, so a
    plain ``get()`` waits for as long as ZooKeeper stays away; bounded, the wait becomes a
    connection failure that the retry policy and its deadline deal with."""
    try:
        return pending.get(timeout=max(0.0, until - time.monotonic()))
    except KazooTimeoutError:
        raise ConnectionLoss("no reply from ZooKeeper in time") from None


REQUEST_LIMIT = "kadmin's limit for one request"

_RUN_LIMITS: weakref.WeakKeyDictionary[KazooClient, tuple[float, str]] = \
    weakref.WeakKeyDictionary()
"""A deadline for every request of a client, with the limit it stands for (a command's
--timeout, counted from the command's start)."""


def limit_run(client: KazooClient, deadline: float, limit: str) -> None:
    """From now on no request on ``client`` waits past ``deadline`` (monotonic), retries
    included: past it the request fails naming ``limit`` (``8s, the --timeout``)."""
    _RUN_LIMITS[client] = (deadline, limit)


def request_limit(client: KazooClient) -> tuple[float, str]:
    """When a request made now must have been answered, its retries, reconnects and probes
    included, and the limit that says so: DEFAULT_RETRY_SECONDS from now (kadmin's limit for
    one request), or the run's deadline (:func:`limit_run`) when that comes first. Taken
    when the request is first sent: the clock never starts again at a lost connection."""
    until = time.monotonic() + DEFAULT_RETRY_SECONDS
    run = _RUN_LIMITS.get(client)
    if run is not None and run[0] < until:
        return run
    return until, f"{DEFAULT_RETRY_SECONDS:g}s, {REQUEST_LIMIT}"


def bounded(client: KazooClient, call: Callable[[], IAsyncResult]) -> Any:
    """``call()`` (a kazoo ``*_async`` call) answered within :func:`request_limit`, sent again
    when the connection is lost; past the limit an OperationFailed naming it."""
    until, limit = request_limit(client)
    return retrying(until, limit)(lambda: reply(call(), until))


def gave_up(error: OperationFailed) -> bool:
    """True for the retry policy's "no answer in time" (it chains the kazoo error)."""
    return isinstance(error.__cause__, RETRYABLE)


def retrying(deadline: float | None = None, limit: str | None = None) -> tenacity.Retrying:
    """Retry connection-level failures with jittered exponential backoff.

    ``deadline`` is a ``time.monotonic()`` instant shared by a whole operation (so nested
    retries cannot add up past it); None allows each call about a minute from its first
    attempt. Past it the last failure becomes ``OperationFailed`` naming ``limit``, the limit
    that ran out in the operator's words (by default DEFAULT_RETRY_SECONDS, kadmin's limit for
    one request).
    """
    limit = limit or f"{DEFAULT_RETRY_SECONDS:g}s, {REQUEST_LIMIT}"
    backoff = tenacity.wait_random_exponential(multiplier=0.1, min=0.1, max=2.0)
    if deadline is None:
        stop: tenacity.stop.stop_base = tenacity.stop_after_delay(DEFAULT_RETRY_SECONDS)
        wait: tenacity.wait.wait_base = backoff
    else:
        stop = _StopAt(deadline)
        wait = _Capped(backoff, deadline)

    def give_up(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        reason = type(error).__name__ if error is not None else "unknown error"
        raise OperationFailed(f"ZooKeeper did not answer within {limit} ({reason})") from error

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(RETRYABLE),
        stop=stop,
        wait=wait,
        retry_error_callback=give_up,
    )


class _StopAt(tenacity.stop.stop_base):
    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return time.monotonic() >= self.deadline


class _Capped(tenacity.wait.wait_base):
    """Never sleep past the deadline: the last attempt happens at it, not after it."""

    def __init__(self, inner: tenacity.wait.wait_base, deadline: float) -> None:
        self.inner = inner
        self.deadline = deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        return max(0.0, min(self.inner(retry_state), self.deadline - time.monotonic()))
