"""`kadmin spark rebalance`'s options in the grammar `plan rebalance` set: the same word and the
same help for the same idea (the runs themselves are in tests/spark)."""

from __future__ import annotations

import re

import pytest


def _option_help(text: str, option: str) -> str:
    """The help of ``option`` in --help (the option's line, then its indented lines), joined."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+(-\w, )?{option}\b", line))
    first = lines[start].strip().split("  ", 1)
    words = [first[1] if len(first) > 1 else ""]
    for line in lines[start + 1:]:
        if not line.strip() or re.match(r"\s{1,4}-", line):
            break
        words.append(line.strip())
    return " ".join(w for w in words if w)


@pytest.mark.parametrize("option", ["--topic-spread", "--capacity", "--max-moves",
                                    "--even-topics"])
def test_spark_rebalance_says_what_plan_rebalance_says(kadmin, monkeypatch, option):
    monkeypatch.setenv("COLUMNS", "200")
    plan = kadmin("plan", "rebalance", "--help")
    spark = kadmin("spark", "rebalance", "--help")
    assert plan.code == spark.code == 0
    assert option in spark.out
    assert _option_help(spark.out, option) == _option_help(plan.out, option)


def test_a_negative_topic_spread_is_refused_before_spark_starts(kadmin, tmp_path):
    run = kadmin("spark", "rebalance", "--cluster", str(tmp_path), "--out", "o",
                 "--topic-spread", "-1")
    assert run.code == 2 and "--topic-spread" in run.err and not (tmp_path / "o").exists()


def test_topic_spread_without_even_topics_is_refused_before_spark_starts(kadmin, tmp_path):
    run = kadmin("spark", "rebalance", "--cluster", str(tmp_path), "--out", "o",
                 "--topic-spread", "1", "--no-even-topics")
    assert run.code == 2 and "--no-even-topics" in run.err and not (tmp_path / "o").exists()
