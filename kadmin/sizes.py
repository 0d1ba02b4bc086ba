"""Partition sizes, from ``kafka-log-dirs.sh --describe`` or a snapshot. Pure parsing.

ZooKeeper holds no sizes (docs/execution.md), so they come from Kafka's own tool, exactly as it
prints them: two header lines (``Querying brokers for log directories information``,
``Received log directory information from brokers 0,1,2``) and one JSON document, or that JSON
document alone. A partition's size is the largest size among its replicas that are not
``isFuture`` (a future replica is a copy being made by ``kafka-reassign-partitions.sh
--log-dirs``, possibly half-written). ``partition`` is ``<topic>-<id>`` and a topic name may
itself contain ``-``, so the name splits at the last one.

Every way a sizes file can be wrong is one :class:`InvalidInput` line naming the file and the
JSON path. A partition of the cluster that no log dir reports (a broker that did not answer,
a topic created since) is not an error: it is named in a warning and counts as the median size
of the partitions that have one, so byte totals stay plausible rather than silently low.

What is odd but readable is read and named in a warning (each kind one line, the first
partitions and a count): a line before the JSON that is not one of the tool's two header lines,
a partition number Kafka would not print (``orders-01``, read as ``orders-1``), a partition
listed twice in one log dir (the larger size is kept).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from kadmin import files
from kadmin.jsontext import shown
from kadmin.model import MAX_ID, ClusterSnapshot, InvalidInput, TopicPartition, listed, printable

SizeMap = Mapping[str, Mapping[int, int]]
"""Topic -> partition id -> bytes, nested like :class:`ClusterSnapshot`'s topics and states."""

_MAX_SIZE = 2**63 - 1
"""A replica's size is a Java long in Kafka."""


@dataclass(frozen=True, eq=False)
class PartitionSizes(Mapping[TopicPartition, int]):
    """The size in bytes of every partition of one cluster: ``sizes[tp]``.

    ``measured`` holds the sizes the source reported (only the cluster's partitions);
    ``missing`` are the cluster's partitions it did not report, which count as ``median`` (the
    median of the measured sizes) so that totals are not silently low; ``ignored`` are
    partitions of the source that the cluster does not have. Iterating gives every partition of
    the cluster, measured ones first.
    """

    measured: SizeMap
    missing: tuple[TopicPartition, ...] = ()
    median: int = 0
    ignored: tuple[TopicPartition, ...] = ()
    source: str = ""
    """The file (or ``snapshot``) the sizes came from, for messages."""
    notes: tuple[str, ...] = field(default=())
    """What the source held that is odd but was read (one line per kind, sampled)."""

    @cached_property
    def _missing(self) -> frozenset[TopicPartition]:
        return frozenset(self.missing)

    def __getitem__(self, tp: TopicPartition) -> int:
        partitions = self.measured.get(tp.topic)
        if partitions is not None and tp.partition in partitions:
            return partitions[tp.partition]
        if tp in self._missing:
            return self.median
        raise KeyError(tp)

    def __iter__(self) -> Iterator[TopicPartition]:
        for topic, partitions in self.measured.items():
            for partition in partitions:
                yield TopicPartition(topic, partition)
        yield from self.missing

    def __len__(self) -> int:
        return sum(map(len, self.measured.values())) + len(self.missing)

    def total(self) -> int:
        """Bytes of all partitions (one replica each)."""
        return sum(sum(p.values()) for p in self.measured.values()) + self.median * len(
            self.missing)


@dataclass(frozen=True)
class _Replica:
    topic: str
    partition: int
    size: int
    future: bool
    name: str
    """The ``partition`` string as the file has it."""
    seen_in_dir: bool = False
    """Listed already in the same log dir (with the same ``isFuture``)."""


_HEADERS = (re.compile(r"Querying brokers for log directories information"),
            re.compile(r"Received log directory information from brokers [0-9,]*"))
"""The two lines kafka-log-dirs.sh --describe prints before its JSON (LogDirsCommand)."""


