"""Secured ZooKeeper, against real servers: digest credentials and Kafka's ACLs, SASL
(DIGEST-MD5 through a JAAS login), TLS with client certificates; and that no secret ever shows in
an error, in --help or in a settings repr.

Each kind of security runs its own embedded server: the shared test server is open, and its
unauthenticated chroot cleanup could not delete znodes under an ACL.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.security import (
    ACL,
    ANYONE_ID_UNSAFE,
    CREATOR_ALL_ACL,
    OPEN_ACL_UNSAFE,
    READ_ACL_UNSAFE,
    Id,
    Permissions,
    make_digest_acl_credential,
)

from kadmin.embedded import EmbeddedZooKeeper, free_port
from kadmin.model import Broker, ClusterSnapshot, PartitionState, TopicAssignment
from kadmin.operations.source import zk_settings
from kadmin.sandbox import Sandbox, SimulatedController, controller_of, load_cluster
from kadmin.zk import codec, paths

pytestmark = pytest.mark.zk

PASSWORD = "s3cret-Pa55"
"""Every test credential's password: the tests look for it in everything kadmin prints."""

BROKER_ACL = [*CREATOR_ALL_ACL, *READ_ACL_UNSAFE]
"""What a Kafka broker with zookeeper.set.acl=true puts on the znodes it creates."""

SECURITY_VARIABLES = ("KADMIN_ZK_AUTH", "KADMIN_ZK_SASL", "KADMIN_ZK_TLS", "KADMIN_ZK_CA",
                      "KADMIN_ZK_CERT", "KADMIN_ZK_KEY", "KADMIN_ZK_ACL")


