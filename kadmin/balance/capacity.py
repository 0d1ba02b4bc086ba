"""Broker capacities (``--capacity FILE``): the weights replica and leader shares follow when
brokers differ in size (docs/balancing.md). Pure: the document is parsed here; the operations
read the file (:func:`kadmin.operations.capacity.read_capacities`).

Two formats are read:

- Cruise Control's ``capacity.json``, as its users already have it::

      {"brokerCapacities": [
          {"brokerId": "-1", "capacity": {"DISK": "500000", "CPU": "100", ...}},
          {"brokerId": "6", "capacity": {"DISK": {"/data1": "250000", "/data2": "250000"}}}]}

  ``brokerId`` ``-1`` is the default of every broker not listed; ``DISK`` is in MB (Cruise
  Control's MB, 2**20 bytes), or, for JBOD, a map of log dir to MB whose sum counts; the other
  resources (CPU, NW_IN, NW_OUT) are ignored.
- A plain map of broker id to bytes, ``{"0": 1000000000000, "6": 2000000000000}`` (``"-1"``
  again the default), for those without Cruise Control.

Every mistake is one line naming the file and the JSON path of the value.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kadmin.balance.targets import Group
from kadmin.jsontext import json_kind, json_path, shown
from kadmin.model import MAX_ID, InvalidInput, listed
from kadmin.units import human_bytes as human

MB = 1 << 20
"""Bytes in Cruise Control's MB (its disk capacities and sizes are in 2**20 bytes)."""

DEFAULT = -1
"""The broker id that stands for every broker not listed (Cruise Control's convention)."""


@dataclass(frozen=True)
class Capacities:
    """Bytes of disk per broker, as a capacity file states them."""

    listed: Mapping[int, int]
    """Brokers named in the file, and their capacity in bytes."""
    default: int | None
    """The capacity of every broker not listed (``brokerId`` -1), if the file gives one."""
    source: str
    """The file, for messages."""

    def of(self, broker: int) -> int | None:
        return self.listed.get(broker, self.default)

    def strangers(self, brokers: Collection[int]) -> str | None:
        """The warning naming the brokers given a capacity that are not among ``brokers``
        (those of the cluster), or None. A warning, not an error: one file for a whole fleet,
        or a broker retired since it was written, is no reason to stop; but a typo (16 for 6)
        leaves the broker meant on the default, and the operator must see it."""
        strangers = sorted(set(self.listed) - set(brokers))
        return None if not strangers else (
            f"{self.source}: broker(s) {listed(strangers)} are not in the cluster; their "
            f"capacities are not used")

    def weights(self, brokers: Collection[int]) -> dict[int, int]:
        """Capacity in bytes of each of ``brokers``; a broker with none is an input error."""
        missing = sorted(b for b in brokers if self.of(b) is None)
        if missing:
            raise InvalidInput(f"{self.source}: no capacity for broker(s) {listed(missing)} and "
                               f"no default (brokerId -1)")
        return {b: self.listed.get(b, self.default or 0) for b in brokers}


def parse_capacities(doc: object, source: str) -> Capacities:
    """A capacity document in either format (see the module docstring); ``source`` names it in
    messages."""
    if isinstance(doc, dict) and "brokerCapacities" in doc:
        return _cruise_control(doc, source)
    if not isinstance(doc, dict) or not doc:
        raise InvalidInput(f"{source}: $: expected Cruise Control's {{\"brokerCapacities\": "
                           f"[...]}} or a map of broker id to bytes, got {json_kind(doc)}")
    capacities: dict[int, int] = {}
    for key, value in doc.items():
        broker = _broker_id(key, source, [key], DEFAULT)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise InvalidInput(f"{source}: {json_path([key])}: expected a capacity in bytes "
                               f"(a positive integer), got {shown(value)}")
        if broker in capacities:
            raise InvalidInput(f"{source}: {json_path([key])}: broker {broker} is given twice")
        capacities[broker] = value
    return _capacities(capacities, source)


def _cruise_control(doc: dict[str, object], source: str) -> Capacities:
    entries = doc["brokerCapacities"]
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f"{source}: $.brokerCapacities: expected a non-empty list, got "
                           f"{json_kind(entries)}")
    capacities: dict[int, int] = {}
    for i, entry in enumerate(entries):
        at = ["brokerCapacities", i]
        if not isinstance(entry, dict):
            raise InvalidInput(f"{source}: {json_path(at)}: expected an object, got {json_kind(entry)}")
        if "brokerId" not in entry:
            raise InvalidInput(f"{source}: {json_path([*at, 'brokerId'])}: missing")
        broker = _broker_id(entry["brokerId"], source, [*at, "brokerId"], DEFAULT)
        capacity = entry.get("capacity")
        if not isinstance(capacity, dict):
            raise InvalidInput(f"{source}: {json_path([*at, 'capacity'])}: expected an object "
                               f"with DISK, got {json_kind(capacity)}")
        if "DISK" not in capacity:
            raise InvalidInput(f"{source}: {json_path([*at, 'capacity', 'DISK'])}: missing")
        disk = capacity["DISK"]
        if broker in capacities:
            raise InvalidInput(f"{source}: {json_path([*at, 'brokerId'])}: broker {broker} is "
                               f"given twice")
        at = [*at, "capacity", "DISK"]
        if isinstance(disk, dict):
            if not disk:
                raise InvalidInput(f"{source}: {json_path(at)}: no log dir listed")
            megabytes = sum(_megabytes(v, source, [*at, d], allow_zero=True)
                            for d, v in disk.items())
            if megabytes <= 0:
                raise InvalidInput(f"{source}: {json_path(at)}: the log dirs add up to 0 MB")
        else:
            megabytes = _megabytes(disk, source, at, allow_zero=False)
        capacities[broker] = max(1, round(megabytes * MB))
    return _capacities(capacities, source)


