"""The plan folder, kadmin's one owner of its format: numbered batch files (``batch-00001.json``...,
each a Kafka reassignment file whose bytes are exactly one ``/admin/reassign_partitions``
payload) plus ``manifest.json``, which lists them in order with the planner's figures.

Written by the Spark planners (``kadmin spark plan``/``rebalance``) through :func:`write_folder`,
read by every command that takes ``--plan``/a plan file (:func:`plan_folder`,
:func:`batch_files`). The folder appears atomically: everything is written into a hidden temp
sibling (manifest last) that is renamed at the end, and removed on any failure."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from kadmin import files, plans
from kadmin.jsontext import shown
from kadmin.model import (
    InvalidInput,
    TopicPartition,
)
from kadmin.zk import codec

MANIFEST_FILE = "manifest.json"


MANIFEST_VERSION = 1


WINDOW_ENTRIES = 64_000
"""Entries the driver batches at a time (then carries the open batch into the next window)."""


ENVELOPE = len(codec.REASSIGNMENT_PREFIX) + len(codec.REASSIGNMENT_SUFFIX)
"""Bytes of a reassignment znode around its list of entries."""


def batch_file_name(number: int) -> str:
    return f"batch-{number:05d}.json"


@dataclass(frozen=True)
class BatchFile:
    file: str
    partitions: int
    bytes: int
    """Size of the file, which is exactly the size of the znode it becomes."""


def manifest_document(batches: Sequence[BatchFile], **figures: Any) -> dict[str, Any]:
    """A manifest.json document: the format's version and kind, the batch files in order, then
    the planner's own figures."""
    return {"version": MANIFEST_VERSION, "kind": "reassign",
            "batches": [asdict(b) for b in batches], **figures}


class Documented(Protocol):
    """A planner's manifest: the batch files it lists, and its JSON document."""

    @property
    def batches(self) -> Sequence[BatchFile]: ...

    def document(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=Documented)


def write_folder(out_dir: Path, records: Iterable[Any],
                 manifest: Callable[[Sequence[BatchFile], Sequence[Any]], M], *,
                 batch_size: int, max_znode_bytes: int, force: bool) -> M:
    """A new plan folder, atomically: the batch files cut from ``records`` (see
    :func:`write_batches`), then ``manifest`` (made of the batch files and the other records)
    as manifest.json."""
    with files.atomic_dir(out_dir, marker=MANIFEST_FILE, force=force) as folder:
        written, trailers = write_batches(records, folder, batch_size, max_znode_bytes)
        result = manifest(written, trailers)
        files.atomic_write_json(folder / MANIFEST_FILE, result.document())
    return result


def write_batches(records: Iterable[Any], folder: Path, batch_size: int, max_znode_bytes: int
                  ) -> tuple[list[BatchFile], list[Any]]:
    """Stream encoded reassignment entries in plan order (plain tuples of them), cut them with
    ``plans.batches``, write each batch as soon as it is final: a greedy cut restarted at a
    batch boundary cuts the rest exactly as the uninterrupted run, so memory is one window.
    Records that are not plain tuples of entries (a planner's totals) are returned in order."""
    written: list[BatchFile] = []
    trailers: list[Any] = []
    window: list[bytes] = []

    def cut(final: bool) -> list[bytes]:
        """Write the window's final batches; return the entries of the one still open."""
        batches = plans.batches(window, len, ENVELOPE, batch_size, max_znode_bytes,
                                label=_entry_label)
        done = len(batches) if final else len(batches) - 1
        for batch in batches[:done]:
            written.append(write_batch(folder, len(written) + 1, batch))
        return list(batches[done]) if done < len(batches) else []

    for record in records:
        if type(record) is not tuple:  # a NamedTuple or dataclass of totals
            trailers.append(record)
        else:
            window.extend(record)
            if len(window) >= WINDOW_ENTRIES:
                window = cut(final=False)
    cut(final=True)
    return written, trailers


def _entry_label(entry: bytes) -> TopicPartition:
    return codec.decode_reassignment(codec.REASSIGNMENT_PREFIX + entry
                                     + codec.REASSIGNMENT_SUFFIX)[0].tp


def write_batch(folder: Path, number: int, entries: Sequence[bytes]) -> BatchFile:
    """Batch file ``number`` of a folder: exactly the znode payload (a Kafka reassignment file, compact)."""
    name = batch_file_name(number)
    data = codec.REASSIGNMENT_PREFIX + b",".join(entries) + codec.REASSIGNMENT_SUFFIX
    with (folder / name).open("xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return BatchFile(name, len(entries), len(data))


# --- reading ------------------------------------------------------------------------------------


def plan_folder(path: Path) -> Path | None:
    """The manifest of a plan folder, given as the folder or as its manifest.json; None for a
    plan file."""
    if path.is_dir():
        if not (path / MANIFEST_FILE).exists():
            raise InvalidInput(f"{path} is a folder, expected a file (or a kadmin spark output "
                               f"folder, which holds {MANIFEST_FILE})")
        return path / MANIFEST_FILE
    return path if path.name == MANIFEST_FILE else None


def batch_files(manifest: Path) -> list[Path]:
    """The batch files a manifest lists, in order: plain names of files in its folder, each
    once, and every batch file of the folder listed (the manifest and the folder agree, or it is
    an input error naming the file)."""
    return list(listed_batches(manifest))


def listed_batches(manifest: Path) -> dict[Path, int | None]:
    """:func:`batch_files` with the partitions the manifest says each holds (None: a bare
    name, as older manifests list them)."""
    doc = files.read_json(manifest)
    names = doc.get("batches") if isinstance(doc, dict) else None
    if not isinstance(names, list):  # empty: the cluster was already balanced
        raise InvalidInput(f"{manifest}: $.batches must list the batch files")
    out: dict[Path, int | None] = {}
    for index, entry in enumerate(names):
        name = entry.get("file") if isinstance(entry, dict) else entry
        where = f"{manifest}: $.batches[{index}]"
        if not isinstance(name, str):
            raise InvalidInput(f"{where} is not a file name")
        if name in ("", ".", "..", MANIFEST_FILE) or Path(name).name != name or "\\" in name:
            raise InvalidInput(f"{where}: {name!r} is not a batch file of the folder (a plain "
                               "file name inside it)")
        partitions = entry.get("partitions") if isinstance(entry, dict) else None
        if partitions is not None and (type(partitions) is not int or partitions < 0):
            raise InvalidInput(f"{where}.partitions: {shown(partitions)} is not a partition count")
        path = manifest.parent / name
        if path in out:
            raise InvalidInput(f"{where}: {name} is listed twice")
        out[path] = partitions
    unlisted = sorted(p.name for p in _folder_batches(manifest.parent) if p not in out)
    if unlisted:
        raise InvalidInput(f"{manifest.parent}: {len(unlisted)} batch file(s) in the folder are "
                           f"not in {MANIFEST_FILE} (the first {unlisted[0]}): the folder and "
                           "its manifest disagree")
    return out


def _folder_batches(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir()
                if p.name.endswith(".json") and p.name != MANIFEST_FILE
                and not p.name.startswith(".") and not p.name.endswith(".journal.json")
                and not p.name.endswith(".rollback.json")]
    except OSError as exc:
        raise InvalidInput(f"{folder}: cannot list the folder ({exc.strerror})") from None


def check_count(batch: Path, listed: int | None, found: int) -> None:
    """The partitions a batch file holds must be those its manifest entry counts."""
    if listed is not None and listed != found:
        raise InvalidInput(f"{batch}: {found} partition(s), where {MANIFEST_FILE} says {listed}")