@pytest.fixture(autouse=True)
def _no_ambient_security(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests set the variables they need; none leaks in from the environment running them."""
    for name in SECURITY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def cluster_snapshot() -> ClusterSnapshot:
    """Three brokers; orders-1 is led by 2 although its preferred replica 1 is in the ISR, so
    an election has something to do."""
    brokers = {b: Broker(b, f"h{b}", 9092) for b in range(3)}
    topics: dict[str, TopicAssignment] = {"orders": {0: (0, 1, 2), 1: (1, 2, 0)},
                                          "old": {0: (2, 0, 1)}}
    states = {"orders": {1: PartitionState(2, (1, 2, 0))}}
    return ClusterSnapshot(brokers, topics, states, controller=0, controller_epoch=1)


def write_reassignment(path: Path) -> Path:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 0]}]}))
    return path


def assert_secret_free(*texts: str) -> None:
    for text in texts:
        assert PASSWORD not in text


def error_line(err: str) -> str:
    """The error, which must be one line, and the last one (progress may precede it)."""
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("kadmin: error: "), err
    assert sum(line.startswith("kadmin: ") for line in lines) == 1, err
    return lines[-1]


# --- a) digest credentials and Kafka's ACLs ------------------------------------------------------


@dataclass
class DigestCluster:
    kafka: KazooClient
    """The brokers' session, authenticated as digest user kafka."""
    controller: SimulatedController
    connect: str


@pytest.fixture
def digest_cluster(own_zk_server: EmbeddedZooKeeper) -> Iterator[DigestCluster]:
    """A cluster under /kafka as brokers with zookeeper.set.acl=true leave it: /admin and
    /admin/delete_topics belong to digest user kafka, readable by everyone."""
    kafka = KazooClient(hosts=own_zk_server.connect_string,
                        auth_data=[("digest", f"kafka:{PASSWORD}")])
    kafka.start(timeout=30)
    kafka.ensure_path("/kafka")
    kafka.chroot = "/kafka"
    kafka.create(paths.ADMIN, acl=BROKER_ACL)
    kafka.create(paths.DELETE_TOPICS, acl=BROKER_ACL)
    snapshot = cluster_snapshot()
    load_cluster(kafka, snapshot)
    controller = SimulatedController(kafka, controller_id=controller_of(snapshot),
                                     latency=0.01).start()
    yield DigestCluster(kafka, controller, f"{own_zk_server.connect_string}/kafka")
    controller.stop()
    kafka.stop()
    kafka.close()


def kafka_acl(user: str) -> list[ACL]:
    """Kafka's secure ACL as ZooKeeper stores it for a znode created by digest ``user``."""
    return [ACL(Permissions.ALL, Id("digest", make_digest_acl_credential(user, PASSWORD))),
            ACL(Permissions.READ, ANYONE_ID_UNSAFE)]


def test_writes_without_credentials_are_refused_naming_the_znode(kadmin, digest_cluster, tmp_path):
    zk, kafka = digest_cluster.connect, digest_cluster.kafka
    write_reassignment(tmp_path / "plan.json")

    refused = {
        paths.REASSIGN_PARTITIONS: kadmin("reassign", "--plan", "plan.json", "-z", zk),
        paths.PREFERRED_REPLICA_ELECTION: kadmin("elect", "--topics", "orders", "-z", zk),
        paths.delete_topic("old"): kadmin("topics", "delete", "old", "-z", zk, "--yes"),
    }
    for znode, run in refused.items():
        assert run.code == 1, run.err
        line = error_line(run.err)
        assert "not authorized" in line and znode in line
    assert kafka.exists(paths.REASSIGN_PARTITIONS) is None
    assert kafka.exists(paths.PREFERRED_REPLICA_ELECTION) is None
    assert kafka.get_children(paths.DELETE_TOPICS) == []
    assert kafka.exists(paths.topic("old"))
    # the refused reassignment changed nothing, so it leaves no rollback file either
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_digest_credentials_from_the_environment_or_a_file(kadmin, digest_cluster, tmp_path,
                                                           monkeypatch):
    zk, kafka = digest_cluster.connect, digest_cluster.kafka
    auth_file = tmp_path / "zk-auth"
    auth_file.write_text(f"digest:kafka:{PASSWORD}\n")

    monkeypatch.setenv("KADMIN_ZK_AUTH", f"digest:kafka:{PASSWORD}")
    run = kadmin("reassign", "--plan", str(write_reassignment(tmp_path / "plan.json")), "-z", zk,
                 "--timeout", "60")
    assert run.code == 0, run.err
    assert codec.decode_topic(kafka.get(paths.topic("orders"))[0])[0] == (1, 2, 0)
    run = kadmin("topics", "delete", "old", "-z", zk, "--yes", "--timeout", "60")
    assert run.code == 0, run.err
    assert kafka.exists(paths.topic("old")) is None

    monkeypatch.delenv("KADMIN_ZK_AUTH")
    run = kadmin("--zk-auth-file", str(auth_file), "elect", "--topics", "orders", "-z", zk,
                 "--timeout", "60")
    assert run.code == 0, run.err
    assert codec.decode_state(kafka.get(paths.partition_state("orders", 1))[0]).leader == 1
    assert_secret_free(run.out, run.err)


def test_znodes_kadmin_creates_under_a_secured_parent_get_kafkas_acl(kadmin, digest_cluster,
                                                                     tmp_path, monkeypatch):
    """With the controller stopped the requests stay, to be inspected."""
    zk, kafka = digest_cluster.connect, digest_cluster.kafka
    digest_cluster.controller.stop()
    monkeypatch.setenv("KADMIN_ZK_AUTH", f"digest:kafka:{PASSWORD}")
    write_reassignment(tmp_path / "plan.json")

    runs = {
        paths.REASSIGN_PARTITIONS: kadmin("reassign", "--plan", "plan.json", "-z", zk,
                                          "--timeout", "0.5"),
        paths.PREFERRED_REPLICA_ELECTION: kadmin("elect", "--topics", "orders", "-z", zk,
                                                 "--timeout", "0.5"),
        paths.delete_topic("old"): kadmin("topics", "delete", "old", "-z", zk, "--yes",
                                          "--timeout", "0.5"),
    }
    for znode, run in runs.items():
        assert run.code == 1 and "timed out" in run.err, run.err
        assert kafka.get_acls(znode)[0] == kafka_acl("kafka")


def test_zk_acl_secures_znodes_under_an_open_parent(kadmin, zk_connect, monkeypatch):
    hosts, chroot = zk_connect.split("/", 1)
    with Sandbox(cluster_snapshot(), zookeeper=hosts, chroot="/" + chroot) as box:
        box.controller.stop()
        monkeypatch.setenv("KADMIN_ZK_AUTH", f"digest:kafka:{PASSWORD}")
        elect = ("elect", "--topics", "orders", "-z", box.connect_string, "--timeout", "0.5")

        assert kadmin(*elect).code == 1
        assert box.client.get_acls(paths.PREFERRED_REPLICA_ELECTION)[0] == OPEN_ACL_UNSAFE
        box.client.delete(paths.PREFERRED_REPLICA_ELECTION)
        # ZooKeeper shows a digest ACL's hash only to sessions with rights on the znode
        box.client.add_auth("digest", f"kafka:{PASSWORD}")

        assert kadmin("--zk-acl", *elect).code == 1
        assert box.client.get_acls(paths.PREFERRED_REPLICA_ELECTION)[0] == kafka_acl("kafka")
        box.client.delete(paths.PREFERRED_REPLICA_ELECTION)

        monkeypatch.setenv("KADMIN_ZK_ACL", "1")
        assert kadmin(*elect).code == 1
        assert box.client.get_acls(paths.PREFERRED_REPLICA_ELECTION)[0] == kafka_acl("kafka")


def test_zk_acl_without_credentials_is_invalid_input(kadmin):
    run = kadmin("--zk-acl", "status", "-z", "127.0.0.1:1")
    assert run.code == 2 and "--zk-acl needs credentials" in error_line(run.err)


# --- bad credentials and secrets ------------------------------------------------------------------

SASL_DIGEST = {"mechanism": "DIGEST-MD5", "username": "kafka", "password": PASSWORD}


@pytest.mark.parametrize(("option", "content", "message"), [
    ("--zk-auth-file", f"kafka:{PASSWORD}", "expected one line digest:user:password"),
    ("--zk-auth-file", f"sasl:kafka:{PASSWORD}", "expected one line digest:user:password"),
    ("--zk-auth-file", "digest:kafka:", "expected one line digest:user:password"),
    ("--zk-auth-file", f"digest::{PASSWORD}", "expected one line digest:user:password"),
    ("--zk-auth-file", f"digest:kafka:{PASSWORD}\ndigest:other:{PASSWORD}", "expected one line"),
    ("--zk-auth-file", "", "expected one line digest:user:password"),
    ("--zk-auth-file", b"digest:kafka:\xff\xfe", "not UTF-8"),
    ("--zk-sasl-file", f'{{"mechanism": "DIGEST-MD5", "password": "{PASSWORD}"', "not valid JSON"),
    ("--zk-sasl-file", json.dumps({**SASL_DIGEST, "password": None}), "JSON object of strings"),
    ("--zk-sasl-file", json.dumps([PASSWORD]), "JSON object of strings"),
    ("--zk-sasl-file", json.dumps({**SASL_DIGEST, "mechanism": PASSWORD}), "$.mechanism must be"),
    ("--zk-sasl-file", json.dumps({**SASL_DIGEST, "passwd": PASSWORD}), "unknown key(s) 'passwd'"),
    ("--zk-sasl-file", json.dumps({"mechanism": "DIGEST-MD5", "password": PASSWORD}),
     "DIGEST-MD5 needs username"),
])
def test_bad_credential_files_exit_2_naming_the_file_never_its_content(
        kadmin, tmp_path, option, content, message):
    path = tmp_path / "credentials"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    run = kadmin(option, str(path), "status", "-z", "127.0.0.1:1")
    assert run.code == 2
    line = error_line(run.err)
    assert str(path) in line and message in line
    assert_secret_free(run.out, run.err)


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("KADMIN_ZK_AUTH", f"kafka:{PASSWORD}", "KADMIN_ZK_AUTH: expected one line digest:user:password"),
    ("KADMIN_ZK_SASL", f"DIGEST-MD5 kafka {PASSWORD}", "KADMIN_ZK_SASL: not valid JSON"),
])
def test_bad_credential_variables_exit_2_naming_the_variable(kadmin, monkeypatch, variable,
                                                             value, message):
    monkeypatch.setenv(variable, value)
    run = kadmin("status", "-z", "127.0.0.1:1")
    assert run.code == 2 and message in error_line(run.err)
    assert_secret_free(run.out, run.err)


