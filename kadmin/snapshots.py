"""Cluster snapshot files: a JSON document, or a folder for clusters too big for one document.

``schemas/cluster.schema.json`` is the authoritative description of both forms. Running a
JSON Schema validator over a million partitions would cost many times the parse itself, so
reading checks the same rules with plain type checks in the loop that builds the
:class:`ClusterSnapshot`, and reports the first problem as one line naming the file and the JSON
path (``cluster.json: $.topics.foo.3: replicas must not be empty``); a test keeps the two in
agreement. On top of the schema, every state, reassignment and size must belong to a listed
partition, and a partition being reassigned must list exactly its target and original replicas.

The folder form (``brokers.json``, ``topics.jsonl``, optional ``states.jsonl``,
``reassigning.jsonl``, ``sizes.jsonl`` and ``meta.json``) is read and written as a stream, a
topic per line, so neither side ever holds a 10-million partition document; JSON Lines errors
name the file and line (``snap/topics.jsonl:17: ...``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, Literal, TypeVar

from kadmin import files
from kadmin.jsontext import spelled
from kadmin.model import (
    MAX_ID,
    MAX_TOPIC_LENGTH,
    Broker,
    ClusterSnapshot,
    InvalidInput,
    PartitionState,
    Reassignment,
    Replicas,
    TopicAssignment,
    is_topic_name,
)

VERSION = 1
BROKERS_FILE = "brokers.json"
TOPICS_FILE = "topics.jsonl"
STATES_FILE = "states.jsonl"
REASSIGNING_FILE = "reassigning.jsonl"
SIZES_FILE = "sizes.jsonl"
META_FILE = "meta.json"

_TOP_KEYS = ("version", "brokers", "topics", "states", "reassigning", "sizes", "controller",
             "controller_epoch")
_META_KEYS = ("version", "controller", "controller_epoch")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")

Path_ = tuple[str, ...]
"""A JSON path as its keys; turned into ``$.a.b`` text only when a message needs it."""

T = TypeVar("T")


# --- errors -------------------------------------------------------------------------------------


def json_path(keys: Iterable[str]) -> str:
    """``("topics", "foo", "3")`` -> ``$.topics.foo.3``; keys with other characters (``my.topic``)
    are bracketed, ``$.topics["my.topic"].3``, so the path stays unambiguous."""
    return "$" + "".join(f".{k}" if _PLAIN_KEY.fullmatch(k) else f"[{json.dumps(k, ensure_ascii=False)}]"
                   for k in keys)


def _error(source: str, path: Path_, message: str) -> InvalidInput:
    return InvalidInput(f"{source}: {json_path(path)}: {message}")


# --- document -> snapshot (the fast structural pass) --------------------------------------------


def snapshot_from_document(doc: object, source: str) -> ClusterSnapshot:
    """The snapshot in a parsed JSON document; ``source`` names it in error messages. Every
    part is checked, the partition states too, even for a command that only plans replicas:
    a snapshot broken anywhere is refused, not used in part."""
    with files.gc_paused():
        top = _object(doc, source, (), "a snapshot must be a JSON object")
        _check_keys(top, source, (), _TOP_KEYS, required=("version", "brokers", "topics"))
        _check_version(top["version"], source, ("version",))
        brokers = _brokers(top["brokers"], source, ("brokers",))
        topics = {
            _topic_name(name, source, ("topics", name)): _partitions(value, source, ("topics", name))
            for name, value in _object(top["topics"], source, ("topics",),
                                       "must be an object of topic -> partitions").items()
        }
        found: dict[str, dict[int, PartitionState]] = {}
        cache: StateCache = {}
        for name, value in _object(top.get("states", {}), source, ("states",),
                                   "must be an object of topic -> partition id -> state").items():
            listed = _states_of_listed(value, topics.get(name), cache, top["topics"].get(name))
            if listed is not None:  # a listed topic's, keyed by its own partitions
                found[name] = listed
                continue
            path = ("states", name)
            _topic_name(name, source, path)
            found[name] = _partition_states(value, source, path, cache)
            _check_belong(name, found[name], topics, source, path, path, "$.topics")
        reassigning: dict[str, dict[int, Reassignment]] = {}
        for name, value in _object(top.get("reassigning", {}), source, ("reassigning",),
                                   "must be an object of topic -> partition id -> reassignment"
                                   ).items():
            path = ("reassigning", name)
            _topic_name(name, source, path)
            reassigning[name] = _reassignments(value, source, path)
            _check_reassignments_belong(name, reassigning[name], topics, source, path, path,
                                        "$.topics")
        sizes: dict[str, dict[int, int]] = {}
        for name, value in _object(top.get("sizes", {}), source, ("sizes",),
                                   "must be an object of topic -> partition id -> bytes").items():
            path = ("sizes", name)
            _topic_name(name, source, path)
            sizes[name] = _partition_sizes(value, source, path)
            _check_belong(name, sizes[name], topics, source, path, path, "$.topics")
        return ClusterSnapshot(
            brokers=brokers, topics=topics, states=found,
            controller=_controller(top, source),
            controller_epoch=_controller_epoch(top, source),
            reassigning=reassigning, sizes=sizes,
        )


def _object(value: object, source: str, path: Path_, message: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _error(source, path, message)
    return value


def _check_keys(obj: Mapping[str, Any], source: str, path: Path_, allowed: tuple[str, ...],
                required: tuple[str, ...]) -> None:
    for key in obj:
        if key not in allowed:
            raise _error(source, (*path, key), f"unknown key (expected {', '.join(allowed)})")
    for key in required:
        if key not in obj:
            raise _error(source, path, f"missing {key}")


def _check_version(value: object, source: str, path: Path_) -> None:
    if type(value) is not int or value != VERSION:
        raise _error(source, path,
                     f"unsupported snapshot version {spelled(value)} (this kadmin reads {VERSION})")


def _id(key: str, source: str, path: Path_, what: str) -> int:
    """A broker or partition id spelled as an object key; one id has exactly one spelling."""
    if key.isascii() and key.isdecimal() and (key[0] != "0" or key == "0"):
        if len(key) <= len(str(MAX_ID)) and int(key) <= MAX_ID:
            return int(key)
        raise _error(source, path, f"{what} id {spelled(key)} is larger than {MAX_ID}, the largest "
                                   "id Kafka allows")
    raise _error(source, path, f"{spelled(key)} is not a {what} id "
                               "(a non-negative decimal integer without leading zeros)")


def _topic_name(name: object, source: str, path: Path_) -> str:
    if is_topic_name(name):
        return name
    raise _error(source, path, f"{spelled(name)} is not a legal topic name (1 to {MAX_TOPIC_LENGTH} "
                               'characters from a-z A-Z 0-9 . _ -, and not "." or "..")')


def _broker_ids(value: object, source: str, path: Path_, what: str, *, non_empty: bool) -> Replicas:
    """Replicas or ISR: distinct ints from 0 to MAX_ID. ``type() is`` because bool is an int."""
    if type(value) is list and (value or not non_empty):
        for broker in value:
            if type(broker) is not int or not 0 <= broker <= MAX_ID:
                break
        else:
            ids = tuple(value)
            if len(set(ids)) == len(ids):
                return ids
            twice = next(b for i, b in enumerate(ids) if b in ids[:i])
            raise _error(source, path, f"{what} lists broker {twice} twice")
    if value == []:
        raise _error(source, path, f"{what} must not be empty")
    if type(value) is list:
        huge = next((b for b in value if type(b) is int and b > MAX_ID), None)
        if huge is not None:
            raise _error(source, path, f"{what}: broker id {spelled(huge)} is larger than {MAX_ID}, "
                                       "the largest id Kafka allows")
    raise _error(source, path,
                 f"{what} must be a list of broker ids (integers >= 0), got {spelled(value)}")


def _partitions(value: object, source: str, path: Path_) -> TopicAssignment:
    """This loop is the hot path of reading a snapshot (once per partition), so it inlines the
    checks of :func:`_id` and :func:`_broker_ids` and calls them only for a partition that fails,
    to word the error."""
    out: TopicAssignment = {}
    for key, replicas in _object(value, source, path,
                                 "must be an object of partition id -> replicas").items():
        # ids of ten digits or more take the precise path, which checks them against MAX_ID
        if (type(replicas) is list and replicas and key.isascii() and key.isdecimal()
                and (key[0] != "0" or key == "0") and len(key) < 10):
            for broker in replicas:
                if type(broker) is not int or not 0 <= broker <= MAX_ID:
                    break
            else:
                ids = tuple(replicas)
                if len(set(ids)) == len(ids):
                    out[int(key)] = ids
                    continue
        # the precise checks raise; if they ever accept what the fast one refused, the value is
        # still right, only slower
        out[_id(key, source, (*path, key), "partition")] = _broker_ids(
            replicas, source, (*path, key), "replicas", non_empty=True)
    return out


StateCache = dict[tuple[int, Replicas, int, int], PartitionState]
"""Equal states read once: a million partitions have only thousands of distinct states, and
sharing one immutable value each saves most of the time and memory of building them."""


def _partition_states(value: object, source: str, path: Path_,
                      cache: StateCache) -> dict[int, PartitionState]:
    """Once per partition like :func:`_partitions`, so the checks of :func:`_state` are inlined
    and it is called only to word the error."""
    out: dict[int, PartitionState] = {}
    for key, state in _object(value, source, path,
                              "must be an object of partition id -> state").items():
        if (type(state) is dict and key.isascii() and key.isdecimal()
                and (key[0] != "0" or key == "0") and len(key) < 10):
            leader = state.get("leader")
            isr = state.get("isr")
            leader_epoch = state.get("leader_epoch", 0)
            controller_epoch = state.get("controller_epoch", 0)
            if (type(leader) is int and -1 <= leader <= MAX_ID and type(isr) is list
                    and type(leader_epoch) is int and leader_epoch >= 0
                    and type(controller_epoch) is int and controller_epoch >= 0):
                for broker in isr:
                    if type(broker) is not int or not 0 <= broker <= MAX_ID:
                        break
                else:
                    ids = tuple(isr)
                    if len(set(ids)) == len(ids):
                        fields = (leader, ids, leader_epoch, controller_epoch)
                        shared = cache.get(fields)
                        if shared is None:
                            shared = cache[fields] = PartitionState(*fields)
                        out[int(key)] = shared
                        continue
        out[_id(key, source, (*path, key), "partition")] = _state(state, source, (*path, key))
    return out


_STATE_FIELDS = itemgetter("leader", "isr", "leader_epoch", "controller_epoch")


def _states_of_listed(value: object, partitions: TopicAssignment | None, cache: StateCache,
                      spelled: Iterable[str] | None = None) -> dict[int, PartitionState] | None:
    """A topic's states the quick way, when they are keyed exactly as its checked
    ``partitions`` are (as ``spelled`` in the document, else as the ids are written), in the
    same order, and each state has its four fields: what a snapshot kadmin wrote holds. The ids
    are then the partitions' own and need no check, and a state equal to one met before (a
    million partitions have a few thousand distinct states) needs only its types checked: equal
    integers pass the same range checks. None for anything else, left to
    :func:`_partition_states`, which words what is wrong."""
    if type(value) is not dict or partitions is None or list(value) != list(
            map(str, partitions) if spelled is None else spelled):
        return None
    states: list[PartitionState] = []
    append = states.append
    for state in value.values():
        try:
            leader, isr, leader_epoch, controller_epoch = _STATE_FIELDS(state)
        except (KeyError, TypeError):  # an epoch left out, or no object
            return None
        if (type(leader) is not int or type(isr) is not list or type(leader_epoch) is not int
                or type(controller_epoch) is not int):
            return None
        for broker in isr:
            if type(broker) is not int:  # True would pass for 1 in the look-up below
                return None
        fields = (leader, tuple(isr), leader_epoch, controller_epoch)
        shared = cache.get(fields)
        if shared is None:
            if not (-1 <= leader <= MAX_ID and leader_epoch >= 0 and controller_epoch >= 0
                    and all(0 <= broker <= MAX_ID for broker in isr)
                    and len(set(isr)) == len(isr)):
                return None
            shared = cache[fields] = PartitionState(*fields)
        append(shared)
    return dict(zip(partitions, states, strict=True))


def _partition_sizes(value: object, source: str, path: Path_) -> dict[int, int]:
    """One topic's measured sizes: partition id -> bytes (an integer >= 0)."""
    out: dict[int, int] = {}
    for key, size in _object(value, source, path,
                             "must be an object of partition id -> bytes").items():
        partition = _id(key, source, (*path, key), "partition")
        if type(size) is not int or size < 0:
            raise _error(source, (*path, key),
                         f"must be a size in bytes (an integer >= 0), got {spelled(size)}")
        out[partition] = size
    return out


