"""Who kadmin is to a secured ZooKeeper and what ACL its znodes get: the credentials (read from
files or variables, never from the command line, never shown), the TLS files, and kazoo's
client options for them.

Errors name the file, variable or option and never quote a credential.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kadmin import files
from kadmin.model import InvalidInput, OperationFailed

if TYPE_CHECKING:
    from kazoo.security import ACL

def kafka_acl() -> tuple[ACL, ...]:
    """What Kafka puts on its znodes with ``zookeeper.set.acl=true``: every right for the
    principal that created the znode, read for everyone. (kazoo is imported here, when a
    command connects: commands that work offline start without it.)"""
    from kazoo.security import CREATOR_ALL_ACL, READ_ACL_UNSAFE
    return (*CREATOR_ALL_ACL, *READ_ACL_UNSAFE)


@dataclass(frozen=True)
class ZkSecurity:
    """How kadmin proves who it is to a secured ensemble, and what ACL its znodes get.

    The credentials are left out of ``repr`` so that a settings object in a log line, a
    traceback or a debugger never shows them.
    """

    auth: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """kazoo's ``auth_data``: (scheme, credential) pairs, e.g. ("digest", "user:password")."""
    sasl: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """kazoo's ``sasl_options`` as pairs (a tuple keeps the settings hashable): mechanism,
    username, password, service, principal."""
    tls: bool = False
    ca: Path | None = None
    """CA bundle the server's certificate must chain to (None: the system's CAs)."""
    cert: Path | None = None
    key: Path | None = None
    acl: bool = False
    """Create every znode with :func:`kafka_acl`. Without it kadmin still does so under a
    parent that is not world-writable (see ``admin``)."""

    @property
    def authenticated(self) -> bool:
        """True when the server can name the creator, as CREATOR_ALL needs."""
        return bool(self.auth or self.sasl or self.cert)

    @property
    def sasl_login(self) -> str:
        """The SASL mechanism and user, for messages (never the password)."""
        options = dict(self.sasl)
        who = options.get("username") or options.get("principal")
        return options.get("mechanism", "?") + (f" as {who}" if who else "")


def client_options(security: ZkSecurity) -> dict[str, Any]:
    """KazooClient keyword arguments for ``security``; a fresh dict per client, because kazoo
    adds to the SASL options and to the auth set it is given."""
    return {
        "auth_data": set(security.auth),
        "sasl_options": dict(security.sasl) or None,
        "use_ssl": security.tls,
        "ca": None if security.ca is None else str(security.ca),
        "certfile": None if security.cert is None else str(security.cert),
        "keyfile": None if security.key is None else str(security.key),
        "verify_certs": True,
        # what ZooKeeper's own Java client does (zookeeper.ssl.hostnameVerification)
        "check_hostname": security.tls,
        "default_acl": list(kafka_acl()) if security.acl else None,
    }


def preflight(security: ZkSecurity) -> None:
    """Check here what kazoo only finds out in its connection thread, where a failure is a
    connection that never comes up: TLS files it cannot load (and an encrypted key, for which
    OpenSSL would prompt on the terminal), a SASL mechanism this machine cannot run (GSSAPI
    without the kerberos module)."""
    import ssl

    import puresasl
    import puresasl.client
    if security.tls:
        for path in (security.ca, security.cert, security.key):
            if path is not None:
                files.require_regular(path)
        context = ssl.create_default_context()
        if security.ca is not None:
            _load_tls(str(security.ca), partial(context.load_verify_locations, security.ca))
        if security.cert is not None:
            _load_tls(f"{security.cert} with key {security.key}", partial(
                context.load_cert_chain, security.cert, security.key,
                password=partial(_encrypted, security.key)))
    if security.sasl:
        try:
            # for GSSAPI this acquires the principal's credentials from the ticket cache
            puresasl.client.SASLClient("zk-sasl-md5", **dict(security.sasl))
        except puresasl.SASLError as exc:
            raise InvalidInput(f"SASL {security.sasl_login} is not available here: {exc}") from None
        except gss_errors() as exc:
            raise OperationFailed(f"no usable Kerberos ticket for SASL {security.sasl_login}: "
                                  f"{kerberos_reason(exc)}; {KINIT_HINT}") from None


KINIT_HINT = ("get a ticket with kinit (kinit -kt KEYTAB PRINCIPAL for a service account) and "
              "check that KRB5CCNAME names that ticket cache")


def gss_errors() -> tuple[type[BaseException], ...]:
    """The exception class of the ``kerberos`` module (none when it is not installed)."""
    try:
        import kerberos
    except ImportError:
        return ()
    return (kerberos.GSSError,)