@pytest.mark.parametrize(("option", "value"), [
    ("--zk-auth-file", f"digest:kafka:{PASSWORD}"),
    ("--zk-sasl-file", json.dumps(SASL_DIGEST)),
])
def test_a_credential_given_as_the_file_name_is_refused_unechoed(kadmin, option, value):
    run = kadmin(option, value, "status", "-z", "127.0.0.1:1")
    assert run.code == 2 and "never the credential itself" in error_line(run.err)
    assert_secret_free(run.out, run.err)


def test_there_is_no_option_that_takes_a_secret(kadmin):
    run = kadmin(f"--zk-auth=digest:kafka:{PASSWORD}", "status", "-z", "127.0.0.1:1")
    assert run.code != 0 and "No such option: --zk-auth" in run.err
    assert_secret_free(run.out, run.err)


def test_missing_credential_file_names_it(kadmin, tmp_path):
    run = kadmin("--zk-sasl-file", str(tmp_path / "nope.json"), "status", "-z", "127.0.0.1:1")
    assert run.code == 2 and f"{tmp_path / 'nope.json'}: no such file" in error_line(run.err)


def test_offline_commands_ignore_credentials_until_a_connection_needs_them(kadmin, monkeypatch):
    monkeypatch.setenv("KADMIN_ZK_AUTH", "not a credential")
    assert kadmin("status", "--help").code == 0
    assert kadmin("status", "-z", "127.0.0.1:1").code == 2


