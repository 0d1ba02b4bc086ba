"""The 10M skewed run of bench_spark_rebalance.py, its replica round replayed chunk by chunk in one
process (minutes, not Spark's ten): the driver's split (:func:`kadmin.balance.quotas.split`) over
the real chunks' counts (1,000,000 topics of 10 partitions, RF 3, kadmin.synthetic seed 1 on 900
brokers, 100 more registered; chunks of 10,000 topics, as the range sort cuts them), then each
chunk's task (:meth:`kadmin.balance.part.Part.moved`, the code a Spark task runs), and the worst
topic spread over all chunks. The leader round that follows changes no replica, so this is the
topic spread the Spark run ends with.

Run: python bench/replay_spark_rebalance_10m_chunks.py [--split FILE]
``--split``: a quotas.py to take ``split`` from instead (e.g. the one before the leveling was
spread over the brokers: ``git show e7b01bb^:kadmin/balance/quotas.py > old.py``). Prints one
line; the measured lines are in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from kadmin.balance.metrics import balance
from kadmin.balance.part import Context, Part
from kadmin.balance.quotas import Chunk, replica_quota, split
from kadmin.balance.table import PartitionTable
from kadmin.synthetic import _generate

TOPICS, PER_CHUNK, OLD, NEW = 1_000_000, 10_000, 900, 100


def _split_from(path: Path) -> Callable[..., list]:
    spec = importlib.util.spec_from_file_location("quotas_replayed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["quotas_replayed"] = module
    spec.loader.exec_module(module)
    return module.split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", type=Path, help="a quotas.py whose split to replay")
    args = parser.parse_args()
    splitter = split if args.split is None else _split_from(args.split)
    start = time.perf_counter()
    counts: list[tuple[dict[int, int], int]] = []
    held: Counter[int] = Counter()
    partitions = 0
    for i, (_, assignment, _) in enumerate(_generate(OLD, TOPICS, 10, 3, 1, "topic")):
        for replicas in assignment.values():
            held.update(replicas)
        partitions += len(assignment)
        if (i + 1) % PER_CHUNK == 0:
            counts.append((dict(held), partitions))
            held, partitions = Counter(), 0
    total: Counter[int] = Counter()
    for chunk, _ in counts:
        total.update(chunk)
    targets = tuple(range(OLD + NEW))
    fixed = replica_quota(total, targets, None, fixed=True)
    shares = splitter(fixed.give, fixed.take, [Chunk(c, {}, n) for c, n in counts])
    context = Context(targets)
    worst: list[int] = []
    moves = 0
    topics: list[tuple[str, dict]] = []
    for i, (name, assignment, _) in enumerate(_generate(OLD, TOPICS, 10, 3, 1, "topic")):
        topics.append((name, assignment))
        if (i + 1) % PER_CHUNK == 0:
            after = Part(PartitionTable.of(topics), {}).moved(shares[len(worst)], context, True)
            figures = balance(after.replicas(), after.table.topic_of, after.table.topics,
                              targets)
            worst.append(figures.worst_topic_spread)
            moves += after.counts().moves
            topics = []
    print(f"{'default' if args.split is None else args.split}: {len(worst)} chunks, "
          f"{moves:,} moves ({fixed.units:,} units), worst topic spread {max(worst)}, "
          f"chunks by worst spread {sorted(Counter(worst).items())}, "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