def _state(value: object, source: str, path: Path_) -> PartitionState:
    state = _object(value, source, path, "must be an object with leader and isr")
    for key in ("leader", "isr"):
        if key not in state:
            raise _error(source, path, f"missing {key}")
    leader = state["leader"]
    if type(leader) is not int or not -1 <= leader <= MAX_ID:
        raise _error(source, (*path, "leader"),
                     f"must be a broker id or -1 (no leader), got {spelled(leader)}")
    return PartitionState(
        leader=leader,
        isr=_broker_ids(state["isr"], source, (*path, "isr"), "isr", non_empty=False),
        leader_epoch=_epoch(state.get("leader_epoch", 0), source, (*path, "leader_epoch")),
        controller_epoch=_epoch(state.get("controller_epoch", 0), source,
                                (*path, "controller_epoch")),
    )


def _reassignments(value: object, source: str, path: Path_) -> dict[int, Reassignment]:
    """One topic's partitions in flight: partition id -> ``{"target": [...], "original": [...]}``
    (few partitions move at once, so this is not a hot path)."""
    out: dict[int, Reassignment] = {}
    for key, entry in _object(value, source, path,
                              "must be an object of partition id -> reassignment").items():
        where = (*path, key)
        partition = _id(key, source, where, "partition")
        fields = _object(entry, source, where, 'must be an object {"target": [...], '
                                               '"original": [...]}')
        _check_keys(fields, source, where, ("target", "original"), required=("target", "original"))
        target = _broker_ids(fields["target"], source, (*where, "target"), "target",
                             non_empty=True)
        original = _broker_ids(fields["original"], source, (*where, "original"), "original",
                               non_empty=True)
        if set(target) == set(original):
            raise _error(source, where, "target and original hold the same brokers, so the "
                                        "partition is not being reassigned")
        out[partition] = Reassignment(target, original)
    return out


