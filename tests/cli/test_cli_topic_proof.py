"""What `kadmin plan rebalance` says of its worst topic spread:
proven the least when it is, and otherwise how far from proven, in words and in --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_goals import worst_topic_spread
from test_cli_rebalance import applied, cluster, write

from kadmin.balance import evenness
from kadmin.placement import PlacementOptions, place
from kadmin.synthetic import synthetic_cluster


def grown(tmp_path: Path) -> tuple[dict, Path]:
    """20 brokers balanced by placement (50 topics of 10 partitions, RF 3), 4 just added."""
    old = synthetic_cluster(brokers=20, topics=50, partitions=10, replication_factor=3, seed=1)
    placed = place(old.topics, sorted(old.topics), [old.brokers[b] for b in sorted(old.brokers)],
                   PlacementOptions())
    doc = cluster(list(range(24)), {t: [list(parts[p]) for p in sorted(parts)]
                                    for t, parts in placed.items()})
    return doc, write(tmp_path, doc)


def test_a_spread_the_programs_do_not_prove_is_said_with_its_gap(kadmin, tmp_path,
                                                                  monkeypatch):
    """The exact programs switched off, the local search's spread stands above the bound: the
    summary says it is not proven and how low any plan of these moves could go."""
    monkeypatch.setattr(evenness, "DEFAULT_LIMIT", 0)
    monkeypatch.setattr(evenness, "AGGREGATE_LIMIT", -1)
    doc, path = grown(tmp_path)
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--out", "p.json")
    assert run.code == 0, run.err
    spread = worst_topic_spread(applied(doc, tmp_path / "p.json"), list(range(24)))
    assert (f"worst topic spread {spread}: what the search reached, not proven the least (no "
            f"plan of these moves goes below 2)") in run.out
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--out", "q.json", "--json")
    goal = json.loads(run.out)["topic_goal"]
    assert goal["exact"] is False and goal["least"] == 2 < goal["spread"] == spread


@pytest.mark.parametrize("json_out", [False, True])
def test_the_same_cluster_is_proven_by_the_topic_broker_program(kadmin, tmp_path,
                                                                json_out):
    """With the programs on (the default) the same cluster's spread is proven the least."""
    doc, path = grown(tmp_path)
    run = kadmin("plan", "rebalance", "--cluster", str(path), "--out", "p.json",
                 *(["--json"] if json_out else []))
    assert run.code == 0, run.err
    spread = worst_topic_spread(applied(doc, tmp_path / "p.json"), list(range(24)))
    if json_out:
        goal = json.loads(run.out)["topic_goal"]
        assert goal["exact"] is True and goal["least"] == goal["spread"] == spread
    else:
        assert f"worst topic spread {spread}: the least any plan of these moves reaches" in run.out
        assert "not proven" not in run.out
