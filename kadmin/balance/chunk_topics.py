"""The topic stage over chunks of topics, run by the Spark driver (:class:`TopicRounds`): the
chunks' exact programs held to the counts the driver gives them, with ``--topic-spread`` the
count step, the rounds that make room and the prices that raise the bound; by default the
certificate every chunk is held to. :class:`TopicsPlanned` says what that proves of the
whole. The module docstring of :mod:`kadmin.balance.chunks` tells the rounds in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from math import ceil
from typing import cast

from kadmin.balance import evenness, quotas, spreads
from kadmin.balance.driver import WHOLE_PARTITIONS, Driver
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.part import (
    Certified,
    Certify,
    Counts,
    Even,
    Price,
    Priced,
    Step,
    Window,
    added,
    picked_table,
)
from kadmin.balance.quotas import MAX_ROUNDS
from kadmin.balance.targets import fewest_to_ranges

IDLE_PRICE_ROUNDS = 6
"""Rounds without a better bound after which :meth:`TopicRounds.price` stops."""


@dataclass(frozen=True)
class TopicsPlanned:
    """What the chunks' topic step did, added up; :meth:`goal` says it in ``plan
    rebalance``'s words (:class:`~kadmin.balance.evenness.TopicGoal`).

    What is proven. Each chunk's program is exact for the counts the driver's quotas leave
    on each broker in that chunk; those quotas are a decomposition (each broker's units split
    over the chunks near proportionally, :mod:`kadmin.balance.quotas`), and another split
    could let the chunks together move fewer replicas or reach a smaller spread. So the sum
    over the chunks is proven the fewest only when it meets a bound no plan can beat: with
    ``--topic-spread N``, moves equal to the larger of the plain lower bound (brokers balanced,
    no topic constraint) and :attr:`relaxed`, the sum of each chunk's fewest moves within
    ``N`` with its brokers' counts free (:meth:`Part.relaxation`; the chunks hold disjoint
    topics, so no plan within ``N`` moves fewer) raised by the prices' Lagrangian bound
    (:meth:`TopicRounds.price`); by default, a worst topic spread equal to the certificate's bound
    (:meth:`TopicRounds.certify`: no plan of the fewest moves goes below it), the moves being the
    plain bound already. Elsewhere the goal says ``exact`` False and the summary says the
    figure is the chunks' and not proven the fewest (or least) overall."""

    asked: int | None
    chunks: int
    """Chunks the program ran on (the default objective skips those too large for it)."""
    of: int
    """Chunks in all."""
    spread: int
    """The worst topic spread of the chunks it ran on."""
    proven: bool
    """Every chunk's program answered within its time (exact for its counts)."""
    least: int
    """The least worst topic spread the topics allow."""
    moves: int
    """Replica moves after the topic step (before any ``--max-moves`` cut)."""
    floor: int = 0
    """With ``asked``: no plan of balanced brokers keeps every topic within a smaller spread
    than this (:meth:`TopicRounds.compatible_counts`); ``asked`` when it is reachable for all that
    the chunks' windows say."""
    relaxed: int | None = None
    """With ``asked``: a lower bound of the moves of every balanced plan that keeps each
    topic within ``asked``: the sum over chunks of :meth:`Part.relaxation`, or the prices'
    Lagrangian bound where larger (None: some chunk has no relaxation)."""
    bound: int | None = None
    """Default objective: no plan of the fewest moves of the whole cluster has a smaller
    worst topic spread (:meth:`TopicRounds.certify`: the per-topic bound of
    :mod:`kadmin.balance.spreads` over every chunk, raised by its budget bound summed over
    the chunks, then, on a selection of at most :data:`WHOLE_PARTITIONS`, by the topic x
    broker program of :mod:`kadmin.balance.aggregate`); None: not computed (the executors
    lack numpy)."""
    chunks_proven: int = 0
    """Chunks whose worst topic spread meets their topics' own bound."""
    topics: int = 0
    topics_proven: int = 0
    """Topics whose spread meets their own bound."""
    racked: str | None = None
    """Planned by the class program with racks (:mod:`kadmin.balance.chunk_racks`): "whole",
    over the whole selection on the driver; "chunks", per chunk at the counts split from the
    whole, :attr:`chunks_proven` counting the chunks whose spread is the least at them."""

    def lower_bound(self, plain_bound: int, worst: int) -> int:
        """The lower bound the summary prints: with ``asked`` reached, the larger of the plain
        bound and :attr:`relaxed` (no plan keeping the topics within ``asked`` moves fewer),
        else the plain bound."""
        if self.asked is None or worst > self.asked or self.relaxed is None:
            return plain_bound
        return max(plain_bound, self.relaxed)

    def goal(self, plain_bound: int, worst: int) -> TopicGoal:
        """The goal reached, ``worst`` being the plan's worst topic spread over every chunk."""
        if self.asked is not None:
            return TopicGoal(self.asked, worst, plain_bound, self.moves,
                             worst <= self.floor
                             and self.moves == self.lower_bound(plain_bound, worst),
                             chunked=True)
        least = max(self.least, self.bound or 0)
        return ChunkedGoal(None, worst, plain_bound, None, worst <= least, min(least, worst),
                           chunked=True, certified=self.bound is not None, chunks=self.of,
                           chunks_proven=self.chunks_proven, topics=self.topics,
                           topics_proven=self.topics_proven, racked=self.racked)


