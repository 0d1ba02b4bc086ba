"""Partial plans (``--max-moves``, ``--max-leader-changes``): what a budget keeps of a plan,
the brokers with the most to give relieved first; the single machine and every Spark chunk cut
the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kadmin.balance.budget import Change, most_loaded_first
from kadmin.balance.targets import Quota
from kadmin.model import Replicas


def cut_moves(before: Sequence[Replicas], moved: Mapping[int, Replicas], wanted: Quota,
              budget: int, rack_of: Mapping[int, str] | None = None) -> dict[int, Replicas]:
    """The replica moves to keep within ``budget`` copies, the brokers with the most to give
    relieved first (also what a Spark task keeps of its chunk's moves).

    A piece of ``moved`` one copy at a time: a partition's change is its single copies
    (the k-th replica it drops, replaced in its place by the k-th one it adds), each valid
    alone, so what a step keeps and what it leaves are both pieces of the same plan, the rest
    still optimal from where the step ends, and a step never stalls on a partition whose
    change costs more than the budget. A partition whose every copy is kept takes ``moved``'s
    list as it is. With ``rack_of``, a replica that moves within its rack is paired with the
    one it adds there (:func:`paired`), so that copy keeps the partition's racks alone."""
    units: dict[tuple[int, int], tuple[int, int]] = {}
    for i, new in moved.items():
        old = before[i]
        dropped = [b for b in old if b not in new]
        added = paired(dropped, [b for b in new if b not in old], rack_of)
        for k, (x, y) in enumerate(zip(dropped, added, strict=True)):
            units[(i, k)] = (x, y)
    kept = within_changes([Change(key, (x,), 1) for key, (x, _) in sorted(units.items())],
                           wanted, budget)
    out: dict[int, Replicas] = {i: new for i, new in moved.items()
                                if set(new) == set(before[i])}  # reordered only: no copy
    partly: dict[int, list[int]] = {}
    for i, k in sorted(kept):
        x, y = units[(i, k)]
        members = partly.setdefault(i, list(before[i]))
        members[members.index(x)] = y
    for i, members in partly.items():
        whole = moved[i]
        out[i] = whole if set(members) == set(whole) else tuple(members)
    return out


def paired(dropped: Sequence[int], added: Sequence[int], rack_of: Mapping[int, str] | None
           ) -> list[int]:
    """``added`` reordered so that each dropped replica faces one added on its own rack where
    there is one left (the rest in their order); as given without racks."""
    if rack_of is None:
        return list(added)
    left = list(added)
    out: list[int | None] = []
    for x in dropped:
        same = next((y for y in left if rack_of.get(y) == rack_of.get(x)), None)
        if same is not None:
            left.remove(same)
        out.append(same)
    rest = iter(left)
    return [next(rest) if y is None else y for y in out]


def within(before: Sequence[Replicas], changed: Mapping[int, Replicas], wanted: Quota,
            budget: int, change_of: Callable[[int, Replicas, Replicas], Change]
            ) -> dict[int, Replicas]:
    """The changes to keep under ``budget``, the brokers with the most to give relieved first."""
    chosen = within_changes([change_of(i, before[i], new) for i, new in sorted(changed.items())],
                             wanted, budget)
    return {key: changed[key] for key in chosen}


def within_changes(changes: Sequence[Change], wanted: Quota, budget: int) -> set[Any]:
    """The keys of the changes to keep under ``budget``, the brokers with the most to give
    relieved first."""
    excess = {b: wanted.give.get(b, 0) + (b in wanted.spare_give)
              for b in set(wanted.give) | wanted.spare_give}
    return {c.key for c in most_loaded_first(changes, excess, budget)}
