"""What more than one test module needs: waiting for an outcome, writing a plan file, a sandbox
fixture of a module's own cluster, a ZooKeeper server frozen, and kadmin run as an operator
runs it (``python -m kadmin``: :class:`KadminProcesses`, the ``kadmin_process`` fixture, or
:func:`run_kadmin`).

Fixtures that every folder shares live in ``tests/conftest.py``; these are plain functions and
classes, imported by the modules that use them (``from tests.helpers import ...``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kadmin.embedded import EmbeddedZooKeeper
from kadmin.model import ClusterSnapshot, PartitionMove
from kadmin.sandbox import Sandbox

TIMEOUT = 60.0
"""Seconds :func:`eventually` waits by default: a bound for a hung test, not a speed target."""


def eventually(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
    """Poll until ``condition()`` is truthy and return it; fail naming ``what`` after
    ``timeout`` seconds. For waits that are someone else's (the controller's, a process's), not
    the code under test's: it never asserts that something did *not* happen."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, f"not reached within {timeout:g} s: {what}"
        time.sleep(0.02)
    return result


Moves = Mapping[tuple[str, int], Sequence[int]] | Iterable[PartitionMove]
"""A plan's entries: ``{(topic, partition): replicas}`` (a ``TopicPartition`` is such a tuple)
or ``PartitionMove`` values."""


def write_plan(path: Path, moves: Moves) -> Path:
    """Write Kafka's reassignment file (its parent folders too), entries sorted by topic then
    partition as in every plan kadmin writes, and return ``path``."""
    if isinstance(moves, Mapping):
        entries = [(t, p, list(r)) for (t, p), r in moves.items()]
    else:
        entries = [(m.topic, m.partition, list(m.replicas)) for m in moves]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r} for t, p, r in sorted(entries)]}))
    return path


def sandbox_fixture(snapshot: ClusterSnapshot, **options: Any) -> Any:
    """A ``box`` fixture for a module: ``snapshot`` loaded into the test's chroot with its
    simulated controller (``Sandbox`` options, e.g. ``stuck_brokers``), through the conftest's
    ``start_sandbox``. Use: ``box = sandbox_fixture(CLUSTER, stuck_brokers={5}, latency=0.0)``."""

    @pytest.fixture
    def box(start_sandbox: Callable[..., Sandbox]) -> Sandbox:
        return start_sandbox(snapshot, **options)

    return box


KADMIN = (sys.executable, "-m", "kadmin")
"""The command an operator types, with this test run's Python."""


@contextmanager
def frozen(server: EmbeddedZooKeeper) -> Iterator[None]:
    """The server's JVM stopped (SIGSTOP): connections stay open, the kernel still accepts new
    ones, nothing is answered. Resumed on the way out, so the fixture can stop it."""
    assert server.pid is not None
    pid = server.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        # the signal is delivered when the kernel next stops each thread: a request sent
        # before then may still be answered, so wait until every thread of the JVM is stopped
        eventually(lambda: _stopped(pid), f"ZooKeeper's JVM (pid {pid}) stopped")
        yield
    finally:
        os.kill(server.pid, signal.SIGCONT)


def _stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` is stopped (state T in /proc; a thread that
    is ending, Z or X, runs no more either)."""
    states = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        states.append(stat[stat.rindex(")") + 2])
    return bool(states) and all(state in "TtZX" for state in states)


def kadmin_env(tmp_path: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a kadmin process: this one's without ``KADMIN_*`` variables (a
    developer's KADMIN_ZOOKEEPER must not reach a test), kadmin importable as this test run
    imports it, ``TMPDIR`` under ``tmp_path`` (so a test sees what kadmin leaves there), then
    ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KADMIN_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    if tmp_path is not None:
        env["TMPDIR"] = str(tmp_path)
    env.update(extra)
    return env


class KadminProcesses:
    """Starts ``python -m kadmin ARGS`` as an operator would (see :func:`kadmin_env`); every
    process still running when the test ends is killed (:meth:`close`, the fixture's
    teardown). Calling the object is :meth:`start`."""

    def __init__(self, tmp_path: Path | None = None) -> None:
        self._tmp_path = tmp_path
        self._started: list[subprocess.Popen[str]] = []

    def start(self, *args: str, env: Mapping[str, str] | None = None, **popen: Any
              ) -> subprocess.Popen[str]:
        """The process, its stdout and stderr pipes as text (``popen``: more of ``Popen``'s
        arguments, e.g. ``cwd``, ``preexec_fn``, ``stdout``); ``env`` adds variables."""
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        process = subprocess.Popen([*KADMIN, *args], env=kadmin_env(self._tmp_path, **env or {}),
                                   text=True, **popen)
        self._started.append(process)
        return process

    __call__ = start

    def run(self, *args: str, timeout: float = 300, env: Mapping[str, str] | None = None,
            **popen: Any) -> subprocess.CompletedProcess[str]:
        """Run to the end (at most ``timeout`` seconds) and return its exit code and output."""
        process = self.start(*args, env=env, **popen)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"kadmin {' '.join(args)} did not end within {timeout:g} s; "
                        f"stderr: {err[-2000:]}")
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def close(self) -> None:
        for process in self._started:
            if process.poll() is None:
                process.kill()
            process.communicate()
        self._started.clear()


def run_kadmin(*args: str, cwd: Path, timeout: float = 300,
               env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m kadmin ARGS`` in ``cwd`` run to its end, for tests without the
    ``kadmin_process`` fixture (:meth:`KadminProcesses.run`; the test fails rather than hang
    past ``timeout``, on a pipe opened for writing, say)."""
    processes = KadminProcesses()
    try:
        return processes.run(*args, timeout=timeout, env=env, cwd=cwd)
    finally:
        processes.close()


def kill_when_submitted(process: subprocess.Popen[str], batch: int) -> None:
    """SIGKILL a ``reassign --json`` process as soon as it reports batch ``batch`` submitted
    (the batch is then in ZooKeeper); asserts it died of the signal."""
    assert process.stdout is not None
    for line in process.stdout:
        event = json.loads(line)
        if event["event"] == "batch_submitted" and event["batch"] == batch:
            process.send_signal(signal.SIGKILL)
            break
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
