"""Encode and decode every znode payload kadmin touches, for every Kafka version (docs/znodes.md).

Pure: bytes in, domain values out (and back). Decoders accept every version Kafka ever wrote and
ignore unknown keys; anything else raises :class:`DecodeError` with a message that says what is
wrong, and the caller adds the znode path. Encoders write compact JSON, exactly as Kafka does, so
the size kadmin measures for batching is the size ZooKeeper sees.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from kadmin import jsontext
from kadmin.model import (
    MAX_ID,
    Broker,
    PartitionMove,
    PartitionState,
    Reassignment,
    Replicas,
    TopicAssignment,
    TopicPartition,
)


class DecodeError(ValueError):
    """A znode payload kadmin cannot read (corrupt, hand-edited, or not Kafka's)."""


def dumps(doc: Any) -> bytes:
    """Compact UTF-8 JSON, Kafka's wire spelling."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _load_object(data: bytes | None) -> dict[str, Any]:
    if not data:
        raise DecodeError("empty payload, expected a JSON object")
    try:
        doc = jsontext.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise DecodeError(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (jsontext.NotJson, jsontext.DuplicateKey) as exc:
        raise DecodeError(f"not JSON kadmin can read ({exc})") from None
    except ValueError:  # Python refuses integers of more than sys.get_int_max_str_digits() digits
        raise DecodeError("not JSON kadmin can read (an integer with thousands of digits)") from None
    except RecursionError:
        raise DecodeError("not JSON kadmin can read (nested too deeply)") from None
    if not isinstance(doc, dict):
        raise DecodeError(f"expected a JSON object, got {jsontext.json_kind(doc)}")
    return doc


def _int(value: Any, what: str) -> int:
    # bool is an int subclass in Python but never a valid id or epoch in Kafka's JSON
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(f"{what} must be an integer, got {jsontext.spelled(value, ascii=True)}")
    return value


def _id(value: Any, what: str, lowest: int = 0) -> int:
    """A broker or partition id: a Java int in Kafka, never negative (``lowest`` -1 lets a
    leader say "none")."""
    number = _int(value, what)
    if not lowest <= number <= MAX_ID:
        raise DecodeError(f"{what} {number} is not an id from {lowest} to {MAX_ID}")
    return number


_INT = frozenset({int})


def _distinct(ids: tuple[int, ...], what: str) -> tuple[int, ...]:
    """``ids`` when no broker is listed twice: a replica list of Kafka's never does, and a plan,
    snapshot or rollback made from one would be refused as soon as it is read back."""
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise DecodeError(f"{what} {list(ids)} name broker(s) {twice} more than once")
    return ids


def _ids(value: Any, what: str) -> tuple[int, ...]:
    # the usual case checked by builtins alone: a list of ints from 0 to MAX_ID
    if type(value) is list and (not value or (set(map(type, value)) <= _INT
                                              and min(value) >= 0 and max(value) <= MAX_ID)):
        return tuple(value)
    if not isinstance(value, list):
        raise DecodeError(f"{what} must be a list of broker ids, got {jsontext.spelled(value, ascii=True)}")
    return tuple(_id(v, what) for v in value)


def _decimal(text: str) -> int | None:
    """``str.isdigit`` alone also accepts "²" and "٣", which ``int`` then refuses, and ``int``
    refuses numbers of thousands of digits: only ASCII digits of an int Kafka could have written
    pass."""
    if text.isascii() and text.isdigit() and len(text) <= len(str(MAX_ID)) and int(text) <= MAX_ID:
        return int(text)
    return None


def decimal_id(text: str, what: str, *, canonical: bool = True) -> int:
    """An id spelled in decimal: a znode name, a partition key, the /controller_epoch payload.

    Kafka writes ``Integer.toString``: ``canonical`` (the default, for everything read from
    ZooKeeper) refuses any other spelling of the number ("007", "00"), which would otherwise be
    read as another id - /brokers/ids/007 as broker 7, whose znode does not exist, and a topic
    znode's keys "0" and "00" as one partition, the last silently winning."""
    value = _decimal(text)
    if value is None:
        raise DecodeError(f"{what} {jsontext.spelled(text, ascii=True)} is not a non-negative "
                          f"integer up to {MAX_ID}")
    if canonical and text != str(value):
        raise DecodeError(f"{what} {jsontext.spelled(text, ascii=True)} is not written as Kafka "
                          f"writes ids (the decimal {value}, without leading zeros)")
    return value


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"{what} must be a string, got {jsontext.spelled(value, ascii=True)}")
    return value


