"""`kadmin plan rebalance --no-even-topics`: the fewest moves and balanced brokers, no topic
looked at (the fastest on large clusters); the default evens topics among those plans."""

from __future__ import annotations

import json
from collections import Counter

from test_cli_goals import kafka_placed, worst_topic_spread
from test_cli_rebalance import applied, write


def test_without_topic_evenness_the_moves_and_the_balance_are_the_same(kadmin, tmp_path):
    """100 topics of RF 1..5 on 8 brokers, 4 added: both objectives make the fewest moves
    (2,000) and balance the brokers; only the default also holds every topic at spread 1."""
    doc = kafka_placed(8, 12, {i: 1 + i % 5 for i in range(100)})
    path = write(tmp_path, doc)
    spreads = {}
    for flag in ("--even-topics", "--no-even-topics"):
        plan = tmp_path / f"p{flag}.json"
        run = kadmin("plan", "rebalance", "--cluster", str(path), "--out", str(plan), flag,
                     "--json")
        assert run.code == 0, run.err
        summary = json.loads(run.out)
        assert summary["replica_moves"] == summary["lower_bound"] == 2000
        assert summary["after"]["replica_spread"] <= 1 and summary["after"]["leader_spread"] <= 1
        after = applied(doc, plan)
        counts = Counter(b for r in after.values() for b in r)
        assert max(counts.values()) - min(counts.values()) <= 1
        assert all(len(set(r)) == len(r) for r in after.values())
        spreads[flag] = worst_topic_spread(after, list(range(12)))
        assert summary["after"]["worst_topic_spread"] == spreads[flag]
        assert (summary["topic_goal"] is None) == (flag == "--no-even-topics")
    assert spreads["--even-topics"] == 1 <= spreads["--no-even-topics"]


def test_topic_spread_and_no_even_topics_are_refused_together(kadmin, tmp_path):
    doc = kafka_placed(11, 12, 3, topics=5)
    run = kadmin("plan", "rebalance", "--cluster", str(write(tmp_path, doc)), "--out", "p.json",
                 "--topic-spread", "1", "--no-even-topics")
    assert run.code == 2
    assert "--topic-spread evens topics out: it does not combine with --no-even-topics" in run.err
    assert not (tmp_path / "p.json").exists()
