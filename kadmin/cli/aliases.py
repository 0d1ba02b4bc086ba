"""The spellings options had before kadmin spoke one grammar, kept working and
hidden from help: scripts written for them still run.

Each old spelling is a hidden copy of the option it was renamed to, under the old name: the
same type, default, checks and destination, so ``kadmin sandbox --brokers 6`` is
``kadmin sandbox --broker-count 6``. An old spelling whose unit changed too is a hidden
parameter of its command instead (``sandbox``'s and ``demo``'s ``--latency-ms``), and a bare
argument that became an option stays a hidden argument (``plan stats FILE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from copy import copy
from typing import Any

OLD_SPELLINGS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "sandbox": {"--broker-count": ("--brokers",), "--topic-count": ("--topics",),
                "--rack-count": ("--racks",)},
    "demo": {"--broker-count": ("--brokers",), "--topic-count": ("--topics",),
             "--rack-count": ("--racks",), "--out": ("--out-dir",)},
    "elect": {"--all-topics": ("--all",)},
    "throttle clear": {"--all-throttles": ("--all",)},
    "throttle set": {"--throttle": ("--rate",)},
}
"""Command (its words after ``kadmin``) -> option -> the old names of that option."""


def add_old_spellings(top: Any, name: str) -> None:
    """Give every renamed option of ``top`` (the Click command Typer builds for the command
    ``name`` after ``kadmin``) a hidden copy under its old names, and leave hidden arguments
    out of the usage lines."""
    _hide_arguments(top)
    for path, renamed in OLD_SPELLINGS.items():
        first, *rest = path.split()
        if first != name:
            continue
        command = top
        for word in rest:
            command = command.commands[word]
        for new, old in renamed.items():
            option = next(p for p in command.params if new in p.opts)
            alias = copy(option)
            alias.opts, alias.secondary_opts, alias.hidden = list(old), [], True
            command.params.append(alias)


def _hide_arguments(command: Any) -> None:
    """Click hides an argument from the help's list but still names it in ``Usage:``."""
    for sub in getattr(command, "commands", {}).values():
        _hide_arguments(sub)
    for param in command.params:
        if param.param_type_name == "argument" and param.hidden:
            param.get_usage_pieces = lambda ctx: []
