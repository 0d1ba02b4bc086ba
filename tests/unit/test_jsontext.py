"""The strict parser's positions: ``loads_located`` reads exactly what ``loads`` reads, refuses
exactly what it refuses (same words, same place), and every position it records is where that
value starts in the text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kadmin import jsontext
from kadmin.jsontext import (
    DuplicateKey,
    Positions,
    line_columns,
    loads,
    loads_counting,
    loads_located,
)

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(
    allow_nan=False, allow_infinity=False)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=4), max_leaves=12)
spaces = st.sampled_from(["", " ", "\n", "\r\n", "\t ", "\n  "])


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A JSON text with odd but legal whitespace everywhere the walk of the top levels looks."""
    doc = draw(st.dictionaries(st.text(max_size=4), st.lists(values, max_size=5) | values,
                               max_size=4) | values)
    if not isinstance(doc, dict):
        return draw(spaces) + json.dumps(doc) + draw(spaces)

    def array(items: list[Any]) -> str:
        if not items:
            return "[" + draw(spaces) + "]"
        return "[" + ",".join(draw(spaces) + json.dumps(v) + draw(spaces) for v in items) + "]"

    members = [draw(spaces) + json.dumps(k) + draw(spaces) + ":" + draw(spaces)
               + (array(v) if isinstance(v, list) else json.dumps(v)) + draw(spaces)
               for k, v in doc.items()]
    return draw(spaces) + "{" + (",".join(members) or draw(spaces)) + "}" + draw(spaces)


