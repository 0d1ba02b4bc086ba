"""Cutting a plan into znode-sized batches (docs/controller.md limits). Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kadmin.model import (
    InvalidInput,
    PartitionMove,
    TopicPartition,
)
from kadmin.zk import codec, paths

T = TypeVar("T")

# --- batching ----------------------------------------------------------------------------------

JUTE_MAXBUFFER = 1_048_575
"""ZooKeeper's default ``jute.maxbuffer`` (0xfffff bytes): the largest znode, and about the
largest request, a server accepts. A request over it makes the server drop the connection."""

REQUEST_HEADROOM = 1024
"""What a request adds around an admin znode's payload (headers, the path with its chroot, the
ACL), with room to spare: a payload may take jute.maxbuffer less this."""


def check_znode_limit(max_znode_bytes: int, jute_maxbuffer: int = JUTE_MAXBUFFER) -> None:
    """Refuse a ``--max-znode-bytes`` the servers would refuse, before anything is read or
    written: otherwise the first batch would fail half-way through a run, with the connection
    dropped and no word of why. Servers started with a larger ``-Djute.maxbuffer`` say so
    (``--jute-maxbuffer``)."""
    largest = jute_maxbuffer - REQUEST_HEADROOM
    if max_znode_bytes > largest:
        raise InvalidInput(
            f"--max-znode-bytes {max_znode_bytes:,} is more than ZooKeeper accepts: at most "
            f"{largest:,} with jute.maxbuffer {jute_maxbuffer:,} (less {REQUEST_HEADROOM:,} for "
            "the request around the payload); if the servers run with a larger "
            "-Djute.maxbuffer, give it with --jute-maxbuffer")


def batches(items: Sequence[T], entry_bytes: Callable[[T], int], overhead: int,
            max_items: int, max_bytes: int, *, separator: int = 1,
            label: Callable[[T], object] = str,
            work: Callable[[T], int] | None = None, max_work: int | None = None
            ) -> list[Sequence[T]]:
    """Split ``items`` into consecutive batches that each make a request ZooKeeper accepts.

    A batch's size is ``overhead`` (the envelope around the list) plus every entry's bytes plus
    ``separator`` bytes between entries: for an admin znode exactly the payload's (a comma
    between entries). Greedy and linear: a batch is closed when the next entry would pass
    ``max_items`` or ``max_bytes``, or, with ``work`` (say the bytes a move copies), when it
    would take the batch's work past ``max_work``; an item heavier than ``max_work`` alone is a
    batch of its own (a partition cannot be split). ``label`` names an item in errors.
    """
    if max_items < 1:
        raise InvalidInput(f"batch size must be at least 1, got {max_items}")
    if max_bytes <= overhead:
        raise InvalidInput(f"maximum znode size {max_bytes} bytes is too small: the admin "
                           f"document's envelope alone takes {overhead}")
    if max_work is not None and max_work < 1:
        raise InvalidInput(f"maximum bytes per batch must be at least 1, got {max_work}")
    out: list[Sequence[T]] = []
    start, size, load = 0, overhead, 0
    for i, item in enumerate(items):
        entry = entry_bytes(item)
        if overhead + entry > max_bytes:
            raise InvalidInput(f"{label(item)}: its entry alone takes {overhead + entry} bytes, "
                               f"more than the maximum znode size of {max_bytes}")
        cost = work(item) if work is not None else 0
        gap = separator if i > start else 0
        if (i - start == max_items or size + gap + entry > max_bytes
                or (max_work is not None and i > start and load + cost > max_work)):
            out.append(items[start:i])
            start, size, load, gap = i, overhead, 0, 0
        size += gap + entry
        load += cost
    if start < len(items):
        out.append(items[start:])
    return out


def reassignment_batches(moves: Sequence[PartitionMove], max_partitions: int = 1000,
                         max_bytes: int = 1_000_000, *,
                         moved_bytes: Callable[[PartitionMove], int] | None = None,
                         max_moved_bytes: int | None = None) -> list[Sequence[PartitionMove]]:
    """Znode-sized batches; with ``moved_bytes`` (what a move copies) and ``max_moved_bytes``
    also batches of a predictable amount of data."""
    return batches(moves, lambda m: len(codec.encode_reassignment_entry(m)),
                   len(codec.REASSIGNMENT_PREFIX) + len(codec.REASSIGNMENT_SUFFIX),
                   max_partitions, max_bytes, label=lambda m: m.tp,
                   work=moved_bytes, max_work=max_moved_bytes)


def election_batches(partitions: Sequence[TopicPartition], max_partitions: int = 1000,
                     max_bytes: int = 1_000_000) -> list[Sequence[TopicPartition]]:
    return batches(partitions, lambda tp: len(codec.encode_election_entry(tp)),
                   len(codec.ELECTION_PREFIX) + len(codec.ELECTION_SUFFIX),
                   max_partitions, max_bytes)


def deletion_batches(topics: Sequence[str], max_bytes: int = 1_000_000, chroot: str = ""
                     ) -> list[Sequence[str]]:
    """Topics per transaction of deletion markers. Each transaction is all-or-nothing, but a
    request over ZooKeeper's jute.maxbuffer (1 MB) makes the server drop the connection: some
    4,000 topics with long names already pass it. ``chroot`` is part of every path sent."""
    return batches(topics, lambda t: codec.multi_create_bytes(chroot + paths.delete_topic(t)),
                   codec.MULTI_REQUEST_OVERHEAD, max(1, len(topics)), max_bytes, separator=0)
