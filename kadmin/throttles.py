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

The record of a config znode (:class:`Records`) keeps what each *owner* added apart - a
``reassign`` run of one plan, ``throttle set`` - so two runs at once never take out each
other's throttles: an entry both need stays until the last of them removes it, and a rate
goes back to the value of an owner still holding it before it goes back to the one kadmin
found. ``throttle clear`` removes every owner's share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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


LEGACY_OWNER = ""
"""The owner of a record written before records were kept per owner (version 1): no run."""

SET_OWNER = "throttle-set"
"""The owner of rates ``throttle set`` puts on brokers that no run throttles."""


def run_owner(fingerprint: str) -> str:
    """The owner name of a ``reassign`` run of the plan with this fingerprint: the same for a
    rerun, which so takes back what an interrupted run of the plan left behind."""
    return f"reassign-{fingerprint[:16]}"


@dataclass(frozen=True)
class Records:
    """kadmin's record of one config znode: what each owner added (empty shares dropped)."""

    owners: Mapping[str, Record] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any(self.owners.values())

    def to_json(self) -> dict[str, Any]:
        return {"version": 2, "owners": {o: {k: v for k, v in r.to_json().items()
                                             if k != "version"}
                                         for o, r in sorted(self.owners.items()) if r}}

    @staticmethod
    def from_json(doc: object) -> Records:
        """Version 2 (per owner), or a version 1 record (one owner, :data:`LEGACY_OWNER`); a
        ValueError saying what is wrong for anything else."""
        if isinstance(doc, dict) and doc.get("version") == 2:
            owners = doc.get("owners")
            if set(doc) - {"version", "owners"} or not isinstance(owners, dict):
                raise ValueError('expected {"version": 2, "owners": {"<owner>": {"replicas": '
                                 '{...}, "rates": {...}}}}')
            return Records({str(o): Record.from_json({**share, "version": 1})
                            if isinstance(share, dict) else Record.from_json(share)
                            for o, share in owners.items()})
        return Records({LEGACY_OWNER: Record.from_json(doc)})

    def with_share(self, owner: str, share: Record) -> Records:
        return Records({**{o: r for o, r in self.owners.items() if o != owner},
                        **({owner: share} if share else {})})

    def held(self, *, but: str) -> set[tuple[str, str]]:
        """``(key, entry)`` of every replica entry an owner other than ``but`` holds."""
        return {(k, e) for o, r in self.owners.items() if o != but
                for k, es in r.replicas.items() for e in es}

    def rate_holder(self, key: str, *, but: str) -> tuple[str, str | None] | None:
        """``(value, previous)`` of rate ``key`` as another owner than ``but`` set it."""
        return next((r.rates[key] for o, r in sorted(self.owners.items())
                     if o != but and key in r.rates), None)


OwnedEdit = Callable[[Config, Records], tuple[dict[str, str], Records]]


def add_for(owner: str, replicas: Mapping[str, Sequence[str]], rates: Mapping[str, str]
            ) -> OwnedEdit:
    """:func:`add` as ``owner``: an entry another owner added (and needs) is held by this one
    too, and a rate another owner set keeps the value kadmin found as the one to put back."""

    def edit(config: Config, records: Records) -> tuple[dict[str, str], Records]:
        own = records.owners.get(owner, Record())
        out, share = add(config, own, replicas, rates)
        held = records.held(but=owner)
        mine = {k: {*share.replicas.get(k, ()), *(e for e in replicas.get(k, ())
                                                   if (k, e) in held)}
                for k in {*share.replicas, *replicas}}
        shared = {k: tuple(e for e in entries(out.get(k)) if e in mine[k])  # the config's order
                  for k in mine}
        set_rates = dict(share.rates)
        for key, value in rates.items():
            other = records.rate_holder(key, but=owner)
            if key not in own.rates and other is not None:
                set_rates[key] = (value, other[1])
        return out, records.with_share(owner, Record({k: v for k, v in shared.items() if v},
                                                     set_rates))

    return edit


def remove_for(owner: str) -> OwnedEdit:
    """:func:`remove_own` of ``owner``'s share alone: an entry another owner holds stays, and a
    rate of ``owner``'s still in force goes to the value of another owner that holds it, else
    back to the one kadmin found."""

    def edit(config: Config, records: Records) -> tuple[dict[str, str], Records]:
        own = records.owners.get(owner)
        if own is None:
            return dict(config), records
        rest = records.with_share(owner, Record())
        held = rest.held(but=owner)
        out, _ = remove_own(config, Record({k: tuple(e for e in es if (k, e) not in held)
                                            for k, es in own.replicas.items()}, {}))
        for key, (value, previous) in own.rates.items():
            if out.get(key) != value:
                continue  # changed since: not kadmin's
            other = rest.rate_holder(key, but=owner)
            if other is not None:
                out[key] = other[0]
            elif previous is None:
                del out[key]
            else:
                out[key] = previous
        return out, rest

    return edit


def remove_kadmins(config: Config, records: Records) -> tuple[dict[str, str], Records]:
    """Every owner's share removed (``throttle clear``: kadmin's throttles, a running
    reassign's included; the operator's stay)."""
    out: dict[str, str] = dict(config)
    for owner in sorted(records.owners):
        out, records = remove_for(owner)(out, records)
    return out, records


def set_rates(rates: Mapping[str, str]) -> OwnedEdit:
    """``throttle set``: the rates in force changed; each owner holding one now holds the new
    value (its cleanup still puts back what kadmin found), and a rate no owner holds is
    :data:`SET_OWNER`'s."""

    def edit(config: Config, records: Records) -> tuple[dict[str, str], Records]:
        out, owners = dict(config), dict(records.owners)
        loose = {}
        for key, value in rates.items():
            holders = [o for o, r in owners.items() if key in r.rates]
            for o in holders:
                owners[o] = Record(owners[o].replicas,
                                   {**owners[o].rates, key: (value, owners[o].rates[key][1])})
            if holders:
                out[key] = value
            else:
                loose[key] = value
        return add_for(SET_OWNER, {}, loose)(out, Records(owners)) if loose else (
            out, Records(owners))

    return edit


def clear_everything(config: Config, _: Records) -> tuple[dict[str, str], Records]:
    """:func:`remove_all` on a znode's record: every throttle and every owner's share gone."""
    return remove_all(config, Record())[0], Records()
