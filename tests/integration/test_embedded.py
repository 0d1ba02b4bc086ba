"""The embedded ZooKeeper: a real server from PySpark's jars, started, restarted and reaped."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kadmin import embedded
from kadmin.embedded import EmbeddedZooKeeper
from kadmin.model import OperationFailed
from tests.helpers import KadminProcesses, eventually

pytestmark = pytest.mark.zk


def _client(server: EmbeddedZooKeeper) -> KazooClient:
    client = KazooClient(hosts=server.connect_string, timeout=10)
    client.start(timeout=30)
    return client


def _wait_gone(pid: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie still answers kill(0); its /proc status says so
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "\nState:\tZ" in status.read_text():
            return True
        time.sleep(0.1)
    return False


def test_pyspark_jars_dir_has_zookeeper() -> None:
    assert any(embedded.pyspark_jars_dir().glob("zookeeper-*.jar"))


def test_find_java_without_java_explains_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OperationFailed, match=r"^Java not found: install a JDK 17\+"):
        embedded.find_java()


def test_start_stop_restart_keeps_data_and_port(own_zk_server: EmbeddedZooKeeper) -> None:
    server = own_zk_server
    assert server.connect_string == f"127.0.0.1:{server.port}"
    client = _client(server)
    client.create("/kafka/brokers/topics/foo", b'{"version":1,"partitions":{}}', makepath=True)
    client.stop()

    server.restart(down_for=0.2)

    client = _client(server)
    assert client.get("/kafka/brokers/topics/foo")[0] == b'{"version":1,"partitions":{}}'
    client.stop()
    server.stop()
    server.stop()  # idempotent
    assert not server.running
    assert not embedded.is_serving("127.0.0.1", server.port)


def test_clients_reconnect_across_a_restart(own_zk_server: EmbeddedZooKeeper) -> None:
    client = _client(own_zk_server)
    try:
        client.create("/survivor", b"1")
        own_zk_server.restart(down_for=0.5)
        # the same client and session carry on once the server is back
        assert client.retry(client.get, "/survivor")[0] == b"1"
    finally:
        client.stop()


def test_restart_from_a_short_lived_thread_keeps_the_server(
        own_zk_server: EmbeddedZooKeeper) -> None:
    # Linux's parent-death signal follows the forking *thread*: the JVM must not die with it
    worker = threading.Thread(target=own_zk_server.restart)
    worker.start()
    worker.join()
    # the kernel sends the parent-death signal while the thread exits, before the thread
    # leaves /proc: once it has left, a JVM that got the signal can answer nothing more
    eventually(lambda: not Path(f"/proc/self/task/{worker.native_id}").exists(),
               "the forking thread gone from the kernel")
    assert own_zk_server.running
    assert embedded.is_serving("127.0.0.1", own_zk_server.port)


def test_listens_on_loopback_only_and_logs_to_its_file(own_zk_server: EmbeddedZooKeeper) -> None:
    log = own_zk_server.log_file.read_text()
    assert " INFO " not in log  # quiet: warnings and errors only
    listening = _listening_addresses(own_zk_server.port)
    # 127.0.0.1 in /proc's byte order, plain (IPv4 socket) or IPv4-mapped (Java's dual stack)
    assert listening
    assert listening <= {"0100007F", "0000000000000000FFFF00000100007F"}


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (IPv4 and IPv6), from /proc."""
    found = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            pytest.skip("needs Linux's /proc/net/tcp")
        for line in table.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, port_hex = local.partition(":")
            if state == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_explicit_data_dir_is_kept_after_close(tmp_path: Path) -> None:
    data = tmp_path / "zk-data"
    with EmbeddedZooKeeper(data_dir=data, log_file=tmp_path / "zk.log") as server:
        client = _client(server)
        client.create("/kept", b"yes")
        client.stop()
    assert (data / "version-2").is_dir()
    with EmbeddedZooKeeper(data_dir=data) as server:
        client = _client(server)
        assert client.get("/kept")[0] == b"yes"
        client.stop()


def test_extra_config_reaches_the_server(tmp_path: Path) -> None:
    # the server only answers "ruok" when we whitelist it through the extra zoo.cfg lines
    with EmbeddedZooKeeper(config={"4lw.commands.whitelist": "srvr,ruok"}) as server, \
            socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"ruok")
        assert sock.recv(16) == b"imok"


def test_port_in_use_is_refused_with_one_line(own_zk_server: EmbeddedZooKeeper) -> None:
    with pytest.raises(OperationFailed, match=rf"port {own_zk_server.port} .* is in use"):
        EmbeddedZooKeeper(port=own_zk_server.port).start()


def test_broken_config_fails_with_the_log_tail(tmp_path: Path) -> None:
    server = EmbeddedZooKeeper(config={"tickTime": "not-a-number"}, log_file=tmp_path / "zk.log")
    with pytest.raises(OperationFailed, match=r"exited with code \d+ during start-up") as error:
        server.start()
    server.close()
    assert "\n" not in str(error.value)
    assert any("tickTime" in line or "NumberFormatException" in line
               for line in error.value.details)


def _python(script: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], env=env,
                            stdout=subprocess.PIPE, text=True, **kwargs)  # type: ignore[call-overload]


