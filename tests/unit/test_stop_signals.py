"""Ctrl-C and SIGTERM end a long-running command's block quietly, whatever it is doing."""

from __future__ import annotations

import io
import signal
import threading

import pytest
from rich.console import Console

from kadmin.stop_signals import STOP_SIGNALS, held, until_stop_signal


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


@pytest.mark.parametrize("stop", STOP_SIGNALS)
def test_a_stop_signal_in_a_held_block_ends_the_block_only_once_the_held_part_is_done(
        stop: signal.Signals) -> None:
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    steps = []
    with until_stop_signal():
        with held():
            signal.raise_signal(stop)
            steps.append("held part finished")
        pytest.fail(f"{stop.name} was lost by the held block")
    assert steps == ["held part finished"]
    assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == before


def test_a_print_interrupted_after_its_write_is_not_written_again() -> None:
    """The CI failure: rich writes its buffer, then empties it; a stop raised between the two
    left the sandbox's last line in the buffer, and ``sandbox stopped`` wrote it again. The
    signal lands exactly there (on the flush after the write)."""

    class StopOnFlush(io.StringIO):
        def flush(self) -> None:
            super().flush()
            if "try:" in self.getvalue() and not armed:
                armed.append(True)
                signal.raise_signal(signal.SIGTERM)

    armed: list[bool] = []
    file = StopOnFlush()
    console = Console(file=file, width=200)
    with until_stop_signal(), held():
        console.print("try: kadmin status", markup=False)
    console.print("sandbox stopped", markup=False)
    assert armed and file.getvalue() == "try: kadmin status\nsandbox stopped\n"