def test_help_and_settings_never_show_secrets(kadmin, monkeypatch):
    monkeypatch.setenv("KADMIN_ZK_AUTH", f"digest:kafka:{PASSWORD}")
    monkeypatch.setenv("KADMIN_ZK_SASL", json.dumps(SASL_DIGEST))
    for args in (["--help"], ["status", "--help"], ["topics", "delete", "--help"]):
        run = kadmin(*args)
        assert run.code == 0, run.err
        assert_secret_free(run.out, run.err)
    help_text = kadmin("--help").out
    for option in ("--zk-auth-file", "--zk-sasl-file", "--zk-tls", "--zk-ca", "--zk-cert",
                   "--zk-key", "--zk-acl", "KADMIN_ZK_AUTH", "KADMIN_ZK_SASL"):
        assert option in help_text

    settings = zk_settings("127.0.0.1:2181/kafka")
    assert settings.security.auth == (("digest", f"kafka:{PASSWORD}"),)  # the variables were read
    assert dict(settings.security.sasl)["password"] == PASSWORD
    assert_secret_free(repr(settings), str(settings), repr(settings.security))


# --- b) SASL DIGEST-MD5 -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SecuredServer:
    connect: str
    """Where kadmin connects (the TLS port for the TLS server)."""
    files: Path


@pytest.fixture(scope="module")
def sasl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredServer]:
    """ZooKeeper with a JAAS DigestLoginModule that knows user kafka and serves only SASL
    sessions, loaded with a cluster by a broker logged in as kafka."""
    files = tmp_path_factory.mktemp("sasl")
    jaas = files / "jaas.conf"
    jaas.write_text("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
                    f'  user_kafka="{PASSWORD}";\n}};\n')
    config = {"authProvider.1": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
              "enforce.auth.enabled": "true", "enforce.auth.schemes": "sasl"}
    with EmbeddedZooKeeper(config=config,
                           jvm_options=[f"-Djava.security.auth.login.config={jaas}"]) as server:
        broker = KazooClient(hosts=server.connect_string, sasl_options=dict(SASL_DIGEST))
        broker.start(timeout=30)
        load_cluster(broker, cluster_snapshot())
        yield SecuredServer(server.connect_string, files)
        broker.stop()
        broker.close()


def read_znode_by_znode(caplog: pytest.LogCaptureFixture) -> bool:
    """Whether a session said it fell back from multiRead to single reads (kadmin.zk logger)."""
    return any("does not answer multiRead" in r.getMessage() for r in caplog.records)