def _epoch(value: object, source: str, path: Path_) -> int:
    if type(value) is not int or value < 0:
        raise _error(source, path, f"must be an integer >= 0, got {spelled(value)}")
    return value


def _optional_field(obj: Mapping[str, Any], key: str, kind: type[T], source: str,
                    path: Path_) -> T | None:
    value = obj.get(key)
    if value is None or type(value) is kind:
        return value
    what = "a string" if kind is str else "an integer"
    raise _error(source, (*path, key), f"must be {what} or null, got {spelled(value)}")


def _brokers(value: object, source: str, path: Path_) -> dict[int, Broker]:
    out: dict[int, Broker] = {}
    for key, fields in _object(value, source, path,
                               "must be an object of broker id -> broker").items():
        broker_path = (*path, key)
        broker_id = _id(key, source, broker_path, "broker")
        broker = _object(fields, source, broker_path,
                         "must be an object (host, port, rack, all optional)")
        out[broker_id] = Broker(
            id=broker_id,
            host=_optional_field(broker, "host", str, source, broker_path),
            port=_optional_field(broker, "port", int, source, broker_path),
            rack=_optional_field(broker, "rack", str, source, broker_path),
        )
    return out


def _controller(obj: Mapping[str, Any], source: str) -> int | None:
    """``controller`` of the document or meta.json; absent is None, null is an error."""
    if "controller" not in obj:
        return None
    path = ("controller",)
    controller = _object(obj["controller"], source, path,
                         'must be an object {"brokerid": <broker id>}')
    if "brokerid" not in controller:
        raise _error(source, path, "missing brokerid")
    broker_id = controller["brokerid"]
    if type(broker_id) is not int or not 0 <= broker_id <= MAX_ID:
        raise _error(source, (*path, "brokerid"),
                     f"must be a broker id (an integer >= 0), got {spelled(broker_id)}")
    return broker_id