# --- /brokers/ids/<id> -------------------------------------------------------------------------


def decode_broker(broker_id: int, data: bytes | None) -> Broker:
    """Versions 1-5. v1 has host/port only; v2+ may have host null and only ``endpoints``."""
    doc = _load_object(data)
    host = doc.get("host")
    port = doc.get("port")
    if host is None and doc.get("endpoints"):
        endpoints = doc["endpoints"]
        if not isinstance(endpoints, list) or not all(isinstance(e, str) for e in endpoints):
            raise DecodeError("endpoints must be a list of strings")
        # "PLAINTEXT://h1:9092" -> h1, 9092; the first listener is what kafka-topics shows
        hostport = endpoints[0].split("://", 1)[-1]
        host, _, port_text = hostport.rpartition(":")
        port = _decimal(port_text)
    rack = doc.get("rack")
    return Broker(
        id=broker_id,
        host=None if host is None else _str(host, "host"),
        port=None if port is None else _int(port, "port"),
        rack=None if rack is None else _str(rack, "rack"),
    )


def encode_broker(broker: Broker, version: int = 5, timestamp_ms: int | None = None) -> bytes:
    """What a broker of the given registration version writes (used by the sandbox and tests)."""
    host = broker.host or f"broker-{broker.id}"
    port = broker.port or 9092
    ts = str(timestamp_ms if timestamp_ms is not None else int(time.time() * 1000))
    doc: dict[str, Any] = {"version": version, "host": host, "port": port, "jmx_port": -1,
                           "timestamp": ts}
    if version >= 2:
        doc["endpoints"] = [f"PLAINTEXT://{host}:{port}"]
    if version >= 3 and broker.rack is not None:
        doc["rack"] = broker.rack
    if version >= 4:
        doc["listener_security_protocol_map"] = {"PLAINTEXT": "PLAINTEXT"}
    return dumps(doc)


# --- /brokers/topics/<t> -----------------------------------------------------------------------


class TopicZnode(NamedTuple):
    """A decoded /brokers/topics/<t>: replicas per partition as the znode lists them, and the
    partitions Kafka 2.4+ shows being reassigned."""

    partitions: TopicAssignment
    reassigning: dict[int, Reassignment]


def decode_topic(data: bytes | None) -> TopicAssignment:
    """The ``partitions`` of a topic znode, any version (see :func:`decode_topic_znode`)."""
    return decode_topic_znode(data).partitions


def decode_topic_znode(data: bytes | None) -> TopicZnode:
    """Versions 1-3. v2+ (Kafka 2.4+) records a reassignment in flight as ``adding_replicas`` and
    ``removing_replicas`` (docs/znodes.md): ``partitions[p]`` is then the full set, the target is
    it minus the removing replicas and the original it minus the adding ones. ``topic_id`` and
    unknown keys are ignored. Lists Kafka's controller could not have written (a replica added
    that the partition does not list, a partition that would end with no replica) are errors:
    planning from them would be planning from a guess."""
    doc = _load_object(data)
    partitions = doc.get("partitions")
    if not isinstance(partitions, dict):
        raise DecodeError("partitions must be an object of partition id -> replica list")
    out: TopicAssignment = {}
    for key, replicas in partitions.items():
        partition = decimal_id(key, "partition id")  # first: the key is named in the next message
        out[partition] = _distinct(_ids(replicas, f"replicas of partition {partition}"),
                                   f"replicas of partition {partition}")
    adding = _changes(doc, "adding_replicas", out)
    removing = _changes(doc, "removing_replicas", out)
    reassigning: dict[int, Reassignment] = {}
    for partition in sorted(adding.keys() | removing.keys()):
        full, added, removed = out[partition], adding.get(partition, ()), removing.get(partition, ())
        if set(added) & set(removed):
            raise DecodeError(f"partition {partition} both adds and removes "
                              f"{sorted(set(added) & set(removed))}")
        target = tuple(r for r in full if r not in removed)
        original = tuple(r for r in full if r not in added)
        if not target or not original:
            raise DecodeError(f"partition {partition} would have no replica "
                              f"{'after' if not target else 'before'} its reassignment")
        reassigning[partition] = Reassignment(target, original)
    return TopicZnode(out, reassigning)


