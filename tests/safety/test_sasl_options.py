"""The SASL file, without a KDC (the real Kerberos runs are in tests/integration/test_kerberos.py):
a GSSAPI file without "service" gets kazoo's default
``zookeeper``, an empty one is refused by name, and Kerberos' own errors are worded from their
minor text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kadmin.model import InvalidInput
from kadmin.zk import security


def sasl_options(tmp_path: Path, doc: dict[str, str]) -> dict[str, str]:
    path = tmp_path / "sasl.json"
    path.write_text(json.dumps(doc))
    return dict(security.from_sources(security.SecuritySources(sasl_file=path)).sasl)


def test_gssapi_without_a_service_defaults_to_zookeeper(tmp_path: Path) -> None:
    assert sasl_options(tmp_path, {"mechanism": "GSSAPI"}) == {
        "mechanism": "GSSAPI", "service": "zookeeper"}
    assert sasl_options(tmp_path, {"mechanism": "GSSAPI", "principal": "k@R"})["service"] \
        == "zookeeper"
    assert sasl_options(tmp_path, {"mechanism": "GSSAPI", "service": "zk"})["service"] == "zk"


def test_an_empty_service_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"sasl.json: \$.service must name ZooKeeper's"):
        sasl_options(tmp_path, {"mechanism": "GSSAPI", "service": ""})


def test_digest_md5_gets_no_service(tmp_path: Path) -> None:
    assert "service" not in sasl_options(
        tmp_path, {"mechanism": "DIGEST-MD5", "username": "u", "password": "p"})


def test_kerberos_reasons_are_the_minor_text_and_other_errors_are_none() -> None:
    kerberos = pytest.importorskip("kerberos", reason="the kerberos module is not installed")
    error = kerberos.GSSError(
        ("Unspecified GSS failure.  Minor code may provide more information", 851968),
        ("Server zookeeper/h@R not found in Kerberos database", -1765328377))
    assert security.kerberos_reason(error) == "Server zookeeper/h@R not found in Kerberos database"
    assert security.kerberos_reason(kerberos.GSSError(("Only major", 1))) == "Only major"
    assert security.kerberos_reason(kerberos.GSSError(
        ("The referenced credential has expired", 720896), ("Success", 0))) \
        == "The referenced credential has expired"
    assert security.kerberos_reason(ValueError("x")) is None
    assert security.kerberos_reason(None) is None
    assert "KRB5CCNAME" in security.kerberos_hint("Ticket expired")
    assert "KRB5_CONFIG" in security.kerberos_hint("Cannot contact any KDC for realm 'R'")
    assert "SERVICE/HOST@REALM" in security.kerberos_hint(
        "Server zk/h@R not found in Kerberos database")
    assert "KRB5CCNAME" in security.kerberos_hint(
        "No Kerberos credentials available (default cache: FILE:/tmp/kdc/cc)")