def _controller_epoch(obj: Mapping[str, Any], source: str) -> int | None:
    if "controller_epoch" not in obj:
        return None
    return _epoch(obj["controller_epoch"], source, ("controller_epoch",))


def _check_belong(name: str, values: Mapping[int, object], topics: Mapping[str, TopicAssignment],
                  source: str, topic_path: Path_, values_path: Path_, topics_where: str) -> None:
    """A rule the schema cannot express: a state, a reassignment or a size belongs to a
    partition that exists."""
    partitions = topics.get(name)
    if partitions is None:
        raise _error(source, topic_path, f"no topic {name} in {topics_where}")
    if not values.keys() <= partitions.keys():
        extra = min(values.keys() - partitions.keys())
        raise _error(source, (*values_path, str(extra)),
                     f"topic {name} has no partition {extra} in {topics_where}")


def _check_reassignments_belong(name: str, moving: Mapping[int, Reassignment],
                                topics: Mapping[str, TopicAssignment], source: str,
                                topic_path: Path_, moving_path: Path_, topics_where: str) -> None:
    """Beyond :func:`_check_belong`: a moving partition lists (as its topic znode does) exactly
    the brokers of its target and its original replicas together."""
    _check_belong(name, moving, topics, source, topic_path, moving_path, topics_where)
    for partition, move in sorted(moving.items()):
        listed = topics[name][partition]
        if set(listed) != set(move.target) | set(move.original):
            raise _error(source, (*moving_path, str(partition)),
                         f"topic {name} lists replicas {list(listed)} for partition {partition} "
                         f"in {topics_where}, not the target and original together")


