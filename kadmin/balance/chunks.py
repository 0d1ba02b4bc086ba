"""Rebalancing in chunks of topics: what a Spark task does to its chunk, and the rounds the
driver runs over the chunks. Pure: the Spark job supplies the chunks (:class:`Parts`, one per
Spark partition), tests supply a list, and both run the same rounds.

The driver only ever sees :class:`Counts`, a few thousand numbers per chunk; the replica lists
stay with the tasks. The rounds (see :mod:`kadmin.balance.quotas` for why they meet the bound):

1. replicas: the fixed quota of the selected topics, split over the chunks, met by
   ``move_replicas`` in each, one copy per unit, again on what is left until all is met;
2. topics (:class:`Even`), as ``plan rebalance`` does them (:func:`kadmin.balance.evenness.even_topics`,
   the exact program) but chunk by chunk: a chunk holds whole topics, so each topic's spread is
   the chunk's business, and only the brokers' counts tie the chunks together. By default each
   chunk small enough for the program (and whose executors have scipy) runs the lexicographic
   objective with every broker held to the count the rounds left it there, so the moves stay
   the bound (elsewhere the local search of :mod:`kadmin.balance.topics` the rounds ran stays).
   With ``--topic-spread N`` the driver first asks each chunk what its topics allow a broker
   to hold under spreads ``N, N+1...`` (:class:`Window`), takes the least ``k >= N`` for which
   counts per chunk and broker exist within those windows that keep each broker within its
   balanced range (:func:`kadmin.balance.quotas.compatible`; no plan reaches a smaller
   spread), and each chunk runs the program held to its counts: the fewest moves that keep
   its topics within ``k``. A chunk that cannot meet its counts ends as near them as it can
   (within :data:`SLACKS`) and is held there while the other chunks' counts are chosen again
   to make room; rounds of this end when every chunk met its counts (at most
   ``MAX_ROUNDS``, then each chunk keeps the counts the replica rounds left it, which it
   always meets). Where those moves exceed the bound, the brokers' counts are priced
   (:meth:`_Run.price`, a Lagrangian decomposition of the one exact program: rounds of one
   linear program per chunk), which raises the bound towards the fewest moves, and the
   chunks' counts averaged over the rounds are met the same way; the better of the two plans
   stays. Measured on five small clusters in 7 chunks (tests/unit/test_balance_chunks.py):
   0 to 1.0% above the exact minimum, was 0 to 8.1%, with the bound 0 to 1.1% below it. By
   default (3.), every chunk is held to the certificate of :mod:`kadmin.balance.spreads`
   (:class:`Certify`, a question: the chunks only read), raised on small selections by the
   topic x broker program over the whole (:meth:`_Run._refuted`). See
   :class:`TopicsPlanned` for what that proves of the whole;
4. with ``max_moves``: each chunk keeps its share of the budget, its most loaded brokers
   relieved first (the core's ``cut_moves``);
5. with ``leaders``: the fixed quota of preferred leaders over the planned replica lists, met by
   ``order_leaders`` in each chunk the same way.

Units the rounds leave (rare, see :mod:`kadmin.balance.quotas`) are met on the driver by the same
core functions over a bounded sample of the partitions concerned: the tail.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from math import ceil
from typing import Protocol, cast

from kadmin.balance import evenness, quotas, spreads
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.leaders import order_leaders
from kadmin.balance.metrics import Balance, balance, leader_changes, replica_moves
from kadmin.balance.quotas import MAX_ROUNDS, Chunk, Round, budgets, leader_quota, meet, replica_quota
from kadmin.balance.rebalance import cut_moves
from kadmin.balance.replicas import leader_kept, move_replicas, replica_counts
from kadmin.balance.spreads import worst_spread
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota, fewest_to_ranges, groups_of
from kadmin.model import PartitionMove, Replicas

PRICE_ROUNDS = 16
"""Rounds of tasks :meth:`_Run.price` runs at most by default (each one linear program per
chunk, the size of the relaxation's; 16 measured as good as 24 at two thirds of the cost)."""


@dataclass(frozen=True)
class Context:
    """What every task of one rebalance shares (broadcast once)."""

    targets: tuple[int, ...]
    rack_of: Mapping[int, str] | None
    weights: Mapping[int, int] | None = None
    """Broker capacities (``--capacity``): the driver's quotas follow their shares."""
    even_topics: bool = True
    """The default objective (topics as even as the fewest moves allow); False
    (``--no-even-topics``): the fewest moves and balanced brokers only, no topic looked at."""
    price_rounds: int = PRICE_ROUNDS
    """``--topic-spread``: rounds of :meth:`_Run.price` at most (``--price-rounds``; 0: none)."""


@dataclass(frozen=True)
class Move:
    """Meet ``share`` with replica moves."""

    share: Quota
    single_copies: bool


@dataclass(frozen=True)
class Lead:
    """Meet ``share`` of preferred leaders by reordering replica lists."""

    share: Quota


@dataclass(frozen=True)
class Cut:
    """Keep at most ``budget`` replica moves."""

    budget: int


IDLE_PRICE_ROUNDS = 6
"""Rounds without a better bound after which :meth:`_Run.price` stops."""

SLACKS = (0, 1, 2, 4, 8)
"""How far from the counts the driver gave it a chunk's topic step may end, tried in turn."""


@dataclass(frozen=True)
class Window:
    """Say what the chunk's topics allow each broker under spreads ``asked``, ``asked + 1``...
    (:meth:`Part.windowed`)."""

    asked: int


@dataclass(frozen=True)
class Even:
    """The chunk's topics evened by the exact program from the plan the rounds made, every
    target broker ending with ``counts`` (None: the counts of that plan): ``asked``,
    ``--topic-spread``; None, the default objective."""

    asked: int | None
    counts: Mapping[int, int] | None = None


@dataclass(frozen=True)
class Price:
    """The chunk's fewest moves within ``spread``, its brokers free, each replica ending on
    broker ``b`` costing ``prices[b]`` more (:meth:`Part.priced_by`, the Lagrangian subproblem
    of :meth:`_Run.price`)."""

    spread: int
    prices: Mapping[int, float]


@dataclass(frozen=True)
class Priced:
    """What :class:`Price` found of one chunk."""

    value: float
    """The least moves plus ``sum_b prices[b] * count_b`` any plan within the spread has."""
    counts: Mapping[int, int] | None
    """Replicas per target broker of the plan that reaches it (None: the optimum of the
    linear program is fractional)."""


@dataclass(frozen=True)
class Certify:
    """Bound the chunk's topic spreads in every plan of the fewest moves of the whole cluster
    (:meth:`Part.certificate`): ``now``, the whole cluster's replicas per target broker as read
    (None: no plan of the fewest moves is known, and only the mean term holds), ``bounds``
    their balanced ranges; with ``ks``, the budget bound's needs at each of those spreads."""

    now: Mapping[int, int] | None
    bounds: Mapping[int, tuple[int, int]]
    ks: tuple[int, ...] = ()


@dataclass(frozen=True)
class Certified:
    """What :class:`Certify` found of one chunk."""

    spread: int
    """The chunk's worst topic spread as planned."""
    bound: int
    """No plan of the fewest moves of the whole cluster leaves the chunk's topics a smaller
    worst spread (the largest per-topic bound of :func:`kadmin.balance.spreads.least_spreads`,
    with the water levels)."""
    topics: int
    proven: int
    """Topics whose spread meets their own bound (none of them can do better)."""
    needs: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
    """Per spread of :attr:`Certify.ks`: the replicas each target broker (in id order) must
    give, and take, for the chunk's topics to end within it (:func:`kadmin.balance.spreads.needs`;
    they add up over the chunks)."""


@dataclass(frozen=True)
class Replace:
    """Plan these replica lists (by partition index) instead."""

    lists: Mapping[int, Replicas]


Step = Move | Lead | Cut | Replace | Window | Even
"""What changes a chunk's plan (:meth:`Parts.apply`)."""

Question = Certify | Price
"""What only reads a chunk (:meth:`Parts.ask`): the answer is told the driver, the chunk stays."""

Answer = Certified | Priced | None


@dataclass(frozen=True)
class Picked:
    """A partition sent to the driver for the tail: where it is, as read and as planned."""

    index: int
    topic: str
    partition: int
    original: Replicas
    planned: Replicas


@dataclass(frozen=True)
class Counts:
    """What a task tells the driver of its chunk after each step."""

    partitions: int
    replicas: Mapping[int, int]
    leaders: Mapping[int, int]
    moves: int
    """Replica moves planned in the chunk so far."""
    topics: TopicGoal | None = None
    """After :class:`Even`: what the chunk's program did (None: it did not run)."""
    least: int = 0
    """The least worst topic spread the chunk's topics allow (0 when each divides evenly over
    the targets, else 1)."""
    windows: tuple[tuple[int, int], ...] = ()
    """After :class:`Window`: :meth:`Part.windowed`."""
    relaxed: int | None = None
    """After :class:`Window`: :meth:`Part.relaxation`."""
    failed: bool = False
    """:class:`Even` found no plan with the counts it was given (the chunk is unchanged)."""


@dataclass(frozen=True)
class PartTotals:
    """One chunk's figures for the manifest, added up by the driver."""

    partitions: int
    """Partitions whose replica list changes."""
    replica_moves: int
    leader_changes: int
    before: Balance
    after: Balance


@dataclass(frozen=True)
class Part:
    """One chunk's plan so far, as a Spark task keeps it between rounds."""

    table: PartitionTable
    """The chunk as read: its topics in name order and their current replicas."""
    changed: Mapping[int, Replicas]
    """New replica lists of the partitions planned to change, by index in ``table``."""
    topics: TopicGoal | None = None
    """What :meth:`evened` did (None: not run)."""
    least: int = 0
    windows: tuple[tuple[int, int], ...] = ()
    relaxed: int | None = None
    failed: bool = False
    base: Mapping[int, Replicas] | None = None
    """The plan of the rounds, which every :class:`Even` starts from (None: ``changed``)."""

    def replicas(self) -> list[Replicas]:
        """Every partition's replica list as planned so far."""
        return [self.changed.get(i, r) for i, r in enumerate(self.table.replicas)]

    def counts(self) -> Counts:
        now = self.replicas()
        leaders: dict[int, int] = {}
        for members in now:
            leaders[members[0]] = leaders.get(members[0], 0) + 1
        return Counts(len(now), replica_counts(now), leaders,
                      replica_moves(self.table.replicas, self.changed), self.topics, self.least,
                      self.windows, self.relaxed, self.failed)

    def step(self, step: Step, context: Context) -> Part:
        """The chunk after ``step``."""
        if isinstance(step, Move):
            return self.moved(step.share, context, step.single_copies)
        if isinstance(step, Lead):
            return self.led(step.share, context)
        if isinstance(step, Replace):
            return self._with(step.lists)
        if isinstance(step, Even):
            return self.evened(step.asked, step.counts, context)
        if isinstance(step, Window):
            return replace(self, windows=self.windowed(step.asked, len(context.targets)),
                           relaxed=self.relaxation(step.asked, context))
        return self.cut(step.budget)

    def answer(self, question: Question, context: Context) -> Answer:
        """What ``question`` asks of the chunk; the chunk stays as it is."""
        if isinstance(question, Certify):
            return self.certificate(question, context.targets)
        return self.priced_by(question, context)

    def moved(self, share: Quota, context: Context, single_copies: bool) -> Part:
        """``share`` met by replica moves on top of the plan so far, which the core sees as the
        current state: a round only adds copies to what earlier rounds planned."""
        table = self.table
        now = PartitionTable(table.topics, table.topic_of, table.ids, self.replicas())
        final, _ = move_replicas(now, context.targets, share, context.rack_of,
                                 single_copies=single_copies, even_topics=context.even_topics)
        return self._with(final)

    def windowed(self, asked: int, brokers: int) -> tuple[tuple[int, int], ...]:
        """For spreads ``k = asked, asked + 1, ...``: the least and the most replicas any one
        of ``brokers`` (``n``) target brokers can hold of the chunk's topics when every topic
        is within ``k``: the sums over topics of ``max(0, ceil((R - (n - 1) k) / n))`` and
        ``min(P, floor((R + (n - 1) k) / n))`` (``R`` replicas and ``P`` partitions of the
        topic; the least count ``m`` leaves at most ``m + k`` on each other broker, so ``R <=
        m + (n - 1)(m + k)``, and likewise the most; no broker holds a partition twice). Up to
        the spread where neither changes any more."""
        sizes: dict[int, tuple[int, int]] = {}
        for t, members in zip(self.table.topic_of, self.table.replicas, strict=True):
            replicas, partitions = sizes.get(t, (0, 0))
            sizes[t] = (replicas + len(members), partitions + 1)
        every = sum(p for _, p in sizes.values())
        out = []
        for k in range(asked, asked + 64):
            low = high = 0
            for replicas, partitions in sizes.values():
                low += max(0, -(-(replicas - (brokers - 1) * k) // brokers))
                high += min(partitions, (replicas + (brokers - 1) * k) // brokers)
            out.append((low, high))
            if low == 0 and high == every:
                break
        return tuple(out)

    def relaxation(self, asked: int, context: Context) -> int | None:
        """The fewest moves that keep the chunk's topics within ``asked`` whatever the brokers'
        counts (the exact program without broker bounds): every plan that keeps them within
        ``asked`` makes at least that many in this chunk, so the sum over the chunks is a lower
        bound of the whole plan's moves. None when no plan does, or out of time."""
        try:
            found = evenness.fewest_moves_within(self.table, context.targets, None, asked,
                                                 context.rack_of,
                                                 seconds=evenness.ASKED_SECONDS)
        except evenness.OutOfTime:
            return None
        return None if found is None else found.moves

    def evened(self, asked: int | None, counts: Mapping[int, int] | None, context: Context
               ) -> Part:
        """The chunk's topics by ``plan rebalance``'s exact program
        (:mod:`kadmin.balance.evenness`) over the chunk as read, each target broker ending
        with exactly ``counts`` (None: the counts of the rounds' plan, which then stays the
        fallback), so the brokers end as the driver says; the moves are the fewest for those
        counts, with ``asked`` the fewest that also keep every topic within ``asked`` (with
        ``counts`` None, the smallest spread above it the chunk reaches, when it does not
        reach ``asked``). Given ``counts`` that no plan within ``asked`` meets, the nearest
        counts that one does, each within :data:`SLACKS` of them (the driver then holds the
        chunk to those and moves the others' to fit); none either: the chunk is left as the
        rounds planned it and marked ``failed``. Unchanged where the default
        objective finds the chunk too large for the program."""
        table, targets = self.table, context.targets
        base = self.changed if self.base is None else self.base
        start = Part(table, base)
        least = evenness._least_possible(table, targets)
        left = replace(self, changed=base, topics=None, least=least, base=base, failed=False)
        now = replica_counts(start.replicas())
        given = counts is not None and any(counts.get(b, 0) != now.get(b, 0) for b in targets)
        want = counts if counts is not None and given else now
        bounds = {b: (want.get(b, 0), want.get(b, 0)) for b in targets}
        moves = replica_moves(table.replicas, base)
        if not given:
            evened = evenness.even_topics(table, targets, bounds, context.rack_of, base, moves,
                                          asked)
            if evened is None:
                return left
            final, goal = evened
        else:
            assert asked is not None
            exact, found = True, None
            for slack in SLACKS:
                bounds = {b: (max(0, want.get(b, 0) - slack), want.get(b, 0) + slack)
                          for b in targets}
                try:
                    found = evenness.fewest_moves_within(table, targets, bounds, asked,
                                                         context.rack_of,
                                                         seconds=evenness.ASKED_SECONDS)
                except evenness.OutOfTime as out:
                    found, exact = out.best, False
                if found is not None:
                    break
            if found is None:
                return replace(left, failed=True)
            final = found.final
            goal = TopicGoal(asked, worst_spread(table, final, targets), moves,
                             found.moves, exact)
        before = table.replicas
        lists = {i: leader_kept(before[i], list(r)) for i, r in final.items()}
        return replace(left, changed={i: r for i, r in sorted(lists.items()) if r != before[i]},
                       topics=goal)

    def priced_by(self, step: Price, context: Context) -> Priced | None:
        """:class:`Price`: the exact program over the chunk as read, its brokers free, with
        ``prices[b]`` added to every arc that brings a replica to ``b`` and taken from every
        arc that takes one away (:class:`kadmin.balance.evenness.PricedProgram`: the counts'
        change, priced; the constant ``sum_b prices[b] now_b`` added back). Its linear program
        is a network: the optimum it returns is a vertex, integral, except with free windows
        (spreads above 1). The program is built once a process (:func:`priced_program`)."""
        targets = context.targets
        found, cost = priced_program(self.table, targets, step.spread,
                                     context.rack_of).solve(step.prices)
        if cost == float("inf"):
            return None
        now = replica_counts(self.table.replicas)
        if found is None:
            return Priced(cost + sum(step.prices.get(b, 0.0) * n for b, n in now.items()), None)
        counts = replica_counts(Part(self.table, found.final).replicas())
        return Priced(found.moves + sum(step.prices.get(b, 0.0) * counts.get(b, 0)
                                        for b in targets),
                      {b: counts.get(b, 0) for b in targets})

    def certificate(self, step: Certify, targets: Collection[int]) -> Certified:
        """The chunk's topics against the lower bound of :mod:`kadmin.balance.spreads`, taken
        with the whole cluster's gives and takes (``step.now``, ``step.bounds``): each topic's
        box holds in every plan of the fewest moves of the whole cluster, so the bound of a
        topic holds whatever the other chunks do (numpy, on the executor). With the water
        levels (:meth:`kadmin.balance.spreads.Boxes.levels`), each topic's own: the chunks'
        bounds are those of the whole table."""
        order = sorted(targets)
        table = self.table
        spread = spreads.topic_spreads(table, self.changed, order)
        needs = []
        if step.now is None:
            bound = spreads.least_spreads(table, order, step.bounds, None)
        else:  # the boxes and their water levels built once, for the bound and the needs
            boxes = spreads.Boxes.of(table, order, step.bounds, step.now)
            low, high = boxes.levels()
            bound = boxes.least_spreads(low, high)
            for k in step.ks:
                gives, takes = spreads.needs(boxes.c, low, high, k, len(order))
                needs.append((tuple(int(x) for x in gives), tuple(int(x) for x in takes)))
        return Certified(int(spread.max(initial=0)), int(bound.max(initial=0)), len(spread),
                         int((spread <= bound).sum()), tuple(needs))

    def led(self, share: Quota, context: Context) -> Part:
        """``share`` of preferred leaders met by reordering the planned replica lists."""
        now = self.replicas()
        reordered, _ = order_leaders(now, leaders_then(self.table.replicas, now),
                                     context.targets, share)
        return self._with(reordered)

    def cut(self, budget: int) -> Part:
        """The planned moves within ``budget`` copies, the brokers that give the most in this
        chunk relieved first (their loads are in proportion to the whole cluster's)."""
        before = self.table.replicas
        gives: dict[int, int] = {}
        for i, new in self.changed.items():
            for b in set(before[i]) - set(new):
                gives[b] = gives.get(b, 0) + 1
        kept = cut_moves(before, self.changed, Quota(gives, {}, frozenset(), frozenset()), budget)
        return replace(self, changed=kept)

    def picked(self, brokers: Collection[int], limit: int) -> list[Picked]:
        """Up to ``limit`` partitions, in plan order: first those whose list as read or as
        planned holds one of ``brokers`` (where units left can go, and moves that could be
        re-routed), then any other (a chain of moves may pass through any broker)."""
        wanted = frozenset(brokers)
        table = self.table
        near: list[int] = []
        far: list[int] = []
        for i, original in enumerate(table.replicas):
            if len(near) == limit:
                break
            touches = not wanted.isdisjoint(original) or not wanted.isdisjoint(
                self.changed.get(i, original))
            (near if touches else far).append(i)
        chosen = sorted(near + far[:limit - len(near)])
        return [Picked(i, table.topics[table.topic_of[i]], table.ids[i], table.replicas[i],
                       self.changed.get(i, table.replicas[i])) for i in chosen]

    def _with(self, final: Mapping[int, Replicas]) -> Part:
        before = self.table.replicas
        changed = dict(self.changed)
        changed.update(final)
        return replace(self, changed={i: r for i, r in sorted(changed.items())
                                      if r != before[i]})

    def moves(self) -> list[PartitionMove]:
        """The chunk's plan entries, in plan order."""
        return self.table.moves(self.changed)[0]

    def totals(self, targets: Collection[int]) -> PartTotals:
        table = self.table
        return PartTotals(
            len(self.changed), replica_moves(table.replicas, self.changed),
            leader_changes(table.replicas, self.changed),
            balance(table.replicas, table.topic_of, table.topics, targets),
            balance(self.replicas(), table.topic_of, table.topics, targets))


PRICED_ARCS = 4 * evenness.LIMIT
"""Arcs of priced programs a process keeps between rounds of :meth:`_Run.price` (the largest
chunks ``--topic-spread`` makes, four of them: a few hundred MB); beyond, the least recently
used go, and are built again when asked."""

_priced: list[tuple[tuple[PartitionTable, tuple[int, ...], int, Mapping[int, str] | None],
                    evenness.PricedProgram]] = []
"""This process's priced programs, the most recently used last."""


def priced_program(table: PartitionTable, targets: Sequence[int], spread: int,
                   rack_of: Mapping[int, str] | None) -> evenness.PricedProgram:
    """The chunk's :class:`kadmin.balance.evenness.PricedProgram`, built the first time this
    process is asked (a Spark task's Python worker outlives its task and answers the next
    rounds' questions: its chunks are found again by their tables, equal when not the same
    objects) and kept within :data:`PRICED_ARCS`."""
    key = (table, tuple(targets), spread, rack_of)
    for i, (held, program) in enumerate(_priced):
        if held[1:] == key[1:] and (held[0] is table or held[0] == table):
            _priced.append(_priced.pop(i))
            return program
    program = evenness.PricedProgram(table, targets, spread, rack_of)
    _priced.append((key, program))
    while len(_priced) > 1 and sum(p.arcs for _, p in _priced) > PRICED_ARCS:
        _priced.pop(0)
    return program


class Parts(Protocol):
    """The chunks, wherever they are kept."""

    def apply(self, steps: Sequence[Step | None], label: str) -> list[Counts | None]:
        """Apply each chunk's step to it (None: leave it), all in parallel; the counts of the
        chunks that had a step. ``label`` names the round for progress reports."""
        ...

    def ask(self, questions: Sequence[Question | None], label: str) -> list[Answer]:
        """Each chunk's :meth:`Part.answer` to its question (None: none asked, and None
        back), all in parallel, read only: the chunks stay as they are (on Spark no new RDD
        is made or kept)."""
        ...

    def pick(self, brokers: Collection[int], limit: int) -> list[list[Picked]]:
        """Per chunk, :meth:`Part.picked`."""
        ...

    def hold(self) -> object:
        """The chunks as they are now, kept as they are whatever steps follow, until
        :meth:`let_go`."""
        ...

    def let_go(self, held: object, restore: bool) -> None:
        """Drop what :meth:`hold` kept; with ``restore``, first make it the chunks again
        (the steps since are undone, at no cost)."""
        ...


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
    (:meth:`_Run.price`); by default, a worst topic spread equal to the certificate's bound
    (:meth:`_Run.certify`: no plan of the fewest moves goes below it), the moves being the
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
    than this (:meth:`_Run.compatible_counts`); ``asked`` when it is reachable for all that
    the chunks' windows say."""
    relaxed: int | None = None
    """With ``asked``: a lower bound of the moves of every balanced plan that keeps each
    topic within ``asked``: the sum over chunks of :meth:`Part.relaxation`, or the prices'
    Lagrangian bound where larger (None: some chunk has no relaxation)."""
    bound: int | None = None
    """Default objective: no plan of the fewest moves of the whole cluster has a smaller
    worst topic spread (:meth:`_Run.certify`: the per-topic bound of
    :mod:`kadmin.balance.spreads` over every chunk, raised by its budget bound summed over
    the chunks, then, on a selection of at most :data:`WHOLE_PARTITIONS`, by the topic x
    broker program of :mod:`kadmin.balance.aggregate`); None: not computed (the executors
    lack numpy)."""
    chunks_proven: int = 0
    """Chunks whose worst topic spread meets their topics' own bound."""
    topics: int = 0
    topics_proven: int = 0
    """Topics whose spread meets their own bound."""

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
                           topics_proven=self.topics_proven)


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


@dataclass(frozen=True)
class Planned:
    lower_bound: int
    unplaced: int
    """Replica units no plan found (racks, or partitions as wide as the broker list)."""
    partial: bool
    """``max_moves`` cut the plan short: running again continues."""
    rounds: int
    """Rounds of tasks over the chunks, all kinds together."""
    topics: TopicsPlanned | None = None
    """What the topic step did (None: it did not run)."""


def plan(parts: Parts, counts: Sequence[Counts], context: Context, *, leaders: bool = True,
         max_moves: int | None = None, topic_spread: int | None = None,
         exact_topics: bool = True, certify: bool = True,
         report: Callable[[str], None] = lambda _: None) -> Planned:
    """Rebalance the chunks (see the module docstring); ``counts`` are each chunk's counts as
    read. The chunks end with the plan; the result says how it relates to the bound.
    ``topic_spread``: ``--topic-spread`` (every chunk must be small enough for the exact
    program, :data:`kadmin.balance.evenness.LIMIT`); ``exact_topics``: the default objective
    may run the exact program where a chunk is small enough (the executors have scipy);
    ``certify``: the default objective's spread is held to the certificate of
    :mod:`kadmin.balance.spreads` over every chunk (the executors have numpy)."""
    run = _Run(parts, list(counts), context)
    total = _added(c.replicas for c in run.state)
    bound = replica_quota(total, context.targets, context.rack_of,
                          weights=context.weights).units
    moved = meet(replica_quota(total, context.targets, context.rack_of, fixed=True,
                               weights=context.weights),
                 [Chunk(c.replicas, {}, c.partitions) for c in run.state],
                 run.rounds("replica moves", lambda q: Move(q, True), lambda c: c.replicas))
    unplaced = run.replica_tail() if moved.unmet else 0
    moves = sum(c.moves for c in run.state)
    report(f"{moves:,} replica move(s) planned (lower bound {bound:,})"
           + (f"; {unplaced:,} could not be placed" if unplaced else ""))
    topics = None
    default = topic_spread is None and context.even_topics and max_moves is None
    if not unplaced and (topic_spread is not None or (default and exact_topics)):
        topics = run.even(topic_spread, bound)
        moves = sum(c.moves for c in run.state)
        if topics is not None and topic_spread is not None:
            report(f"{moves:,} replica move(s) keep every topic within spread "
                   f"{topics.spread if topics.spread > topic_spread else topic_spread}")
    if not unplaced and default and certify:
        topics = run.certify(counts, topics)
        report(f"worst topic spread {topics.spread}; no plan of these moves goes below "
               f"{topics.bound}; {topics.chunks_proven:,} of {topics.of:,} chunk(s) "
               f"({topics.topics_proven:,} of {topics.topics:,} topics) meet their own bound")
    partial = max_moves is not None and moves > max_moves
    if max_moves is not None and partial:
        shares = budgets(max_moves, [c.moves for c in run.state])
        run.apply([Cut(b) if b < c.moves else None for b, c in zip(shares, run.state,
                                                                   strict=True)], "--max-moves")
        report(f"kept {sum(c.moves for c in run.state):,} replica move(s) within --max-moves")
    if leaders:
        share = leader_quota(_added(c.leaders for c in run.state), context.targets,
                             sum(c.partitions for c in run.state), fixed=True,
                             weights=context.weights)
        led = meet(share, [Chunk(c.leaders, c.replicas) for c in run.state],
                   run.rounds("leaders", Lead, lambda c: c.leaders))
        if led.unmet:
            run.leader_tail()
        report("preferred leaders balanced")
    return Planned(bound, unplaced, partial, run.done, topics)


TAIL_PARTITIONS = 200_000
"""Partitions the driver may gather to solve the tail of a rebalance (a few hundred bytes each)."""

WHOLE_PARTITIONS = TAIL_PARTITIONS
"""A selection of at most this many partitions is gathered on the driver, as read, for the
topic x broker program that raises the default objective's certificate (:meth:`_Run._refuted`)."""


class _Run:
    """The chunks' counts as the rounds change them, and the tail solves. Private to one plan."""

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

    def even(self, asked: int | None, plain_bound: int) -> TopicsPlanned | None:
        """The topic step (:class:`Even`): with ``asked``, on every chunk with the counts of
        :meth:`compatible_counts`, then, where the moves exceed both ``plain_bound`` and the
        chunks' relaxations, with the counts the prices suggest (:meth:`price`), keeping the
        better; else on the chunks small enough for the default objective's program, each with
        its own counts. None when no chunk is small enough."""
        targets = self.context.targets
        if asked is None:
            small = [c.partitions * len(targets) <= evenness.DEFAULT_LIMIT for c in self.state]
            if not any(small):
                return None
            self.apply([Even(None) if s else None for s in small], "topics")
            return self._topics(None, small, 0)
        spread, counts = self.compatible_counts(asked)
        near: list[Mapping[int, int]] = [{b: c.replicas.get(b, 0) for b in targets}
                                         for c in self.state]
        boxes = [c.windows[min(spread - asked, len(c.windows) - 1)] for c in self.state]
        first = self._meet(spread, counts, boxes, near)
        relaxed = None if any(c.relaxed is None for c in self.state) \
            else sum(c.relaxed or 0 for c in self.state)
        moves = sum(c.moves for c in self.state)
        if spread == asked and relaxed is not None and moves > max(relaxed, plain_bound) \
                and self.context.price_rounds:
            bound, priced = self.price(spread, moves)
            relaxed = max(relaxed, ceil(bound - 1e-6))
            again = None if priced is None or moves <= relaxed else quotas.compatible(
                priced, boxes, self.ranges())
            if again is not None and again != first:
                held, state = self.parts.hold(), list(self.state)
                self._meet(spread, again, boxes, near)
                worse = sum(c.moves for c in self.state) > moves
                self.parts.let_go(held, restore=worse)  # the first plan, kept, where better
                if worse:
                    self.state = state
        return self._topics(asked, [True] * len(self.state), spread, relaxed)

    def _meet(self, spread: int, counts: Sequence[Mapping[int, int]],
              boxes: Sequence[tuple[int, int]],
              near: list[Mapping[int, int]]) -> list[Mapping[int, int]]:
        """Every chunk's topics within ``spread`` at the counts the driver gives it
        (:class:`Even`), starting from ``counts``: a chunk that cannot meet its counts is held
        to what it reached while the others' counts are chosen again, for at most
        :data:`MAX_ROUNDS` rounds, then each chunk keeps ``near`` (the counts its replica
        rounds left, always met). Returns the counts the chunks end with."""
        targets = self.context.targets
        met = counts = list(counts)
        solved: list[Mapping[int, int] | None] = [None] * len(self.state)
        fixed: dict[int, Mapping[int, int]] = {}
        for number in range(1, MAX_ROUNDS + 2):
            if number > MAX_ROUNDS:  # every chunk with the counts its rounds left: always met
                fixed, counts = dict(enumerate(near)), near
            steps: list[Step | None] = [None if solved[c] == counts[c] else
                                        Even(spread, counts[c]) for c in range(len(counts))]
            self.apply(steps, f"topics, round {number}")
            reached = list(counts)
            for c, step in enumerate(steps):
                if step is None:
                    continue
                state = self.state[c]
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
                found = quotas.compatible(prefer, boxes, self.ranges(), {*fixed, *trial})
                if found is not None:
                    fixed.update(trial)
                    again, held = found, True
                    if len(trial) > 1:
                        break
            if not held:  # none can be held: every count as near what the chunks reached
                fixed = {c: n for c, n in fixed.items() if self.state[c].failed}
                again = quotas.compatible(reached, boxes, self.ranges(), set(fixed))
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
        ranges = self.ranges()
        prices = dict.fromkeys(ranges, 0.0)
        best = float("-inf")
        theta, stale, idle = 1.0, 0, 0
        mean: list[dict[int, float]] = [{} for _ in self.state]
        weight = 0.0
        for number in range(1, self.context.price_rounds + 1):
            found = cast("list[Priced | None]", self.ask(Price(spread, dict(prices)),
                                                         f"topic prices, round {number}"))
            if any(f is None or f.counts is None for f in found):
                return best if best > float("-inf") else 0.0, None
            chunks = cast("list[Priced]", found)
            value = sum(f.value for f in chunks) - sum(
                max(prices[b] * low, prices[b] * high) for b, (low, high) in ranges.items())
            total = _added(cast("Mapping[int, int]", f.counts) for f in chunks)
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
        targets = sorted(self.context.targets)
        total = _added(c.replicas for c in read)
        inside = {b: total.get(b, 0) for b in targets}
        ranges = self.ranges()
        replicas = sum(total.values())
        fewest = fewest_to_ranges(inside, ranges, replicas)
        known = sum(c.moves for c in self.state) == fewest
        first = cast("list[Certified]", self.ask(Certify(inside if known else None, ranges),
                                                 "topic bound"))
        bound, worst = max(f.bound for f in first), max(f.spread for f in first)
        if known and bound < worst:
            ks = tuple(range(bound, worst))
            needed = [cast("Certified", c).needs for c in self.ask(Certify(inside, ranges, ks),
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
            topics = TopicsPlanned(None, 0, len(self.state), worst, True,
                                   max(c.least for c in self.state),
                                   sum(c.moves for c in self.state))
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
        if sum(c.partitions for c in self.state) > WHOLE_PARTITIONS:
            return bound
        picked = self.parts.pick(self.context.targets, max(c.partitions for c in self.state))
        flat = [p for chunk in picked for p in chunk]
        program = aggregate.Aggregate(_table(flat, [p.original for p in flat]),
                                      self.context.targets, ranges, inside, fewest,
                                      self.context.rack_of)
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
        targets = self.context.targets
        self.apply([Window(asked)] * len(self.state), "topic windows")
        return least_compatible([{b: c.replicas.get(b, 0) for b in targets} for c in self.state],
                                [c.windows for c in self.state], self.ranges(), asked)

    def ranges(self) -> dict[int, tuple[int, int]]:
        """Each target broker's balanced range of replicas (as ``plan rebalance``'s)."""
        return balanced_ranges(_added(c.replicas for c in self.state), self.context)

    def _topics(self, asked: int | None, ran: Sequence[bool], floor: int,
                relaxed: int | None = None) -> TopicsPlanned:
        goals = [c.topics for c, r in zip(self.state, ran, strict=True) if r]
        done = [g for g in goals if g is not None]
        return TopicsPlanned(asked, len(done), len(self.state),
                             max((g.spread for g in done), default=0),
                             all(g.exact for g in done) and len(done) == len(goals),
                             max((c.least for c in self.state), default=0),
                             sum(c.moves for c in self.state), floor, relaxed)

    def _picked(self, share: Quota) -> list[list[Picked]]:
        brokers = set(share.give) | set(share.take)
        return self.parts.pick(brokers, max(1, TAIL_PARTITIONS // len(self.state)))

    def replica_tail(self) -> int:
        """What the rounds left, met the single machine's way on the driver: the partitions
        that hold a broker with units left (as read or as planned) are re-planned from scratch
        together, with the quota of the whole cluster as if they were not planned yet, so the
        search may re-route their moves and choose the ceilings. Returns the units left."""
        context = self.context
        total = _added(c.replicas for c in self.state)
        picked = self._picked(replica_quota(total, context.targets, context.rack_of,
                                            weights=context.weights))
        flat = [p for chunk in picked for p in chunk]
        for p in flat:  # the cluster's counts with these partitions back as they were
            for b in p.planned:
                total[b] -= 1
            for b in p.original:
                total[b] = total.get(b, 0) + 1
        table = _table(flat, [p.original for p in flat])
        final, unmet = move_replicas(table, context.targets,
                                     replica_quota(total, context.targets, context.rack_of,
                                                   weights=context.weights),
                                     context.rack_of, even_topics=context.even_topics)
        self._replace(picked, lambda k, p: final.get(k, p.original), "replica moves, tail")
        return unmet

    def leader_tail(self) -> None:
        """What the leader rounds left, met on the driver over the partitions whose planned
        list holds a broker with leaderships left to give or take."""
        context = self.context
        share = leader_quota(_added(c.leaders for c in self.state), context.targets,
                             sum(c.partitions for c in self.state), weights=context.weights)
        picked = self._picked(share)
        flat = [p for chunk in picked for p in chunk]
        planned = [p.planned for p in flat]
        reordered, _ = order_leaders(planned, leaders_then([p.original for p in flat], planned),
                                     context.targets, share)
        self._replace(picked, lambda k, p: reordered.get(k, p.planned), "leaders, tail")

    def _replace(self, picked: Sequence[Sequence[Picked]],
                 choose: Callable[[int, Picked], Replicas], label: str) -> None:
        steps: list[Step | None] = []
        k = 0
        for chunk in picked:
            lists = {}
            for p in chunk:
                lists[p.index] = choose(k, p)
                k += 1
            steps.append(Replace(lists) if lists else None)
        self.apply(steps, label)


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
    """The driver's count step of ``--topic-spread`` (:meth:`_Run.compatible_counts`): the
    least spread ``asked + j`` whose windows (``windows[c][j]``, :meth:`Part.windowed`) admit
    counts per chunk and broker within the brokers' ``ranges``
    (:func:`kadmin.balance.quotas.compatible`, near ``near``), and those counts; without any,
    ``asked`` and ``near``."""
    for j in range(max(len(w) for w in windows)):
        found = quotas.compatible(near, [w[min(j, len(w) - 1)] for w in windows], ranges)
        if found is not None:
            return asked + j, list(found)
    return asked, list(near)


def balanced_ranges(total: Mapping[int, int], context: Context) -> dict[int, tuple[int, int]]:
    """Each target broker's balanced range of replicas (as ``plan rebalance``'s), from the
    replicas per broker of the selected topics ``total``."""
    inside = {b: total.get(b, 0) for b in context.targets}
    outside = {b: n for b, n in total.items() if b not in inside}
    out: dict[int, tuple[int, int]] = {}
    for group in groups_of(context.targets, inside, outside, context.rack_of, context.weights):
        out.update(group.bounds())
    return out


class Listed:
    """The chunks in a list, in one process: what the Spark job keeps in an RDD, one chunk per
    Spark partition (the tests' and benchmarks' :class:`Parts`)."""

    def __init__(self, tables: Sequence[PartitionTable], context: Context) -> None:
        self.parts = [Part(t, {}) for t in tables]
        self.context = context
        self.labels: list[str] = []
        """Every round's label, in order."""
        self.asked: list[str] = []
        """The labels of the rounds that only read (:meth:`ask`)."""

    def apply(self, steps: Sequence[Step | None], label: str) -> list[Counts | None]:
        self.labels.append(label)
        out: list[Counts | None] = []
        for c, step in enumerate(steps):
            if step is not None:
                self.parts[c] = self.parts[c].step(step, self.context)
            out.append(None if step is None else self.parts[c].counts())
        return out

    def ask(self, questions: Sequence[Question | None], label: str) -> list[Answer]:
        self.labels.append(label)
        self.asked.append(label)
        return [None if q is None else p.answer(q, self.context)
                for p, q in zip(self.parts, questions, strict=True)]

    def pick(self, brokers: Collection[int], limit: int) -> list[list[Picked]]:
        return [p.picked(brokers, limit) for p in self.parts]

    def hold(self) -> object:
        return list(self.parts)  # the parts are immutable

    def let_go(self, held: object, restore: bool) -> None:
        if restore:
            self.parts = list(cast("list[Part]", held))

    def replicas(self) -> list[Replicas]:
        """Every partition's replica list as planned, chunk after chunk."""
        return [r for p in self.parts for r in p.replicas()]

    def planning(self) -> list[str]:
        """The labels of the rounds that plan (:meth:`apply`)."""
        asked = set(self.asked)
        return [label for label in self.labels if label not in asked]


def leaders_then(original: Sequence[Replicas], planned: Sequence[Replicas]) -> list[int]:
    """The leaders a leader search counts its changes against: today's, except where an
    earlier round handed leadership away from a leader still in the partition; there the
    planned one. Counted against today's, handing it back would cost -1 and chains of such
    hand-backs would be negative cycles, which the search (successive shortest paths from a
    plan of least cost) must never meet; so a round never undoes an earlier round's change
    for less than a fresh one."""
    out = []
    for old, new in zip(original, planned, strict=True):
        out.append(new[0] if old[0] != new[0] and old[0] in new else old[0])
    return out


def _added(counts: Iterable[Mapping[int, int]]) -> dict[int, int]:
    total: dict[int, int] = {}
    for chunk in counts:
        for b, n in chunk.items():
            total[b] = total.get(b, 0) + n
    return total


def _table(picked: Sequence[Picked], replicas: list[Replicas]) -> PartitionTable:
    """The picked partitions as one table (chunks hold ranges of topic names in order)."""
    topics: list[str] = []
    topic_of: list[int] = []
    for p in picked:
        if not topics or topics[-1] != p.topic:
            topics.append(p.topic)
        topic_of.append(len(topics) - 1)
    return PartitionTable(tuple(topics), topic_of, [p.partition for p in picked], replicas)
