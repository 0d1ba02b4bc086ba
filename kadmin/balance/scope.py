"""Which brokers a rebalance targets, and their racks: the operator's intent, checked. Pure.

The dangerous case is a broker that holds replicas but is not registered (dead, or stopped for
maintenance): treating it as gone would drain it, treating it as absent would hide its replicas.
Neither may happen silently, so it must be named, to keep (``--brokers``) or to drain
(``--remove-brokers``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kadmin.model import Broker, InvalidInput, listed


@dataclass(frozen=True)
class Scope:
    targets: tuple[int, ...]
    """The brokers that end up holding the replicas, ascending."""
    rack_of: Mapping[int, str] | None
    """Racks of the brokers that have one, when placement is rack-aware; else None."""
    unregistered: tuple[int, ...] = ()
    """Targets that are not registered (named in ``--brokers`` to keep them): their replicas
    stay, nothing new goes there, and the partitions holding one are left as they are."""

    @property
    def live(self) -> tuple[int, ...]:
        """The registered targets: where replicas and leaderships may go."""
        return tuple(b for b in self.targets if b not in self.unregistered)


def targets_of(registered: Collection[int], brokers: Collection[int] | None,
               remove: Collection[int] | None) -> list[int]:
    """The brokers a plan balances over: ``--brokers`` as given, else every registered broker
    but those of ``--remove-brokers``."""
    return sorted(brokers if brokers is not None else set(registered) - set(remove or ()))


def scope_of(registered: Mapping[int, Broker], holding: Collection[int],
             brokers: Sequence[int] | None = None, remove: Sequence[int] | None = None,
             rack_aware: bool = True) -> Scope:
    """The targets: ``brokers`` when given, else every registered broker minus ``remove``.
    ``holding`` are the brokers that hold replicas of the topics to balance."""
    if brokers is not None and remove is not None:
        raise InvalidInput("give either --brokers (the target brokers) or --remove-brokers "
                           "(the brokers to drain), not both")
    known = set(registered) | set(holding)
    for option, ids in (("--brokers", brokers), ("--remove-brokers", remove)):
        if ids is None:
            continue
        repeated = next((b for i, b in enumerate(ids) if b in ids[:i]), None)
        if repeated is not None:
            raise InvalidInput(f"{option}: broker id {repeated} is given more than once")
        unknown = sorted(set(ids) - known)
        if unknown:
            raise InvalidInput(f"{option}: broker(s) {listed(unknown)} are neither registered "
                               f"nor hold replicas of these topics")
    named = set(brokers or ()) | set(remove or ())
    dead = sorted(b for b in holding if b not in registered and b not in named)
    if dead:
        raise InvalidInput(
            f"broker(s) {listed(dead)} hold replicas but are not registered in /brokers/ids "
            f"(dead, or stopped); name them in --brokers to keep their replicas there, or in "
            f"--remove-brokers to move them off")
    targets = targets_of(registered, brokers, remove)
    if not targets:
        raise InvalidInput("no target broker is left: every registered broker is removed")
    return Scope(tuple(targets), racks(registered, [b for b in targets if b in registered],
                                       rack_aware),
                 tuple(b for b in targets if b not in registered))


def racks(registered: Mapping[int, Broker], targets: Collection[int], rack_aware: bool
          ) -> Mapping[int, str] | None:
    """Racks matter when placement is rack-aware and the targets have them; then every target
    must have one (as in Kafka's AdminUtils): a broker without a rack could not be placed."""
    if not rack_aware:
        return None
    with_rack = [b for b in targets if b in registered and registered[b].rack is not None]
    if not with_rack:
        return None
    without = sorted(set(targets) - set(with_rack))
    if without:
        raise InvalidInput(
            f"broker(s) {listed(without)} have no rack (other target brokers have one); give "
            f"--disable-rack-aware to balance without racks")
    return {b: broker.rack for b, broker in registered.items() if broker.rack is not None}
