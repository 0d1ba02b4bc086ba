"""``throttle show``, ``throttle clear`` and ``throttle set``: the replication throttles in force,
removing them, and changing the rate of a running reassignment (docs/execution.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kadmin import throttles
from kadmin.model import InvalidInput
from kadmin.operations.selection import split_ints
from kadmin.operations.source import Connection, connected
from kadmin.units import parse_rate
from kadmin.zk import config, reader


def show(connection: Connection) -> config.Throttles:
    """Every topic and broker config with a replication throttle, which kadmin set, and the
    config znodes and kadmin records that cannot be decoded."""
    with connected(connection) as client:
        return config.read_throttles(client)


@dataclass(frozen=True)
class ClearRequest:
    connection: Connection
    everything: bool = False
    """Every replication throttle, whoever set it (default: only kadmin's entries)."""


@dataclass(frozen=True)
class Cleared:
    changed: Sequence[str]
    """The configs changed."""


def clear(request: ClearRequest) -> Cleared:
    """Remove the throttle entries kadmin added (its record in /kadmin/throttles), or with
    ``everything`` every replication throttle; other config keys stay. A config znode or record
    that cannot be decoded is left alone and named in an OperationFailed once the others are
    cleared (``everything`` goes through records)."""
    with connected(request.connection) as client:
        if request.everything:
            entities = config.read_throttles(client).entities()
            edit: config.Edit = throttles.clear_everything
        else:
            entities = config.recorded_entities(client)
            edit = throttles.remove_kadmins
        return Cleared(config.update(client, dict.fromkeys(entities, edit),
                                     skip_unreadable=True))


@dataclass(frozen=True)
class RateChange:
    rate: int
    """Bytes/s."""
    brokers: int
    """Brokers whose rate was set."""
    changed: Sequence[str]
    """The configs that changed."""


@dataclass(frozen=True)
class SetRateRequest:
    connection: Connection
    rate: str
    """Bytes/s as typed (``100MB``)."""
    brokers: str | None = None
    """Broker ids as typed (None: every broker kadmin throttled)."""


def set_rate(request: SetRateRequest) -> RateChange:
    """Set the leader and follower replication rate on the brokers (none: every broker kadmin
    throttled), recorded so that the batch's cleanup (or throttle clear) puts the previous rate
    back."""
    rate = parse_rate(request.rate, "--throttle")
    brokers = split_ints(request.brokers, "--brokers")
    value = str(rate)
    with connected(request.connection) as client:
        if brokers:
            live = reader.read_cluster(client, topics=(), states=False).snapshot.brokers
            unknown = [b for b in brokers if b not in live]
            if unknown:
                raise InvalidInput(f"--brokers: broker(s) {unknown} not registered in "
                                   "/brokers/ids")
            entities = [throttles.broker_entity(b) for b in brokers]
        else:
            entities = [e for e in config.recorded_entities(client) if e.startswith("brokers/")]
            if not entities:
                raise InvalidInput("no broker throttled by kadmin: name them with --brokers")
        edit = throttles.set_rates({throttles.LEADER_RATE: value, throttles.FOLLOWER_RATE: value})
        changed = config.update(client, dict.fromkeys(entities, edit))
    return RateChange(rate, len(entities), changed)
