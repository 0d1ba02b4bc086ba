"""Exact optima for small clusters, by integer programming (scipy's HiGHS), to hold the balancing
core against: the fewest replica moves and leader changes that any balanced plan needs.

Independent of kadmin's code on purpose: the model is written from docs/balancing.md alone.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

Replicas = tuple[int, ...]


def exact(time_limit: float | None = None) -> dict[str, float]:
    """HiGHS options for a proven optimum: no relative gap (its default, 1e-4, lets branch and
    bound stop a few units above the optimum once objectives reach the ten thousands), and
    ``time_limit`` seconds when given."""
    return {"mip_rel_gap": 0.0} | ({} if time_limit is None else {"time_limit": time_limit})


def share_bounds(total: int, targets: Sequence[int], weights: Mapping[int, int] | None
                 ) -> dict[int, tuple[int, int]]:
    """docs/balancing.md: floor and ceiling of ``total * w_b / sum(w)`` (floor and floor + 1 of the
    mean when brokers are alike)."""
    if weights is None:
        return {b: (total // len(targets), total // len(targets) + 1) for b in targets}
    whole = sum(weights[b] for b in targets)
    return {b: (math.floor(Fraction(total * weights[b], whole)),
                math.ceil(Fraction(total * weights[b], whole))) for b in targets}


def fewest_moves(parts: Sequence[Replicas], targets: Sequence[int],
                 rack_of: Mapping[int, str] | None = None, *,
                 weights: Mapping[int, int] | None = None,
                 topics: Sequence[int] | None = None, topic_spread: int | None = None,
                 balanced: bool = True, factor: int | None = None,
                 time_limit: float | None = None, spread: int | None = None,
                 extra: Sequence[tuple[Mapping[tuple[int, int], float], float, float]] = ()
                 ) -> int | None:
    """The fewest replica moves that leave every target broker within one replica of the
    others (with ``weights``, at the floor or ceiling of its capacity share) and every replica
    on a target, each partition keeping its size and (with racks) at least its number of
    distinct racks (or every target rack, when it had more); ``extra``: each ``(coefficients
    by (partition, broker), low, high)`` one more row on the end lists; with ``topic_spread``
    also every topic (``topics[p]`` is partition p's) spread at most that over the targets; without
    ``balanced`` the brokers are free. With ``spread`` (and racks) every target broker's
    count lies in one window of that width and each rack's brokers within one of each
    other. With ``factor`` (an increase of the replication
    factor) every partition ends with ``factor`` replicas and keeps every replica it has on a
    target. None when no such plan exists; TimeoutError when HiGHS has not proven the optimum
    within ``time_limit`` seconds."""
    brokers = sorted(targets)
    cells = [(p, b) for p in range(len(parts)) for b in brokers]
    index = {cell: i for i, cell in enumerate(cells)}
    racks = sorted({rack_of[b] for b in brokers}) if rack_of else []
    names = sorted(set(topics)) if topics is not None and topic_spread is not None else []
    windows = len(cells) + len(parts) * len(racks)
    even = windows + len(names)
    """With ``spread``: the window's floor, then a floor per rack."""
    width = even + (0 if spread is None else 1 + len(racks))
    cost = np.zeros(width)
    for (p, b), i in index.items():
        cost[i] = b not in parts[p]
    rows: list[np.ndarray] = []
    low: list[float] = []
    high: list[float] = []

    def row(entries: Mapping[int, float], lo: float, hi: float) -> None:
        vector = np.zeros(width)
        for i, v in entries.items():
            vector[i] = v
        rows.append(vector)
        low.append(lo)
        high.append(hi)

    for p, members in enumerate(parts):
        size = len(members) if factor is None else factor
        row({index[(p, b)]: 1 for b in brokers}, size, size)
    if balanced:
        for b, (lo, hi) in share_bounds(sum(map(len, parts)), brokers, weights).items():
            row({index[(p, b)]: 1 for p in range(len(parts))}, lo, hi)
    for p, members in enumerate(parts):
        if not racks:
            break
        held = min(len(racks), len({rack_of[b] for b in members if b in rack_of}))  # type: ignore[index]
        flags = {}
        for k, rack in enumerate(racks):
            flag = len(cells) + p * len(racks) + k
            flags[flag] = 1
            row({flag: 1, **{index[(p, b)]: -1 for b in brokers if rack_of[b] == rack}},  # type: ignore[index]
                -np.inf, 0)
        row(flags, held, np.inf)
    for k, name in enumerate(names):  # the topic's counts lie in [lo_t, lo_t + spread]
        assert topics is not None and topic_spread is not None
        mine = [p for p in range(len(parts)) if topics[p] == name]
        for b in brokers:
            count = {index[(p, b)]: 1.0 for p in mine}
            row({**count, windows + k: -1.0}, 0, np.inf)
            row({**count, windows + k: -1.0}, -np.inf, topic_spread)
    for b in brokers if spread is not None else ():
        load = {index[(p, b)]: 1.0 for p in range(len(parts))}
        row({**load, even: -1.0}, 0, spread)
        if racks:
            row({**load, even + 1 + racks.index(rack_of[b]): -1.0}, 0, 1)  # type: ignore[index]
    for entries, lo, hi in extra:
        row({index[cell]: v for cell, v in entries.items()}, lo, hi)
    upper = np.ones(width)
    upper[windows:] = max(map(len, parts), default=1) * len(parts) if factor is None else (
        factor * len(parts))
    lower = np.zeros(width)
    if factor is not None:  # an increase keeps every replica
        for (p, b), i in index.items():
            lower[i] = b in parts[p]
    found = milp(cost, constraints=LinearConstraint(np.array(rows), low, high),
                 integrality=np.ones(width), bounds=Bounds(lower, upper),
                 options=exact(time_limit))
    if found.status == 1:
        raise TimeoutError(f"the integer program ran out of its {time_limit} s")
    return None if found.status != 0 else round(found.fun)


def least_spread_then_fewest_moves(parts: Sequence[Replicas], targets: Sequence[int],
                                   rack_of: Mapping[int, str]) -> tuple[int, int]:
    """docs/balancing.md with racks when no plan balances every broker without a partition
    losing a rack: the least spread of the targets' counts (each rack's brokers within one)
    any plan keeping every partition's racks reaches, then the fewest moves at that spread."""
    k = 0
    while True:
        found = fewest_moves(parts, targets, rack_of, balanced=False, spread=k)
        if found is not None:
            return k, found
        k += 1


def least_topic_spread(parts: Sequence[Replicas], targets: Sequence[int],
                       topics: Sequence[int], moves: int,
                       rack_of: Mapping[int, str] | None = None, *,
                       weights: Mapping[int, int] | None = None, balanced: bool = True,
                       factor: int | None = None, time_limit: float | None = None) -> int:
    """The smallest worst topic spread any balanced plan of at most ``moves`` moves reaches
    (the second key of the lexicographic optimum when ``moves`` is the first); ``balanced``
    and ``factor`` as for :func:`fewest_moves`."""
    k = 0
    while True:
        found = fewest_moves(parts, targets, rack_of, weights=weights, topics=topics,
                             topic_spread=k, balanced=balanced, factor=factor,
                             time_limit=time_limit)
        if found is not None and found <= moves:
            return k
        k += 1


def fewest_leader_changes(replicas: Sequence[Replicas], leaders_before: Sequence[int],
                          targets: Sequence[int]) -> int | None:
    """The fewest partitions whose preferred leader differs from ``leaders_before`` when each
    leads with one of its replicas and leaders per target broker differ by at most one."""
    brokers = sorted(targets)
    cells = [(p, b) for p, members in enumerate(replicas) for b in members if b in brokers]
    cost = np.array([float(b != leaders_before[p]) for p, b in cells])
    rows, low, high = [], [], []
    for p in range(len(replicas)):
        rows.append([1.0 if c[0] == p else 0.0 for c in cells])
        low.append(1)
        high.append(1)
    floor = len(replicas) // len(brokers)
    for b in brokers:
        rows.append([1.0 if c[1] == b else 0.0 for c in cells])
        low.append(floor)
        high.append(floor + 1)
    found = milp(cost, constraints=LinearConstraint(np.array(rows), low, high),
                 integrality=np.ones(len(cells)), bounds=Bounds(0, 1), options=exact())
    return None if found.status != 0 else round(found.fun)


def least_spread_then_fewest_changes(replicas: Sequence[Replicas], leaders_before: Sequence[int],
                                     brokers: Sequence[int], movable: Sequence[bool]
                                     ) -> tuple[int, int] | None:
    """Preferred leaders over ``brokers`` when a movable partition leads with any of its
    replicas among ``brokers`` and every other partition keeps its leader (counted when it is
    one of ``brokers``): the least spread (max - min leaders per broker) any choice reaches,
    then the fewest partitions whose leader differs from ``leaders_before`` at that spread.
    Two integer programs, one per objective; None when a movable partition has no choice."""
    chosen = sorted(brokers)
    if any(m and not set(r) & set(chosen) for r, m in zip(replicas, movable, strict=True)):
        return None
    cells = [(p, b) for p, members in enumerate(replicas) if movable[p]
             for b in members if b in chosen]
    fixed = Counter(leaders_before[p] for p in range(len(replicas)) if not movable[p])
    width = len(cells) + 2  # the cells, then hi, then lo
    hi, lo = len(cells), len(cells) + 1
    rows, low, high = [], [], []
    for p in range(len(replicas)):
        if movable[p]:
            rows.append([1.0 if c[0] == p else 0.0 for c in cells] + [0.0, 0.0])
            low.append(1)
            high.append(1)
    for b in chosen:
        load = [1.0 if c[1] == b else 0.0 for c in cells]
        rows.append([*load, -1.0, 0.0])  # load + fixed <= hi
        low.append(-np.inf)
        high.append(-fixed[b])
        rows.append([*load, 0.0, -1.0])  # load + fixed >= lo
        low.append(-fixed[b])
        high.append(np.inf)
    bounds = Bounds([0.0] * len(cells) + [0.0, 0.0],
                    [1.0] * len(cells) + [len(replicas)] * 2)
    spread_cost = np.zeros(width)
    spread_cost[hi], spread_cost[lo] = 1, -1
    first = milp(spread_cost, constraints=LinearConstraint(np.array(rows), low, high),
                 integrality=np.ones(width), bounds=bounds, options=exact())
    if first.status != 0:
        return None
    least = round(first.fun)
    rows.append([0.0] * len(cells) + [1.0, -1.0])
    low.append(-np.inf)
    high.append(least)
    change_cost = np.array([float(b != leaders_before[p]) for p, b in cells] + [0.0, 0.0])
    second = milp(change_cost, constraints=LinearConstraint(np.array(rows), low, high),
                  integrality=np.ones(width), bounds=bounds, options=exact())
    assert second.status == 0
    return least, round(second.fun)


def byte_balance_by_scan(parts: Sequence[Replicas], sizes: Sequence[int],
                         targets: Sequence[int], rack_of: Mapping[int, str] | None = None
                         ) -> dict[int, Replicas]:
    """``--balance bytes``' best-fit greedy written the plain way: every search reads all of a
    broker's partitions (the product shelves them by rack and drops stale entries, for speed).
    The new replica lists of the partitions that change."""
    now = [list(r) for r in parts]
    held = {b: 0 for b in targets}
    for size, r in zip(sizes, parts, strict=True):
        for b in r:
            held[b] = held.get(b, 0) + size
    mean = sum(held.values()) / len(targets)
    largest = max(sizes, default=0)

    def fits(p: int, x: int, y: int) -> bool:
        if x not in now[p] or y in now[p]:
            return False
        if rack_of is None or rack_of.get(y) == rack_of.get(x):
            return True
        others = {rack_of.get(b) for b in now[p] if b != x}
        diversity = len({rack_of.get(b) for b in parts[p]} - {None})
        return rack_of.get(y) not in others or len(others - {None}) >= diversity

    def move(p: int, x: int, y: int) -> None:
        now[p][now[p].index(x)] = y
        held[x] -= sizes[p]
        held[y] += sizes[p]

    def best_fit(x: int, y: int, want: float) -> int | None:
        fitting = sorted((sizes[p], p) for p in range(len(parts)) if fits(p, x, y))
        below = [e for e in fitting if e <= (int(want), len(parts))]
        above = [e for e in fitting if e > (int(want), len(parts))]
        return below[-1][1] if below else above[0][1] if above else None

    for x in sorted(b for b in held if b not in targets):
        for _, p in sorted(((sizes[p], p) for p in range(len(parts)) if x in parts[p]),
                           reverse=True):
            y = min((b for b in targets if fits(p, x, b)), key=lambda b: (held[b], b),
                    default=None)
            if y is not None:
                move(p, x, y)
    def spread() -> int:
        return max(held[b] for b in targets) - min(held[b] for b in targets)

    best = (spread(), _changed(parts, now))  # the moves after the last narrowing are not made
    if all(abs(held[b] - mean) <= largest for b in targets):
        return best[1]  # within one largest partition of the mean: nothing to do
    for _ in range(sum(map(len, parts))):
        high = max(targets, key=lambda b: (held[b], -b))
        if held[high] - min(held[b] for b in targets) <= largest:
            break
        for low in sorted(targets, key=lambda b: (held[b], b)):
            gap = held[high] - held[low]
            if gap <= 0:
                return best[1]
            p = best_fit(high, low, min(held[high] - mean, mean - held[low], gap / 2))
            if p is not None and sizes[p] < gap:
                move(p, high, low)
                if spread() < best[0]:
                    best = (spread(), _changed(parts, now))
                break
        else:
            break
    return best[1]


def _changed(parts: Sequence[Replicas], now: Sequence[list[int]]) -> dict[int, Replicas]:
    return {p: tuple(r) for p, r in enumerate(now) if tuple(r) != parts[p]}
