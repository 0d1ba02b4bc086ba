"""Fixtures shared by every test folder: a real ZooKeeper and a private chroot per test.

Which server, in order: ``KADMIN_TEST_ZOOKEEPER=host:port`` (an external server), a
``zookeeper:3.8`` container when a Docker engine answers, else the embedded server from PySpark's
jars (the default on a machine with Java and no Docker). Each test works under its own chroot,
so tests never see each other's znodes and one session-wide server is enough.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import settings
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.interfaces import IAsyncResult

from kadmin.embedded import EmbeddedZooKeeper, is_serving
from kadmin.model import ClusterSnapshot
from kadmin.sandbox import Sandbox
from tests.helpers import KadminProcesses

settings.register_profile("kadmin", deadline=None)
settings.load_profile("kadmin")
"""No per-example deadline: the suite shares 2 cores with ZooKeeper's JVM and a garbage
collection pause fails a deadline ("Unreliable test timings") without anything being wrong;
how fast the code is, bench/ measures."""

T = TypeVar("T")
TEST_ROOT = "/kadmin-test"
DELETE_BATCH = 1000
ZOOKEEPER_IMAGE = "zookeeper:3.8"


@dataclass(frozen=True)
class ExternalZooKeeper:
    """A server this test run did not start and must not stop."""

    connect_string: str


def _docker_reachable() -> bool:
    """A quick ping with a short timeout: never let a missing engine hang the test run."""
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def _container_zookeeper() -> Iterator[ExternalZooKeeper]:
    from testcontainers.core.container import DockerContainer

    with DockerContainer(ZOOKEEPER_IMAGE).with_exposed_ports(2181) as container:
        host = container.get_container_host_ip()
        port = int(container.get_exposed_port(2181))
        deadline = time.monotonic() + 60
        while not is_serving(host, port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{ZOOKEEPER_IMAGE} container did not serve on {host}:{port}")
            time.sleep(0.2)
        yield ExternalZooKeeper(f"{host}:{port}")


@pytest.fixture(scope="session")
def zk_server() -> Iterator[ExternalZooKeeper | EmbeddedZooKeeper]:
    """The ZooKeeper every test shares; anything with ``.connect_string`` ("host:port")."""
    external = os.environ.get("KADMIN_TEST_ZOOKEEPER")
    if external:
        yield ExternalZooKeeper(external)
    elif _docker_reachable():
        yield from _container_zookeeper()
    else:
        with EmbeddedZooKeeper() as server:
            yield server


@pytest.fixture
def zk_root(zk_server: ExternalZooKeeper | EmbeddedZooKeeper) -> Iterator[KazooClient]:
    """A client on the server's root, to create and remove the test's chroot. Per test, not per
    session: kazoo's connection thread draws from the global ``random`` on every wake-up, and
    a client alive while hypothesis generates data makes hypothesis warn (later: fail)."""
    with _kazoo_session(zk_server.connect_string) as client:
        yield client


def _chroot_name(test_name: str) -> str:
    # znode names allow almost anything, but shell users copy these paths: keep them plain
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)[:80].strip("._") or "test"


@pytest.fixture
def zk_connect(request: pytest.FixtureRequest, zk_root: KazooClient,
               zk_server: ExternalZooKeeper | EmbeddedZooKeeper) -> Iterator[str]:
    """"host:port/kadmin-test/<test>-<uuid8>": an empty chroot of this test's own."""
    chroot = f"{TEST_ROOT}/{_chroot_name(request.node.name)}-{uuid.uuid4().hex[:8]}"
    zk_root.ensure_path(chroot)
    yield f"{zk_server.connect_string}{chroot}"
    zk_root.retry(_delete_tree, zk_root, chroot)


def _delete_tree(client: KazooClient, root: str) -> None:
    """kazoo's ``delete(recursive=True)`` costs two round trips per znode, minutes for a test
    that loaded a large cluster; this lists a tree level at a time, pipelined, and deletes
    deepest first in multi-operation transactions."""
    levels: list[list[str]] = [[root]]
    while levels[-1]:
        listings = [(path, client.get_children_async(path)) for path in levels[-1]]
        levels.append([f"{path}/{child}" for path, result in listings
                       for child in _unless_gone(result, list[str]())])
    doomed = [path for level in reversed(levels) for path in level]
    for start in range(0, len(doomed), DELETE_BATCH):
        batch = doomed[start:start + DELETE_BATCH]
        transaction = client.transaction()
        for path in batch:
            transaction.delete(path)
        if any(isinstance(outcome, Exception) for outcome in transaction.commit()):
            # an ephemeral vanished meanwhile (the whole transaction is refused): one by one
            for result in [client.delete_async(path) for path in batch]:
                _unless_gone(result, None)