def _changes(doc: dict[str, Any], key: str, partitions: TopicAssignment) -> dict[int, Replicas]:
    """``adding_replicas`` or ``removing_replicas``: partition -> replicas (empty lists, which mean
    "not moving", left out); each replica must be one the partition lists."""
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise DecodeError(f"{key} must be an object of partition id -> replica list")
    out: dict[int, Replicas] = {}
    for text, replicas in value.items():
        partition = decimal_id(text, f"{key} partition id")
        ids = _distinct(_ids(replicas, f"{key} of partition {partition}"),
                        f"{key} of partition {partition}")
        if not ids:
            continue
        listed = partitions.get(partition)
        if listed is None:
            raise DecodeError(f"{key} names partition {partition}, which partitions does not list")
        stray = [r for r in ids if r not in listed]
        if stray:
            raise DecodeError(f"{key} of partition {partition} has {stray}, not among its "
                              f"replicas {list(listed)}")
        out[partition] = ids
    return out


def encode_topic(partitions: TopicAssignment, version: int = 1, topic_id: str | None = None,
                 reassigning: Mapping[int, Reassignment] | None = None) -> bytes:
    """What Kafka writes; from version 2 the ``reassigning`` partitions get their adding and
    removing replicas (``partitions`` must already hold their full sets)."""
    doc: dict[str, Any] = {
        "version": version,
        "partitions": {str(p): list(r) for p, r in sorted(partitions.items())},
    }
    if version >= 2:
        moving = sorted((reassigning or {}).items())
        doc["adding_replicas"] = {str(p): [r for r in m.target if r not in m.original]
                                  for p, m in moving if set(m.target) - set(m.original)}
        doc["removing_replicas"] = {str(p): [r for r in m.original if r not in m.target]
                                    for p, m in moving if set(m.original) - set(m.target)}
    if version >= 3 and topic_id is not None:
        doc["topic_id"] = topic_id
    return dumps(doc)


# --- /brokers/topics/<t>/partitions/<p>/state --------------------------------------------------


def decode_state(data: bytes | None) -> PartitionState:
    doc = _load_object(data)
    for key in ("leader", "isr"):
        if key not in doc:
            raise DecodeError(f"missing {key}")
    return PartitionState(
        leader=_id(doc["leader"], "leader", lowest=-1),
        isr=_ids(doc["isr"], "isr"),
        leader_epoch=_int(doc.get("leader_epoch", 0), "leader_epoch"),
        controller_epoch=_int(doc.get("controller_epoch", 0), "controller_epoch"),
    )


def encode_state(state: PartitionState) -> bytes:
    return dumps({
        "controller_epoch": state.controller_epoch,
        "leader": state.leader,
        "version": 1,
        "leader_epoch": state.leader_epoch,
        "isr": list(state.isr),
    })


# --- /controller and /controller_epoch ---------------------------------------------------------


def decode_controller(data: bytes | None) -> int:
    """The controller's broker id. Kafka 0.8 wrote a bare integer; later versions an object."""
    if data and data.strip().isdigit():
        return decimal_id(data.strip().decode("ascii"), "controller")
    return _id(_load_object(data).get("brokerid"), "brokerid")


def encode_controller(broker_id: int, timestamp_ms: int | None = None) -> bytes:
    ts = str(timestamp_ms if timestamp_ms is not None else int(time.time() * 1000))
    return dumps({"version": 1, "brokerid": broker_id, "timestamp": ts})


def decode_controller_epoch(data: bytes | None) -> int:
    """A bare decimal integer, not JSON."""
    return decimal_id((data or b"").decode("utf-8", errors="replace").strip(), "controller epoch")


def encode_controller_epoch(epoch: int) -> bytes:
    return str(epoch).encode("ascii")


# --- /admin/reassign_partitions ----------------------------------------------------------------

REASSIGNMENT_PREFIX = b'{"version":1,"partitions":['
REASSIGNMENT_SUFFIX = b"]}"


def encode_reassignment_entry(move: PartitionMove) -> bytes:
    """One element of the znode's ``partitions`` list; never ``log_dirs`` (file-only)."""
    return dumps({"topic": move.topic, "partition": move.partition, "replicas": list(move.replicas)})


