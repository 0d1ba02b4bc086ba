"""Load kadmin's JSON Schemas (the three admin plan files and the cluster snapshot).

The files in the repository's top-level ``schemas/`` folder are the published, authoritative
description of every document kadmin reads; code validates against them instead of restating
them. A wheel carries the same folder as the package data directory ``kadmin/_schemas``
(``force-include`` in pyproject.toml), so that location is tried first and the source tree's
``schemas/`` serves editable installs and test runs.
"""

from __future__ import annotations

import functools
import json
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.protocols import Validator

SUFFIX = ".schema.json"

_STRICT_TYPES = Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool))

KadminValidator = validators.extend(Draft202012Validator, type_checker=_STRICT_TYPES)
"""Draft 2020-12 with one deliberate difference: ``1.0`` is not an integer. JSON Schema calls any
number with a zero fraction an integer, but Kafka's parser refuses ``"partition": 1.0`` and a
float id would leak into znode payloads, so kadmin refuses it at the schema level."""


def _schema_dirs() -> tuple[Traversable, ...]:
    return (files("kadmin") / "_schemas", Path(__file__).resolve().parent.parent / "schemas")


def _file_name(name: str) -> str:
    """``"reassign_partitions"`` and ``"reassign_partitions.schema.json"`` name the same file."""
    return name if name.endswith(SUFFIX) else name + SUFFIX


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``schemas/<name>.schema.json``; raises FileNotFoundError naming every
    place looked in, since a missing schema is a broken installation, not bad input."""
    file_name = _file_name(name)
    for folder in _schema_dirs():
        candidate = folder / file_name
        if candidate.is_file():
            schema: dict[str, Any] = json.loads(candidate.read_text(encoding="utf-8"))
            return schema
    looked = ", ".join(str(folder / file_name) for folder in _schema_dirs())
    raise FileNotFoundError(f"JSON Schema {file_name} not found (looked in {looked})")


@functools.cache
def validator(name: str) -> Validator:
    """A compiled validator for one schema, built once per process: compiling costs more than
    validating a small document, and some callers validate millions of entries."""
    schema = load_schema(name)
    KadminValidator.check_schema(schema)
    return KadminValidator(schema)
