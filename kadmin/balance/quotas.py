"""How the Spark driver shares one balancing quota among chunks of topics. Pure; no Spark here,
so every rule below is tested on small matrices in one process.

The balancing core (:mod:`kadmin.balance`) meets a quota with the fewest moves over the
partitions it is given. A Spark task holds one chunk of topics, so the driver must say how many
units each chunk gives from and takes into each broker, such that the chunks' plans add up to
the single-machine result: the counts end balanced and the moves equal the lower bound.

1. The end state is fixed first (:func:`fixed_quota`): every broker of a group ends on
   ``floor`` or ``floor + 1``, the ceilings going to the brokers that hold the most (spec
   section 7's choice, the one the bound is defined with). So every unit is mandatory and
   ``sum(give) == sum(take) == lower bound``: no optional unit is left whose use two chunks
   could each decide on their own.
2. That quota is split over the chunks (:func:`split`): each broker's gives in proportion to
   the replicas it holds in each chunk, each broker's takes in proportion to the chunk's
   partitions it is not in; then a max flow over the small chunks x brokers matrix shifts
   units between chunks until every chunk gives exactly as much as it takes (a move stays in
   its partition), never more than a chunk holds or has room for. Such a split exists whenever
   a balanced plan at the bound does (that plan, cut by chunk, is one), and the max flow finds
   one from any start. The flow shifts a little of every broker rather than all of one
   (:func:`_level`): which replicas a chunk moves decides how even its topics end.
3. Each task meets its chunk's quota with ``move_replicas(single_copies=True)``: one copy per
   unit, so its moves equal the units it met. A chunk can fail units that its counts allowed
   (every partition of a giver may already hold every broker that has room); the driver sees
   which from the counts the task returns, and :func:`meet` splits what is left again, over
   the chunks that have not failed those brokers, with their updated counts, until all is met.

Why the moves still equal the bound: in every round a broker only gives if it must give in the
end state and only takes if it must take, and every unit met costs exactly one copy; so no
replica is copied twice or copied back, and the copies add up to the units, the bound.

Why the shares must stay near proportional, measured: the 10M skewed run (1,000,000 topics
of 10 partitions, RF 3, 900 brokers of which broker ``b`` is in every topic created when the
cluster had more than ``b`` brokers, 100 new; 100 chunks) ended with a worst topic spread of 10
where 1M reached 3. Its topics created on brokers 0 to 2 alone hold 10 replicas on each of the
three. The leveling max flow, whose augmenting paths took the lowest broker ids first, had
taken every give of broker 1 out of chunk 39 (0 of its 1,657 units) and most of broker 0's out
of chunks 19 and 25 (109 of 1,768, 48 of 1,591), giving them to other chunks. A chunk that does
not give from broker 1 keeps all of its replicas, and so each such topic in chunk 39 kept 10
on broker 1, whatever the task's topic preferences: the moves and the broker spreads were
right, the topics could not be. At 1M (10 chunks) the worst such cut left broker 0 680 of
1,609 units, enough to reach every such topic. With the shifts spread over the brokers no
chunk keeps less than 90% of broker 0, 1 or 2's proportional share at 10M, and chunks 39 and
25 end at 3, as 1M does (``tests/unit/test_balance_chunks.py``
``test_the_split_keeps_each_brokers_share_near_proportional`` and
``test_chunks_even_topics_as_one_machine_does_on_a_skewed_cluster`` fail without it).

Leaders go the same way over the replica lists after the moves (a leadership can move to any
replica of its partition, and a chain of handovers inside a chunk costs no data).

Rounds can leave a few units that no chunk meets on its own: those need a chain through
partitions of two chunks, or another choice of which brokers end on the ceiling (the
single-machine search keeps that choice open). :mod:`kadmin.balance.chunks` solves that tail on
the driver over a bounded sample of the partitions concerned.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from math import ceil

from kadmin.balance.metrics import Balance
from kadmin.balance.targets import Group, Quota, groups_of, quota

MAX_ROUNDS = 8
"""Rounds of tasks before the driver hands what is left to the tail. Each round either meets
units or rules a broker out of a chunk, so few are ever needed."""


@dataclass(frozen=True)
class Chunk:
    """What the driver knows of one chunk for one kind of unit (replicas, or leaderships)."""

    held: Mapping[int, int]
    """Units per broker."""
    places: Mapping[int, int]
    """Per broker, the partitions of the chunk that could hold one of its units; brokers not
    listed: ``size`` (a replica fits any partition, a leadership only the broker's own)."""
    size: int = 0

    def room(self, b: int) -> int:
        """Units ``b`` could still take in this chunk."""
        return self.places.get(b, self.size) - self.held.get(b, 0)


def fixed_quota(counts: Mapping[int, int], groups: Sequence[Group], outside: Mapping[int, int]
                ) -> Quota:
    """The quota of :func:`kadmin.balance.targets.quota` with the end state chosen: in each
    group the ceilings its total leaves above the floors go to the brokers that hold the most
    above their floor (then the lowest id; with brokers alike, those that hold the most)
    among those whose share has a ceiling: a ceiling costs nothing where a broker holds it
    already. Every unit is mandatory, and
    gives equal takes."""
    give = {b: n for b, n in outside.items() if n > 0}
    take: dict[int, int] = {}
    for group in groups:
        bounds = group.bounds()  # floor/ceiling of each broker's share (docs/balancing.md)
        ceilings = group.total - sum(low for low, _ in bounds.values())
        ranked = sorted((b for b in group.brokers if bounds[b][1] > bounds[b][0]),
                        key=lambda b: (bounds[b][0] - counts.get(b, 0), b))
        ceiling = set(ranked[:ceilings])
        for b in group.brokers:
            end = bounds[b][0] + (b in ceiling)
            held = counts.get(b, 0)
            if held > end:
                give[b] = held - end
            elif held < end:
                take[b] = end - held
    return Quota(give, take, frozenset(), frozenset())


def replica_quota(counts: Mapping[int, int], targets: Collection[int],
                  rack_of: Mapping[int, str] | None, *, fixed: bool = False,
                  weights: Mapping[int, int] | None = None) -> Quota:
    """The quota of replicas from the replicas per broker of every selected topic, as
    ``plan rebalance`` states it (its ``units`` are the lower bound of moves); ``fixed``: with
    the end state chosen (:func:`fixed_quota`); ``weights``: capacity shares."""
    inside = {b: counts.get(b, 0) for b in targets}
    outside = {b: n for b, n in counts.items() if b not in inside}
    groups = groups_of(targets, inside, outside, rack_of, weights)
    return (fixed_quota if fixed else quota)(inside, groups, outside)


def leader_quota(leaders: Mapping[int, int], targets: Collection[int], partitions: int, *,
                 fixed: bool = False, weights: Mapping[int, int] | None = None) -> Quota:
    """The quota of preferred leaders: one group of every target broker, as
    :func:`kadmin.balance.rebalance.leader_quota` (a leadership costs no disk), by
    ``weights`` (capacity shares) when given."""
    inside = {b: leaders.get(b, 0) for b in targets}
    outside = {b: n for b, n in leaders.items() if b not in inside}
    ordered = tuple(sorted(targets))
    groups = [Group(ordered, partitions,
                    None if weights is None else tuple(weights[b] for b in ordered))]
    return (fixed_quota if fixed else quota)(inside, groups, outside)


# --- splitting ----------------------------------------------------------------------------------


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` in whole shares proportional to ``weights`` (largest remainders, ties to the
    first), no share above its weight; the weights in full when they add up to less."""
    whole = sum(weights)
    if whole <= total:
        return list(weights)
    shares = [total * w // whole for w in weights]
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in order[:total - sum(shares)]:
        shares[i] += 1
    return shares


def split(give: Mapping[int, int], take: Mapping[int, int], chunks: Sequence[Chunk],
          banned: Collection[tuple[int, int]] = ()) -> list[Quota | None]:
    """Per chunk, the units to give from and take into each broker (None: nothing to do).

    Every chunk gives exactly as many units as it takes, no more than it holds of a broker and
    no more into a broker than it has room for, and never from or into a broker of a pair
    ``(chunk index, broker)`` in ``banned``. What cannot be placed so is left out (the shares
    add up to less than ``give`` and ``take``)."""
    n = len(chunks)

    def caps(units: Mapping[int, int], cap: Callable[[Chunk, int], int]
             ) -> list[dict[int, int]]:
        out: list[dict[int, int]] = [{} for _ in chunks]
        for b in sorted(units):
            column = [0 if (c, b) in banned else max(0, cap(chunk, b))
                      for c, chunk in enumerate(chunks)]
            for c, units_c in enumerate(column):
                if units_c:
                    out[c][b] = units_c
        return out

    give_caps = caps(give, lambda chunk, b: chunk.held.get(b, 0))
    take_caps = caps(take, Chunk.room)
    gives = _proportional(give, give_caps, n)
    takes = _proportional(take, take_caps, n)
    _level(gives, takes, give_caps, take_caps)
    quotas: list[Quota | None] = []
    for g, t in zip(gives, takes, strict=True):
        g = {b: k for b, k in g.items() if k}
        t = {b: k for b, k in t.items() if k}
        quotas.append(Quota(g, t, frozenset(), frozenset()) if g else None)
    return quotas


def _proportional(units: Mapping[int, int], caps: Sequence[Mapping[int, int]], n: int
                  ) -> list[dict[int, int]]:
    shares: list[dict[int, int]] = [{} for _ in range(n)]
    for b in sorted(units):
        for c, share in enumerate(apportion(units[b], [caps[c].get(b, 0) for c in range(n)])):
            if share:
                shares[c][b] = share
    return shares


SHIFT_FRACTIONS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1)
"""The phases of :func:`_level`: in each, no chunk shifts more of a broker's units than this
fraction of its proportional share (then, last, as much as it holds or has room for)."""


def _level(gives: list[dict[int, int]], takes: list[dict[int, int]],
           give_caps: Sequence[Mapping[int, int]], take_caps: Sequence[Mapping[int, int]]
           ) -> None:
    """Make every chunk give as much as it takes, in place: a max flow carries each surplus
    (gives over takes) to chunks short of gives, one unit of flow being a give shifted from one
    chunk to another (through a giver) or a take shifted the other way (through a taker). The
    flow a max flow cannot carry is cut: the surplus chunk gives less, the short one takes
    less.

    The shifts are spread over the brokers: the flow runs in phases (:data:`SHIFT_FRACTIONS`),
    each letting a chunk shift at most that fraction of a broker's proportional share (at
    least one unit), the flow of one phase kept by the next; so no broker's share in a chunk
    moves by more than the first fraction that carries the whole surplus, and the last phase
    (the caps alone) still finds a split whenever one exists. Without the phases the
    augmenting paths took the lowest broker ids first (see the module docstring, 10M)."""
    n = len(gives)
    givers = sorted({b for row in give_caps for b in row})
    takers = sorted({b for row in take_caps for b in row})
    giver_node = {b: 2 + n + i for i, b in enumerate(givers)}
    taker_node = {b: 2 + n + len(givers) + i for i, b in enumerate(takers)}
    flow = _MaxFlow(2 + n + len(givers) + len(takers))
    source, sink = 0, 1
    shifts: list[tuple[int, int, int, int, int, int]] = []
    """(edge, chunk, broker, +1 give / -1 take / +2 give back / -2 take back, share, cap)"""
    for c in range(n):
        excess = sum(gives[c].values()) - sum(takes[c].values())
        if excess > 0:
            flow.add(source, 2 + c, excess)
        elif excess < 0:
            flow.add(2 + c, sink, -excess)
        for b, cap in give_caps[c].items():
            held = gives[c].get(b, 0)
            if held:
                shifts.append((flow.add(2 + c, giver_node[b], 0), c, b, -1, held, held))
            if cap > held:
                shifts.append((flow.add(giver_node[b], 2 + c, 0), c, b, 1, held, cap - held))
        for b, cap in take_caps[c].items():
            held = takes[c].get(b, 0)
            if cap > held:
                shifts.append((flow.add(2 + c, taker_node[b], 0), c, b, 2, held, cap - held))
            if held:
                shifts.append((flow.add(taker_node[b], 2 + c, 0), c, b, -2, held, held))
    for fraction in (*SHIFT_FRACTIONS, None):
        for edge, _, _, _, share, cap in shifts:
            flow.allow(edge, cap if fraction is None else min(cap, max(1, ceil(share * fraction))))
        flow.run(source, sink)
    for edge, c, b, kind, _, _ in shifts:
        units = flow.flow(edge)
        if not units:
            continue
        row = gives[c] if abs(kind) == 1 else takes[c]
        row[b] = row.get(b, 0) + (units if kind > 0 else -units)
    for c in range(n):  # what no flow could carry
        excess = sum(gives[c].values()) - sum(takes[c].values())
        row = gives[c] if excess > 0 else takes[c]
        for b in sorted(row, key=lambda b: (-row[b], b)):
            if not excess:
                break
            cut = min(row[b], abs(excess))
            row[b] -= cut
            excess += cut if excess < 0 else -cut


def compatible(near: Sequence[Mapping[int, int]], boxes: Sequence[tuple[int, int]],
               ranges: Mapping[int, tuple[int, int]], fixed: Collection[int] = ()
               ) -> list[dict[int, int]] | None:
    """Per chunk, each target broker's count to end with for ``--topic-spread``, as near to
    ``near`` (the counts the rounds left) as allows: every count within its chunk's box
    (``boxes[c]``: what the chunk's topics allow a broker under the spread, see
    :meth:`kadmin.balance.chunks.Part.windowed`), each chunk's total kept, each broker's total
    within its balanced range (``ranges``), and the chunks in ``fixed`` at ``near`` exactly.
    None when no such counts exist.

    A transportation problem with bounds, solved as a circulation with lower bounds (a max
    flow from a super source, :class:`_MaxFlow`): source -> chunk (exactly its total),
    chunk -> broker (the count, within the box), broker -> sink (within its range), sink ->
    source. It is solved first with every count within 0 of ``near``, then 1, 2, 4, ...
    of it, then the boxes alone: the first that exists is returned. The boxes are necessary
    conditions (every plan that keeps each topic within the spread has counts within them),
    so None proves that no plan with balanced brokers keeps the topics within the spread."""
    brokers = sorted(ranges)
    widest = max((max(n.values(), default=0) for n in near), default=0) + 1
    delta = 0
    while True:
        found = _circulation(near, boxes, ranges, brokers, fixed,
                             None if delta > widest else delta)
        if found is not None or delta > widest:
            return found
        delta = 2 * delta if delta else 1


def _circulation(near: Sequence[Mapping[int, int]], boxes: Sequence[tuple[int, int]],
                 ranges: Mapping[int, tuple[int, int]], brokers: Sequence[int],
                 fixed: Collection[int], delta: int | None) -> list[dict[int, int]] | None:
    n = len(near)
    node = {b: 4 + n + i for i, b in enumerate(brokers)}
    flow = _MaxFlow(4 + n + len(brokers))
    source, sink, super_source, super_sink = 0, 1, 2, 3
    excess = [0] * (4 + n + len(brokers))
    cells: list[tuple[int, int, int, int]] = []
    """(edge, chunk, broker, lower bound)"""

    def edge(a: int, b: int, low: int, high: int) -> int | None:
        if low > high:
            return None
        excess[b] += low
        excess[a] -= low
        return flow.add(a, b, high - low)

    for c, counts in enumerate(near):
        total = sum(counts.get(b, 0) for b in brokers)
        edge(source, 4 + c, total, total)
        low_box, high_box = boxes[c]
        for b in brokers:
            want = counts.get(b, 0)
            if c in fixed:
                low, high = want, want
            elif delta is None:
                low, high = low_box, high_box
            else:
                low, high = max(low_box, want - delta), min(high_box, want + delta)
            made = edge(4 + c, node[b], low, high)
            if made is None:
                return None
            cells.append((made, c, b, low))
    for b in brokers:
        low, high = ranges[b]
        edge(node[b], sink, low, high)
    edge(sink, source, 0, sum(sum(c.values()) for c in near))
    needed = 0
    for v, units in enumerate(excess):
        if units > 0:
            flow.add(super_source, v, units)
            needed += units
        elif units < 0:
            flow.add(v, super_sink, -units)
    if flow.run(super_source, super_sink) != needed:
        return None
    out: list[dict[int, int]] = [{} for _ in near]
    for made, c, b, low in cells:
        out[c][b] = low + flow.flow(made)
    return out


class _MaxFlow:
    """Dinic's algorithm on integer capacities; edges in insertion order (deterministic)."""

    def __init__(self, nodes: int) -> None:
        self.adjacent: list[list[int]] = [[] for _ in range(nodes)]
        self.head: list[int] = []
        self.capacity: list[int] = []
        self.initial: list[int] = []

    def add(self, a: int, b: int, capacity: int) -> int:
        """An edge ``a -> b`` (and its residual twin); returns its id."""
        edge = len(self.head)
        self.head += [b, a]
        self.capacity += [capacity, 0]
        self.initial += [capacity, 0]
        self.adjacent[a].append(edge)
        self.adjacent[b].append(edge + 1)
        return edge

    def flow(self, edge: int) -> int:
        return self.initial[edge] - self.capacity[edge]

    def allow(self, edge: int, capacity: int) -> None:
        """Raise an edge's capacity to ``capacity`` (never lower: the flow on it stays)."""
        more = int(capacity) - self.initial[edge]
        if more > 0:
            self.initial[edge] += more
            self.capacity[edge] += more

    def run(self, source: int, sink: int) -> int:
        total = 0
        while True:
            level = self._levels(source, sink)
            if level is None:
                return total
            current = [0] * len(self.adjacent)
            while pushed := self._push(source, sink, level, current):
                total += pushed

    def _levels(self, source: int, sink: int) -> list[int] | None:
        level = [-1] * len(self.adjacent)
        level[source] = 0
        frontier = [source]
        while frontier:
            following = []
            for a in frontier:
                for edge in self.adjacent[a]:
                    b = self.head[edge]
                    if self.capacity[edge] and level[b] < 0:
                        level[b] = level[a] + 1
                        following.append(b)
            frontier = following
        return level if level[sink] >= 0 else None

    def _push(self, source: int, sink: int, level: list[int], current: list[int]) -> int:
        """One augmenting path along rising levels (iterative depth-first search with a
        current arc per node), its bottleneck pushed; 0 when none is left."""
        path: list[int] = []
        a = source
        while True:
            if a == sink:
                pushed = min(self.capacity[e] for e in path)
                for e in path:
                    self.capacity[e] -= pushed
                    self.capacity[e ^ 1] += pushed
                return pushed
            edges = self.adjacent[a]
            while current[a] < len(edges):
                e = edges[current[a]]
                if self.capacity[e] and level[self.head[e]] == level[a] + 1:
                    break
                current[a] += 1
            else:
                if not path:
                    return 0
                level[a] = -1  # a dead end for the rest of the phase
                e = path.pop()
                a = self.head[e ^ 1]
                current[a] += 1
                continue
            path.append(e)
            a = self.head[e]


# --- rounds -------------------------------------------------------------------------------------


Round = Callable[[Sequence[Quota | None]], Sequence[Mapping[int, int] | None]]
"""Runs one round of tasks: per chunk its quota (None: nothing to do); returns per chunk the units
per broker after the round (None for chunks that had nothing to do)."""


@dataclass(frozen=True)
class Outcome:
    chunks: tuple[Chunk, ...]
    """The chunks' counts after the last round."""
    rounds: int
    unmet: int
    """Units of the quota no round met."""


def meet(total: Quota, chunks: Sequence[Chunk], run: Round) -> Outcome:
    """Meet ``total`` (every unit mandatory) in rounds of per-chunk quotas: after each round,
    what the chunks missed is split again, each chunk no longer asked for the brokers it
    missed, until all is met or no chunk is left to ask."""
    give, take = dict(total.give), dict(total.take)
    state = list(chunks)
    banned: set[tuple[int, int]] = set()
    rounds = 0
    while rounds < MAX_ROUNDS and (any(give.values()) or any(take.values())):
        quotas = split(give, take, state, banned)
        if not any(quotas):
            break
        after = run(quotas)
        rounds += 1
        for c, (share, held) in enumerate(zip(quotas, after, strict=True)):
            if share is None or held is None:
                continue
            before = state[c].held
            for b, units in share.give.items():
                met = before.get(b, 0) - held.get(b, 0)
                give[b] -= met
                if met < units:
                    banned.add((c, b))
            for b, units in share.take.items():
                met = held.get(b, 0) - before.get(b, 0)
                take[b] -= met
                if met < units:
                    banned.add((c, b))
            state[c] = replace(state[c], held=dict(held))
    return Outcome(tuple(state), rounds, max(sum(give.values()), sum(take.values())))


def budgets(budget: int, moves: Sequence[int]) -> list[int]:
    """A plan-wide budget of moves shared among chunks in proportion to their moves; each chunk
    keeps the changes that relieve its most loaded brokers first, and their loads are in
    proportion to the whole cluster's, so the most loaded are relieved first overall."""
    return apportion(budget, list(moves))


def merged(parts: Sequence[Balance]) -> Balance:
    """The balance of all chunks from each chunk's (chunks in topic order): counts add up, and
    the worst topic is the first of the worst, as over one table."""
    replicas: dict[int, int] = {}
    leaders: dict[int, int] = {}
    worst: tuple[int, str | None] = (0, None)
    for part in parts:
        for b, n in part.replicas.items():
            replicas[b] = replicas.get(b, 0) + n
        for b, n in part.leaders.items():
            leaders[b] = leaders.get(b, 0) + n
        if part.worst_topic is not None and (worst[1] is None
                                             or part.worst_topic_spread > worst[0]):
            worst = (part.worst_topic_spread, part.worst_topic)
    return Balance(replicas, leaders, sum(p.elsewhere for p in parts), worst[1], worst[0])

