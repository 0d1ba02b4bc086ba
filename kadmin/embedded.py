"""A real ZooKeeper server run from the jars PySpark already ships.

kadmin never fakes ZooKeeper: tests, the sandbox and ``kadmin zk serve`` all talk to this real
server. PySpark is a dependency anyway and bundles ZooKeeper, so the only extra requirement is a
JDK. The server listens on loopback only and logs to a file, never to kadmin's own output.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Any

from kadmin.model import InvalidInput, OperationFailed
from kadmin.stop_signals import sleep_while, until_stop_signal

LOOPBACK = "127.0.0.1"
_LOG_TAIL_LINES = 20
_STOP_GRACE_SECONDS = 10.0

# Quiet by default: only warnings and errors, which is what an operator needs when start-up
# fails. The JVM's own stdout/stderr go to the same file, so fatal JVM errors land there too.
_LOG4J2_PROPERTIES = """\
status = error
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = %d{ISO8601} %-5p [%t] %c{1}: %m%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
"""


SPARK_EXTRA_HINT = "pip install 'kadmin[spark]'"
"""How to get PySpark, an extra of kadmin: the hook and the plain install do without it."""


def pyspark_jars_dir() -> Path:
    """PySpark's ``jars`` folder, found without importing PySpark (importing it is slow)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise OperationFailed(
            "PySpark is not installed: the embedded ZooKeeper runs from its jars "
            f"({SPARK_EXTRA_HINT})"
        )
    jars = Path(spec.origin).parent / "jars"
    if not any(jars.glob("zookeeper-[0-9]*.jar")):
        raise OperationFailed(f"no zookeeper-*.jar in {jars}: this PySpark does not bundle ZooKeeper")
    return jars


def find_java() -> str:
    """The ``java`` of $JAVA_HOME, else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise OperationFailed(
            "Java not found: install a JDK 17+ (e.g. apt-get install openjdk-17-jre-headless) "
            "or set JAVA_HOME"
        )
    return found


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    # SO_REUSEADDR like ZooKeeper's own listener, so our own TIME_WAIT connections after a
    # restart do not count as "in use".
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
        return True


def is_serving(host: str, port: int, timeout: float = 1.0) -> bool:
    """True once the server answers requests: the ``srvr`` four-letter word (the one command
    ZooKeeper whitelists by default) reports a ``Mode`` only when the server is serving."""
    return b"Mode:" in _four_letter_word(host, port, b"srvr", timeout)


def _four_letter_word(host: str, port: int, word: bytes, timeout: float = 1.0) -> bytes:
    """The server's reply to a four-letter word; empty when nothing answers."""
    reply = b""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(word)
            while chunk := sock.recv(4096):
                reply += chunk
    except OSError:
        return b""
    return reply


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes Linux kill the JVM when the process that started it dies,
    even by SIGKILL, so a crashed test run leaves no orphaned server behind."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


