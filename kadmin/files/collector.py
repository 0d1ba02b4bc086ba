"""The garbage collector's policy while kadmin builds millions of containers."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building millions of containers.

    JSON documents and the values made from them hold no reference cycles, yet every few thousand
    allocations the collector would walk all of them again: pausing it makes loading a
    million-partition snapshot about twice as fast. Nested use is fine.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