# --- snapshot -> document -----------------------------------------------------------------------


def snapshot_to_document(snapshot: ClusterSnapshot) -> dict[str, Any]:
    """The JSON document of a snapshot, sorted (brokers, topics and partitions by id and name) so
    that two snapshots of the same cluster are the same file."""
    with files.gc_paused():
        return _document(snapshot)


def _document(snapshot: ClusterSnapshot) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": VERSION,
        "brokers": _brokers_doc(snapshot.brokers),
        "topics": {name: _partitions_doc(partitions)
                   for name, partitions in sorted(snapshot.topics.items())},
    }
    states = {name: _states_doc(snapshot.states[name])
              for name in sorted(snapshot.states) if snapshot.states[name]}
    if states:
        doc["states"] = states
    reassigning = {name: _reassignments_doc(snapshot.reassigning[name])
                   for name in sorted(snapshot.reassigning) if snapshot.reassigning[name]}
    if reassigning:
        doc["reassigning"] = reassigning
    sizes = {name: _sizes_doc(snapshot.sizes[name])
             for name in sorted(snapshot.sizes) if snapshot.sizes[name]}
    if sizes:
        doc["sizes"] = sizes
    doc.update(_controller_doc(snapshot.controller, snapshot.controller_epoch))
    return doc


def _brokers_doc(brokers: Mapping[int, Broker]) -> dict[str, Any]:
    return {
        str(broker_id): {key: value for key, value in (("host", broker.host), ("port", broker.port),
                                                       ("rack", broker.rack)) if value is not None}
        for broker_id, broker in sorted(brokers.items())
    }


