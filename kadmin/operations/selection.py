"""Which topics and brokers an operation covers: comma-separated lists as typed, Kafka's
topics-to-move file, and their check against the cluster."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kadmin import files
from kadmin.model import Broker, ClusterSnapshot, InvalidInput, listed
from kadmin.zk import codec


def split_names(text: str | None, what: str) -> list[str]:
    """``a,b , c`` -> [a, b, c]; an empty element or a name given twice is an input error
    naming the option (as a broker id given twice is)."""
    names = _items(text, what)
    twice = sorted(n for n, count in Counter(names).items() if count > 1)
    if twice:
        raise InvalidInput(f"{what}: {', '.join(map(repr, twice[:10]))} given more than once")
    return names


def _items(text: str | None, what: str) -> list[str]:
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise InvalidInput(f"{what}: empty name in {text!r}")
    return names


def split_ints(text: str | None, what: str) -> list[int]:
    """``0,1,2`` -> [0, 1, 2]: broker ids, each a decimal non-negative integer given once (the
    one parser of every id list on the command line; a repeated id is named, ``0,1,1`` and
    ``0,01`` alike)."""
    values: list[int] = []
    seen: set[int] = set()
    for item in _items(text, what):
        try:
            value = codec.decimal_id(item, "broker id", canonical=False)
        except codec.DecodeError:
            raise InvalidInput(f"{what}: {item!r} is not a broker id (a non-negative integer)"
                               ) from None
        if value in seen:
            raise InvalidInput(f"{what}: broker id {value} is given more than once")
        seen.add(value)
        values.append(value)
    return values


def optional_ints(text: str | None, what: str) -> list[int] | None:
    """:func:`split_ints`, or None when the option was not given."""
    return None if text is None else split_ints(text, what)


@dataclass(frozen=True)
class TopicSelection:
    """The topics an operation covers, as the operator named them: ``--topics`` (text as
    typed), ``--topics-file`` or ``--all-topics``; exactly one, or none where every topic is
    the default."""

    topics: str | None = None
    file: Path | None = None
    all_topics: bool = False

    def given(self) -> int:
        return sum([self.topics is not None, self.file is not None, self.all_topics])


_ONE_OF = "choose exactly one of --topics, --topics-file and --all-topics"


def select_topics(snapshot: ClusterSnapshot, selection: TopicSelection,
                  default_all: bool = False) -> list[str]:
    """The selected topics of the cluster, sorted; unknown topics are input errors."""
    if default_all and not selection.given():
        selection = TopicSelection(all_topics=True)
    if selection.given() != 1:
        raise InvalidInput(_ONE_OF)
    if selection.all_topics:
        return sorted(snapshot.topics)
    if selection.file is not None:
        names = topics_to_move(files.read_json(selection.file), str(selection.file))
    else:
        names = split_names(selection.topics, "--topics")
    unknown = [n for n in names if n not in snapshot.topics]
    if unknown:
        raise InvalidInput(f"unknown topic(s) not in the cluster: {listed(unknown)}")
    return sorted(set(names))


def topic_names(selection: TopicSelection, default_all: bool) -> list[str] | None:
    """The selected topic names without a cluster at hand (None: all), for a planner that
    checks them against the snapshot itself."""
    given = selection.given()
    if given > 1 or (given == 0 and not default_all):
        raise InvalidInput(_ONE_OF)
    if selection.file is not None:
        return topics_to_move(files.read_json(selection.file), str(selection.file))
    return split_names(selection.topics, "--topics") if selection.topics is not None else None


def topics_to_move(doc: object, source: str) -> list[str]:
    """The topic names of Kafka's topics-to-move file {"version":1,"topics":[{"topic":"foo"}]}."""
    entries = doc.get("topics") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f'{source}: $.topics must be a non-empty list of {{"topic": name}}')
    names = []
    for i, entry in enumerate(entries):
        name = entry.get("topic") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise InvalidInput(f"{source}: $.topics[{i}].topic must be a topic name")
        names.append(name)
    return names


def select_brokers(snapshot: ClusterSnapshot, brokers: str | None) -> list[Broker]:
    """The brokers ``--brokers`` names (every broker when None), in id order."""
    if brokers is None:
        return [snapshot.brokers[b] for b in sorted(snapshot.brokers)]
    ids = split_ints(brokers, "--brokers")
    unknown = [b for b in ids if b not in snapshot.brokers]
    if unknown:
        raise InvalidInput(f"--brokers: unknown broker id(s) {unknown}; the cluster has "
                           f"{sorted(snapshot.brokers)[:20]}")
    return [snapshot.brokers[b] for b in sorted(ids)]
