"""/config/topics/<t>, /config/brokers/<id> and /config/changes notifications (docs/execution.md).

Brokers and operators change config znodes too, so every write is a compare-and-set: the
config znode is written conditional on the version it was read at (or created, which fails if
someone created it meanwhile), in one transaction with its change notification and kadmin's
record of what it added there (``/kadmin/throttles/<entity>``). Config and record can never
disagree, and a write that lost a race is read, recomputed and tried again (tenacity). The
edits are pure functions of what is read (:mod:`kadmin.throttles`) and idempotent, so a retry
after a connection loss that hid whether the write was applied is safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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

from kadmin.model import OperationFailed, sample_of
from kadmin.throttles import (
    OwnedEdit,
    Records,
    clear_everything,
    remove_kadmins,
    throttle_values,
)
from kadmin.zk import codec, multiread, paths, session
from kadmin.zk.multiread import Op

Edit = OwnedEdit
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
    record: Records
    record_version: int | None
    config_error: str | None = None
    """Why the config znode cannot be decoded (then ``config`` is empty and means nothing)."""
    record_error: str | None = None
    """Why kadmin's record cannot be decoded (then ``record`` is empty and means nothing)."""

    def problems(self, entity: str) -> list[tuple[str, str]]:
        """``(znode path, reason)`` of each znode of this entity kadmin cannot decode."""
        return ([(paths.config(entity), self.config_error)] if self.config_error else []) \
            + ([(paths.throttle_record(entity), self.record_error)]
               if self.record_error else [])


@dataclass(frozen=True)
class EntityThrottle:
    """The replication throttles in force on one config entity, and which of them kadmin set.
    ``record_error`` says why kadmin's record of it cannot be decoded (None: read, or none)."""

    entity: str
    values: dict[str, str]
    own: Records
    record_error: str | None = None


@dataclass(frozen=True)
class Throttles:
    """Every replication throttle in force, and the config znodes (``/config/topics/*``,
    ``/config/brokers/*``) and kadmin records that could not be decoded, as ``(path, reason)``:
    one unreadable znode does not hide the others."""

    in_force: list[EntityThrottle]
    unreadable: tuple[tuple[str, str], ...] = ()

    def entities(self) -> list[str]:
        """Every entity that has or may have a throttle: those in force, and those with a
        config znode or record that cannot be decoded (``throttle clear --all`` goes through
        the records and names the configs it cannot rewrite)."""
        return sorted({*(t.entity for t in self.in_force),
                       *(entity_of(path) for path, _ in self.unreadable)})


def update(client: KazooClient, edits: Mapping[str, Edit], *, skip_unreadable: bool = False
           ) -> list[str]:
    """Apply each entity's edit (``topics/foo`` -> edit) as a compare-and-set; returns the
    entities whose config changed (each got a change notification).

    An entity whose config znode or kadmin record cannot be decoded is never rewritten from a
    guess: by default that is an OperationFailed naming the znode before anything is written;
    ``skip_unreadable`` edits the others first, then fails naming those it left alone. Only
    :func:`kadmin.throttles.clear_everything` (``throttle clear --all``) goes through an
    unreadable record: it drops every throttle and the record with it."""
    if not edits:
        return []
    retrying = tenacity.Retrying(retry=tenacity.retry_if_exception_type(_Raced),
                                 stop=tenacity.stop_after_attempt(_RACES),
                                 wait=tenacity.wait_random(0, 0.2), reraise=True)
    try:
        # a lost connection reads and writes again (the writes are compare-and-set, so one
        # applied before the drop is seen as done), all within one request's limit
        until, limit = session.request_limit(client)
        changed, left = retrying(session.retrying(until, limit), _update_once, client, edits,
                                 skip_unreadable, until)
    except _Raced as exc:
        raise OperationFailed(f"{exc}: it changed {_RACES} times while kadmin tried to write "
                              "it; try again") from None
    except session.REFUSED as exc:
        raise session.not_authorized("writing throttle configs", exc) from None
    if left:
        raise _unreadable_error(left, f"left as they are ({len(changed)} other config(s) "
                                      "changed)")
    return changed


def check_readable(client: KazooClient, entities: Iterable[str]) -> None:
    """What :func:`update` on ``entities`` would refuse (with any edit but
    :func:`kadmin.throttles.clear_everything`), raised as it raises it, without writing
    anything (a dry run predicting the run): an OperationFailed naming each config znode or
    kadmin record it cannot decode."""
    current = _read(client, sorted(set(entities)))
    left = [line for entity, now in current.items()
            for line in _left_alone(entity, now, remove_kadmins)]
    if left:
        raise _unreadable_error(left, "nothing would be written")