def encode_reassignment(moves: Iterable[PartitionMove]) -> bytes:
    """The znode payload. Its length is exactly ``reassignment_size`` of the same moves."""
    return REASSIGNMENT_PREFIX + b",".join(map(encode_reassignment_entry, moves)) + REASSIGNMENT_SUFFIX


def decode_reassignment(data: bytes | None) -> tuple[PartitionMove, ...]:
    return tuple(PartitionMove(topic=tp.topic, partition=tp.partition,
                               replicas=_ids(entry.get("replicas"), f"{where}.replicas"))
                 for tp, entry, where in _partition_entries(data))


def _partition_entries(data: bytes | None
                       ) -> Iterator[tuple[TopicPartition, dict[str, Any], str]]:
    """The ``partitions`` list of an admin znode (a reassignment or an election), entry by
    entry: its topic and partition checked, with the entry and where it stands
    (``partitions[i]``) for the fields the znode adds."""
    entries = _load_object(data).get("partitions")
    if not isinstance(entries, list):
        raise DecodeError("partitions must be a list")
    for i, entry in enumerate(entries):
        where = f"partitions[{i}]"
        if not isinstance(entry, dict):
            raise DecodeError(f"{where} must be an object")
        yield (TopicPartition(_str(entry.get("topic"), f"{where}.topic"),
                              _id(entry.get("partition"), f"{where}.partition")), entry, where)


# --- /admin/preferred_replica_election ---------------------------------------------------------

ELECTION_PREFIX = b'{"version":1,"partitions":['
ELECTION_SUFFIX = b"]}"


def encode_election_entry(tp: TopicPartition) -> bytes:
    return dumps({"topic": tp.topic, "partition": tp.partition})


def encode_election(partitions: Iterable[TopicPartition]) -> bytes:
    return ELECTION_PREFIX + b",".join(map(encode_election_entry, partitions)) + ELECTION_SUFFIX


def decode_election(data: bytes | None) -> tuple[TopicPartition, ...]:
    return tuple(tp for tp, _, _ in _partition_entries(data))


# --- /admin/delete_topics: one transaction of empty markers -----------------------------------

MULTI_REQUEST_OVERHEAD = 4 + 8 + 9
"""A multi request on the wire, besides its operations: the packet's length prefix, the request
header (xid, type) and the header that closes the list of operations."""

ACL_ALLOWANCE = 64
"""Bytes counted for the ACL of a created znode. The largest kadmin sets is Kafka's
(CREATOR_ALL + world READ): 43 bytes as jute writes it."""


def multi_create_bytes(path: str) -> int:
    """What creating an empty znode at ``path`` (the full path, chroot included: that is what
    goes on the wire) adds to a multi request: the operation header (type, done, err), the path
    and the empty data with their length prefixes, the ACL and the flags."""
    return 9 + 4 + len(path.encode("utf-8")) + 4 + ACL_ALLOWANCE + 4


# --- /config/topics/<t>, /config/brokers/<id>, /config/changes/config_change_<seq> ------------


def decode_config(data: bytes | None) -> tuple[dict[str, Any], dict[str, str]]:
    """A config znode: the whole document (kept when rewriting) and its ``config`` map."""
    doc = _load_object(data)
    config = doc.get("config", {})
    if not isinstance(config, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in config.items()):
        raise DecodeError("config must be an object of string -> string")
    return doc, dict(config)


def encode_config(doc: dict[str, Any] | None, config: dict[str, str]) -> bytes:
    """``{"version":1,"config":{...}}``, or ``doc`` (every other key kept) with a new config."""
    out: dict[str, Any] = {"version": 1} if doc is None else dict(doc)
    out["config"] = config
    return dumps(out)


def encode_config_change(entity_path: str) -> bytes:
    """A change notification: ``{"version":2,"entity_path":"topics/foo"}`` tells every broker to
    re-read /config/topics/foo."""
    return dumps({"version": 2, "entity_path": entity_path})


def decode_config_change(data: bytes | None) -> str:
    """The entity path a notification names (version 2; version 1 named entity_type and
    entity_name separately)."""
    doc = _load_object(data)
    if "entity_path" in doc:
        return _str(doc["entity_path"], "entity_path")
    return f"{_str(doc.get('entity_type'), 'entity_type')}/{_str(doc.get('entity_name'), 'entity_name')}"


def decode_json(data: bytes | None) -> dict[str, Any]:
    """Any kadmin-written JSON object znode (its own throttle records)."""
    return _load_object(data)
