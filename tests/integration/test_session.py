"""Connecting to a real ZooKeeper: connect strings, chroots, unreachable servers, retries."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss, NoNodeError

from kadmin.embedded import EmbeddedZooKeeper, free_port
from kadmin.model import InvalidInput, OperationFailed
from kadmin.zk.session import (
    ZkSettings,
    ZkTarget,
    connect,
    parse_connect_string,
    retrying,
    session,
)
from tests.helpers import eventually

pytestmark = pytest.mark.zk


@pytest.mark.parametrize(("text", "expected"), [
    ("h1:2181", ZkTarget("h1:2181", None)),
    (" h1:2181,h2:2182/kafka ", ZkTarget("h1:2181,h2:2182", "/kafka")),
    ("h1,10.0.0.2:2181/a/b-c_d.e", ZkTarget("h1:2181,10.0.0.2:2181", "/a/b-c_d.e")),
    ("[::1]:2181/kafka", ZkTarget("[::1]:2181", "/kafka")),
])
def test_parse_connect_string(text: str, expected: ZkTarget) -> None:
    assert parse_connect_string(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("", r"^ZooKeeper connect string is empty"),
    ("   ", r"^ZooKeeper connect string is empty"),
    ("h1:abc", r"^bad port 'abc' in ZooKeeper connect string 'h1:abc'"),
    ("h1:0", r"^bad port '0'"),
    ("h1:70000", r"^bad port '70000'"),
    ("h1:", r"^bad port ''"),
    (":2181", r"^bad host ''"),
    ("h1:2181,,h2:2181", r"^bad host ''"),
    ("h 1:2181", r"^bad host 'h 1'"),
    ("h1:2181/", r"^bad chroot '/'"),
    ("h1:2181/kafka/", r"^bad chroot '/kafka/'"),
    ("h1:2181//kafka", r"^bad chroot '//kafka'"),
    ("h1:2181/a/../b", r"^bad chroot '/a/../b'"),
    ("/kafka", r"^bad host ''"),
])
def test_bad_connect_strings_are_invalid_input(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as error:
        parse_connect_string(text)
    assert "\n" not in str(error.value)
    assert error.value.exit_code == 2


def test_bad_connect_string_fails_before_any_network_io() -> None:
    with pytest.raises(InvalidInput):
        connect(ZkSettings("h1:2181/"))


def test_session_works_on_the_chroot(zk_connect: str, zk: KazooClient) -> None:
    zk.create("/brokers/ids/1", b"one", makepath=True)
    with session(ZkSettings(zk_connect)) as client:
        assert client.get("/brokers/ids/1")[0] == b"one"
        client.create("/controller_epoch", b"7")
    assert zk.get("/controller_epoch")[0] == b"7"  # written inside the chroot, not at the root


def test_session_without_chroot_sees_the_root(zk_server: Any, zk_connect: str,
                                              zk: KazooClient) -> None:
    chroot = zk_connect[zk_connect.index("/"):]
    zk.create("/marker", b"m")
    with session(ZkSettings(zk_server.connect_string)) as client:
        assert client.get(f"{chroot}/marker")[0] == b"m"


def test_missing_chroot_is_refused_and_names_it(zk_connect: str) -> None:
    missing = f"{zk_connect}/no-such-kafka"
    with pytest.raises(OperationFailed, match=r"^chroot /kadmin-test/.*/no-such-kafka does not "
                                              r"exist on ZooKeeper at 127\.0\.0\.1:\d+"):
        connect(ZkSettings(missing))


def test_create_chroot_makes_every_level(zk_connect: str, zk: KazooClient) -> None:
    with session(ZkSettings(f"{zk_connect}/a/b/kafka"), create_chroot=True) as client:
        client.create("/brokers", b"")
    assert zk.exists("/a/b/kafka/brokers") is not None


def test_session_closes_the_connection(zk_connect: str, zk: KazooClient) -> None:
    gone = threading.Event()
    with session(ZkSettings(zk_connect)) as client:
        client.create("/owner", ephemeral=True)
        assert zk.exists("/owner", watch=lambda _event: gone.set()) is not None
    # the close finishes within CLOSE_SECONDS on a quiet machine, in the background on a busy one
    assert gone.wait(30), "the session's ephemeral znode outlived the session"
    assert zk.exists("/owner") is None
    deadline = time.monotonic() + 30
    while client.connected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not client.connected


def test_unreachable_server_fails_within_the_connect_timeout() -> None:
    port = free_port()  # nobody listens there
    started = time.monotonic()
    with pytest.raises(OperationFailed,
                       match=rf"^cannot reach ZooKeeper at 127\.0\.0\.1:{port} within 2s, the "
                             r"--connect-timeout$"):
        connect(ZkSettings(f"127.0.0.1:{port}/kafka", connect_timeout=2))
    assert time.monotonic() - started < 10


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port where a server accepts connections and never answers a byte (a hung process,
    a proxy to nowhere): the TCP connection succeeds, the ZooKeeper session never comes."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        with suppress(OSError):
            while True:
                accepted.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()
    for connection in accepted:
        connection.close()


def test_a_server_that_never_answers_fails_within_the_connect_timeout(silent_server: int,
                                                                       kadmin: Any) -> None:
    """Not after the session timeout (30 s here), as when kazoo's start() waited for its
    connection thread, while the message claimed the connect timeout."""
    started = time.monotonic()
    run = kadmin("status", "-z", f"127.0.0.1:{silent_server}", "--connect-timeout", "2",
                 "--session-timeout", "30")
    took = time.monotonic() - started
    assert run.code == 1
    assert run.err == (f"kadmin: error: cannot reach ZooKeeper at 127.0.0.1:{silent_server} "
                       "within 2s, the --connect-timeout\n")
    assert took < 2 + 5


def test_retrying_rides_out_a_server_restart(own_zk_server: EmbeddedZooKeeper) -> None:
    with session(ZkSettings(own_zk_server.connect_string)) as client:
        client.create("/survivor", b"1")
        down = threading.Thread(target=own_zk_server.restart, kwargs={"down_for": 1.5})
        down.start()
        # the server is down once the session has lost its connection; the read must wait
        eventually(lambda: not client.connected, "the connection lost")
        try:
            assert retrying()(client.get, "/survivor")[0] == b"1"
        finally:
            down.join()


def test_retrying_gives_up_at_the_deadline_with_one_line() -> None:
    calls = []

    def always_lost() -> None:
        calls.append(time.monotonic())
        raise ConnectionLoss()

    started = time.monotonic()
    with pytest.raises(OperationFailed, match=r"^ZooKeeper did not answer within 0\.5s, this "
                                              r"test's limit \(ConnectionLoss\)$"):
        retrying(deadline=started + 0.5, limit="0.5s, this test's limit")(always_lost)
    assert len(calls) >= 2
    assert calls[-1] <= started + 0.5 + 0.2  # the backoff never sleeps past the deadline


def test_retrying_does_not_retry_answers(zk: KazooClient) -> None:
    calls = []

    def missing() -> None:
        calls.append(1)
        zk.get("/nope")

    with pytest.raises(NoNodeError):
        retrying()(missing)
    assert calls == [1]
