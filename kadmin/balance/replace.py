"""Replacing brokers one for one (kafka-utils' ``replace-broker``): every replica on a replaced
broker moves to its replacement in the same position of its partition's list, so the
replacement leads what the replaced broker led; nothing else moves. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kadmin.model import ClusterSnapshot, InvalidInput, PartitionMove, ReassignmentPlan, listed


@dataclass(frozen=True)
class Replacement:
    plan: ReassignmentPlan
    moved: Mapping[int, int]
    """Replaced broker -> replicas moved off it."""
    led: Mapping[int, int]
    """Replaced broker -> partitions it was the preferred leader of (its replacement is now)."""
    clashes: tuple[str, ...]
    """Partitions that already hold the replacement too (refused: a duplicate replica)."""
    rack_changes: tuple[str, ...]
    """Pairs whose brokers are in different racks (a warning)."""


def pairs_of(brokers: Sequence[int], replacements: Sequence[int]) -> dict[int, int]:
    """``--broker 3,4 --with 7,8`` as {3: 7, 4: 8}; an InvalidInput for anything else."""
    if len(brokers) != len(replacements):
        raise InvalidInput(f"--broker names {len(brokers)} broker(s) and --with "
                           f"{len(replacements)}: give one replacement per broker")
    for name, ids in (("--broker", brokers), ("--with", replacements)):
        if len(set(ids)) != len(ids):
            raise InvalidInput(f"{name}: a broker named twice in {list(ids)}")
    both = sorted(set(brokers) & set(replacements))
    if both:
        raise InvalidInput(f"broker(s) {listed(both)} both replaced and replacing: replace in two "
                           "plans, one after the other")
    return dict(zip(brokers, replacements, strict=True))


def replace_brokers(snapshot: ClusterSnapshot, pairs: Mapping[int, int]) -> Replacement:
    """The plan (partitions in topic, partition order) and what it does."""
    moves: list[PartitionMove] = []
    moved = dict.fromkeys(pairs, 0)
    led = dict.fromkeys(pairs, 0)
    clashes: list[str] = []
    for topic in sorted(snapshot.topics):
        for partition, replicas in sorted(snapshot.topics[topic].items()):
            if not any(r in pairs for r in replicas):
                continue
            target = tuple(pairs.get(r, r) for r in replicas)
            if len(set(target)) != len(target):
                clashes.append(f"{topic}-{partition}: {list(replicas)} already holds "
                               f"{sorted({pairs[r] for r in replicas if r in pairs} & set(replicas))}")
                continue
            for r in replicas:
                if r in pairs:
                    moved[r] += 1
            if replicas[0] in pairs:
                led[replicas[0]] += 1
            moves.append(PartitionMove(topic, partition, target))
    racks = []
    for old, new in pairs.items():
        a, b = snapshot.brokers.get(old), snapshot.brokers.get(new)
        if a is not None and b is not None and a.rack != b.rack:
            racks.append(f"broker {new} {_in_rack(b.rack)}, broker {old} {_in_rack(a.rack)}: "
                         "the topics' rack spread changes")
    return Replacement(ReassignmentPlan(tuple(moves)), moved, led, tuple(clashes), tuple(racks))


def _in_rack(rack: str | None) -> str:
    return "has no rack" if rack is None else f"is in rack {rack!r}"