def _capacities(found: dict[int, int], source: str) -> Capacities:
    default = found.pop(DEFAULT, None)
    return Capacities(found, default, source)


def _broker_id(value: object, source: str, at: list[object], default: int) -> int:
    """A broker id as Kafka writes one: the decimal of an int32 >= 0, without sign, spaces or
    leading zeros ("007" would be read as another broker), or ``default``."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(text, str) and (text == str(default) or (
            text.isascii() and text.isdigit() and len(text) <= len(str(MAX_ID))
            and int(text) <= MAX_ID and text == str(int(text)))):
        return int(text)
    raise InvalidInput(f"{source}: {json_path(at)}: expected a broker id (the decimal of an "
                       f"integer from 0 to {MAX_ID}, without leading zeros, or {default} for the "
                       f"default), got {shown(value)}")


def _megabytes(value: object, source: str, at: list[object], *, allow_zero: bool) -> float:
    """A size in MB, given as a number or a numeric string (Cruise Control writes strings)."""
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number < 0 or (
            number == 0 and not allow_zero):
        raise InvalidInput(f"{source}: {json_path(at)}: expected a size in MB (a positive "
                           f"number), got {shown(value)}")
    return number


def refuse_overfull(total_bytes: int, capacities: Mapping[int, int], brokers: Collection[int],
                    others: int = 0) -> None:
    """``--balance bytes`` with capacities: bytes beyond the targets' total capacity cannot be
    balanced into it (exit 2, nothing written). ``others``: bytes the topics not selected keep
    on the targets, which take room too."""
    room = sum(capacities[b] for b in brokers)
    if total_bytes + others > room:
        raise InvalidInput(f"the selected topics hold {human(total_bytes)}"
                           + (f" and the other topics {human(others)} on the target brokers"
                              if others else "")
                           + f", more than the {human(room)} capacity of the {len(brokers)} "
                             f"target broker(s): no plan fits them; add brokers or capacity")


def over_capacity(held: Mapping[int, int], capacities: Mapping[int, int]
                  ) -> list[tuple[int, int, int]]:
    """``(broker, bytes, capacity)`` of every broker holding more bytes than its capacity, in
    broker order: what a plan's summary warns about."""
    return [(b, held[b], capacities[b]) for b in sorted(held)
            if b in capacities and held[b] > capacities[b]]


def used_share(held: Mapping[int, int], capacities: Mapping[int, int]) -> dict[int, float]:
    """Each broker's bytes over its capacity (1.0 = full), for status and plan stats."""
    return {b: held.get(b, 0) / capacities[b] for b in sorted(capacities) if capacities[b]}


@dataclass(frozen=True)
class BrokerUse:
    """One broker against its capacity, as ``kadmin status --capacity`` shows it."""

    broker: int
    capacity: int
    """Bytes of disk (the capacity file's)."""
    share: float
    """The replicas its capacity entitles it to: R * w_b / sum(w) (docs/balancing.md)."""
    low: int
    high: int
    """Floor and ceiling of ``share``, exactly: balanced means a count between them."""
    held: int | None = None
    """Bytes of its replicas (None without partition sizes)."""

    @property
    def used(self) -> float | None:
        """``held`` over ``capacity`` (1.0 = full); None without sizes."""
        return None if self.held is None else self.held / self.capacity


def broker_use(replicas: Mapping[int, int], capacities: Mapping[int, int],
               held: Mapping[int, int] | None) -> tuple[BrokerUse, ...]:
    """Each of ``capacities``' brokers (broker order): its capacity, the replica count its
    share of ``replicas``' total is, and with ``held`` (bytes per broker) the part of its
    capacity those bytes use."""
    brokers = tuple(sorted(capacities))
    total, whole = sum(replicas.get(b, 0) for b in brokers), sum(capacities.values())
    ranges = (Group(brokers, total, tuple(capacities[b] for b in brokers)).bounds() if whole
              else dict.fromkeys(brokers, (0, 0)))  # the balanced ranges plan rebalance uses
    return tuple(BrokerUse(b, capacities[b], total * capacities[b] / whole if whole else 0.0,
                           *ranges[b], None if held is None else held.get(b, 0))
                 for b in brokers)