def kerberos_reason(error: BaseException | None) -> str | None:
    """The reason in a Kerberos (GSS-API) error, as MIT Kerberos words it; None for any other
    error. A GSSError carries ``((major text, code), (minor text, code))``; the minor text is the
    Kerberos reason (``Server not found in Kerberos database``), the major one GSS-API's frame
    around it. Neither ever holds a key or a ticket."""
    errors = gss_errors()
    if error is None or not errors or not isinstance(error, errors):
        return None
    parts = [part for part in error.args if isinstance(part, tuple) and part]
    texts = [str(part[0]).strip() for part in parts]
    if not any(texts):
        return str(error) or type(error).__name__
    # the minor text is Kerberos' own and the precise one, unless it has none to give (code 0,
    # "Success": the major text is then the whole story, e.g. "The referenced credential has
    # expired")
    if len(parts) > 1 and texts[1] and texts[1] != "Success" and parts[1][1:2] != (0,):
        return texts[1]
    return texts[0] or texts[1]


def kerberos_hint(reason: str) -> str:
    """What to check for a Kerberos failure of the client, by its reason."""
    text = reason.lower()
    if "not found in kerberos database" in text or "unknown server" in text:
        return ("ZooKeeper's principal must be SERVICE/HOST@REALM for the host name given in -z "
                "and the \"service\" of the SASL file (default zookeeper)")
    if any(word in text for word in ("credential", "expired", "cache", "ticket")):
        return KINIT_HINT
    if "kdc" in text or "realm" in text:
        return "check the KDC and realm in the Kerberos configuration (KRB5_CONFIG)"
    return KINIT_HINT


def _load_tls(what: str, load: Callable[[], None]) -> None:
    try:
        load()
    except OSError as exc:  # ssl.SSLError included
        raise InvalidInput(f"{what}: cannot load for TLS ({exc.strerror or exc})") from None


def _encrypted(key: Path | None) -> str:
    """OpenSSL's password callback: kadmin takes no key password (one more secret to carry),
    and without a callback OpenSSL would prompt for one on the terminal."""
    raise InvalidInput(f"{key}: the key is encrypted; kadmin needs an unencrypted PEM key "
                       "(protect it with file permissions)")


_SECRET_FILE_BYTES = 64 * 1024
_DIGEST_FORMAT = "one line digest:user:password"
_SASL_REQUIRED = {"DIGEST-MD5": ("username", "password"), "GSSAPI": ()}
_SASL_KEYS = ("mechanism", "username", "password", "service", "principal")


@dataclass(frozen=True)
class SecuritySources:
    """The ZooKeeper security options as the operator gave them. Files and the credential
    variables are read only when a command connects (``from_sources``), so a bad credential
    never stops a command that works offline (or its --help)."""

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
    if mechanism == "GSSAPI":
        doc.setdefault("service", GSSAPI_SERVICE)  # as kazoo does, and ZooKeeper's own client
        if not doc["service"]:
            raise InvalidInput(f"{source}: $.service must name ZooKeeper's Kerberos service "
                               f"(default {GSSAPI_SERVICE})")
    return tuple(sorted(doc.items()))


GSSAPI_SERVICE = "zookeeper"
"""The service part of ZooKeeper's Kerberos principal unless the SASL file says otherwise
(``zookeeper/<host>@REALM``): kazoo's default, and the Java client's
(``zookeeper.sasl.client.username``)."""


def from_sources(options: SecuritySources) -> ZkSecurity:
    """The security settings of a connection, from the options and KADMIN_ZK_AUTH/_SASL."""
    if (options.cert is None) != (options.key is None):
        raise InvalidInput("--zk-cert and --zk-key go together: a client certificate needs its key")
    if not options.tls and (options.ca or options.cert):
        raise InvalidInput("--zk-ca, --zk-cert and --zk-key need --zk-tls")
    digest = _secret(options.auth_file, "KADMIN_ZK_AUTH", "--zk-auth-file")
    sasl = _secret(options.sasl_file, "KADMIN_ZK_SASL", "--zk-sasl-file")
    security = ZkSecurity(
        auth=(_digest(*digest),) if digest else (),
        sasl=_sasl(*sasl) if sasl else (),
        tls=options.tls, ca=options.ca, cert=options.cert, key=options.key, acl=options.acl)
    if security.acl and not security.authenticated:
        raise InvalidInput("--zk-acl needs credentials (KADMIN_ZK_AUTH, --zk-auth-file, "
                           "--zk-sasl-file or --zk-cert): CREATOR_ALL names the creator")
    return security
