"""Ctrl-C and SIGTERM end a long-running command's block quietly, whatever it is doing."""

from __future__ import annotations

import signal
import threading

import pytest

from kadmin.stop_signals import STOP_SIGNALS, until_stop_signal


@pytest.mark.parametrize("stop", STOP_SIGNALS)
def test_a_stop_signal_ends_the_block_quietly_and_restores_the_handlers(
        stop: signal.Signals) -> None:
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    cleaned = []
    with until_stop_signal():
        try:
            signal.raise_signal(stop)
            pytest.fail(f"{stop.name} did not end the block")
        finally:
            cleaned.append(stop)
    assert cleaned == [stop]
    assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == before


def test_a_signal_while_the_main_thread_holds_a_lock_still_ends_the_block() -> None:
    """The hang CI met: a handler that set a threading.Event deadlocked when the signal came
    while the main thread held that Event's lock (inside Event.wait). Here the main thread holds
    exactly that lock when the signal arrives."""
    event = threading.Event()
    with until_stop_signal(), event._cond:
        signal.raise_signal(signal.SIGTERM)
        pytest.fail("SIGTERM did not end the block")
    assert event._cond.acquire(blocking=False)
    event._cond.release()


def test_other_exceptions_pass_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(ValueError, match="boom"), until_stop_signal():
        raise ValueError("boom")
    assert signal.getsignal(signal.SIGTERM) == before