def test_server_dies_with_a_killed_parent() -> None:
    parent = _python("""
        import time
        from kadmin.embedded import EmbeddedZooKeeper
        server = EmbeddedZooKeeper().start()
        print(server.pid, flush=True)
        time.sleep(600)
    """)
    assert parent.stdout is not None
    java_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    assert _wait_gone(java_pid), f"orphaned ZooKeeper JVM {java_pid} survived its parent"


def test_serve_forever_stops_cleanly_on_sigterm() -> None:
    parent = _python("""
        from kadmin.embedded import EmbeddedZooKeeper
        with EmbeddedZooKeeper() as server:
            # announced once SIGTERM stops it cleanly: the test signals as soon as it reads this
            server.serve_forever(ready=lambda: print(server.port, server.pid, flush=True))
        print("stopped", flush=True)
    """)
    assert parent.stdout is not None
    port, java_pid = map(int, parent.stdout.readline().split())
    assert embedded.is_serving("127.0.0.1", port)
    parent.send_signal(signal.SIGTERM)
    rest, _ = parent.communicate(timeout=30)
    assert parent.returncode == 0
    assert rest == "stopped\n"  # nothing of the server's log on our stdout
    assert _wait_gone(java_pid)
    assert not embedded.is_serving("127.0.0.1", port)


def test_start_never_takes_another_server_on_its_port_for_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The port was free when checked, but another server bound it before this JVM did (two
    test runs on one machine met it): start fails and says so, instead of returning a server
    whose clients would talk to the other one."""
    with EmbeddedZooKeeper() as other:
        monkeypatch.setattr(embedded, "_port_is_free", lambda _port: True)  # the race, forced
        late = EmbeddedZooKeeper(port=other.port)
        try:
            with pytest.raises(OperationFailed, match=r"^embedded ZooKeeper exited with code "):
                late.start()
            assert not late.running
        finally:
            late.close()
        assert other.running and embedded.is_serving("127.0.0.1", other.port)


def test_serve_forever_reports_a_server_that_died() -> None:
    with EmbeddedZooKeeper() as server:
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
        with pytest.raises(OperationFailed, match="embedded ZooKeeper stopped unexpectedly"):
            server.serve_forever()
        assert not server.running


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_zk_serve_stopped_leaves_no_temporary_folder(tmp_path: Path, stop: signal.Signals,
                                                     kadmin_process: KadminProcesses) -> None:
    serve = kadmin_process("zk", "serve", "--port", "0")
    assert serve.stdout is not None
    line = serve.stdout.readline()
    assert line.startswith("ZooKeeper listening on 127.0.0.1:"), (line, serve.stderr)
    assert [p.name[:10] for p in tmp_path.iterdir()] == ["kadmin-zk-"]
    serve.send_signal(stop)
    _, err = serve.communicate(timeout=60)
    assert serve.returncode == 0, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("data_dir", "message"), [
    ("file", "is not a folder; it cannot be ZooKeeper's data folder"),
    ("/proc/kadmin-data", "/proc/kadmin-data cannot be ZooKeeper's data folder: "),
])
def test_zk_serve_on_an_unusable_data_dir_exits_2_and_leaves_nothing(
        tmp_path: Path, data_dir: str, message: str, kadmin_process: KadminProcesses) -> None:
    (tmp_path / "file").write_text("not a folder")
    serve = kadmin_process("zk", "serve", "--port", "0", "--data-dir",
                           str(tmp_path / data_dir) if data_dir == "file" else data_dir)
    _, err = serve.communicate(timeout=60)
    assert serve.returncode == 2, err
    assert err.startswith("kadmin: error: ") and message in err and len(err.splitlines()) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


@pytest.mark.parametrize("command", [("zk", "serve", "--port", "0"),
                                     ("sandbox", "--port", "0", "--broker-count", "3",
                                      "--topic-count", "2", "--rack-count", "0")])
def test_serving_commands_print_one_json_line_to_use_and_stop_them(
        tmp_path: Path, command: tuple[str, ...], kadmin_process: KadminProcesses) -> None:
    """`--json`: one line with the connect string, the process ids and how to stop, so a
    script need not scrape the text; following its `stop` stops everything."""
    import json
    serving = kadmin_process(*command, "--json")
    assert serving.stdout is not None
    line = json.loads(serving.stdout.readline())
    assert set(line) == {"connect_string", "pids", "stop"}
    assert line["pids"]["kadmin"] == serving.pid
    assert line["stop"] == f"kill -TERM {serving.pid} (or Ctrl-C): ZooKeeper stops with it"
    zookeeper = line["pids"]["zookeeper"]
    assert b"zookeeper" in Path(f"/proc/{zookeeper}/cmdline").read_bytes().lower()
    client = KazooClient(hosts=line["connect_string"], timeout=30)
    client.start(timeout=30)
    try:
        if command[0] == "sandbox":
            assert sorted(client.get_children("/brokers/ids")) == ["0", "1", "2"]
        else:
            assert client.exists("/zookeeper") is not None
    finally:
        client.stop()
        client.close()
    os.kill(serving.pid, signal.SIGTERM)
    out, err = serving.communicate(timeout=60)
    assert serving.returncode == 0, err
    assert out == ""  # the one line, nothing after it
    assert not os.path.exists(f"/proc/{zookeeper}") or \
        Path(f"/proc/{zookeeper}/stat").read_text().split()[2] == "Z"
