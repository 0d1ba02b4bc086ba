"""Replication throttles (docs/execution.md): which entries a batch needs, and how kadmin merges
them into a config znode and later takes exactly its own back out. Pure.

A config znode's ``config`` is a str -> str map. For every moving partition ``p`` of topic
``t`` (target != current), ``/config/topics/t`` lists ``p:b`` for each current replica ``b`` in
``leader.replication.throttled.replicas`` and for each new replica in
``follower.replication.throttled.replicas``; ``/config/brokers/<id>`` of every broker in the
current or target replicas gets ``leader.replication.throttled.rate`` and
``follower.replication.throttled.rate`` in bytes per second.

Kafka's own tool overwrites those values and removes them all at the end. kadmin merges
instead: entries already there stay, and kadmin records, per config znode, exactly what it
added (a :class:`Record`); removing takes out only those entries. A rate kadmin set replaces
the one there, whose value is kept in the record and put back afterwards, unless someone else
changed the rate meanwhile (then it is theirs and stays).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kadmin.model import PartitionMove, Replicas, TopicPartition

LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
REPLICA_KEYS = (LEADER_REPLICAS, FOLLOWER_REPLICAS)
RATE_KEYS = (LEADER_RATE, FOLLOWER_RATE)
KEYS = REPLICA_KEYS + RATE_KEYS

ALL_REPLICAS = "*"
"""Kafka's value for "every replica of the topic is throttled"."""

Config = Mapping[str, str]


def topic_entity(topic: str) -> str:
    """``topics/<t>``: a config entity as ``/config/changes`` notifications name it."""
    return f"topics/{topic}"


def broker_entity(broker: int) -> str:
    return f"brokers/{broker}"


@dataclass(frozen=True)
class Record:
    """What kadmin added to one config znode: replica entries per key, and per rate key the
    value it set with the value that was there before (None: none)."""

    replicas: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    rates: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.replicas or self.rates)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "replicas": {k: list(v) for k, v in sorted(self.replicas.items())},
                "rates": {k: {"value": v, "previous": p}
                          for k, (v, p) in sorted(self.rates.items())}}

    @staticmethod
    def from_json(doc: object) -> Record:
        """The record in a JSON document as :meth:`to_json` writes it. Anything else is a
        ValueError saying what is wrong: a record kadmin cannot read is never taken for "nothing
        of kadmin's", which would leave its throttle in force with no one to remove it."""
        if not isinstance(doc, dict) or doc.get("version") != 1:
            raise ValueError('expected {"version": 1, "replicas": {...}, "rates": {...}}')
        unknown = sorted(set(doc) - {"version", "replicas", "rates"})
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}")
        replicas, rates = doc.get("replicas", {}), doc.get("rates", {})
        if not isinstance(replicas, dict) or not all(
                k in REPLICA_KEYS and isinstance(v, list) and all(isinstance(e, str) for e in v)
                for k, v in replicas.items()):
            raise ValueError(f"replicas must map {' or '.join(REPLICA_KEYS)} to lists of "
                             "\"partition:broker\" strings")
        if not isinstance(rates, dict) or not all(
                k in RATE_KEYS and isinstance(v, dict) and set(v) <= {"value", "previous"}
                and isinstance(v.get("value"), str)
                and (v.get("previous") is None or isinstance(v["previous"], str))
                for k, v in rates.items()):
            raise ValueError(f"rates must map {' or '.join(RATE_KEYS)} to "
                             '{"value": "...", "previous": "..." or null}')
        return Record({k: tuple(v) for k, v in replicas.items()},
                      {k: (v["value"], v.get("previous")) for k, v in rates.items()})


@dataclass(frozen=True)
class BatchThrottle:
    """The throttle entries one batch of moves needs, per topic and key, and its brokers."""

    replicas: Mapping[str, Mapping[str, tuple[str, ...]]]
    """Topic -> key -> ``p:b`` entries."""
    brokers: tuple[int, ...]

    def entities(self) -> list[str]:
        return ([topic_entity(t) for t in sorted(self.replicas)]
                + [broker_entity(b) for b in self.brokers])