def _partitions_doc(partitions: TopicAssignment) -> dict[str, list[int]]:
    return {str(p): list(replicas) for p, replicas in sorted(partitions.items())}


def _states_doc(states: Mapping[int, PartitionState]) -> dict[str, Any]:
    return {
        str(p): {"leader": s.leader, "isr": list(s.isr), "leader_epoch": s.leader_epoch,
                 "controller_epoch": s.controller_epoch}
        for p, s in sorted(states.items())
    }


def _reassignments_doc(moving: Mapping[int, Reassignment]) -> dict[str, Any]:
    return {str(p): {"target": list(m.target), "original": list(m.original)}
            for p, m in sorted(moving.items())}


def _sizes_doc(sizes: Mapping[int, int]) -> dict[str, int]:
    return {str(p): size for p, size in sorted(sizes.items())}


def _controller_doc(controller: int | None, controller_epoch: int | None) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if controller is not None:
        doc["controller"] = {"brokerid": controller}
    if controller_epoch is not None:
        doc["controller_epoch"] = controller_epoch
    return doc


# --- files --------------------------------------------------------------------------------------


def read_snapshot(path: Path) -> ClusterSnapshot:
    """A snapshot from a JSON file or a snapshot folder."""
    with files.gc_paused():
        if path.is_dir():
            return _read_dir(path)
        return _read_file(path)


_COUNTED = ("topics", "states", "sizes")
"""The members holding an object per partition: parsed without the per-object check for a
repeated key, and proved free of one by counting their keys (:func:`_read_file`)."""


def _read_file(path: Path) -> ClusterSnapshot:
    """A snapshot file, read as fast as ``json.loads`` reads it and as strictly as
    :func:`kadmin.files.read_json`: the members of :data:`_COUNTED` are parsed without looking
    for a repeated key, and once the snapshot is built from them their keys are counted, which
    proves none was repeated (:func:`kadmin.jsontext.loads_counting`). A snapshot that is
    refused, or whose count disagrees (a repeat, or a string holding a colon in an ignored
    member), is read again strictly, so every error is worded as it always was, a repeated key
    first."""
    read = files.read_json_counting(path, _COUNTED)
    try:
        snapshot = snapshot_from_document(read.doc, read.source)
    except InvalidInput:
        snapshot = None
    if snapshot is not None and all(_keys_in(read.doc[member], member == "states") == colons
                                    for member, colons in read.colons.items()):
        return snapshot
    return snapshot_from_document(read.strict(), read.source)


def _keys_in(member: dict[str, dict[str, Any]], states: bool) -> int:
    """The keys of a checked ``topics``, ``states`` or ``sizes`` member: its own, its topics'
    and, for ``states``, each state's fields."""
    topics = member.values()
    keys = len(member) + sum(map(len, topics))
    if states:
        keys += sum(map(len, chain.from_iterable(map(dict.values, topics))))
    return keys


def write_snapshot(snapshot: ClusterSnapshot, path: Path, *, fmt: Literal["json", "dir"] = "json",
                   force: bool = False) -> None:
    """Write atomically as one JSON file (a topic per line) or as a snapshot folder, read back
    before it is put in place: a snapshot kadmin would refuse to read is never written."""
    if fmt == "json":
        files.atomic_write_json(path, snapshot_to_document(snapshot), force=force,
                                read_back=_read_back)
    elif fmt == "dir":
        write_snapshot_dir(
            path, snapshot.brokers,
            ((name, partitions, snapshot.states.get(name, {}))
             for name, partitions in sorted(snapshot.topics.items())),
            controller=snapshot.controller, controller_epoch=snapshot.controller_epoch,
            reassigning=snapshot.reassigning, sizes=snapshot.sizes, force=force,
            read_back=_read_back)
    else:
        raise InvalidInput(f"unknown snapshot format {fmt!r} (expected json or dir)")


