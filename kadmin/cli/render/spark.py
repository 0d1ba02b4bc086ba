"""What ``kadmin spark`` shows while its planners run (their summaries are
:mod:`kadmin.cli.render.rebalance`'s)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from kadmin.cli.common import err
from kadmin.events import PlannerEvent, PlannerNote


@contextmanager
def planner_progress() -> Iterator[Callable[[PlannerEvent], None]]:
    """A sink for a Spark planner's events, on stderr: its notes as lines, each stage as a line
    when it ends (tasks and seconds), and on a terminal a bar for the stage under way."""
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("tasks"), TimeElapsedColumn(), console=err, transient=True)
    started: dict[str, tuple[float, TaskID]] = {}

    def emit(event: PlannerEvent) -> None:
        if isinstance(event, PlannerNote):
            bar.console.print(event.text, markup=False)
            return
        if event.stage not in started:
            started[event.stage] = (time.monotonic(), bar.add_task(event.stage, total=None))
        begun, task = started[event.stage]
        if event.finished:
            bar.remove_task(task)
            bar.console.print(f"{event.stage}: {event.total} task(s) in "
                              f"{time.monotonic() - begun:.1f} s", markup=False)
            return
        if event.total:
            if err.is_terminal and not bar.live.is_started:
                bar.start()
            bar.update(task, completed=event.done, total=event.total)

    try:
        yield emit
    finally:
        if bar.live.is_started:  # never started (an input error first): no stray blank line
            bar.stop()