def parse_log_dirs(data: bytes, source: str) -> tuple[dict[str, dict[int, int]], tuple[str, ...]]:
    """The partition sizes in the output of ``kafka-log-dirs.sh --describe`` (header lines
    and all) or its JSON alone: topic -> partition -> largest non-future replica size; and one
    warning line per kind of oddity read past (see the module docstring)."""
    json_part, headers = _json_part(data, source)
    doc = files.parse_json(json_part, source)
    sizes: dict[str, dict[int, int]] = {}
    odd_numbers: list[str] = []
    twice: list[str] = []
    for replica, log_dir in _replicas(doc, source):
        if replica.name != f"{replica.topic}-{replica.partition}":
            odd_numbers.append(f"{printable(replica.name)!r} as {replica.topic}-{replica.partition}")
        if replica.future:
            continue
        if replica.seen_in_dir:
            twice.append(f"{replica.topic}-{replica.partition} in {log_dir}")
        partitions = sizes.setdefault(replica.topic, {})
        if replica.size > partitions.get(replica.partition, -1):
            partitions[replica.partition] = replica.size
    notes = []
    if headers:
        notes.append(f"{source}: {len(headers)} line(s) before the JSON that kafka-log-dirs.sh "
                     f"does not print, ignored: {listed(headers)}")
    if odd_numbers:
        notes.append(f"{source}: {len(odd_numbers)} partition name(s) with a partition number "
                     f"Kafka does not write (leading zeros), read as: {listed(odd_numbers)}")
    if twice:
        notes.append(f"{source}: {len(twice)} partition(s) listed twice in one log dir, the "
                     f"larger size kept: {listed(twice)}")
    return sizes, tuple(notes)


def _json_part(data: bytes, source: str) -> tuple[bytes, list[str]]:
    """Everything from the first line that starts a JSON object, and the lines before it that
    are not the tool's own header lines (as text for a warning): the tool's header lines are
    plain text, and a file of JSON alone starts at once."""
    offset = 0
    strange: list[str] = []
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        if line.lstrip().startswith(b"{"):
            return data[offset:], strange
        offset += len(line)
        text = line.decode("utf-8", "replace").strip()
        if text and not any(header.fullmatch(text) for header in _HEADERS):
            strange.append(f"line {number} {printable(text[:60])!r}")
    raise InvalidInput(f"{source}: no JSON document found; expected the output of "
                       "kafka-log-dirs.sh --describe (or its JSON)")


def _where(source: str, path: str) -> str:
    return f"{source}: {path}"


