"""Options and small adapters every command group shares: the cluster source, the ZooKeeper
connection and its security, the consoles, and parsing of comma-separated lists."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from kazoo.client import KazooClient
from rich.console import Console

from kadmin import files, snapshots
from kadmin.model import ClusterSnapshot, InvalidInput
from kadmin.zk import codec, reader, session

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

ZookeeperOpt = Annotated[str | None, typer.Option(
    "--zookeeper", "-z", envvar="KADMIN_ZOOKEEPER", show_envvar=True,
    # no [brackets]: Typer's rich markup would read "[/chroot]" as a closing tag
    help="ZooKeeper connect string: host:port, comma-separated for an ensemble, then an "
         "optional /chroot (zk1:2181,zk2:2181/kafka).")]
ConnectTimeoutOpt = Annotated[float, typer.Option(
    "--connect-timeout", min=0.1, help="Seconds to wait for a ZooKeeper connection.")]
SessionTimeoutOpt = Annotated[float, typer.Option(
    "--session-timeout", min=1.0, help="ZooKeeper session timeout in seconds.")]
ClusterOpt = Annotated[Path | None, typer.Option(
    "--cluster", help="Cluster snapshot: a JSON file or a snapshot folder.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


_SECRET_FILE_BYTES = 64 * 1024
_DIGEST_FORMAT = "one line digest:user:password"
_SASL_REQUIRED = {"DIGEST-MD5": ("username", "password"), "GSSAPI": ()}
_SASL_KEYS = ("mechanism", "username", "password", "service", "principal")


@dataclass(frozen=True)
class ZkSecurityOptions:
    """The root command's ZooKeeper security options as given. Files and the credential
    variables are read only when a command connects, so a bad credential never stops a command
    that works offline (or its --help)."""

    auth_file: Path | None = None
    sasl_file: Path | None = None
    tls: bool = False
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    acl: bool = False


def _secret(path: Path | None, variable: str, option: str) -> tuple[str, str] | None:
    """(text, where it came from) of a credential: the file wins over the variable. Errors name
    the file or variable and never quote the text: it holds a password."""
    if path is None:
        text = os.environ.get(variable)
        return (text, variable) if text else None  # set but empty: as good as unset
    if str(path).startswith(("digest:", "{")) and not path.exists():
        raise InvalidInput(f"{option} takes a file holding the credential, never the credential "
                           "itself (command lines show in ps)")
    data = files.read_bytes(path, max_bytes=_SECRET_FILE_BYTES)
    try:
        return data.decode("utf-8-sig"), str(path)
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}: not UTF-8 text") from None


def _digest(text: str, source: str) -> tuple[str, str]:
    """``digest:user:password`` -> kazoo's ("digest", "user:password"); the password may hold
    colons, the user may not."""
    scheme, _, credential = text.strip().partition(":")
    user, colon, password = credential.partition(":")
    if scheme != "digest" or not user or not colon or not password or "\n" in credential:
        raise InvalidInput(f"{source}: expected {_DIGEST_FORMAT}")
    return scheme, credential


def _sasl(text: str, source: str) -> tuple[tuple[str, str], ...]:
    """kazoo's ``sasl_options`` from a JSON object. Checked by hand, not with jsonschema: its
    messages quote the offending value, which may be the password."""
    doc = files.parse_json(text.encode("utf-8"), source)
    if not isinstance(doc, dict) or not all(isinstance(v, str) for v in doc.values()):
        raise InvalidInput(f"{source}: expected a JSON object of strings with the keys "
                           f"{', '.join(_SASL_KEYS)}")
    unknown = sorted(set(doc) - set(_SASL_KEYS))
    if unknown:
        raise InvalidInput(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; "
                           f"expected {', '.join(_SASL_KEYS)}")
    mechanism = doc.get("mechanism")
    if mechanism not in _SASL_REQUIRED:
        raise InvalidInput(f"{source}: $.mechanism must be one of {', '.join(_SASL_REQUIRED)}")
    missing = [key for key in _SASL_REQUIRED[mechanism] if not doc.get(key)]
    if missing:
        raise InvalidInput(f"{source}: {mechanism} needs {' and '.join(missing)}")
    return tuple(sorted(doc.items()))


def zk_security(options: ZkSecurityOptions) -> session.ZkSecurity:
    """The security settings of a connection, from the options and KADMIN_ZK_AUTH/_SASL."""
    if (options.cert is None) != (options.key is None):
        raise InvalidInput("--zk-cert and --zk-key go together: a client certificate needs its key")
    if not options.tls and (options.ca or options.cert):
        raise InvalidInput("--zk-ca, --zk-cert and --zk-key need --zk-tls")
    digest = _secret(options.auth_file, "KADMIN_ZK_AUTH", "--zk-auth-file")
    sasl = _secret(options.sasl_file, "KADMIN_ZK_SASL", "--zk-sasl-file")
    security = session.ZkSecurity(
        auth=(_digest(*digest),) if digest else (),
        sasl=_sasl(*sasl) if sasl else (),
        tls=options.tls, ca=options.ca, cert=options.cert, key=options.key, acl=options.acl)
    if security.acl and not security.authenticated:
        raise InvalidInput("--zk-acl needs credentials (KADMIN_ZK_AUTH, --zk-auth-file, "
                           "--zk-sasl-file or --zk-cert): CREATOR_ALL names the creator")
    return security


_security_options: ContextVar[ZkSecurityOptions | None] = ContextVar(
    "kadmin_zk_security_options", default=None)
"""Set by the root command's callback at every invocation. Not the Click context object:
Typer 0.2x runs a private copy of Click, whose current context Click's API cannot see."""