def test_sasl_digest_md5_login_from_a_file_or_the_environment(kadmin, sasl_server, tmp_path,
                                                              monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="kadmin.zk")
    sasl_file = tmp_path / "sasl.json"
    sasl_file.write_text(json.dumps(SASL_DIGEST))
    run = kadmin("--zk-sasl-file", str(sasl_file), "status", "-z", sasl_server.connect, "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["controller"] == 0

    monkeypatch.setenv("KADMIN_ZK_SASL", json.dumps(SASL_DIGEST))
    run = kadmin("status", "-z", sasl_server.connect, "--json")
    assert run.code == 0, run.err
    assert sorted(b["id"] for b in json.loads(run.out)["brokers"]) == [0, 1, 2]
    assert_secret_free(run.out, run.err)
    assert not read_znode_by_znode(caplog)  # multiRead through SASL


# kazoo's connection thread dies of the server's refusal; kadmin silences that thread's end
# (session._quiet_kazoo_thread_end), but pytest replaces the hook while a test runs.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_sasl_wrong_password_exits_1_without_showing_it(kadmin, sasl_server, tmp_path):
    sasl_file = tmp_path / "sasl.json"
    wrong = PASSWORD[::-1]
    sasl_file.write_text(json.dumps({**SASL_DIGEST, "password": wrong}))
    run = kadmin("--zk-sasl-file", str(sasl_file), "status", "-z", sasl_server.connect)
    assert run.code == 1
    assert "refused the SASL login (DIGEST-MD5 as kafka)" in error_line(run.err)
    assert wrong not in run.out + run.err
    assert_secret_free(run.out, run.err)


def test_a_server_that_requires_sasl_refuses_an_anonymous_session(kadmin, sasl_server):
    run = kadmin("status", "-z", sasl_server.connect)
    assert run.code == 1
    line = error_line(run.err)
    assert "not authorized" in line and "SASL" in line


def test_gssapi_without_kerberos_support_is_reported_before_connecting(kadmin, tmp_path):
    if importlib.util.find_spec("kerberos") is not None:
        pytest.skip("the kerberos module is installed: GSSAPI is available here")
    sasl_file = tmp_path / "sasl.json"
    sasl_file.write_text(json.dumps({"mechanism": "GSSAPI", "principal": "kadmin@EXAMPLE.COM"}))
    run = kadmin("--zk-sasl-file", str(sasl_file), "status", "-z", "127.0.0.1:1")
    assert run.code == 2
    assert "SASL GSSAPI as kadmin@EXAMPLE.COM is not available here" in error_line(run.err)


# --- c) TLS ---------------------------------------------------------------------------------------


def _openssl(folder: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)


def _certificate_authority(folder: Path, name: str) -> None:
    _openssl(folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.pem")


def _signed(folder: Path, ca: str, name: str) -> None:
    """``name``.pem and ``name``.key, signed by ``ca``, valid for 127.0.0.1 (host name check)."""
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl(folder, "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
             "-keyout", f"{name}.key", "-out", f"{name}.csr")
    _openssl(folder, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey",
             f"{ca}.key", "-CAcreateserial", "-days", "2", "-extfile", "san.cnf",
             "-out", f"{name}.pem")


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredServer]:
    """ZooKeeper serving TLS on its secureClientPort with PEM stores and client certificates
    required; its plain port (loopback) is how the test loads the cluster."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make the test certificates")
    files = tmp_path_factory.mktemp("tls")
    _certificate_authority(files, "ca")
    _certificate_authority(files, "other-ca")
    _signed(files, "ca", "server")
    _signed(files, "ca", "client")
    keystore = files / "server-keystore.pem"
    keystore.write_text((files / "server.key").read_text() + (files / "server.pem").read_text())
    secure_port = free_port()
    config = {
        "secureClientPort": str(secure_port),
        "secureClientPortAddress": "127.0.0.1",
        "serverCnxnFactory": "org.apache.zookeeper.server.NettyServerCnxnFactory",
        "ssl.keyStore.location": str(keystore), "ssl.keyStore.type": "PEM",
        "ssl.trustStore.location": str(files / "ca.pem"), "ssl.trustStore.type": "PEM",
        "ssl.clientAuth": "need",
    }
    with EmbeddedZooKeeper(config=config) as server:
        loader = KazooClient(hosts=server.connect_string)
        loader.start(timeout=30)
        load_cluster(loader, cluster_snapshot())
        yield SecuredServer(f"127.0.0.1:{secure_port}", files)
        loader.stop()
        loader.close()


def tls_options(files: Path, ca: str = "ca", client: bool = True) -> list[str]:
    options = ["--zk-tls", "--zk-ca", str(files / f"{ca}.pem")]
    if client:
        options += ["--zk-cert", str(files / "client.pem"), "--zk-key", str(files / "client.key")]
    return options


def test_tls_with_a_client_certificate(kadmin, tls_server, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="kadmin.zk")
    run = kadmin(*tls_options(tls_server.files), "status", "-z", tls_server.connect, "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["controller"] == 0

    for variable, value in (("KADMIN_ZK_TLS", "1"), ("KADMIN_ZK_CA", "ca.pem"),
                            ("KADMIN_ZK_CERT", "client.pem"), ("KADMIN_ZK_KEY", "client.key")):
        monkeypatch.setenv(variable, value if value == "1" else str(tls_server.files / value))
    run = kadmin("status", "-z", tls_server.connect, "--json")
    assert run.code == 0, run.err
    assert not read_znode_by_znode(caplog)  # multiRead through TLS


@pytest.mark.parametrize("options", [
    pytest.param(lambda files: [], id="plain-connection"),
    pytest.param(lambda files: tls_options(files, client=False), id="no-client-certificate"),
    pytest.param(lambda files: tls_options(files, ca="other-ca"), id="server-from-another-ca"),
])
def test_tls_refused_connections_fail_within_the_connect_timeout(kadmin, tls_server, options):
    started = time.monotonic()
    run = kadmin(*options(tls_server.files), "status", "-z", tls_server.connect,
                 "--connect-timeout", "2")
    assert run.code == 1
    assert "cannot reach ZooKeeper" in error_line(run.err)
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(("options", "message"), [
    (["--zk-tls", "--zk-cert", "{files}/client.pem"], "--zk-cert and --zk-key go together"),
    (["--zk-ca", "{files}/ca.pem"], "need --zk-tls"),
    (["--zk-tls", "--zk-ca", "{files}/client.key"], "client.key: cannot load for TLS"),
    (["--zk-tls", "--zk-cert", "{files}/client.pem", "--zk-key", "{files}/server.key"],
     "client.pem with key"),
])
def test_bad_tls_options_are_invalid_input(kadmin, tls_server, options, message):
    args = [o.format(files=tls_server.files) for o in options]
    run = kadmin(*args, "status", "-z", tls_server.connect)
    assert run.code == 2 and message in error_line(run.err)


def test_an_encrypted_client_key_is_refused_not_prompted_for(kadmin, tls_server, tmp_path):
    encrypted = tmp_path / "client-encrypted.key"
    _openssl(tmp_path, "pkey", "-in", str(tls_server.files / "client.key"), "-aes256",
             "-passout", f"pass:{PASSWORD}", "-out", str(encrypted))
    run = kadmin("--zk-tls", "--zk-cert", str(tls_server.files / "client.pem"), "--zk-key",
                 str(encrypted), "status", "-z", tls_server.connect)
    assert run.code == 2 and "the key is encrypted" in error_line(run.err)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize("command", [["cluster", "snapshot", "--out", "c.json"],
                                     ["topics", "delete", "--topics", "t0", "--dry-run"],
                                     ["reassign", "--plan", "p.json", "--dry-run"]])
@pytest.mark.parametrize("user", ["kafka", "nobody"])
def test_a_refused_sasl_login_is_an_authentication_failure_on_every_command(
        kadmin, sasl_server, tmp_path, command, user):
    """A wrong password, or a user the server does not know: the login refused, named with
    the mechanism and the user, exit 1; never a connect timeout."""
    (tmp_path / "p.json").write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "t0", "partition": 0, "replicas": [0, 1]}]}))
    sasl_file = tmp_path / "sasl.json"
    sasl_file.write_text(json.dumps({**SASL_DIGEST, "username": user,
                                     "password": PASSWORD[::-1]}))
    run = kadmin("--zk-sasl-file", str(sasl_file), *command, "-z", sasl_server.connect)
    assert run.code == 1, run.err
    line = error_line(run.err)
    assert f"refused the SASL login (DIGEST-MD5 as {user})" in line, line
    assert "timed out" not in line and "timeout" not in line
    assert PASSWORD[::-1] not in run.out + run.err
    assert not (tmp_path / "c.json").exists()
