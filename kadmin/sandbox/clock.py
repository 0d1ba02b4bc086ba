"""The simulated controller's time. Replication latency, byte copies and deletion delays run on
it; only the controller's write pacing (one batch of writes per tick) stays in real time.

:class:`ScaledClock` runs ``scale`` times faster than real time, so a rehearsal of hours ends
in seconds (``kadmin sandbox --time-scale 3600``). :class:`ManualClock` moves only when told:
tests drive the controller through time without sleeping or racing it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class ScaledClock:
    """Simulated seconds since the clock was made: real seconds times ``scale``."""

    def __init__(self, scale: float = 1.0) -> None:
        if scale <= 0:
            raise ValueError("the time scale must be positive")
        self.scale = scale
        self._origin = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self._origin) * self.scale

    def real_seconds(self, simulated: float) -> float | None:
        """How long to wait in real time for ``simulated`` seconds to pass (None: until woken)."""
        return max(0.0, simulated) / self.scale

    def on_advance(self, wake: Callable[[], None]) -> None:
        """Real time advances by itself: nobody needs waking."""


class ManualClock(ScaledClock):
    """Time that stands still until :meth:`advance`; every advance wakes the controller."""

    def __init__(self, start: float = 0.0) -> None:
        super().__init__()
        self._now = start
        self._lock = threading.Lock()
        self._wakes: list[Callable[[], None]] = []

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
            wakes = list(self._wakes)
        for wake in wakes:
            wake()

    def real_seconds(self, simulated: float) -> float | None:
        return 0.0 if simulated <= 0 else None

    def on_advance(self, wake: Callable[[], None]) -> None:
        with self._lock:
            self._wakes.append(wake)