def _unless_gone(result: IAsyncResult, default: T) -> T:
    """The result, or ``default`` for a znode that vanished meanwhile (an ephemeral)."""
    try:
        return result.get()
    except NoNodeError:
        return default


@pytest.fixture
def zk(zk_connect: str) -> Iterator[KazooClient]:
    """A started kazoo client on this test's chroot (plain kazoo: independent of kadmin's own
    session code, so tests check kadmin against it)."""
    with _kazoo_session(zk_connect) as client:
        yield client


@contextmanager
def _kazoo_session(hosts: str) -> Iterator[KazooClient]:
    client = KazooClient(hosts=hosts, timeout=30)
    client.start(timeout=30)
    try:
        yield client
    finally:
        client.stop()
        client.close()


@pytest.fixture(scope="session")
def kazoo_session() -> Callable[[str], AbstractContextManager[KazooClient]]:
    """Open another plain kazoo session (a second kadmin, the controller, a server's root)."""
    return _kazoo_session


@dataclass(frozen=True)
class CliRun:
    code: int
    out: str
    err: str


@pytest.fixture
def kadmin(capsys: pytest.CaptureFixture[str], tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliRun]:
    """Run the real console entry point (in process) in a scratch working directory and return
    its exit code and output."""
    from kadmin.cli.app import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KADMIN_ZOOKEEPER", raising=False)

    def run(*args: str) -> CliRun:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main(list(args))
        captured = capsys.readouterr()
        return CliRun(int(exit_info.value.code or 0), captured.out, captured.err)

    return run


@pytest.fixture
def start_sandbox(zk_connect: str, tmp_path: Path) -> Iterator[Callable[..., Sandbox]]:
    """Load a snapshot into this test's chroot and run the simulated controller on it,
    recording its actions to ``tmp_path/controller.jsonl``."""
    hosts, chroot = zk_connect.split("/", 1)
    boxes: list[Sandbox] = []

    def start(snapshot: ClusterSnapshot, **options: Any) -> Sandbox:
        options.setdefault("record_path", tmp_path / "controller.jsonl")
        box = Sandbox(snapshot, zookeeper=hosts, chroot="/" + chroot, **options).start()
        boxes.append(box)
        return box

    yield start
    for box in boxes:
        box.stop()


@pytest.fixture
def own_zk_server() -> Iterator[EmbeddedZooKeeper]:
    """A private embedded server for tests that stop, restart or misconfigure it."""
    with EmbeddedZooKeeper() as server:
        yield server


@pytest.fixture
def kadmin_process(tmp_path: Path) -> Iterator[KadminProcesses]:
    """Starts ``python -m kadmin ARGS`` as an operator would (``kadmin_process(*args)``, or
    ``kadmin_process.run(*args)`` to its end), its temporary folders (TMPDIR) under the test's
    ``tmp_path`` so a test can see what it leaves; killed at teardown if still running."""
    processes = KadminProcesses(tmp_path)
    yield processes
    processes.close()


ZOOKEEPER_FIXTURES = frozenset({"zk_server", "own_zk_server"})
"""A test that uses one of these (directly or through another fixture) talks to a real
ZooKeeper and must carry the ``zk`` marker, so ``-m "not zk"`` leaves it out."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    unmarked = [item.nodeid for item in items
                if ZOOKEEPER_FIXTURES & set(getattr(item, "fixturenames", ()))
                and item.get_closest_marker("zk") is None]
    if unmarked:
        raise pytest.UsageError(
            f"{len(unmarked)} test(s) use a real ZooKeeper without the zk marker "
            f"(pytestmark = pytest.mark.zk): {', '.join(unmarked[:10])}"
            + (f" and {len(unmarked) - 10} more" if len(unmarked) > 10 else ""))