@dataclass(frozen=True)
class ChunkedGoal(TopicGoal):
    """The default objective's goal in chunks, with what the certificate proved chunk by
    chunk (:class:`Certified`)."""

    certified: bool = False
    """The certificate ran (else only the mean term is known: ``least`` 0 or 1)."""
    chunks: int = 0
    chunks_proven: int = 0
    topics: int = 0
    topics_proven: int = 0
    racked: str | None = None
    """Planned by the class program with racks (:attr:`TopicsPlanned.racked`); the whole
    proven only where ``exact``."""


class TopicRounds:
    """The topic stage's rounds over the chunks ``run`` holds."""

    def __init__(self, run: Driver) -> None:
        self.run = run

    def even(self, asked: int | None, plain_bound: int) -> TopicsPlanned | None:
        """The topic step (:class:`Even`): with ``asked``, on every chunk with the counts of
        :meth:`compatible_counts`, then, where the moves exceed both ``plain_bound`` and the
        chunks' relaxations, with the counts the prices suggest (:meth:`price`), keeping the
        better; else on the chunks small enough for the default objective's program, each with
        its own counts. None when no chunk is small enough."""
        targets = self.run.context.targets
        if asked is None:
            small = [c.partitions * len(targets) <= evenness.DEFAULT_LIMIT for c in self.run.state]
            if not any(small):
                return None
            self.run.apply([Even(None) if s else None for s in small], "topics")
            return self._topics(None, small, 0)
        spread, counts = self.compatible_counts(asked)
        near: list[Mapping[int, int]] = [{b: c.replicas.get(b, 0) for b in targets}
                                         for c in self.run.state]
        boxes = [c.windows[min(spread - asked, len(c.windows) - 1)] for c in self.run.state]
        first = self._meet(spread, counts, boxes, near)
        relaxed = None if any(c.relaxed is None for c in self.run.state) \
            else sum(c.relaxed or 0 for c in self.run.state)
        moves = sum(c.moves for c in self.run.state)
        if spread == asked and relaxed is not None and moves > max(relaxed, plain_bound) \
                and self.run.context.price_rounds:
            bound, priced = self.price(spread, moves)
            relaxed = max(relaxed, ceil(bound - 1e-6))
            again = None if priced is None or moves <= relaxed else quotas.compatible(
                priced, boxes, self.run.ranges())
            if again is not None and again != first:
                held, state = self.run.parts.hold(), list(self.run.state)
                self._meet(spread, again, boxes, near)
                worse = sum(c.moves for c in self.run.state) > moves
                self.run.parts.let_go(held, restore=worse)  # the first plan, kept, where better
                if worse:
                    self.run.state = state
        return self._topics(asked, [True] * len(self.run.state), spread, relaxed)

    def _meet(self, spread: int, counts: Sequence[Mapping[int, int]],
              boxes: Sequence[tuple[int, int]],
              near: list[Mapping[int, int]]) -> list[Mapping[int, int]]:
        """Every chunk's topics within ``spread`` at the counts the driver gives it
        (:class:`Even`), starting from ``counts``: a chunk that cannot meet its counts is held
        to what it reached while the others' counts are chosen again, for at most
        :data:`MAX_ROUNDS` rounds, then each chunk keeps ``near`` (the counts its replica
        rounds left, always met). Returns the counts the chunks end with."""
        targets = self.run.context.targets
        met = counts = list(counts)
        solved: list[Mapping[int, int] | None] = [None] * len(self.run.state)
        fixed: dict[int, Mapping[int, int]] = {}
        for number in range(1, MAX_ROUNDS + 2):
            if number > MAX_ROUNDS:  # every chunk with the counts its rounds left: always met
                fixed, counts = dict(enumerate(near)), near
            steps: list[Step | None] = [None if solved[c] == counts[c] else
                                        Even(spread, counts[c]) for c in range(len(counts))]
            self.run.apply(steps, f"topics, round {number}")
            reached = list(counts)
            for c, step in enumerate(steps):
                if step is None:
                    continue
                state = self.run.state[c]
                if state.failed:  # left as the rounds planned it: held there
                    fixed[c] = reached[c] = near[c]
                else:
                    reached[c] = solved[c] = {b: state.replicas.get(b, 0) for b in targets}
            met = reached
            if reached == counts:
                break
            again, held = None, False
            off = {c: reached[c] for c in range(len(counts))
                   if reached[c] != counts[c] and c not in fixed}
            # every chunk off its counts held to what it reached while the others make room
            # (one circulation), else each in turn (one each: seconds apiece at 1M)
            for trial in ([off] if len(off) > 1 else []) + [{c: n} for c, n in off.items()]:
                prefer = [{**fixed, **trial}.get(d, counts[d]) for d in range(len(counts))]
                found = quotas.compatible(prefer, boxes, self.run.ranges(), {*fixed, *trial})
                if found is not None:
                    fixed.update(trial)
                    again, held = found, True
                    if len(trial) > 1:
                        break
            if not held:  # none can be held: every count as near what the chunks reached
                fixed = {c: n for c, n in fixed.items() if self.run.state[c].failed}
                again = quotas.compatible(reached, boxes, self.run.ranges(), set(fixed))
            counts = near if again is None else list(again)
            if again is None:
                fixed = dict(enumerate(near))
        return met

    def price(self, spread: int, upper: int) -> tuple[float, list[dict[int, int]] | None]:
        """A Lagrangian lower bound on the fewest moves of every balanced plan that keeps each
        topic within ``spread``, and the chunks' counts at the best prices found.

        The whole problem is one min-cost flow (:mod:`kadmin.balance.evenness`) whose only
        rows that tie chunks together are the brokers' ranges. Pricing those (``p_b`` per
        replica ending on ``b``) leaves one program per chunk with its brokers free
        (:class:`Price`), and for every ``p`` the sum of the chunks' optima minus ``sum_b
        max(p_b lo_b, p_b hi_b)`` is a lower bound (weak duality; ``p = 0`` is the sum of the
        chunks' relaxations). The prices are raised by the subgradient (each broker's total
        over its range, Polyak's step towards ``upper``, a plan's moves, halved when two
        rounds bring no better bound) for :attr:`Context.price_rounds` rounds of tasks at most
        (:data:`IDLE_PRICE_ROUNDS` without a better bound end them); the linear program being a network,
        its dual optimum is the fewest moves itself, so the bound closes the gap where the
        rounds converge. None for the counts when some chunk's program has no plan or a
        fractional optimum (wide windows)."""
        ranges = self.run.ranges()
        prices = dict.fromkeys(ranges, 0.0)
        best = float("-inf")
        theta, stale, idle = 1.0, 0, 0
        mean: list[dict[int, float]] = [{} for _ in self.run.state]
        weight = 0.0
        for number in range(1, self.run.context.price_rounds + 1):
            found = cast("list[Priced | None]", self.run.ask(Price(spread, dict(prices)),
                                                         f"topic prices, round {number}"))
            if any(f is None or f.counts is None for f in found):
                return best if best > float("-inf") else 0.0, None
            chunks = cast("list[Priced]", found)
            value = sum(f.value for f in chunks) - sum(
                max(prices[b] * low, prices[b] * high) for b, (low, high) in ranges.items())
            total = added(cast("Mapping[int, int]", f.counts) for f in chunks)
            slope = {b: total.get(b, 0) - (high if prices[b] > 0 else low if prices[b] < 0
                                           else min(max(total.get(b, 0), low), high))
                     for b, (low, high) in ranges.items()}
            weight += 1.0
            for average, f in zip(mean, chunks, strict=True):
                for b, n in cast("Mapping[int, int]", f.counts).items():
                    average[b] = average.get(b, 0.0) + (n - average.get(b, 0.0)) / weight
            if value > best + 1e-9:
                best, stale, idle = value, 0, 0
            else:
                stale, idle = stale + 1, idle + 1
                if stale >= 2:
                    theta, stale = theta / 2, 0
                if idle >= IDLE_PRICE_ROUNDS:
                    break
            norm = sum(v * v for v in slope.values())
            if not norm or ceil(best - 1e-6) >= upper:
                break
            step = theta * max(upper - value, 1.0) / norm
            prices = {b: prices[b] + step * slope[b] for b in prices}
        return best, [_rounded(average) for average in mean]

    def certify(self, read: Sequence[Counts], topics: TopicsPlanned | None) -> TopicsPlanned:
        """The default objective's certificate over the chunks (:class:`Certify`, one round,
        and a second for the budget bound when the first leaves a gap): the bounds of
        :mod:`kadmin.balance.spreads` with the whole cluster's gives and takes (``read``: the
        chunks' counts as read). The per-topic bound holds topic by topic, so its largest over
        the chunks holds; the budget bound's needs add up over the chunks' disjoint topics,
        and the driver checks their sums against the whole cluster's budgets exactly as
        :func:`kadmin.balance.spreads.least_spread` does over one table (both with the water
        levels, each topic's own: the bound is ``least_spread``'s with ``levels``). Both assume a plan
        of the fewest moves ``F`` to the balanced ranges (:func:`kadmin.balance.targets.
        fewest_to_ranges`): the chunks' plan, when its moves are ``F`` (else only the mean
        term is claimed). ``topics``: what the topic step did (None: it did not run)."""
        import numpy as np
        targets = sorted(self.run.context.targets)
        total = added(c.replicas for c in read)
        inside = {b: total.get(b, 0) for b in targets}
        ranges = self.run.ranges()
        replicas = sum(total.values())
        fewest = fewest_to_ranges(inside, ranges, replicas)
        known = sum(c.moves for c in self.run.state) == fewest
        first = cast("list[Certified]", self.run.ask(Certify(inside if known else None, ranges),
                                                 "topic bound"))
        bound, worst = max(f.bound for f in first), max(f.spread for f in first)
        if known and bound < worst:
            ks = tuple(range(bound, worst))
            needed = [cast("Certified", c).needs for c in self.run.ask(Certify(inside, ranges, ks),
                                                                   "topic bound, budget")]

            def needs_at(k: int) -> tuple[np.ndarray, np.ndarray]:  # added up over the chunks
                j = k - ks[0]
                return (np.sum([n[j][0] for n in needed], axis=0),
                        np.sum([n[j][1] for n in needed], axis=0))

            bound = spreads.least_admitted(needs_at, *spreads.allowance(inside, ranges, targets),
                                           replicas - sum(inside.values()), fewest, bound,
                                           worst)
        if known and bound < worst:
            bound = self._refuted(inside, ranges, fewest, bound, worst)
        if topics is None:
            topics = TopicsPlanned(None, 0, len(self.run.state), worst, True,
                                   max(c.least for c in self.run.state),
                                   sum(c.moves for c in self.run.state))
        return replace(topics, spread=worst, bound=bound,
                       chunks_proven=sum(f.spread <= f.bound for f in first),
                       topics=sum(f.topics for f in first),
                       topics_proven=sum(f.proven for f in first))

    def _refuted(self, inside: Mapping[int, int], ranges: Mapping[int, tuple[int, int]],
                 fewest: int, bound: int, worst: int) -> int:
        """The certificate raised by the topic x broker program of
        :mod:`kadmin.balance.aggregate` over the whole selection, where it is cheap: at most
        :data:`WHOLE_PARTITIONS` partitions, gathered on the driver as read, and a program
        within ``aggregate.LIMIT``, for ``aggregate.SECONDS`` at most (as ``plan rebalance``
        runs it). It refutes every spread below the one it returns (exact: a refutation
        without racks is one with them), whether or not it decides that one. Else
        ``bound``."""
        import time

        from kadmin.balance import aggregate
        if sum(c.partitions for c in self.run.state) > WHOLE_PARTITIONS:
            return bound
        picked = self.run.parts.pick(self.run.context.targets, max(c.partitions for c in self.run.state))
        flat = [p for chunk in picked for p in chunk]
        program = aggregate.Aggregate(picked_table(flat, [p.original for p in flat]),
                                      self.run.context.targets, ranges, inside, fewest,
                                      self.run.context.rack_of)
        if program.size > aggregate.LIMIT:
            return bound
        _, least, _ = program.least(bound, worst, time.monotonic() + aggregate.SECONDS)
        return max(bound, least)

    def compatible_counts(self, asked: int) -> tuple[int, list[Mapping[int, int]]]:
        """The least spread ``k >= asked`` for which the chunks' counts can be chosen within
        what their topics allow (:func:`kadmin.balance.quotas.compatible`, near the counts the
        rounds left), and those counts. No plan of balanced brokers reaches a smaller spread
        (the windows are necessary conditions). Without any such ``k``, ``asked`` and the
        rounds' counts."""
        targets = self.run.context.targets
        self.run.apply([Window(asked)] * len(self.run.state), "topic windows")
        return least_compatible([{b: c.replicas.get(b, 0) for b in targets} for c in self.run.state],
                                [c.windows for c in self.run.state], self.run.ranges(), asked)

    def _topics(self, asked: int | None, ran: Sequence[bool], floor: int,
                relaxed: int | None = None) -> TopicsPlanned:
        goals = [c.topics for c, r in zip(self.run.state, ran, strict=True) if r]
        done = [g for g in goals if g is not None]
        return TopicsPlanned(asked, len(done), len(self.run.state),
                             max((g.spread for g in done), default=0),
                             all(g.exact for g in done) and len(done) == len(goals),
                             max((c.least for c in self.run.state), default=0),
                             sum(c.moves for c in self.run.state), floor, relaxed)


