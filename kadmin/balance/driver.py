"""The Spark driver's view of the chunks (:class:`Driver`): their counts as the rounds change
them, and how the rounds reach them (:class:`kadmin.balance.part.Parts`). The stages over the
chunks are :mod:`kadmin.balance.chunks` (replicas, cut, leaders) and
:mod:`kadmin.balance.chunk_topics` (topics)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kadmin.balance.part import (
    Answer,
    Context,
    Counts,
    Parts,
    Question,
    Step,
    added,
    balanced_ranges,
)
from kadmin.balance.quotas import Round
from kadmin.balance.targets import Quota

TAIL_PARTITIONS = 200_000
"""Partitions the driver may gather to solve the tail of a rebalance (a few hundred bytes each)."""

WHOLE_PARTITIONS = TAIL_PARTITIONS
"""A selection of at most this many partitions is gathered on the driver, as read, for the
topic x broker program that raises the default objective's certificate
(:meth:`kadmin.balance.chunk_topics.TopicRounds._refuted`)."""


class Driver:
    """The chunks' counts as the rounds change them (one per plan): every round of every stage
    goes through :meth:`apply` or :meth:`ask`, which count them."""

    def __init__(self, parts: Parts, state: list[Counts], context: Context) -> None:
        self.parts, self.state, self.context = parts, state, context
        self.done = 0

    def apply(self, steps: Sequence[Step | None], label: str) -> None:
        self.done += 1
        for c, result in enumerate(self.parts.apply(steps, label)):
            if result is not None:
                self.state[c] = result

    def ask(self, question: Question, label: str) -> list[Answer]:
        """Every chunk's answer to ``question`` (:meth:`Parts.ask`)."""
        self.done += 1
        return self.parts.ask([question] * len(self.state), label)

    def rounds(self, kind: str, step: Callable[[Quota], Step],
               held: Callable[[Counts], Mapping[int, int]]) -> Round:
        """A :data:`Round` of ``kind`` for :func:`meet`."""
        number = 0

        def run(quotas: Sequence[Quota | None]) -> list[Mapping[int, int] | None]:
            nonlocal number
            number += 1
            self.apply([None if q is None else step(q) for q in quotas],
                       f"{kind}, round {number}")
            return [None if q is None else held(c)
                    for q, c in zip(quotas, self.state, strict=True)]

        return run

    def ranges(self) -> dict[int, tuple[int, int]]:
        """Each target broker's balanced range of replicas (as ``plan rebalance``'s)."""
        return balanced_ranges(added(c.replicas for c in self.state), self.context)
