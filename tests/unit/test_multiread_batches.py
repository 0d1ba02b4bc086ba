"""The cut of a stream of reads into multiRead requests (pure): every read once, in order; no
request over MAX_OPS reads or REQUEST_BYTES; no answer planned over ANSWER_BYTES unless it is a
single read; reads of unknown size start one per request and grow with the answers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kadmin.zk import multiread
from kadmin.zk.multiread import Op, _Batcher

KNOWN = st.lists(st.tuples(st.text("abc/", min_size=1, max_size=300),
                           st.integers(0, 1_100_000)), max_size=600)


def planned(op: Op) -> int:
    return multiread._GET_DATA_ANSWER + (op.size or 0)


@given(KNOWN)
def test_reads_of_known_size_are_cut_within_every_bound(reads: list[tuple[str, int]]) -> None:
    requests = [(Op("/" + path, size=size), i) for i, (path, size) in enumerate(reads)]
    batches = list(_Batcher().batches(iter(requests)))
    assert [r for batch in batches for r in batch] == requests
    for batch in batches:
        assert 1 <= len(batch) <= multiread.MAX_OPS
        assert (len(batch) == 1 or sum(planned(op) for op, _ in batch) <= multiread.ANSWER_BYTES)
        assert sum(multiread._REQUEST + 3 * len(op.path) for op, _ in batch) \
            <= max(multiread.REQUEST_BYTES, multiread._REQUEST + 3 * len(batch[0][0].path))


@given(st.lists(st.integers(0, 300_000), min_size=1, max_size=2_000))
def test_unknown_sizes_grow_from_one_read_with_the_answers(sizes: list[int]) -> None:
    """Answers arrive between batches here: each batch holds at most twice the reads answered
    before it, and once a payload was seen the batch plans for it."""
    batcher = _Batcher()
    requests = iter([(Op(f"/t{i}"), size) for i, size in enumerate(sizes)])
    answered = 0
    largest = 0
    for batch in batcher.batches(requests):
        assert len(batch) <= max(1, 2 * answered)
        assert len(batch) == 1 or len(batch) * (multiread._GET_DATA_ANSWER + largest) \
            <= multiread.ANSWER_BYTES
        batcher.saw(size for _, size in batch)
        answered += len(batch)
        largest = max([largest, *(size for _, size in batch)])
    assert answered == len(sizes)