def use_security_options(options: ZkSecurityOptions) -> None:
    """The security options every ZooKeeper connection of this invocation uses."""
    _security_options.set(options)


def zk_settings(zookeeper: str | None, connect_timeout: float = 10.0,
                session_timeout: float = 30.0) -> session.ZkSettings:
    if not zookeeper:
        raise InvalidInput("no ZooKeeper given: use -z/--zookeeper host:port[/chroot] "
                           "or set KADMIN_ZOOKEEPER")
    session.parse_connect_string(zookeeper)  # bad strings are input errors, before any I/O
    return session.ZkSettings(connect=zookeeper, connect_timeout=connect_timeout,
                              session_timeout=session_timeout,
                              security=zk_security(_security_options.get() or ZkSecurityOptions()))


@contextmanager
def connected(zookeeper: str | None, connect_timeout: float = 10.0,
              session_timeout: float = 30.0) -> Iterator[KazooClient]:
    with session.session(zk_settings(zookeeper, connect_timeout, session_timeout)) as client:
        yield client


def load_cluster(cluster: Path | None, zookeeper: str | None, connect_timeout: float = 10.0,
                 session_timeout: float = 30.0, *, states: bool = True) -> ClusterSnapshot:
    """The snapshot from ``--cluster`` or read live from ``-z``; exactly one must be given.
    ``states=False`` skips the per-partition state reads (one znode each) when only the
    assignment matters."""
    if cluster is not None and zookeeper:
        raise InvalidInput("give either --cluster FILE or -z/--zookeeper, not both")
    if cluster is not None:
        return snapshots.read_snapshot(cluster)
    if not zookeeper:
        raise InvalidInput("no cluster given: use --cluster FILE or -z/--zookeeper host:port")
    with connected(zookeeper, connect_timeout, session_timeout) as client:
        return reader.read_cluster(client, states=states).snapshot


def split_names(text: str | None, what: str) -> list[str]:
    """``a,b , c`` -> [a, b, c]; an empty element is an input error naming the option."""
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise InvalidInput(f"{what}: empty name in {text!r}")
    return names


def split_ints(text: str | None, what: str) -> list[int]:
    values = []
    for item in split_names(text, what):
        try:
            values.append(codec.decimal_id(item, "broker id"))
        except codec.DecodeError:
            raise InvalidInput(f"{what}: {item!r} is not a broker id (a non-negative integer)"
                               ) from None
    return values


def stdout_is_data(path: Path | None) -> bool:
    """True when the output file is ``-``: then human messages go to stderr."""
    return path is not None and str(path) == "-"


def info(message: str, *, to_stderr: bool = False) -> None:
    (err if to_stderr else out).print(message)