def _replicas(doc: object, source: str) -> Iterator[tuple[_Replica, str]]:
    """Each replica of the file with the log dir that lists it (for warnings)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("brokers"), list):
        raise InvalidInput(f"{_where(source, '$')}: expected an object with a \"brokers\" list "
                           "(kafka-log-dirs.sh --describe output)")
    if doc.get("version", 1) != 1:
        raise InvalidInput(f"{_where(source, '$.version')}: unsupported version "
                           f"{shown(doc.get('version'))} (kadmin reads 1)")
    for b, broker in enumerate(doc["brokers"]):
        at = f"$.brokers[{b}]"
        if not isinstance(broker, dict) or not isinstance(broker.get("logDirs"), list):
            raise InvalidInput(f"{_where(source, at)}: expected an object with a \"logDirs\" "
                               "list")
        for d, log_dir in enumerate(broker["logDirs"]):
            dir_at = f"{at}.logDirs[{d}]"
            partitions = log_dir.get("partitions") if isinstance(log_dir, dict) else None
            if not isinstance(partitions, list):
                raise InvalidInput(f"{_where(source, dir_at)}: expected an object with a "
                                   "\"partitions\" list")
            seen: set[tuple[str, int, bool]] = set()
            where = f"broker {shown(broker.get('broker', b))} {shown(log_dir.get('logDir', dir_at), 200)}"
            for p, entry in enumerate(partitions):
                replica = _replica(entry, source, f"{dir_at}.partitions[{p}]")
                key = (replica.topic, replica.partition, replica.future)
                if key in seen:
                    replica = dataclasses.replace(replica, seen_in_dir=True)
                seen.add(key)
                yield replica, printable(where)


def _replica(entry: object, source: str, at: str) -> _Replica:
    if not isinstance(entry, dict):
        raise InvalidInput(f"{_where(source, at)}: expected an object with partition, size "
                           "and isFuture")
    name, size, future = entry.get("partition"), entry.get("size"), entry.get("isFuture", False)
    if not isinstance(name, str):
        raise InvalidInput(f"{_where(source, at + '.partition')}: expected \"<topic>-<id>\", "
                           f"got {shown(name)}")
    topic, dash, number = name.rpartition("-")
    if not (dash and topic and number.isascii() and number.isdigit()
            and int(number) <= MAX_ID):
        raise InvalidInput(f"{_where(source, at + '.partition')}: {name!r} is not "
                           "\"<topic>-<partition id>\"")
    if type(size) is not int or not 0 <= size <= _MAX_SIZE:
        raise InvalidInput(f"{_where(source, at + '.size')}: expected a size in bytes (an "
                           f"integer >= 0), got {shown(size)}")
    if type(future) is not bool:
        raise InvalidInput(f"{_where(source, at + '.isFuture')}: expected true or false, "
                           f"got {shown(future)}")
    return _Replica(topic, int(number), size, future, name)


def sizes_for(measured: SizeMap, snapshot: ClusterSnapshot, source: str,
              notes: tuple[str, ...] = ()) -> PartitionSizes:
    """``measured`` sizes fitted to ``snapshot``'s partitions: those the cluster lacks are
    ``ignored``, those it has without a size are ``missing`` and count as the median. A source
    that sizes none of the cluster's partitions is an error: it is another cluster's."""
    kept: dict[str, dict[int, int]] = {}
    ignored: list[TopicPartition] = []
    for topic, partitions in measured.items():
        assignment = snapshot.topics.get(topic, {})
        for partition, size in partitions.items():
            if partition in assignment:
                kept.setdefault(topic, {})[partition] = size
            else:
                ignored.append(TopicPartition(topic, partition))
    missing = [TopicPartition(topic, partition)
               for topic in sorted(snapshot.topics)
               for partition in sorted(snapshot.topics[topic])
               if partition not in kept.get(topic, {})]
    if snapshot.partition_count and not kept:
        raise InvalidInput(f"{source}: sizes none of the cluster's {snapshot.partition_count} "
                           "partitions (a file of another cluster?)")
    values = [size for partitions in kept.values() for size in partitions.values()]
    median = int(statistics.median_low(values)) if values else 0
    return PartitionSizes(kept, tuple(missing), median, tuple(sorted(ignored)), source, notes)


def read_sizes(path: Path, snapshot: ClusterSnapshot) -> PartitionSizes:
    """The sizes in a ``kafka-log-dirs.sh --describe`` output file, fitted to ``snapshot``."""
    data = files.read_bytes(path)
    with files.gc_paused():
        measured, notes = parse_log_dirs(data, str(path))
        return sizes_for(measured, snapshot, str(path), notes)


def snapshot_sizes(snapshot: ClusterSnapshot) -> PartitionSizes | None:
    """The sizes a snapshot carries (``cluster snapshot --sizes``), or None when it has none."""
    if not snapshot.sizes:
        return None
    return sizes_for(snapshot.sizes, snapshot, "the snapshot's sizes")


def resolve(path: Path | None, snapshot: ClusterSnapshot) -> PartitionSizes | None:
    """``--sizes FILE`` when given, else the snapshot's own sizes, else None."""
    return read_sizes(path, snapshot) if path is not None else snapshot_sizes(snapshot)


def moved_bytes(size: int, current: tuple[int, ...], target: tuple[int, ...]) -> int:
    """Bytes a move copies: one full copy of the partition per new replica."""
    return size * len(set(target) - set(current))


def warnings(sizes: PartitionSizes, topics_read: Collection[str] | None = None
             ) -> tuple[str, ...]:
    """One line per kind of gap or oddity, each naming the first partitions and counting the
    rest. ``topics_read``: the topics of the cluster that were read (None: all of them); a
    partition of another topic is outside what was read, not missing from the cluster."""
    out = list(sizes.notes)
    if sizes.missing:
        out.append(f"{sizes.source}: no size for {len(sizes.missing)} partition(s), counted as "
                   f"the median {sizes.median} bytes: {listed(sizes.missing)}")
    absent = [tp for tp in sizes.ignored if topics_read is None or tp.topic in topics_read]
    outside = [tp for tp in sizes.ignored if topics_read is not None
               and tp.topic not in topics_read]
    if absent:
        out.append(f"{sizes.source}: {len(absent)} partition(s) not in the cluster, "
                   f"ignored: {listed(absent)}")
    if outside:
        out.append(f"{sizes.source}: {len(outside)} partition(s) of topics outside the plan, "
                   f"ignored: {listed(outside)}")
    return tuple(out)
