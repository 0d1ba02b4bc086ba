"""Kerberos (SASL GSSAPI) for real: a local MIT KDC (Debian's krb5-kdc, ``krb5kdc -n`` on a
loopback port with its own KRB5_CONFIG and KDC profile), a ZooKeeper from PySpark's jars whose
JAAS ``Server`` section logs in from a keytab and that serves only SASL-authenticated sessions
(``sessionRequireClientSASLAuth=true``), and kadmin run as an operator runs it, with a ticket
from ``kinit`` in a private KRB5CCNAME.

Skipped, saying why, where the MIT Kerberos tools or the ``kerberos`` module are missing
(``tools/install.sh --test`` installs both)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from kadmin.embedded import EmbeddedZooKeeper, free_port
from kadmin.model import Broker, ClusterSnapshot, PartitionState, TopicAssignment
from kadmin.sandbox import SimulatedController, controller_of, load_cluster
from tests.helpers import run_kadmin

pytestmark = pytest.mark.zk

REALM = "KADMIN.TEST"
MASTER_PASSWORD = "kdc-Master-5ecret"
"""The KDC database's master password: looked for in everything kadmin prints."""
SERVER_PRINCIPAL = f"zookeeper/localhost@{REALM}"
CLIENT = f"kadmin@{REALM}"
OTHER = f"someone@{REALM}"
TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit", "klist")
TIME_LIMIT = 120


def _tool(name: str) -> str | None:
    """Debian puts the KDC's tools in /usr/sbin, which a user's PATH may lack."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def _missing() -> str | None:
    absent = [name for name in TOOLS if _tool(name) is None]
    if absent:
        return (f"MIT Kerberos tools not installed ({', '.join(absent)}): apt-get install "
                "krb5-kdc krb5-user, or bash tools/install.sh --test")
    if importlib.util.find_spec("kerberos") is None:
        return ("the kerberos module is not installed: pip install 'kadmin[kerberos]' (builds "
                "against libkrb5-dev), or bash tools/install.sh --test")
    return None


@dataclass(frozen=True)
class Realm:
    folder: Path
    port: int

    @property
    def config(self) -> Path:
        return self.folder / "krb5.conf"

    def keytab(self, principal: str) -> Path:
        return self.folder / f"{principal.split('@')[0].replace('/', '_')}.keytab"

    def env(self, cache: Path | str, config: Path | None = None) -> dict[str, str]:
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("KADMIN_", "KRB5"))}
        return {**clean, "KRB5_CONFIG": str(config or self.config),
                "KRB5CCNAME": f"FILE:{cache}", "PYTHONPATH": os.pathsep.join(sys.path)}

    def kinit(self, principal: str, cache: Path, *, lifetime: str | None = None) -> Path:
        command = [_tool("kinit") or "kinit", *(["-l", lifetime] if lifetime else []),
                   "-kt", str(self.keytab(principal)), principal]
        subprocess.run(command, env=self.env(cache), check=True, capture_output=True,
                       timeout=TIME_LIMIT)
        return cache

    def has_valid_ticket(self, cache: Path) -> bool:
        return subprocess.run([_tool("klist") or "klist", "-s"], env=self.env(cache),
                              timeout=TIME_LIMIT).returncode == 0


def _write_configs(folder: Path, port: int, kdc_port: int | None = None) -> None:
    (folder / "krb5.conf").write_text(f"""\
[libdefaults]
  default_realm = {REALM}
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
[realms]
  {REALM} = {{
    kdc = 127.0.0.1:{kdc_port or port}
  }}
[domain_realm]
  localhost = {REALM}
  127.0.0.1 = {REALM}
""")
    (folder / "kdc.conf").write_text(f"""\
[kdcdefaults]
  kdc_listen = 127.0.0.1:{port}
  kdc_tcp_listen = 127.0.0.1:{port}
[realms]
  {REALM} = {{
    database_name = {folder}/principal
    key_stash_file = {folder}/stash
    acl_file = {folder}/kadm5.acl
    max_life = 1h
  }}
[logging]
  kdc = FILE:{folder}/kdc.log
