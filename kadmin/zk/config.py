"""/config/topics/<t>, /config/brokers/<id> and /config/changes notifications (spec section 5).

Brokers and operators change config znodes too, so every write is a compare-and-set: the
config znode is written conditional on the version it was read at (or created, which fails if
someone created it meanwhile), in one transaction with its change notification and kadmin's
record of what it added there (``/kadmin/throttles/<entity>``). Config and record can never
disagree, and a write that lost a race is read, recomputed and tried again (tenacity). The
edits are pure functions of what is read (:mod:`kadmin.throttles`) and idempotent, so a retry
after a connection loss that hid whether the write was applied is safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tenacity
from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    NodeExistsError,
    NoNodeError,
    RolledBackError,
    RuntimeInconsistency,
)
from kazoo.protocol.states import ZnodeStat

from kadmin.model import OperationFailed
from kadmin.throttles import Config, Record, throttle_values
from kadmin.zk import codec, multiread, paths, session
from kadmin.zk.multiread import Op

Edit = Callable[[Config, Record], tuple[dict[str, str], Record]]
"""A config entity's new config and kadmin record, from the current ones."""

_RACES = 20
"""Attempts before giving up on a config that keeps changing under kadmin."""

_TX_BYTES = 512 * 1024
_TX_OPS = 600
"""Bounds of one transaction: well inside ZooKeeper's 1 MB request limit."""

_PARENTS = (paths.CONFIG_TOPICS, paths.CONFIG_BROKERS, paths.CONFIG_CHANGES,
            paths.throttle_record("topics"), paths.throttle_record("brokers"))


class _Raced(Exception):
    """A config znode or record changed between kadmin's read and its write."""


@dataclass(frozen=True)
class _Current:
    doc: dict[str, Any] | None
    config: dict[str, str]
    version: int | None
    record: Record
    record_version: int | None


@dataclass(frozen=True)
class EntityThrottle:
    """The replication throttles in force on one config entity, and which of them kadmin set."""

    entity: str
    values: dict[str, str]
    own: Record


def update(client: KazooClient, edits: Mapping[str, Edit]) -> list[str]:
    """Apply each entity's edit (``topics/foo`` -> edit) as a compare-and-set; returns the
    entities whose config changed (each got a change notification)."""
    if not edits:
        return []
    retrying = tenacity.Retrying(retry=tenacity.retry_if_exception_type(_Raced),
                                 stop=tenacity.stop_after_attempt(_RACES),
                                 wait=tenacity.wait_random(0, 0.2), reraise=True)
    try:
        changed: list[str] = retrying(session.retrying(), _update_once, client, edits)
    except _Raced as exc:
        raise OperationFailed(f"{exc}: it changed {_RACES} times while kadmin tried to write "
                              "it; try again") from None
    except session.REFUSED as exc:
        raise session.not_authorized("writing throttle configs", exc) from None
    return changed


@dataclass(frozen=True)
class _Op:
    """One operation of a transaction: ``create`` (``sequence`` for notifications), ``set``
    (conditional on ``version``) or ``delete`` (conditional on ``version``)."""

    kind: str
    path: str
    data: bytes = b""
    version: int = -1
    sequence: bool = False

    def add_to(self, tx: Any) -> None:
        if self.kind == "create":
            tx.create(self.path, self.data, sequence=self.sequence)
        elif self.kind == "set":
            tx.set_data(self.path, self.data, self.version)
        else:
            tx.delete(self.path, self.version)


def _write(path: str, data: bytes, version: int | None) -> _Op:
    return _Op("create", path, data) if version is None else _Op("set", path, data, version)