def batch_throttle(moves: Iterable[PartitionMove],
                   current: Mapping[TopicPartition, Replicas]) -> BatchThrottle:
    """The entries of docs/execution.md for the moves that change something: leader entries for
    every current replica, follower entries for every new one, and every broker of either."""
    leaders: dict[str, set[tuple[int, int]]] = {}
    followers: dict[str, set[tuple[int, int]]] = {}
    brokers: set[int] = set()
    for move in moves:
        before = current.get(move.tp, ())
        if tuple(before) == tuple(move.replicas):
            continue
        leaders.setdefault(move.topic, set()).update((move.partition, b) for b in before)
        new = [b for b in move.replicas if b not in before]
        followers.setdefault(move.topic, set()).update((move.partition, b) for b in new)
        brokers.update(before)
        brokers.update(move.replicas)
    replicas: dict[str, dict[str, tuple[str, ...]]] = {}
    for key, table in ((LEADER_REPLICAS, leaders), (FOLLOWER_REPLICAS, followers)):
        for topic, pairs in table.items():
            if pairs:
                replicas.setdefault(topic, {})[key] = tuple(f"{p}:{b}" for p, b in sorted(pairs))
    return BatchThrottle(replicas, tuple(sorted(brokers)))


def entries(value: str | None) -> list[str]:
    """``"0:1, 1:2"`` -> ``["0:1", "1:2"]`` (Kafka trims blanks around each entry)."""
    return [e.strip() for e in (value or "").split(",") if e.strip()]


def add(config: Config, record: Record, replicas: Mapping[str, Sequence[str]],
        rates: Mapping[str, str]) -> tuple[dict[str, str], Record]:
    """``config`` with ``replicas`` entries merged in (entries already there are not kadmin's
    and are not recorded; under ``*`` nothing is added) and ``rates`` set (the value replaced
    is recorded, unless it was kadmin's own already). Idempotent."""
    out = dict(config)
    added = {k: list(v) for k, v in record.replicas.items()}
    for key, wanted in replicas.items():
        present = entries(out.get(key))
        if ALL_REPLICAS in present:
            continue
        new = [e for e in wanted if e not in present]
        if new:
            out[key] = ",".join(present + new)
            added.setdefault(key, []).extend(e for e in new if e not in added.get(key, []))
    set_rates = dict(record.rates)
    for key, value in rates.items():
        previous = set_rates[key][1] if key in set_rates else out.get(key)
        out[key] = value
        set_rates[key] = (value, previous)
    return out, Record({k: tuple(v) for k, v in added.items() if v}, set_rates)


def remove_own(config: Config, record: Record) -> tuple[dict[str, str], Record]:
    """``config`` without what ``record`` says kadmin added: its replica entries (a key left
    empty goes), and its rates put back to what was there before - unless the rate is no longer
    kadmin's value (someone changed it since: theirs now, so it stays)."""
    out = dict(config)
    for key, own in record.replicas.items():
        if key not in out:
            continue
        kept = [e for e in entries(out[key]) if e not in own]
        if kept:
            out[key] = ",".join(kept)
        else:
            del out[key]
    for key, (value, previous) in record.rates.items():
        if out.get(key) != value:
            continue
        if previous is None:
            del out[key]
        else:
            out[key] = previous
    return out, Record()


def remove_all(config: Config, record: Record) -> tuple[dict[str, str], Record]:
    """``config`` without any replication throttle, whoever set it (``throttle clear --all-throttles``,
    what Kafka's tool does on ``--verify``)."""
    return {k: v for k, v in config.items() if k not in KEYS}, Record()


def throttle_values(config: Config) -> dict[str, str]:
    """The replication throttle keys of a config, for showing."""
    return {k: config[k] for k in KEYS if k in config}
