"""Ctrl-C and SIGTERM for the commands that run until the operator stops them."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
POLL_SECONDS = 0.5


class StopRequested(BaseException):
    """SIGINT or SIGTERM arrived; a BaseException like KeyboardInterrupt, so that no
    ``except Exception`` on the way swallows it."""


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise StopRequested(signal.Signals(signum).name)


@contextlib.contextmanager
def until_stop_signal() -> Iterator[None]:
    """Run the block until SIGINT or SIGTERM, which end it quietly (the cleanup of the ``with``
    statements inside runs as for any exception); other exceptions pass, and the previous
    handlers are back once the block is left.

    The handler raises instead of setting a ``threading.Event``: Python runs it in the main
    thread between two bytecodes, possibly while that thread holds the Event's own lock inside
    ``Event.wait``, and ``Event.set`` then deadlocks. CI met it as a ``kadmin zk serve`` that
    SIGTERM never stopped. Raising takes no lock. Must be entered in the main thread.
    """
    previous = {signum: signal.signal(signum, _raise) for signum in STOP_SIGNALS}
    try:
        yield
    except StopRequested:
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Inside :func:`until_stop_signal`: a stop signal arriving in this block is raised when the
    block ends, not in the middle of it.

    For what must not be cut in two, such as a console print: rich writes and flushes its
    buffer and only then empties it, so a stop raised between the two leaves the line in the
    buffer, and the next print (``sandbox stopped``) writes it a second time. CI met it."""
    arrived: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, _: arrived.append(signum))
                for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if arrived:
        raise StopRequested(signal.Signals(arrived[0]).name)


def sleep_while(condition: Callable[[], bool]) -> None:
    """Sleep in short steps while ``condition`` holds, inside :func:`until_stop_signal`.

    Short steps, not one blocking wait (``pause``, ``waitpid``): a signal that lands after
    Python last looked for pending signals but before the blocking call starts is only handled
    once that call returns, which for an endless wait is never."""
    while condition():
        time.sleep(POLL_SECONDS)
