"""The Spark toolkit both planners share: the session (Spark's own log kept off the terminal),
shipping kadmin to the executors, and the named stages whose tasks are reported as they finish."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

import kadmin
from kadmin.events import PlannerEvent, PlannerNote, StageProgress
from kadmin.spark.failures import executor_imports

Progress = Callable[[PlannerEvent], None]
"""Where a planner reports its stages and findings (the CLI shows them on stderr)."""


class Stages:
    """Runs the driver's Spark actions under a name and reports their tasks as they finish,
    polled from the status tracker (twice a second), so a long action shows it is alive."""

    def __init__(self, sc: SparkContext, progress: Progress | None) -> None:
        self.sc, self.progress = sc, progress
        self.started = 0

    def note(self, text: str) -> None:
        if self.progress is not None:
            self.progress(PlannerNote(text))

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        if self.progress is None:
            yield
            return
        report = self.progress
        self.started += 1
        group = f"kadmin-{self.started}"
        self.sc.setJobGroup(group, stage)
        stop = threading.Event()

        def poll() -> None:
            last = None
            while not stop.wait(0.5):
                now = self._tasks(group)
                if now != last and now[1]:
                    report(StageProgress(stage, *now))
                    last = now

        report(StageProgress(stage, 0, 0))
        watcher = threading.Thread(target=poll, name="kadmin-spark-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            self.sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        done, total = self._tasks(group)
        report(StageProgress(stage, done, total, finished=True))

    def _tasks(self, group: str) -> tuple[int, int]:
        tracker = self.sc.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job_info = tracker.getJobInfo(job_id)
            for stage_id in job_info.stageIds if job_info else ():
                info = tracker.getStageInfo(stage_id)
                # stages that never ran (skipped: their output is cached) do not count
                if info is not None and info.numActiveTasks + info.numCompletedTasks:
                    done += info.numCompletedTasks
                    total += info.numTasks
        return done, total


@contextmanager
def spark_session(master: str | None = "local[*]", verbose: bool = False
                  ) -> Iterator[SparkSession]:
    """The active session, left running; or a new one, stopped at the end.

    ``master`` None leaves the choice to the launcher (spark-submit's ``--master``). Unless
    ``verbose``, a JVM this starts writes its output (log4j's WARN lines and the JVM's own
    notices) to an unnamed temporary file instead of the terminal: kadmin reports the progress
    itself, and errors reach the driver as exceptions anyway. An import that fails on an
    executor leaves the block as one line saying how to ship an environment
    (:func:`~kadmin.spark.failures.executor_imports`)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        with executor_imports():
            yield active
        return
    if (master or "local").startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # local workers must run this interpreter (and see its packages), not `python3` on PATH
        os.environ["PYSPARK_PYTHON"] = sys.executable
    conf = (SparkConf().setAppName("kadmin").set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false"))
    if master:
        conf.setMaster(master)
    with tempfile.TemporaryFile() as log:
        gateway = None if verbose else launch_gateway(
            conf, popen_kwargs={"stdout": log, "stderr": log})
        spark = SparkSession(SparkContext(conf=conf, gateway=gateway))
        spark.sparkContext.setLogLevel("WARN")
        spark.conf.set("spark.sql.shuffle.partitions",
                       str(2 * spark.sparkContext.defaultParallelism))
        try:
            with executor_imports():
                yield spark
        finally:
            spark.stop()


_shipped: set[str] = set()


def ship_kadmin(sc: SparkContext) -> None:
    """Add a zip of this kadmin package to the job so executors import the driver's code."""
    key = sc.applicationId
    if key in _shipped:
        return
    package = Path(kadmin.__file__).resolve().parent
    folder = Path(tempfile.mkdtemp(prefix="kadmin-spark-"))
    atexit.register(shutil.rmtree, folder, True)
    archive = folder / "kadmin.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(package.rglob("*.py")):
            zf.write(path, Path("kadmin") / path.relative_to(package))
    sc.addPyFile(str(archive))
    _shipped.add(key)