def outcome(parse: Any, text: str) -> tuple[str, object]:
    try:
        return "value", parse(text)
    except (json.JSONDecodeError, ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@given(documents())
def test_the_recorded_positions_are_where_each_value_starts(text: str) -> None:
    value, positions = loads_located(text)
    assert value == loads(text)
    decoder = json.JSONDecoder()
    assert decoder.raw_decode(text, positions.root)[0] == value
    if isinstance(value, dict):
        assert set(positions.members) == set(value)
        for key, start in positions.members.items():
            assert decoder.raw_decode(text, start)[0] == value[key]
            if isinstance(value[key], list):
                starts = positions.elements[key]
                assert [decoder.raw_decode(text, s)[0] for s in starts] == value[key]


@given(documents(), st.data())
def test_a_damaged_text_is_refused_in_the_same_words_at_the_same_place(text: str,
                                                                       data: st.DataObject
                                                                       ) -> None:
    """Cut, doubled or stray characters anywhere: the outcome of both parsers is the same."""
    at = data.draw(st.integers(0, len(text)))
    damage = data.draw(st.sampled_from(["cut", "insert", "delete"]))
    if damage == "cut":
        text = text[:at]
    elif damage == "insert":
        text = text[:at] + data.draw(st.sampled_from([",", "]", "}", "{", "[", '"', ":", "x",
                                                      "NaN", "1"])) + text[at:]
    else:
        text = text[:at] + text[at + 1:]
    expected = outcome(loads, text)
    got = outcome(lambda t: loads_located(t)[0], text)
    if expected[0] == "DuplicateKey":  # both name a repeated key; located may meet another first
        assert got[0] == "DuplicateKey"
    else:
        assert got == expected


def keys_in(value: object) -> int:
    """Every key of every object in ``value``."""
    if isinstance(value, dict):
        return len(value) + sum(map(keys_in, value.values()))
    return sum(map(keys_in, value)) if isinstance(value, list) else 0


def colons_in_strings(value: object) -> int:
    if isinstance(value, dict):
        return sum(k.count(":") + colons_in_strings(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(map(colons_in_strings, value))
    return value.count(":") if isinstance(value, str) else 0


@given(documents(), st.data())
def test_counting_reads_what_loads_reads_and_counts_every_key(text: str, data: st.DataObject
                                                              ) -> None:
    """Without repeats, each unchecked member's count is its keys plus the colons of its
    strings: exactly its keys when no string holds one (the proof the snapshot reader uses)."""
    value = loads(text)
    unchecked = data.draw(st.sets(st.sampled_from(sorted(value)))) if isinstance(
        value, dict) and value else set()
    got, colons = loads_counting(text, unchecked)
    assert got == value
    assert set(colons) == unchecked
    for key in unchecked:
        assert colons[key] == keys_in(value[key]) + colons_in_strings(value[key])


@given(documents(), st.data())
def test_counting_refuses_what_loads_refuses(text: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(text)))
    text = text[:at] + data.draw(st.sampled_from([",", "]", "}", "{", '"', ":", "NaN", "1",
                                                  '"k":1,'])) + text[at:]
    expected = outcome(loads, text)
    if expected[0] == "value":
        return
    assert outcome(lambda t: loads_counting(t, ["", "0", "a", "k"])[0], text) == expected


@pytest.mark.parametrize(("text", "member", "keys"), [
    ('{"t":{"a":{"0":1,"0":2}},"u":1}', "t", 2),     # a repeat deep inside: one key lost
    ('{"t":{"a":1,"a":2}}', "t", 1),
    ('{"t":[{"x":1},{"x":1,"x":2}]}', "t", 2),
])
def test_a_repeat_in_an_unchecked_member_shows_in_its_count(text: str, member: str,
                                                            keys: int) -> None:
    """Parsed as json.loads parses it (the last value wins), with more colons than keys;
    loads refuses it."""
    value, colons = loads_counting(text, [member])
    assert keys_in(value[member]) == keys < colons[member]
    with pytest.raises(DuplicateKey):
        loads(text)


@pytest.mark.parametrize("text", [
    '{"":null,"0":[],""00":[]}',             # hypothesis found it: a root key repeated, then junk
    '{"a":{"b":1,"b":2},"c":[}',              # a member's key repeated, then junk
    '{"p":[{"x":1,"x":2}],"q":1 "r":2}',      # an entry's key repeated, then junk
])
def test_a_repeated_key_before_a_syntax_error_is_the_syntax_error_as_json_says(
        text: str) -> None:
    """json checks keys once the whole text parsed: the error further on is what it reports,
    and the located parse reports the same, in the same words."""
    expected = outcome(loads, text)
    assert expected[0] == "JSONDecodeError"
    assert outcome(lambda t: loads_located(t)[0], text) == expected


@pytest.mark.parametrize(("text", "path", "offset"), [
    ('{"a":1,\n "a":2}', "$", 9),                         # the repeated key itself
    ('{"p":[{"x":1},\n {"x":1,"x":2}]}', "$.p[1]", 16),    # where the entry starts
    ('{"v":{"q":{"r":1,"r":2}}}', "$.v.q", 5),              # where the member's value starts
    ('[{"a":[{"b":1,"b":1}]}]', "$[0].a[0]", 0),
])
def test_a_repeated_key_carries_its_place(text: str, path: str, offset: int) -> None:
    with pytest.raises(DuplicateKey) as caught:
        loads_located(text)
    assert (caught.value.path, caught.value.offset) == (path, offset)
    with pytest.raises(DuplicateKey, match=path.replace("$", r"\$").replace("[", r"\[")):
        loads(text)


def test_entry_keys_are_shared_not_copied_per_entry() -> None:
    doc, _ = loads_located('{"p":[{"topic":"a"},{"topic":"b"}]}')
    first, second = (next(iter(entry)) for entry in doc["p"])
    assert first is second


def test_offsets_of_a_path() -> None:
    text = '{"version":1,\n"partitions":[\n {"topic":"a"},\n  {"topic":"b"}]}'
    _, positions = loads_located(text)
    assert positions.offset(()) == 0
    assert positions.offset(("version",)) == 11
    assert positions.offset(("partitions",)) == text.index("[")
    assert positions.offset(("partitions", 1, "replicas", 0)) == text.index('{"topic":"b"}')
    assert positions.offset(("partitions", 7)) == text.index("[")  # no such entry: the array
    assert positions.offset(("other", 1)) == 0             # no such member: the root
    assert Positions(5).offset(("partitions", 0)) == 5


def test_line_columns_count_as_json_errors_do() -> None:
    text = 'ab\n\ncdé\r\nfg'
    offsets = range(len(text) + 1)
    found = line_columns(text, offsets)
    for offset in offsets:
        error = json.JSONDecodeError("x", text, offset)
        assert found[offset] == (error.lineno, error.colno)
    assert line_columns(text, [99, -3]) == {len(text): (4, 3), 0: (1, 1)}


def test_the_module_keeps_one_parser() -> None:
    """Both functions refuse NaN the same way: one rule, two entry points."""
    for parse in (loads, lambda t: loads_located(t)[0], lambda t: loads_counting(t, ["p"])[0]):
        with pytest.raises(jsontext.NotJson):
            parse('{"p":[Infinity]}')