def write_snapshot_dir(path: Path, brokers: Mapping[int, Broker],
                       topics: Iterable[tuple[str, TopicAssignment, Mapping[int, PartitionState]]],
                       *, controller: int | None = None, controller_epoch: int | None = None,
                       reassigning: Mapping[str, Mapping[int, Reassignment]] | None = None,
                       sizes: Mapping[str, Mapping[int, int]] | None = None,
                       force: bool = False, read_back: files.ReadBack | None = None) -> None:
    """Write a snapshot folder from a stream of ``(topic, partitions, states)``, one topic in
    memory at a time: the way to write a cluster too big to hold (see :mod:`kadmin.synthetic`).
    Topics without states get no line in states.jsonl; that file exists only if some topic has
    states. The partitions in flight (``reassigning``, few at any time) go to reassigning.jsonl,
    which likewise exists only when some partition moves. ``sizes`` (measured bytes per
    partition) go to sizes.jsonl, one topic a line."""
    files.atomic_write_dir(
        path, _dir_chunks(brokers, topics, controller, controller_epoch, reassigning or {},
                          sizes or {}),
        marker=BROKERS_FILE, force=force, read_back=read_back)


def _read_back(_: Path, written: Path) -> None:
    """A snapshot as written, read as any snapshot is (:data:`files.ReadBack`)."""
    read_snapshot(written)


def _dir_chunks(brokers: Mapping[int, Broker],
                topics: Iterable[tuple[str, TopicAssignment, Mapping[int, PartitionState]]],
                controller: int | None, controller_epoch: int | None,
                reassigning: Mapping[str, Mapping[int, Reassignment]],
                sizes: Mapping[str, Mapping[int, int]]) -> Iterator[tuple[str, bytes]]:
    meta = {"version": VERSION, **_controller_doc(controller, controller_epoch)}
    yield META_FILE, files.dumps_json(meta)
    yield BROKERS_FILE, files.dumps_json(_brokers_doc(brokers))
    yield TOPICS_FILE, b""  # exists even for a cluster without topics
    for name, partitions, states in topics:
        yield TOPICS_FILE, files.dumps_json(
            {"topic": name, "partitions": _partitions_doc(partitions)}, compact=True)
        if states:
            yield STATES_FILE, files.dumps_json(
                {"topic": name, "states": _states_doc(states)}, compact=True)
        if sizes.get(name):
            yield SIZES_FILE, files.dumps_json(
                {"topic": name, "sizes": _sizes_doc(sizes[name])}, compact=True)
    for name, moving in sorted(reassigning.items()):
        if moving:
            yield REASSIGNING_FILE, files.dumps_json(
                {"topic": name, "reassigning": _reassignments_doc(moving)}, compact=True)


def require_members(folder: Path) -> None:
    """Refuse a folder without brokers.json and topics.jsonl. A member that is there but no
    regular file (a pipe, a folder) is refused by name when it is opened."""
    missing = [name for name in (BROKERS_FILE, TOPICS_FILE) if not os.path.lexists(folder / name)]
    if missing:
        raise InvalidInput(f"{folder} is a folder without {' and '.join(missing)}, "
                           "so not a snapshot folder")