""")


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def realm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Realm]:
    """A KDC of its own: database, the server's, kadmin's and another principal with keytabs."""
    reason = _missing()
    if reason is not None:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("kdc")
    port = free_port()
    _write_configs(folder, port)
    env = {**os.environ, "KRB5_CONFIG": str(folder / "krb5.conf"),
           "KRB5_KDC_PROFILE": str(folder / "kdc.conf")}
    subprocess.run([_tool("kdb5_util"), "create", "-s", "-r", REALM, "-P", MASTER_PASSWORD],
                   env=env, check=True, capture_output=True, timeout=TIME_LIMIT)
    found = Realm(folder, port)
    for principal in (SERVER_PRINCIPAL, CLIENT, OTHER):
        for query in (f"addprinc -randkey {principal}",
                      f"ktadd -k {found.keytab(principal)} {principal}"):
            subprocess.run([_tool("kadmin.local"), "-r", REALM, "-q", query], env=env,
                           check=True, capture_output=True, timeout=TIME_LIMIT)
    with open(folder / "krb5kdc.out", "wb") as log:
        kdc = subprocess.Popen([_tool("krb5kdc"), "-n", "-r", REALM], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + TIME_LIMIT
        while not _listening(port):
            assert kdc.poll() is None, (folder / "krb5kdc.out").read_text()
            assert time.monotonic() < deadline, "the KDC did not start listening"
            time.sleep(0.05)
        yield found
    finally:
        kdc.terminate()
        kdc.wait(TIME_LIMIT)


@dataclass(frozen=True)
class Kerberized:
    realm: Realm
    port: int
    cache: Path
    """kadmin@KADMIN.TEST's ticket cache (kinit from its keytab)."""
    sasl: Path
    """The SASL file kadmin is given: GSSAPI, the principal, no "service" (the default)."""


def cluster_snapshot() -> ClusterSnapshot:
    brokers = {b: Broker(b, f"h{b}", 9092) for b in range(3)}
    topics: dict[str, TopicAssignment] = {"orders": {0: (0, 1, 2), 1: (1, 2, 0)},
                                          "old": {0: (2, 0, 1)}}
    states = {"orders": {1: PartitionState(2, (1, 2, 0))}}
    return ClusterSnapshot(brokers, topics, states, controller=0, controller_epoch=1)


@pytest.fixture(scope="module")
def kerberized(realm: Realm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kerberized]:
    """The ZooKeeper, a cluster in it, and the simulated controller, both logged in as kadmin
    over GSSAPI (the brokers' principal, as Kafka's own tools authenticate)."""
    folder = tmp_path_factory.mktemp("gssapi")
    jaas = folder / "jaas.conf"
    jaas.write_text(f"""\
Server {{
  com.sun.security.auth.module.Krb5LoginModule required
  useKeyTab=true
  keyTab="{realm.keytab(SERVER_PRINCIPAL)}"
  storeKey=true
  useTicketCache=false
  isInitiator=false
  principal="{SERVER_PRINCIPAL}";
}};
""")
    config = {"authProvider.1": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
              "sessionRequireClientSASLAuth": "true"}
    cache = realm.kinit(CLIENT, folder / "kadmin.cc")
    sasl = folder / "sasl.json"
    sasl.write_text(json.dumps({"mechanism": "GSSAPI", "principal": CLIENT}))
    options = [f"-Djava.security.auth.login.config={jaas}",
               f"-Djava.security.krb5.conf={realm.config}"]
    with pytest.MonkeyPatch.context() as patch, \
            EmbeddedZooKeeper(config=config, jvm_options=options) as server:
        for name, value in realm.env(cache).items():
            if name.startswith("KRB5"):
                patch.setenv(name, value)
        broker = KazooClient(hosts=f"localhost:{server.port}",
                             sasl_options={"mechanism": "GSSAPI", "principal": CLIENT})
        broker.start(timeout=TIME_LIMIT)
        snapshot = cluster_snapshot()
        load_cluster(broker, snapshot)
        controller = SimulatedController(broker, controller_id=controller_of(snapshot),
                                         latency=0.01).start()
        try:
            yield Kerberized(realm, server.port, cache, sasl)
        finally:
            controller.stop()
            broker.stop()
            broker.close()


