"""The bytes of a plan file: ``plan_file`` writes exactly what ``dumps_json(plan_document(plan))``
writes, whatever the plan holds, and a reassignment of plain moves never builds the document."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kadmin import files, plans
from kadmin.model import (
    DeletionPlan,
    ElectionPlan,
    PartitionMove,
    ReassignmentPlan,
    TopicPartition,
    is_topic_name,
)
from kadmin.operations.planfiles import plan_file

# names that hold the very delimiters plan_file replaces, quotes, escapes and other scripts
_topics = st.sampled_from(["a", "b.c", "d_e-f", "T.9", 'q",', "r,[", '],null],["', 'x"', "\\",
                           "é", "\x00"]) | st.text(max_size=4)
_moves = st.lists(st.tuples(
    _topics, st.integers(-1, 2**31),
    st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=4, unique=True).map(tuple),
    st.sampled_from(["any", '/d",['])),
    unique_by=lambda m: m[:2], max_size=30)


@given(_moves, st.integers(1, 2), st.booleans())
def test_the_bytes_are_the_documents(moves: list[tuple[str, int, tuple[int, ...], str]],
                                     version: int, log_dirs: bool) -> None:
    """Names a topic may have never need the document; anything else may."""
    plan = ReassignmentPlan(tuple(
        PartitionMove(t, p, r, (d,) * len(r) if log_dirs and p % 2 else None)
        for t, p, r, d in moves), version)
    expected = files.dumps_json(plans.plan_document(plan))
    if moves and not any(m.log_dirs for m in plan.moves) and all(
            is_topic_name(m.topic) for m in plan.moves):
        with mock.patch.object(plans, "plan_document", side_effect=AssertionError):
            assert plan_file(plan) == expected
    assert plan_file(plan) == expected
    assert json.loads(expected) == plans.plan_document(plan)


@pytest.mark.parametrize("plan", [
    ElectionPlan((TopicPartition("b", 0), TopicPartition("a", 3))),
    DeletionPlan(("foo", "bar")), ReassignmentPlan(()),
])
def test_other_plans_are_their_documents(plan: ElectionPlan | DeletionPlan | ReassignmentPlan
                                         ) -> None:
    assert plan_file(plan) == files.dumps_json(plans.plan_document(plan))


def test_plain_moves_build_no_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of plan_file: a million dicts are neither built nor freed."""
    plan = ReassignmentPlan((PartitionMove("b", 0, (3, 1)), PartitionMove("a", 1, (2, 3)),
                             PartitionMove("a", 0, (1,))))
    expected = files.dumps_json(plans.plan_document(plan))

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("plan_document was called")

    monkeypatch.setattr(plans, "plan_document", refused)
    assert plan_file(plan) == expected
    assert expected.splitlines()[3] == b'    {"topic":"a","partition":0,"replicas":[1]},'