def _read_dir(folder: Path) -> ClusterSnapshot:
    require_members(folder)
    meta_path = folder / META_FILE
    meta: dict[str, Any] = {}
    if os.path.lexists(meta_path):
        meta = _object(files.read_json(meta_path), str(meta_path), (),
                       "must be a JSON object (version, controller, controller_epoch)")
        _check_keys(meta, str(meta_path), (), _META_KEYS, required=("version",))
        _check_version(meta["version"], str(meta_path), ("version",))
    brokers = read_brokers(folder / BROKERS_FILE)
    topics = dict(iter_topics_jsonl(folder / TOPICS_FILE))
    found: dict[str, dict[int, PartitionState]] = {}
    states_path = folder / STATES_FILE
    if os.path.lexists(states_path):
        cache: StateCache = {}
        for source, name, value in _records(states_path, "states", _as_read):
            listed = _states_of_listed(value, topics.get(name), cache)
            if listed is None:
                listed = _partition_states(value, source, ("states",), cache)
                _check_belong(name, listed, topics, source, ("topic",), ("states",), TOPICS_FILE)
            found[name] = listed
    reassigning: dict[str, dict[int, Reassignment]] = {}
    moving_path = folder / REASSIGNING_FILE
    if moving_path.exists():
        for source, name, moving in iter_reassigning_jsonl(moving_path):
            _check_reassignments_belong(name, moving, topics, source, ("topic",),
                                        ("reassigning",), TOPICS_FILE)
            reassigning[name] = moving
    sizes: dict[str, dict[int, int]] = {}
    sizes_path = folder / SIZES_FILE
    if sizes_path.exists():
        for source, name, partition_sizes in _records(sizes_path, "sizes", _partition_sizes):
            _check_belong(name, partition_sizes, topics, source, ("topic",), ("sizes",),
                          TOPICS_FILE)
            sizes[name] = partition_sizes
    return ClusterSnapshot(brokers=brokers, topics=topics, states=found,
                           controller=_controller(meta, str(meta_path)),
                           controller_epoch=_controller_epoch(meta, str(meta_path)),
                           reassigning=reassigning, sizes=sizes)


def iter_topics_jsonl(path: Path) -> Iterator[tuple[str, TopicAssignment]]:
    """``(topic, partitions)`` for each line of a topics.jsonl file, streamed and checked."""
    for _, name, partitions in _records(path, "partitions", _partitions):
        yield name, partitions


def iter_reassigning_jsonl(path: Path) -> Iterator[tuple[str, str, dict[int, Reassignment]]]:
    """``(file:line, topic, partitions in flight)`` for each line of a reassigning.jsonl file,
    checked on its own (whether the partitions exist is for the reader of topics.jsonl)."""
    return _records(path, "reassigning", _reassignments)


def _records(path: Path, field: str, convert: Callable[[object, str, Path_], T]
             ) -> Iterator[tuple[str, str, T]]:
    """``(source, topic, converted field)`` per line of ``{"topic": ..., field: ...}`` records;
    ``source`` is ``file:line``. A topic on two lines is an error naming both."""
    first_line: dict[str, int] = {}
    for number, doc in files.iter_jsonl(path):
        source = f"{path}:{number}"
        name, value = _record(doc, source, field)
        if name in first_line:
            raise _error(source, ("topic",), f"topic {name} is already on line {first_line[name]}")
        first_line[name] = number
        yield source, name, convert(value, source, (field,))


def _as_read(value: object, source: str, path: Path_) -> object:
    """The field of a record as it was read, for a caller that checks it knowing the topic."""
    return value


def _record(doc: object, source: str, field: str) -> tuple[str, object]:
    """The topic name and the ``field`` value of one ``{"topic": ..., field: ...}`` line."""
    record = _object(doc, source, (), f'must be an object {{"topic": ..., "{field}": {{...}}}}')
    _check_keys(record, source, (), ("topic", field), required=("topic", field))
    return _topic_name(record["topic"], source, ("topic",)), record[field]


def parse_topic_line(line: bytes, source: str) -> tuple[str, TopicAssignment]:
    """One topics.jsonl line, checked exactly as :func:`iter_topics_jsonl` checks it; ``source``
    is ``file:line``. For readers that split the file themselves (the Spark planner); duplicate
    topics across lines are theirs to find."""
    files.check_jsonl_line(line.rstrip(b"\r\n"), source)
    name, value = _record(files.parse_json(line, source, one_line=True), source, "partitions")
    return name, _partitions(value, source, ("partitions",))


def read_brokers(path: Path) -> dict[int, Broker]:
    """brokers.json of a snapshot folder (the snapshot's ``brokers`` object)."""
    return _brokers(files.read_json(path), str(path), ())
