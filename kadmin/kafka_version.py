"""Which Kafka release a cluster runs, as far as reassignments go. Pure.

Two controller behaviours matter to kadmin, split by KIP-455 (Kafka 2.4):

- **before 2.4** a reassignment lives in the controller's memory; the topic znode holds the
  union of the original and target replicas with nothing saying which is which, and when a
  partition completes the controller writes its remaining in-memory reassignments back to
  ``/admin/reassign_partitions`` (re-creating it if someone deleted it);
- **2.4 and later** the topic znode records every move in flight (``adding_replicas`` /
  ``removing_replicas``, topic znode version 2+), a new controller resumes those moves, and a
  reassignment submitted for a partition already moving replaces the move in flight.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PATTERN = re.compile(r"(\d{1,3})\.(\d{1,3})(?:\.\d{1,3})?")


@dataclass(frozen=True, order=True)
class KafkaVersion:
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def records_moves_in_topic(self) -> bool:
        """KIP-455 (2.4+): moves in flight are in the topic znode and survive a controller
        move; a new reassignment of a moving partition replaces the move."""
        return (self.major, self.minor) >= (2, 4)

    @property
    def topic_znode_version(self) -> int:
        """The topic znode version this release writes (1 before 2.4, 2 from 2.4; 2.8's
        version 3 only adds ``topic_id``, which kadmin does not need)."""
        return 2 if self.records_moves_in_topic else 1


KIP_455 = KafkaVersion(2, 4)
DEFAULT_SANDBOX = KafkaVersion(2, 8)


def parse_kafka_version(text: str) -> KafkaVersion:
    """``"2.3"``, ``"2.8.1"`` -> the release's major and minor; anything else is a ValueError
    saying what was expected."""
    match = _PATTERN.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"Kafka version {text!r}: expected MAJOR.MINOR such as 2.3 or 2.8")
    version = KafkaVersion(int(match[1]), int(match[2]))
    if version < KafkaVersion(0, 8) or version >= KafkaVersion(4, 0):
        raise ValueError(f"Kafka version {text!r}: only the ZooKeeper era (0.8 to 3.x) has "
                         "these znodes")
    return version