def _update_once(client: KazooClient, edits: Mapping[str, Edit]) -> list[str]:
    for parent in _PARENTS:
        client.ensure_path(parent)
    current = _read(client, list(edits))
    groups: list[tuple[str, list[_Op]]] = []
    changed = []
    for entity, edit in edits.items():
        now = current[entity]
        config, record = edit(now.config, now.record)
        ops: list[_Op] = []
        if config != now.config:
            ops.append(_write(paths.config(entity), codec.encode_config(now.doc, config),
                              now.version))
            ops.append(_Op("create", paths.CONFIG_CHANGE_PREFIX,
                           codec.encode_config_change(entity), sequence=True))
            changed.append(entity)
        if record != now.record:
            record_path = paths.throttle_record(entity)
            if record:
                ops.append(_write(record_path, codec.dumps(record.to_json()),
                                  now.record_version))
            elif now.record_version is not None:
                ops.append(_Op("delete", record_path, version=now.record_version))
        if ops:
            groups.append((entity, ops))
    for chunk in _chunks(groups):
        tx = client.transaction()
        for _, ops in chunk:
            for op in ops:
                op.add_to(tx)
        _check(tx.commit(), [entity for entity, ops in chunk for _ in ops])
    return changed


def _chunks(groups: Sequence[tuple[str, list[_Op]]]) -> list[list[tuple[str, list[_Op]]]]:
    """Transactions of whole groups: an entity's config, notification and record always go
    together."""
    out: list[list[tuple[str, list[_Op]]]] = []
    ops = size = 0
    for group in groups:
        cost = sum(len(op.path) + len(op.data) + 32 for op in group[1])
        if not out or ops + len(group[1]) > _TX_OPS or size + cost > _TX_BYTES:
            out.append([])
            ops = size = 0
        out[-1].append(group)
        ops += len(group[1])
        size += cost
    return out


def _check(results: list[object], entities: list[str]) -> None:
    for entity, result in zip(entities, results, strict=True):
        if isinstance(result, (BadVersionError, NodeExistsError, NoNodeError)):
            raise _Raced(paths.config(entity))
        if isinstance(result, session.REFUSED):
            raise result
        if isinstance(result, Exception) and not isinstance(
                result, (RolledBackError, RuntimeInconsistency)):
            raise OperationFailed(f"writing {paths.config(entity)}: {type(result).__name__}")


def _read(client: KazooClient, entities: Sequence[str]) -> dict[str, _Current]:
    configs: dict[str, tuple[bytes, ZnodeStat]] = {}
    records: dict[str, tuple[bytes, ZnodeStat]] = {}
    requests = ((Op(path(e), stat=True), (found, e)) for e in entities
                for path, found in ((paths.config, configs), (paths.throttle_record, records)))
    for _, (found, entity), reply in multiread.read(client, requests):
        found[entity] = reply
    out = {}
    for entity in entities:
        doc: dict[str, Any] | None = None
        config: dict[str, str] = {}
        version: int | None = None
        if entity in configs:
            data, stat = configs[entity]
            try:
                doc, config = codec.decode_config(data)
            except codec.DecodeError as exc:
                raise OperationFailed(f"cannot decode {paths.config(entity)}: {exc}; kadmin "
                                      "does not rewrite a config it cannot read") from None
            version = stat.version
        record, record_version = Record(), None
        if entity in records:
            data, stat = records[entity]
            try:
                record = Record.from_json(codec.decode_json(data))
            except codec.DecodeError:
                record = Record()
            record_version = stat.version
        out[entity] = _Current(doc, config, version, record, record_version)
    return out


def _children(client: KazooClient, path: str) -> list[str]:
    try:
        return sorted(session.retrying()(client.get_children, path))
    except NoNodeError:
        return []


def recorded_entities(client: KazooClient) -> list[str]:
    """The config entities kadmin has a record of added throttles for."""
    return [f"{kind}/{name}" for kind in ("topics", "brokers")
            for name in _children(client, paths.throttle_record(kind))]


def read_throttles(client: KazooClient, entities: Iterable[str] | None = None
                   ) -> list[EntityThrottle]:
    """Every config entity with a replication throttle in force or a kadmin record (one read
    per topic and broker config: the same order of cost as reading the topics), sorted."""
    if entities is None:
        entities = sorted({*(f"topics/{t}" for t in _children(client, paths.CONFIG_TOPICS)),
                           *(f"brokers/{b}" for b in _children(client, paths.CONFIG_BROKERS)),
                           *recorded_entities(client)})
    current = session.retrying()(_read, client, list(entities))
    return [EntityThrottle(e, throttle_values(c.config), c.record)
            for e, c in sorted(current.items()) if throttle_values(c.config) or c.record]
