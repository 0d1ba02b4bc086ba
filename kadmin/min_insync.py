"""``min.insync.replicas``: where each topic's value comes from, and the plan entries that would
break it. Pure.

A partition with fewer replicas in its ISR than the topic's ``min.insync.replicas`` rejects
every ``acks=all`` write (NotEnoughReplicas). The value is the topic's (``/config/topics/<t>``),
else the cluster-wide broker default (``/config/brokers/<default>``), else Kafka's default, 1.
A target replica list shorter than it makes the topic unwritable for those producers for good;
a move that keeps fewer of the partition's in-sync replicas than it leaves the partition one
failure away from that until the new replicas catch up.
"""

from __future__ import annotations

from collections.abc import Mapping

from kadmin.model import PartitionState, Replicas

KEY = "min.insync.replicas"
KAFKA_DEFAULT = 1
DEFAULT_ENTITY = "<default>"
"""The broker config entity whose values every broker takes unless it sets its own."""

MinInsync = tuple[int, str]
"""A topic's value and where it comes from (a znode path, or Kafka's default)."""


def _value(config: Mapping[str, str] | None) -> int | None:
    text = None if config is None else config.get(KEY)
    if text is None or not text.strip().isdigit():
        return None
    return int(text)


def resolve(topic: str, topic_config: Mapping[str, str] | None,
            default_config: Mapping[str, str] | None) -> MinInsync:
    """The topic's ``min.insync.replicas`` and its source."""
    own = _value(topic_config)
    if own is not None:
        return own, f"/config/topics/{topic}"
    default = _value(default_config)
    if default is not None:
        return default, f"/config/brokers/{DEFAULT_ENTITY}"
    return KAFKA_DEFAULT, "Kafka's default"


def too_short(replicas: Replicas, minimum: MinInsync) -> str | None:
    """Why a target list is refused (None: it is long enough)."""
    value, source = minimum
    if len(replicas) >= value:
        return None
    return (f"{len(replicas)} target replica(s) {list(replicas)}, fewer than "
            f"min.insync.replicas {value} ({source}): acks=all producers would fail for good")


def kept_in_sync(current: Replicas, target: Replicas, state: PartitionState | None,
                 minimum: MinInsync) -> str | None:
    """Why the move leaves the partition below ``min.insync.replicas`` while it runs: fewer of
    its in-sync replicas stay in the target than the minimum (a reorder adds and removes
    nothing: fine). None when it does not."""
    if state is None or set(current) == set(target):
        return None
    value, source = minimum
    kept = [r for r in target if r in state.isr]
    if len(kept) >= value:
        return None
    return (f"only {len(kept)} of its in-sync replicas {list(state.isr)} stay in the target "
            f"{list(target)}, fewer than min.insync.replicas {value} ({source}): until the new "
            "replicas catch up, acks=all producers depend on them")


def at_or_below(state: PartitionState | None, minimum: MinInsync | None) -> bool:
    """The partition has no more in-sync replicas than the minimum: one more loss stops
    acks=all producers (its move goes first)."""
    return state is not None and minimum is not None and len(state.isr) <= minimum[0]
