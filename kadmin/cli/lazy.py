"""Modules a command group imports when one of its commands first uses them, not when the
group is loaded: ``kadmin plan validate`` must not wait for the planners, the renderers of
every other command, kazoo or numpy (start-up is what a pre-commit hook pays on every call)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, executed on its first attribute access (Python's LazyLoader)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:  # as an import does: the package's attribute too (``kadmin.cli.render``)
        setattr(sys.modules[parent], child, module)
    return module
