"""One chunk of topics as a Spark task holds it (:class:`Part`): the steps the driver sends it
(they change its plan), the questions (they only read it), and what it tells the driver back
(:class:`Counts`, a few thousand numbers). Pure: the Spark job keeps the parts in an RDD, the
tests in a list (:class:`kadmin.balance.chunks.Listed`); the rounds the driver runs over them
are :mod:`kadmin.balance.chunks`."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

from kadmin.balance import classes, evenness, spreads
from kadmin.balance.cut import cut_moves
from kadmin.balance.evenness import TopicGoal
from kadmin.balance.leaders import order_leaders
from kadmin.balance.metrics import Balance, balance, leader_changes, replica_moves
from kadmin.balance.objective import Objective
from kadmin.balance.replicas import leader_kept, move_replicas, replica_counts
from kadmin.balance.spreads import worst_spread
from kadmin.balance.table import PartitionTable
from kadmin.balance.targets import Quota, groups_of
from kadmin.model import PartitionMove, Replicas

PRICE_ROUNDS = 16
"""Rounds of tasks :meth:`kadmin.balance.chunk_topics.TopicRounds.price` runs at most by
default (each one linear program per chunk, the size of the relaxation's; 16 measured as good
as 24 at two thirds of the cost)."""


@dataclass(frozen=True)
class Context:
    """What every task of one rebalance shares (broadcast once)."""

    targets: tuple[int, ...]
    objective: Objective = field(default_factory=Objective)
    # ``--topic-spread``: rounds of :meth:`kadmin.balance.chunk_topics.TopicRounds.price` at
    # most (``--price-rounds``; 0: none)
    price_rounds: int = PRICE_ROUNDS

    @property
    def rack_of(self) -> Mapping[int, str] | None:
        return self.objective.rack_of

    @property
    def weights(self) -> Mapping[int, int] | None:
        """Broker capacities (``--capacity``): the driver's quotas follow their shares."""
        return self.objective.weights

    @property
    def even_topics(self) -> bool:
        """The search prefers moves that keep topics even (off with ``--no-even-topics``)."""
        return self.objective.even_topics


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
    of :meth:`kadmin.balance.chunk_topics.TopicRounds.price`)."""

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
class ReplicaSets:
    """How many of the chunk's partitions (as read) sit on each replica set, where at most
    ``limit`` sets are (:meth:`Part.replica_sets`)."""

    limit: int


@dataclass(frozen=True)
class Racked:
    """The chunk planned by the class program (:func:`kadmin.balance.classes.plan`) from the
    chunk as read, every target broker ending with exactly ``counts``: the fewest moves that
    keep every partition's racks at those counts, then the least worst topic spread at those
    moves (:meth:`Part.racked`)."""

    counts: Mapping[int, int]


@dataclass(frozen=True)
class Replace:
    """Plan these replica lists (by partition index) instead."""

    lists: Mapping[int, Replicas]


Step = Move | Lead | Cut | Replace | Window | Even | Racked
"""What changes a chunk's plan (:meth:`Parts.apply`)."""

Question = Certify | Price | ReplicaSets
"""What only reads a chunk (:meth:`Parts.ask`): the answer is told the driver, the chunk stays."""

Answer = Certified | Priced | dict[frozenset[int], int] | None


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
        if isinstance(step, Racked):
            return self.racked(step.counts, context)
        if isinstance(step, Window):
            return replace(self, windows=self.windowed(step.asked, len(context.targets)),
                           relaxed=self.relaxation(step.asked, context))
        return self.cut(step.budget, context.rack_of)

    def answer(self, question: Question, context: Context) -> Answer:
        """What ``question`` asks of the chunk; the chunk stays as it is."""
        if isinstance(question, Certify):
            return self.certificate(question, context.targets)
        if isinstance(question, ReplicaSets):
            return self.replica_sets(question.limit)
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

    def replica_sets(self, limit: int) -> dict[frozenset[int], int] | None:
        """How many of the chunk's partitions, as read, sit on each replica set; None where
        more than ``limit`` sets are."""
        sets: dict[frozenset[int], int] = {}
        for members in self.table.replicas:
            key = frozenset(members)
            sets[key] = sets.get(key, 0) + 1
            if len(sets) > limit:
                return None
        return sets

    def racked(self, counts: Mapping[int, int], context: Context) -> Part:
        """:class:`Racked`: the class program over the chunk as read, each target broker
        ranged to exactly its count; its moves are the chunk's fewest keeping every
        partition's racks at those counts, its topic goal says the spread and whether it is
        proven the least at those moves and counts. Where the program does not apply, the
        chunk as read, marked ``failed``."""
        table, targets, rack_of = self.table, context.targets, context.rack_of
        found = None if rack_of is None else classes.plan(
            table, targets, {b: (counts.get(b, 0), counts.get(b, 0)) for b in targets},
            rack_of)
        least = evenness._least_possible(table, targets)
        if found is None:
            return replace(self, changed={}, topics=None, least=least, failed=True)
        before = table.replicas
        return replace(self, changed={i: r for i, r in sorted(found.final.items())
                                      if r != before[i]},
                       topics=TopicGoal(None, found.spread, found.moves, None,
                                        found.least == found.spread, found.least),
                       least=least, failed=False)

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

    def cut(self, budget: int, rack_of: Mapping[int, str] | None = None) -> Part:
        """The planned moves within ``budget`` copies, the brokers that give the most in this
        chunk relieved first (their loads are in proportion to the whole cluster's); with
        ``rack_of`` each kept copy within its rack (:func:`kadmin.balance.cut.paired`)."""
        before = self.table.replicas
        gives: dict[int, int] = {}
        for i, new in self.changed.items():
            for b in set(before[i]) - set(new):
                gives[b] = gives.get(b, 0) + 1
        kept = cut_moves(before, self.changed, Quota(gives, {}, frozenset(), frozenset()), budget,
                         rack_of)
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
"""Arcs of priced programs a process keeps between rounds of
:meth:`kadmin.balance.chunk_topics.TopicRounds.price` (the largest chunks ``--topic-spread``
makes, four of them: a few hundred MB); beyond, the least recently used go, and are built
again when asked."""

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


def balanced_ranges(total: Mapping[int, int], context: Context) -> dict[int, tuple[int, int]]:
    """Each target broker's balanced range of replicas (as ``plan rebalance``'s), from the
    replicas per broker of the selected topics ``total``."""
    inside = {b: total.get(b, 0) for b in context.targets}
    outside = {b: n for b, n in total.items() if b not in inside}
    out: dict[int, tuple[int, int]] = {}
    for group in groups_of(context.targets, inside, outside, context.rack_of, context.weights):
        out.update(group.bounds())
    return out


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


Key = TypeVar("Key", bound=Hashable)


def added(counts: Iterable[Mapping[Key, int]]) -> dict[Key, int]:
    """Counts per key (a broker, a replica set) summed over chunks."""
    total: dict[Key, int] = {}
    for chunk in counts:
        for b, n in chunk.items():
            total[b] = total.get(b, 0) + n
    return total


def picked_table(picked: Sequence[Picked], replicas: list[Replicas]) -> PartitionTable:
    """The picked partitions as one table (chunks hold ranges of topic names in order)."""
    topics: list[str] = []
    topic_of: list[int] = []
    for p in picked:
        if not topics or topics[-1] != p.topic:
            topics.append(p.topic)
        topic_of.append(len(topics) - 1)
    return PartitionTable(tuple(topics), topic_of, [p.partition for p in picked], replicas)