def _writable_folder(path: Path, what: str) -> None:
    """Create ``path`` if need be and prove a file can be made in it, so a data folder that is a
    file, or under /proc, is an input error naming it rather than a JVM that dies at start."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except FileExistsError:
        raise InvalidInput(f"{path} is not a folder; it cannot be {what}") from None
    except OSError as exc:
        raise InvalidInput(f"{path} cannot be {what}: {exc.strerror or exc}") from None


class _Launcher:
    """Forks every server JVM from one daemon thread that lives as long as the process.

    Linux sends the parent-death signal when the *thread* that forked exits, not the process:
    a server (re)started from a short-lived thread (a test restarting it in the background, a
    sandbox worker) would be killed with that thread. A daemon thread also outlives atexit
    handlers, so a normal exit still stops servers gracefully.
    """

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[Future[subprocess.Popen[bytes]], dict[str, Any]]]
        self._requests = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def popen(self, **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="kadmin-zk-launcher",
                                                daemon=True)
                self._thread.start()
        future: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put((future, kwargs))
        return future.result()

    def _serve(self) -> None:
        while True:
            future, kwargs = self._requests.get()
            try:
                future.set_result(subprocess.Popen(preexec_fn=_die_with_parent(), **kwargs))
            except BaseException as error:  # handed to the caller's thread
                future.set_exception(error)


_launcher = _Launcher()


class EmbeddedZooKeeper:
    """One standalone ZooKeeper server in a child JVM, on 127.0.0.1.

    ``port=0`` picks a free port once, at construction, and keeps it across restarts so
    clients can reconnect. ``data_dir=None`` keeps the data in a temporary folder that
    :meth:`close` (or leaving the ``with`` block) removes; an explicit data dir is kept.
    ``config`` adds or overrides zoo.cfg lines (e.g. ``authProvider.1``).
    """

    def __init__(
        self,
        port: int = 0,
        data_dir: Path | None = None,
        *,
        config: Mapping[str, str] = {},
        jvm_options: Sequence[str] = (),
        log_file: Path | None = None,
    ) -> None:
        self.port = port or free_port()
        self._data_dir = data_dir
        self._config = dict(config)
        self._jvm_options = tuple(jvm_options)
        self._log_file = log_file
        self._workdir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def connect_string(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self._data_dir if self._data_dir is not None else self._work() / "data"

    @property
    def log_file(self) -> Path:
        return self._log_file if self._log_file is not None else self._work() / "zookeeper.log"

    @property
    def pid(self) -> int | None:
        """The JVM's process id while it runs."""
        return self._process.pid if self.running and self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _work(self) -> Path:
        """The private folder for zoo.cfg, the log4j2 config and (by default) data and log."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="kadmin-zk-"))
        return self._workdir

    def _zoo_cfg(self) -> str:
        settings = {
            "tickTime": "2000",
            "dataDir": str(self.data_dir),
            "clientPort": str(self.port),
            "clientPortAddress": LOOPBACK,
            "admin.enableServer": "false",
            # Tests, the sandbox and the executor open many sessions from one host; ZooKeeper's
            # default of 60 per client IP would refuse connections mid-run.
            "maxClientCnxns": "0",
            "maxCnxns": "0",  # the default too, but unset it logs a warning at every start
            # A rehearsal server: losing the last writes on a power cut is acceptable, an fsync
            # per transaction on a shared CI disk is not.
            "forceSync": "no",
            **self._config,
        }
        # conf tells start() that the server answering the port is this one (by its dataDir)
        words = {w.strip() for w in settings.get("4lw.commands.whitelist", "srvr").split(",")}
        settings["4lw.commands.whitelist"] = ",".join(sorted(words | {"srvr", "conf"}))
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _command(self) -> list[str]:
        work = self._work()
        (work / "zoo.cfg").write_text(self._zoo_cfg(), encoding="utf-8")
        (work / "log4j2.properties").write_text(_LOG4J2_PROPERTIES, encoding="utf-8")
        return [
            find_java(),
            "-Xmx512m",
            "-XX:+UseSerialGC",  # fewer GC threads: CI machines have few cores
            f"-Dlog4j2.configurationFile={work / 'log4j2.properties'}",
            "-Dzookeeper.jmx.log4j.disable=true",
            *self._jvm_options,
            "-cp",
            str(pyspark_jars_dir() / "*"),
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            str(work / "zoo.cfg"),
        ]

    def start(self, timeout: float = 60.0) -> EmbeddedZooKeeper:
        """Start the JVM and return once a client can use the server. Idempotent."""
        if self.running:
            return self
        if not _port_is_free(self.port):
            raise OperationFailed(f"cannot start ZooKeeper: port {self.port} on {LOOPBACK} is in use")
        command = self._command()
        _writable_folder(self.data_dir, "ZooKeeper's data folder")
        _writable_folder(self.log_file.parent, "ZooKeeper's log folder")
        with open(self.log_file, "ab") as log:
            self._process = _launcher.popen(
                args=command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Own process group: Ctrl-C in a terminal reaches kadmin only, which then stops
                # the server cleanly (serve_forever) instead of racing the JVM's own handler.
                start_new_session=True,
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while not self._answering():
            code = self._process.poll()
            if code is not None:
                self._process = None
                atexit.unregister(self.stop)
                raise self.failure(f"embedded ZooKeeper exited with code {code} during start-up")
            if time.monotonic() >= deadline:
                self.stop()
                raise self.failure(
                    f"embedded ZooKeeper did not start on {self.connect_string} within {timeout:g}s"
                )
            time.sleep(0.1)
        return self

    def _answering(self) -> bool:
        """Whether this server serves the port: ``conf`` names its data folder only once it is
        serving (before, it answers "not currently serving"). Not just any server: the port was
        free when checked, but another process can bind it before the JVM does (seen with two
        test runs on one machine); this JVM then exits, and a client would otherwise talk to
        the other server."""
        conf = _four_letter_word(LOOPBACK, self.port, b"conf")
        return f"dataDir={self.data_dir / 'version-2'}\n".encode() in conf

    def failure(self, message: str) -> OperationFailed:
        """The error to raise, with the end of the server log as detail lines."""
        try:
            with open(self.log_file, encoding="utf-8", errors="replace") as log:
                tail = tuple(line.rstrip("\n") for line in deque(log, _LOG_TAIL_LINES))
        except OSError:
            tail = ()
        return OperationFailed(f"{message} (log: {self.log_file})", details=tail)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period. Idempotent; keeps data and port."""
        process, self._process = self._process, None
        atexit.unregister(self.stop)
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down for ``down_for`` seconds, start again on the same port and data, so
        znodes survive and clients see a disconnection, not a new cluster."""
        self.stop()
        if down_for > 0:
            time.sleep(down_for)
        self.start()

    def close(self) -> None:
        """Stop and remove the temporary folder (with the data, unless ``data_dir`` was given)."""
        self.stop()
        workdir, self._workdir = self._workdir, None
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)

    def serve_forever(self, ready: Callable[[], object] | None = None) -> None:
        """Block until SIGINT or SIGTERM (or the server dies), then stop the server.

        ``ready`` is called once those signals stop the server cleanly: announce the server
        there, not before, or a signal sent as soon as the announcement is seen kills the
        process before it can stop the server. Must run in the main thread (Python only
        delivers signals there).
        """
        try:
            with until_stop_signal():
                if ready is not None:
                    ready()
                sleep_while(lambda: self.running)
                raise self.failure("embedded ZooKeeper stopped unexpectedly")
        finally:
            self.stop()

    def __enter__(self) -> EmbeddedZooKeeper:
        try:
            return self.start()
        except BaseException:  # __exit__ does not run: remove the temporary folder here
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"EmbeddedZooKeeper({self.connect_string}, {state})"