def kadmin(setup: Kerberized, folder: Path, *args: str, cache: Path | None = None,
           sasl: Path | None = None, config: Path | None = None
           ) -> subprocess.CompletedProcess[str]:
    """``python -m kadmin --zk-sasl-file SASL ARGS`` with the realm's Kerberos environment."""
    run = run_kadmin("--zk-sasl-file", str(sasl or setup.sasl), *args, cwd=folder,
                     env=setup.realm.env(cache or setup.cache, config), timeout=TIME_LIMIT)
    for text in (run.stdout, run.stderr):
        assert MASTER_PASSWORD not in text
        assert "Traceback" not in text and "internal error" not in text, text
    return run


def error_line(run: subprocess.CompletedProcess[str]) -> str:
    lines = run.stderr.splitlines()
    errors = [line for line in lines if line.startswith("kadmin: error: ")]
    assert len(errors) == 1, run.stderr
    return errors[0]


def test_every_command_works_authenticated(kerberized: Kerberized, tmp_path: Path) -> None:
    """status, plan generate, reassign, verify, elect and topics delete over GSSAPI; the SASL
    file names no "service", which defaults to zookeeper as kazoo's does (item 20)."""
    zk = f"localhost:{kerberized.port}"
    status = kadmin(kerberized, tmp_path, "status", "-z", zk, "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["controller"] == 0

    generated = kadmin(kerberized, tmp_path, "plan", "generate", "-z", zk, "--topics", "orders",
                       "--strategy", "kafka", "--start-index", "2", "--out", "generated.json")
    assert generated.returncode == 0, generated.stderr
    plan = tmp_path / "move.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 0]}]}))
    moved = kadmin(kerberized, tmp_path, "reassign", "--plan", "move.json", "-z", zk,
                   "--timeout", "60")
    assert moved.returncode == 0, moved.stderr
    verified = kadmin(kerberized, tmp_path, "verify", "--plan", "move.json", "-z", zk)
    assert verified.returncode == 0, verified.stderr
    elected = kadmin(kerberized, tmp_path, "elect", "--all", "-z", zk, "--timeout", "60")
    assert elected.returncode == 0, elected.stderr
    deleted = kadmin(kerberized, tmp_path, "topics", "delete", "old", "-z", zk, "--yes",
                     "--timeout", "60")
    assert deleted.returncode == 0, deleted.stderr
    after = json.loads(kadmin(kerberized, tmp_path, "status", "-z", zk, "--json").stdout)
    assert after["topics"] == 1


def test_an_anonymous_session_is_refused_by_the_server(kerberized: Kerberized,
                                                       tmp_path: Path) -> None:
    env = kerberized.realm.env(kerberized.cache)
    run = run_kadmin("status", "-z", f"localhost:{kerberized.port}", cwd=tmp_path, env=env,
                     timeout=TIME_LIMIT)
    assert run.returncode == 1 and "not authorized" in run.stderr, run.stderr


# --- item 18: no usable ticket ------------------------------------------------------------------


def _no_cache(setup: Kerberized, folder: Path) -> Path:
    return folder / "never-kinit.cc"


def _other_principal(setup: Kerberized, folder: Path) -> Path:
    return setup.realm.kinit(OTHER, folder / "other.cc")


def _expired(setup: Kerberized, folder: Path) -> Path:
    cache = setup.realm.kinit(CLIENT, folder / "expired.cc", lifetime="3s")
    deadline = time.monotonic() + TIME_LIMIT
    while setup.realm.has_valid_ticket(cache):  # wait for the expiry itself, not a guess
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return cache


@pytest.mark.parametrize("make_cache", [_no_cache, _other_principal, _expired],
                         ids=["no kinit", "another principal's cache", "expired"])
def test_no_usable_ticket_exits_1_with_the_reason_and_the_kinit_hint(
        make_cache: object, kerberized: Kerberized, tmp_path: Path) -> None:
    cache = make_cache(kerberized, tmp_path)  # type: ignore[operator]
    run = kadmin(kerberized, tmp_path, "status", "-z", f"localhost:{kerberized.port}",
                 cache=cache)
    assert run.returncode == 1, run.stderr
    line = error_line(run)
    assert "Kerberos" in line and CLIENT in line, line
    assert "kinit" in line and "KRB5CCNAME" in line, line


def test_an_expired_ticket_without_a_principal_named_keeps_kerberos_reason(
        kerberized: Kerberized, tmp_path: Path) -> None:
    sasl = tmp_path / "sasl.json"
    sasl.write_text(json.dumps({"mechanism": "GSSAPI"}))
    run = kadmin(kerberized, tmp_path, "status", "-z", f"localhost:{kerberized.port}",
                 cache=_expired(kerberized, tmp_path), sasl=sasl)
    assert run.returncode == 1, run.stderr
    line = error_line(run)
    assert "wrong credentials" not in line
    assert "expired" in line.lower() and "kinit" in line, line


# --- item 19: the real reason of a client-side failure ----------------------------------------


def test_a_host_without_a_service_principal_is_named_with_kerberos_reason(
        kerberized: Kerberized, tmp_path: Path) -> None:
    run = kadmin(kerberized, tmp_path, "status", "-z", f"127.0.0.1:{kerberized.port}")
    assert run.returncode == 1
    line = error_line(run)
    assert "wrong credentials" not in line
    assert f"zookeeper/127.0.0.1@{REALM} not found in Kerberos database" in line, line
    assert f"  127.0.0.1: Server zookeeper/127.0.0.1@{REALM} not found" in run.stderr


def test_a_wrong_service_keeps_kerberos_reason(kerberized: Kerberized, tmp_path: Path) -> None:
    sasl = tmp_path / "sasl.json"
    sasl.write_text(json.dumps({"mechanism": "GSSAPI", "principal": CLIENT,
                                "service": "zk-wrong"}))
    run = kadmin(kerberized, tmp_path, "status", "-z", f"localhost:{kerberized.port}",
                 sasl=sasl)
    assert run.returncode == 1
    line = error_line(run)
    assert f"zk-wrong/localhost@{REALM} not found in Kerberos database" in line, line
    assert "service zk-wrong" in line


def test_an_unreachable_kdc_keeps_kerberos_reason(kerberized: Kerberized,
                                                  tmp_path: Path) -> None:
    """A fresh ticket cache (a TGT, no service ticket yet) and a configuration whose KDC is
    a port nobody listens on."""
    cache = kerberized.realm.kinit(CLIENT, tmp_path / "fresh.cc")
    dead = tmp_path / "dead"
    dead.mkdir()
    _write_configs(dead, kerberized.realm.port, kdc_port=free_port())
    run = kadmin(kerberized, tmp_path, "status", "-z", f"localhost:{kerberized.port}",
                 cache=cache, config=dead / "krb5.conf")
    assert run.returncode == 1
    line = error_line(run)
    assert "wrong credentials" not in line
    assert "KDC" in line, line


# --- item 22: several hosts, one without a service principal -----------------------------------


@pytest.mark.parametrize("hosts", ["127.0.0.1,localhost", "localhost,127.0.0.1"])
def test_a_host_whose_principal_is_missing_is_passed_over_for_the_next(
        hosts: str, kerberized: Kerberized, tmp_path: Path) -> None:
    """kazoo picks the hosts in random order: several runs meet both orders."""
    zk = ",".join(f"{host}:{kerberized.port}" for host in hosts.split(","))
    for _ in range(4):
        run = kadmin(kerberized, tmp_path, "status", "-z", zk, "--json")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["controller"] == 0


def test_when_every_host_fails_each_is_named(kerberized: Kerberized, tmp_path: Path) -> None:
    sasl = tmp_path / "sasl.json"
    sasl.write_text(json.dumps({"mechanism": "GSSAPI", "principal": CLIENT,
                                "service": "zk-wrong"}))
    run = kadmin(kerberized, tmp_path, "status", "-z",
                 f"127.0.0.1:{kerberized.port},localhost:{kerberized.port}", sasl=sasl)
    assert run.returncode == 1
    assert "failed on every host" in error_line(run)
    assert f"  127.0.0.1: Server zk-wrong/127.0.0.1@{REALM} not found" in run.stderr
    assert f"  localhost: Server zk-wrong/localhost@{REALM} not found" in run.stderr
