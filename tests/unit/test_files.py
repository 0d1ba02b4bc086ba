"""Atomic writes, JSON layout and the one-line errors of reading JSON files."""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import resource
import signal
import stat
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from kadmin import files
from kadmin.model import InvalidInput


def leftovers(folder: Path) -> list[str]:
    """Hidden temp files or folders an interrupted write could leave behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


FILE_SIZE_LIMIT = 1000


def _limited(write: Callable[[], object], report: Connection) -> None:
    # the child: from here on the kernel refuses to grow any file past the limit (EFBIG)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (FILE_SIZE_LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    try:
        write()
        report.send(None)
    except Exception as error:
        report.send(f"{type(error).__name__}: {error}")


def error_under_file_size_limit(write: Callable[[], object]) -> str | None:
    """A real write failure, in a forked child: the file-size limit is per process, and in this
    one it would also stop pytest writing its report to a log file."""
    parent, child = multiprocessing.get_context("fork").Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=_limited, args=(write, child))
    process.start()
    process.join(timeout=60)
    assert process.exitcode == 0
    return parent.recv()


# --- atomic_write_bytes / atomic_write_json -----------------------------------------------------


def test_write_creates_parent_folders_and_the_file(tmp_path: Path) -> None:
    target = tmp_path / "plans" / "deep" / "x.json"
    files.atomic_write_bytes(target, b"hello")
    assert target.read_bytes() == b"hello"
    assert leftovers(target.parent) == []


def test_write_refuses_an_existing_file_unless_forced(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    target.write_bytes(b"old")
    with pytest.raises(InvalidInput) as info:
        files.atomic_write_bytes(target, b"new")
    assert str(info.value) == f"{target} already exists (use --force to overwrite)"
    assert info.value.exit_code == 2
    assert target.read_bytes() == b"old"

    files.atomic_write_bytes(target, b"new", force=True)
    assert target.read_bytes() == b"new"
    assert leftovers(tmp_path) == []


def test_write_refuses_a_folder_even_when_forced(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="is a folder, expected a file name"):
        files.atomic_write_bytes(tmp_path, b"x", force=True)


def test_write_under_a_file_is_invalid_input(tmp_path: Path) -> None:
    (tmp_path / "plans").write_text("not a folder")
    with pytest.raises(InvalidInput, match=r"plans is not a folder"):
        files.atomic_write_bytes(tmp_path / "plans" / "x.json", b"x")


def test_new_files_get_the_umask_permissions_not_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        files.atomic_write_bytes(tmp_path / "x.json", b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x.json").stat().st_mode) == 0o644


def test_a_failed_write_leaves_no_temp_file_and_the_old_file_intact(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    target.write_bytes(b"old")
    error = error_under_file_size_limit(
        lambda: files.atomic_write_bytes(target, b"x" * (10 * FILE_SIZE_LIMIT), force=True))
    assert error == f"OperationFailed: cannot write {target}: File too large"
    assert target.read_bytes() == b"old"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("force", [False, True])
def test_files_written_together_appear_all_or_none(tmp_path: Path, force: bool) -> None:
    """A plan and its rollback: the disk filling up at the second leaves neither (with
    ``force``, both old files as they were)."""
    plan, rollback = tmp_path / "p.json", tmp_path / "p.rollback.json"
    if force:
        plan.write_bytes(b"old plan")
        rollback.write_bytes(b"old rollback")
    error = error_under_file_size_limit(lambda: files.atomic_write_files(
        [(plan, b"p" * 10), (rollback, b"r" * (10 * FILE_SIZE_LIMIT))], force=force))
    assert error == f"OperationFailed: cannot write {rollback}: File too large"
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        ["p.json", "p.rollback.json"] if force else [])
    if force:
        assert (plan.read_bytes(), rollback.read_bytes()) == (b"old plan", b"old rollback")
    files.atomic_write_files([(plan, b"new plan"), (rollback, b"new rollback")], force=True)
    assert (plan.read_bytes(), rollback.read_bytes()) == (b"new plan", b"new rollback")
    assert leftovers(tmp_path) == []


def test_files_written_together_refuse_any_existing_one_first(tmp_path: Path) -> None:
    (tmp_path / "p.rollback.json").write_bytes(b"kept")
    with pytest.raises(InvalidInput, match=r"p\.rollback\.json already exists"):
        files.atomic_write_files([(tmp_path / "p.json", b"plan"),
                                  (tmp_path / "p.rollback.json", b"rollback")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.rollback.json"]


def test_unserialisable_json_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        files.atomic_write_json(tmp_path / "x.json", {"n": float("nan")})
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_json_round_trips(tmp_path: Path) -> None:
    doc = {"version": 1, "partitions": [{"topic": "é", "partition": 0, "replicas": [1, 2]}]}
    files.atomic_write_json(tmp_path / "a.json", doc)
    files.atomic_write_json(tmp_path / "b.json", doc, compact=True)
    assert files.read_json(tmp_path / "a.json") == doc
    assert (tmp_path / "b.json").read_bytes() == (
        b'{"version":1,"partitions":[{"topic":"\xc3\xa9","partition":0,"replicas":[1,2]}]}\n')


# --- atomic_write_dir ---------------------------------------------------------------------------


def test_write_dir_streams_interleaved_files(tmp_path: Path) -> None:
    target = tmp_path / "snap"
    files.atomic_write_dir(target, marker="a.jsonl", chunks=iter([
        ("a.jsonl", b"1\n"), ("b.jsonl", b"x\n"), ("a.jsonl", b"2\n")]))
    assert (target / "a.jsonl").read_bytes() == b"1\n2\n"
    assert (target / "b.jsonl").read_bytes() == b"x\n"
    assert leftovers(tmp_path) == []


def test_write_dir_refuses_an_existing_target_unless_forced(tmp_path: Path) -> None:
    target = tmp_path / "snap"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(InvalidInput, match=r"snap already exists \(use --force to overwrite\)"):
        files.atomic_write_dir(target, [("new.txt", b"new")], marker="old.txt")
    assert (target / "old.txt").exists()

    files.atomic_write_dir(target, [("new.txt", b"new")], marker="old.txt", force=True)
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert leftovers(tmp_path) == []


def test_write_dir_replaces_a_file_when_forced(tmp_path: Path) -> None:
    target = tmp_path / "snap"
    target.write_text("a json snapshot")
    files.atomic_write_dir(target, [("new.txt", b"new")], marker="new.txt", force=True)
    assert (target / "new.txt").read_text() == "new"
    assert leftovers(tmp_path) == []


def test_an_interrupted_folder_never_appears(tmp_path: Path) -> None:
    def chunks() -> Iterator[tuple[str, bytes]]:
        yield "topics.jsonl", b"line\n"
        raise RuntimeError("generator failed half way")

    with pytest.raises(RuntimeError):
        files.atomic_write_dir(tmp_path / "snap", chunks(), marker="topics.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_folder_write_keeps_the_old_folder(tmp_path: Path) -> None:
    target = tmp_path / "snap"
    target.mkdir()
    (target / "old.txt").write_text("old")
    error = error_under_file_size_limit(
        lambda: files.atomic_write_dir(target, [("big", b"x" * (10 * FILE_SIZE_LIMIT))],
                                       marker="old.txt", force=True))
    assert error == f"OperationFailed: cannot write {target}: File too large"
    assert (target / "old.txt").read_text() == "old"
    assert leftovers(tmp_path) == []


# --- JSON layout --------------------------------------------------------------------------------


def test_a_plan_gets_one_partition_per_line() -> None:
    doc = {"version": 1, "partitions": [
        {"topic": "a", "partition": p, "replicas": [p, p + 1]} for p in range(3)]}
    text = files.dumps_json(doc).decode()
    assert text == (
        '{\n'
        '  "version": 1,\n'
        '  "partitions": [\n'
        '    {"topic":"a","partition":0,"replicas":[0,1]},\n'
        '    {"topic":"a","partition":1,"replicas":[1,2]},\n'
        '    {"topic":"a","partition":2,"replicas":[2,3]}\n'
        '  ]\n'
        '}\n')
    assert json.loads(text) == doc


def test_the_one_call_split_is_safe_when_a_string_contains_the_separator() -> None:
    doc = {"partitions": [{"topic": "},{"}, {"topic": "b"}, {"x": [{"a": 1}, {"b": 2}]}]}
    lines = files.dumps_json(doc).decode().splitlines()
    assert lines[2:5] == ['    {"topic":"},{"},', '    {"topic":"b"},', '    {"x":[{"a":1},{"b":2}]}']
    assert json.loads("\n".join(lines)) == doc


def test_layout_of_mixed_and_empty_values() -> None:
    doc = {"empty": {}, "none": [], "scalars": [1, "a", None], "nested": {"t": {"0": [1]}}}
    text = files.dumps_json(doc).decode()
    assert json.loads(text) == doc
    assert '  "empty": {},\n' in text
    assert '    "t": {"0":[1]}\n' in text
    assert files.dumps_json([]) == b"[]\n"
    assert files.dumps_json(7) == b"7\n"


# --- reading ------------------------------------------------------------------------------------


def test_read_json_reads_utf8_with_or_without_bom(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b'{"t": "\xc3\xa9"}')
    (tmp_path / "b.json").write_bytes(b'\xef\xbb\xbf{"t": "\xc3\xa9"}')
    assert files.read_json(tmp_path / "a.json") == {"t": "é"}
    assert files.read_json(tmp_path / "b.json") == {"t": "é"}


@pytest.mark.parametrize(("content", "message"), [
    (b'{"a": 1,\n "b": \xff}', "not UTF-8 (invalid start byte at byte 15)"),
    (b'{"a": 1,\n  "b" 2}', "not valid JSON (Expecting ':' delimiter at line 2 column 7)"),
    (b'{"a": [1, 2}', "not valid JSON (Expecting ',' delimiter at line 1 column 12)"),
    (b'{"a": NaN}', "not valid JSON (NaN is not a JSON value)"),
    (b'{"a": -Infinity}', "not valid JSON (-Infinity is not a JSON value)"),
    # a repeated key: Python would keep the last value and hide the first
    (b'{"version": 1, "version": 2}',
     'not valid JSON (duplicate key "version" in the object at $)'),
    (b'{"partitions": [{"topic": "a", "partition": 0},\n {"topic": "a", "replicas": [1],'
     b' "partition": 1, "replicas": [2]}]}',
     'not valid JSON (duplicate key "replicas" in the object at $.partitions[1])'),
    (b'{"topics": {"my.topic": {"0": [1], "0": [2]}}}',
     'not valid JSON (duplicate key "0" in the object at $.topics["my.topic"])'),
])
def test_read_json_broken_content(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as info:
        files.read_json(path)
    assert str(info.value) == f"{path}: {message}"


def test_equal_keys_in_different_objects_are_no_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}')
    assert files.read_json(path) == {"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}


def test_a_json_lines_record_with_a_repeated_key_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "topics.jsonl"
    path.write_bytes(b'{"topic": "a", "partitions": {}}\n{"topic": "b", "topic": "c"}\n')
    with pytest.raises(InvalidInput) as info:
        list(files.iter_jsonl(path))
    assert str(info.value) == (f'{path}:2: not valid JSON (duplicate key "topic" in the object '
                               "at $)")


def test_read_json_missing_folder_empty(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        files.read_json(tmp_path / "nope.json")
    assert str(info.value) == f"{tmp_path / 'nope.json'}: no such file"
    with pytest.raises(InvalidInput) as info:
        files.read_json(tmp_path)
    assert str(info.value) == f"{tmp_path} is a folder, expected a file"
    (tmp_path / "empty.json").write_bytes(b" \n")
    with pytest.raises(InvalidInput) as info:
        files.read_json(tmp_path / "empty.json")
    assert str(info.value) == f"{tmp_path / 'empty.json'} is empty, expected a JSON document"


@pytest.mark.parametrize(("size", "limit", "shown"), [
    (2000, 1024, "2 KB, over the 1 KB limit"),
    (600, 512, "600 bytes, over the 512 bytes limit"),
    (int(210.4 * files.MB), 10 * files.MB, "210.4 MB, over the 10 MB limit"),
])
def test_read_json_too_large(tmp_path: Path, size: int, limit: int, shown: str) -> None:
    path = tmp_path / "x.json"
    with path.open("wb") as handle:  # sparse: the size is what matters, not the bytes
        handle.truncate(size)
    with pytest.raises(InvalidInput) as info:
        files.read_json(path, max_bytes=limit)
    assert str(info.value) == f"{path} is {shown}"


def test_iter_jsonl_numbers_lines_and_skips_blank_ones(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n\n  \n[2]\n')
    assert list(files.iter_jsonl(path)) == [(1, {"a": 1}), (4, [2])]


def test_iter_jsonl_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":\n')
    with pytest.raises(InvalidInput) as info:
        list(files.iter_jsonl(path))
    assert str(info.value) == f"{path}:2: not valid JSON (Expecting value at column 6)"
    with pytest.raises(InvalidInput, match="no such file"):
        list(files.iter_jsonl(tmp_path / "missing.jsonl"))


def test_iter_jsonl_bounds_a_line_and_the_file(tmp_path: Path) -> None:
    path = tmp_path / "states.jsonl"
    path.write_bytes(b'{"a":1}\n' + b'[' + b'1,' * 60 + b'1]\n')
    with pytest.raises(InvalidInput) as info:
        list(files.iter_jsonl(path, max_line=100))
    assert str(info.value) == f"{path}:2: line longer than 100 bytes, over the limit for one record"
    exact = tmp_path / "exact.jsonl"
    exact.write_bytes(b"[" + b"1" * 98 + b"]\n")  # 100 bytes and its newline: allowed
    assert len(list(files.iter_jsonl(exact, max_line=100))) == 1
    with pytest.raises(InvalidInput) as info:
        list(files.iter_jsonl(path, max_bytes=100))
    assert str(info.value) == f"{path} is 132 bytes, over the 100 bytes limit"


def test_a_snapshot_folder_with_an_endless_line_fails_naming_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kadmin import snapshots

    folder = tmp_path / "snap"
    folder.mkdir()
    (folder / "brokers.json").write_text('{"0": {}}')
    (folder / "topics.jsonl").write_text('{"topic":"t","partitions":{"0":[0]}}\n')
    with (folder / "states.jsonl").open("wb") as handle:  # a line of 8 MB of NULs, no newline
        handle.write(b'{"topic":"t","states":')
        handle.truncate(8 * files.MB)
    monkeypatch.setattr(files.reading, "MAX_JSONL_LINE", files.MB)
    with pytest.raises(InvalidInput) as info:
        snapshots.read_snapshot(folder)
    assert str(info.value) == (f"{folder / 'states.jsonl'}:1: line longer than 1 MB, over the "
                               "limit for one record")


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    """A device never ends and a named pipe blocks its reader until someone writes: both are
    refused by name, the pipe without ever blocking (the FIFO cases through the CLI are in
    tests/safety)."""
    with pytest.raises(InvalidInput) as info:
        files.read_bytes(Path("/dev/zero"))
    assert str(info.value) == "/dev/zero is a device, not a regular file"
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    for read in (files.read_bytes, files.read_json, lambda p: list(files.iter_jsonl(p)),
                 files.require_regular):
        with pytest.raises(InvalidInput) as info:
            read(fifo)
        assert str(info.value) == f"{fifo} is a named pipe (FIFO), not a regular file"
    with pytest.raises(InvalidInput, match="is a folder, expected a file"):
        files.require_regular(tmp_path)


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with files.gc_paused():
        assert not gc.isenabled()
        with files.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), files.gc_paused():
        raise KeyError
    assert gc.isenabled()


# --- names --------------------------------------------------------------------------------------


def test_plan_paths_use_utc() -> None:
    naive = datetime(2026, 11, 22, 4, 5, 0)
    plan, rollback = files.plan_paths("reassign", Path("plans"), naive)
    assert plan == Path("plans/reassign-20261122T040500Z.json")
    assert rollback == Path("plans/reassign-20261122T040500Z.rollback.json")
    paris = datetime(2026, 11, 22, 5, 5, 0, tzinfo=timezone(timedelta(hours=1)))
    assert files.plan_paths("election", Path("out"), paris)[0] == Path(
        "out/election-20261122T040500Z.json")


@pytest.mark.parametrize(("name", "suffix", "expected"), [
    ("plans/x.json", ".rollback.json", "plans/x.rollback.json"),
    ("plans/x.json", ".journal.json", "plans/x.journal.json"),
    ("x", ".rollback.json", "x.rollback.json"),
    ("my.plan.json", ".journal.json", "my.plan.journal.json"),
])
def test_sibling(name: str, suffix: str, expected: str) -> None:
    assert files.sibling(Path(name), suffix) == Path(expected)
