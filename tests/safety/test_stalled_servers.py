"""Time limits that hold whatever the server does: one that stops answering, one that stalls
every new connection after a few requests. Each test bounds the elapsed time by the limit the
README states plus a margin for a loaded machine (not a speed test: a broken limit took 20 to
150 s more)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import kadmin.cli.app
import kadmin.operations.execute  # noqa: F401  imported before a test's clock starts
from kadmin.embedded import EmbeddedZooKeeper
from kadmin.model import Broker, ClusterSnapshot, OperationFailed
from kadmin.sandbox import Sandbox
from kadmin.zk.reader import read_cluster
from kadmin.zk.session import ZkSettings, session
from tests.helpers import frozen
from tests.integration.zk_proxy import OldServerProxy

pytestmark = pytest.mark.zk

MARGIN = 3.0
"""Seconds past a limit a test accepts: "within a second or two", on a loaded machine."""

SNAPSHOT = ClusterSnapshot(
    brokers={b: Broker(b, f"kafka-{b}", 9092) for b in range(4)},
    topics={f"t{t}": {p: (p % 4, (p + 1) % 4) for p in range(4)} for t in range(4)},
    controller=0, controller_epoch=1)


def test_a_read_ends_at_its_limit_counted_from_the_request_not_the_lost_connection(
        own_zk_server: EmbeddedZooKeeper, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the request's limit (8 s here, 60 s by default) or kazoo's read timeout (20 s
    of the default session) ends the wait first, what follows - the multiRead probe, the
    retries, the reconnects - runs on the request's clock, not a new one."""
    limit = 8.0
    monkeypatch.setattr("kadmin.zk.session.DEFAULT_RETRY_SECONDS", limit)
    with Sandbox(SNAPSHOT, zookeeper=own_zk_server.connect_string, chroot="/kafka") as box, \
            session(ZkSettings(box.connect_string)) as client:
        read_cluster(client)  # the session knows the server reads multiRead: no probe first
        with frozen(own_zk_server):
            started = time.monotonic()
            with pytest.raises(OperationFailed, match=r"^ZooKeeper did not answer within "
                                                      r"8s, kadmin's limit for one request"):
                read_cluster(client)
            took = time.monotonic() - started
    assert took < limit + MARGIN, f"a read took {took:.1f}s against a limit of {limit:g}s"


@pytest.fixture
def stalling(zk_connect: str, tmp_path: Path) -> Iterator[tuple[Sandbox, str]]:
    """SNAPSHOT with its controller on a direct session, and a proxy in front of the server
    that stalls every connection after 4 requests; yields the box and the proxy's connect
    string (with the chroot)."""
    hosts, chroot = zk_connect.split("/", 1)
    box = Sandbox(SNAPSHOT, zookeeper=hosts, chroot="/" + chroot, latency=0.5).start()
    proxy = OldServerProxy(hosts, mode="stall", passes=4)
    try:
        yield box, f"{proxy.connect_string}/{chroot}"
    finally:
        proxy.close()
        box.stop()


COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "reassign": lambda plan: ["reassign", "--plan", str(plan), "--no-health-gate"],
    "elect": lambda _: ["elect", "--topics", "t0,t1"],
    "topics delete": lambda _: ["topics", "delete", "t2", "--yes"],
    "status": lambda _: ["status"],
    "verify": lambda plan: ["verify", "--plan", str(plan)],
    "cluster snapshot": lambda plan: ["cluster", "snapshot", "--out",
                                      str(plan.with_name("snapshot.json"))],
    "throttle show": lambda _: ["throttle", "show"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_timeout_holds_from_the_start_against_a_server_stalling_every_connection(
        stalling: tuple[Sandbox, str], kadmin: Callable[..., Any], tmp_path: Path,
        command: str) -> None:
    """--timeout bounds the whole run, before submission too: the connect, the reads, the
    conflict checks. Whatever the run reached, it ends within the limit (run in process, its
    modules imported: the clock starts with the command, not with Python's imports)."""
    _, connect = stalling
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t0", "partition": p, "replicas": [(p + 2) % 4, (p + 3) % 4]}
        for p in range(4)]}))
    timeout = 8.0
    started = time.monotonic()
    run = kadmin(*COMMANDS[command](plan), "-z", connect, "--timeout", f"{timeout:g}",
                 "--session-timeout", "4")
    took = time.monotonic() - started
    assert took < timeout + MARGIN, (f"{command} took {took:.1f}s with --timeout "
                                     f"{timeout:g}: {run.err}")
    assert run.code in (0, 1), run.err
    assert "Traceback" not in run.err and "internal error" not in run.err, run.err
    if run.code == 1:
        assert "--timeout" in run.err.splitlines()[0], run.err
