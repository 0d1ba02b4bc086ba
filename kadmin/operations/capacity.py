"""``--capacity FILE``: the capacity file read, and parsed by the pure
:mod:`kadmin.balance.capacity`."""

from __future__ import annotations

from pathlib import Path

from kadmin import files
from kadmin.balance.capacity import Capacities, parse_capacities


def read_capacities(path: Path) -> Capacities:
    """``--capacity FILE``: either format (see :mod:`kadmin.balance.capacity`)."""
    return parse_capacities(files.read_json(path), str(path))