def _rounded(average: Mapping[int, float]) -> dict[int, int]:
    """Counts of a chunk averaged over rounds, in whole replicas with the same total (largest
    remainders)."""
    whole = {b: int(v) for b, v in average.items()}
    left = round(sum(average.values())) - sum(whole.values())
    for b in sorted(average, key=lambda b: (-(average[b] - whole[b]), b))[:max(0, left)]:
        whole[b] += 1
    return whole


def least_compatible(near: Sequence[Mapping[int, int]],
                     windows: Sequence[Sequence[tuple[int, int]]],
                     ranges: Mapping[int, tuple[int, int]], asked: int
                     ) -> tuple[int, list[Mapping[int, int]]]:
    """The driver's count step of ``--topic-spread`` (:meth:`TopicRounds.compatible_counts`): the
    least spread ``asked + j`` whose windows (``windows[c][j]``, :meth:`Part.windowed`) admit
    counts per chunk and broker within the brokers' ``ranges``
    (:func:`kadmin.balance.quotas.compatible`, near ``near``), and those counts; without any,
    ``asked`` and ``near``."""
    for j in range(max(len(w) for w in windows)):
        found = quotas.compatible(near, [w[min(j, len(w) - 1)] for w in windows], ranges)
        if found is not None:
            return asked + j, list(found)
    return asked, list(near)
