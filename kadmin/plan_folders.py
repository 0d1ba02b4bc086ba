"""The output folder of ``kadmin spark plan`` / ``kadmin spark rebalance`` as a plan: its
``manifest.json`` names the batch files that together make one reassignment plan."""

from __future__ import annotations

from pathlib import Path

from kadmin import files
from kadmin.model import InvalidInput

MANIFEST = "manifest.json"
"""The file that names the batch files of a Spark planner's output folder."""


def plan_folder(path: Path) -> Path | None:
    """The manifest of a Spark planner's output folder, given as the folder or as its
    manifest.json; None for a plan file."""
    if path.is_dir():
        if not (path / MANIFEST).exists():
            raise InvalidInput(f"{path} is a folder, expected a file (or a kadmin spark output "
                               f"folder, which holds {MANIFEST})")
        return path / MANIFEST
    return path if path.name == MANIFEST else None


def batch_files(manifest: Path) -> list[Path]:
    """The batch files a manifest lists, in order."""
    doc = files.read_json(manifest)
    names = doc.get("batches") if isinstance(doc, dict) else None
    if not isinstance(names, list):  # empty: the cluster was already balanced
        raise InvalidInput(f"{manifest}: $.batches must list the batch files")
    out = []
    for entry in names:
        name = entry.get("file") if isinstance(entry, dict) else entry
        if not isinstance(name, str):
            raise InvalidInput(f"{manifest}: $.batches has an entry that is not a file name")
        out.append(manifest.parent / name)
    return out