def _left_alone(entity: str, now: _Current, edit: Edit) -> list[str]:
    """A line per znode of ``entity`` that ``edit`` must not rewrite since it cannot be decoded
    (an unreadable record only :func:`kadmin.throttles.clear_everything` goes through)."""
    if _untouchable(now, edit):
        return [f"{path}: {reason}" for path, reason in now.problems(entity)]
    return []


def _untouchable(now: _Current, edit: Edit) -> bool:
    return bool(now.config_error or (now.record_error and edit is not clear_everything))


def _unreadable_error(problems: Sequence[str], consequence: str) -> OperationFailed:
    shown = sample_of(problems)
    return OperationFailed(
        f"cannot decode {shown.total} throttle config or kadmin record znode(s), {consequence}; "
        "kadmin never rewrites what it cannot read (kadmin throttle clear --all-throttles removes every "
        "replication throttle, kadmin's unreadable records included)",
        details=shown.items, more=shown.rest)


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


def _update_once(client: KazooClient, edits: Mapping[str, Edit], skip_unreadable: bool,
                 until: float) -> tuple[list[str], list[str]]:
    """The changed entities, and one line per znode left alone because it cannot be decoded."""
    current = _read(client, list(edits))
    left = [line for entity, edit in edits.items()
            for line in _left_alone(entity, current[entity], edit)]
    if left and not skip_unreadable:
        raise _unreadable_error(left, "nothing was written")
    for parent in _PARENTS:
        session.reply(client.ensure_path_async(parent), until)
    groups: list[tuple[str, list[_Op]]] = []
    changed = []
    for entity, edit in edits.items():
        now = current[entity]
        if _untouchable(now, edit):  # left alone: named above, or skipped on request
            continue
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
        elif now.record_error and not record and now.record_version is not None:
            ops.append(_Op("delete", paths.throttle_record(entity), version=now.record_version))
        if ops:
            groups.append((entity, ops))
    for chunk in _chunks(groups):
        tx = client.transaction()
        for _, ops in chunk:
            for op in ops:
                op.add_to(tx)
        _check(session.reply(tx.commit_async(), until),
               [entity for entity, ops in chunk for _ in ops])
    return changed, left


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
    """Each entity's config znode and kadmin record; one that cannot be decoded is marked with
    the reason (``config_error``, ``record_error``), never taken for an absent one."""
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
        config_error = record_error = None
        if entity in configs:
            data, stat = configs[entity]
            try:
                doc, config = codec.decode_config(data)
            except codec.DecodeError as exc:
                config_error = str(exc)
            version = stat.version
        record, record_version = Records(), None
        if entity in records:
            data, stat = records[entity]
            try:
                record = Records.from_json(codec.decode_json(data))
            except (codec.DecodeError, ValueError) as exc:
                record_error = str(exc)
            record_version = stat.version
        out[entity] = _Current(doc, config, version, record, record_version, config_error,
                               record_error)
    return out


def _children(client: KazooClient, path: str) -> list[str]:
    try:
        return sorted(session.bounded(client, lambda: client.get_children_async(path)))
    except NoNodeError:
        return []


def entity_of(path: str) -> str:
    """``/config/topics/t`` or ``/kadmin/throttles/topics/t`` -> ``topics/t``."""
    kind, name = path.rstrip("/").rsplit("/", 2)[-2:]
    return f"{kind}/{name}"


def recorded_entities(client: KazooClient) -> list[str]:
    """The config entities kadmin has a record of added throttles for."""
    return [f"{kind}/{name}" for kind in ("topics", "brokers")
            for name in _children(client, paths.throttle_record(kind))]


def read_throttles(client: KazooClient, entities: Iterable[str] | None = None) -> Throttles:
    """Every config entity with a replication throttle in force or a kadmin record (one read
    per topic and broker config: the same order of cost as reading the topics), sorted, and
    every config znode or record among them that cannot be decoded (reported, not fatal)."""
    if entities is None:
        entities = sorted({*(f"topics/{t}" for t in _children(client, paths.CONFIG_TOPICS)),
                           *(f"brokers/{b}" for b in _children(client, paths.CONFIG_BROKERS)),
                           *recorded_entities(client)})
    current = _read(client, list(entities))  # multiread bounds and retries each request
    in_force = [EntityThrottle(e, throttle_values(c.config), c.record, c.record_error)
                for e, c in sorted(current.items())
                if throttle_values(c.config) or c.record or c.record_version is not None]
    unreadable = tuple(problem for e, c in sorted(current.items()) for problem in c.problems(e))
    return Throttles(in_force, unreadable)
