"""reassign --metrics-file without a cluster: what the file says for a sequence of events, a run
that ends by an error (marked finished), one refused before its first event (no file), and the
file rules (a FIFO refused at once; a path that becomes a link mid-run refused, not followed)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kadmin.events import BatchSubmitted, ExecutionPlanned, ThrottleSet, Waiting
from kadmin.model import InvalidInput
from kadmin.progress_metrics import MetricsFile


def values(path: Path) -> dict[tuple[str, str | None], float]:
    return {(s.name, s.labels.get("state")): s.value
            for family in text_string_to_metric_families(path.read_text())
            for s in family.samples}


def test_events_then_an_error_leave_the_file_marked_finished(tmp_path):
    path = tmp_path / "kadmin.prom"
    metrics = MetricsFile(path, "p.json", clock=lambda: 1_000.0)
    metrics(ExecutionPlanned("reassign", 10, 2, 3, already_done=1, bytes_total=500,
                             bytes_done=0, eta=None))
    metrics(BatchSubmitted(1, 3, 4, 200))
    metrics(ThrottleSet(1, 50_000_000, 2, 3))
    metrics(Waiting(1, 1, 6, 10, 0, True, bytes_done=150, bytes_total=500, eta=42.5))
    found = values(path)
    assert found["kadmin_reassign_partitions", "done"] == 6
    assert found["kadmin_reassign_partitions", "remaining"] == 4
    assert found["kadmin_reassign_bytes", "remaining"] == 350
    assert found["kadmin_reassign_batch", None] == 1
    assert found["kadmin_reassign_batches", None] == 3
    assert found["kadmin_reassign_throttle_bytes_per_second", None] == 50_000_000
    assert found["kadmin_reassign_eta_seconds", None] == 42.5
    assert found["kadmin_reassign_last_update_timestamp_seconds", None] == 1_000.0
    assert found["kadmin_reassign_finished", None] == 0
    metrics.close()  # the run ended by an exception: what was written is marked finished
    assert values(path)["kadmin_reassign_finished", None] == 1
    assert values(path)["kadmin_reassign_partitions", "done"] == 6


def test_a_run_refused_before_its_first_event_writes_nothing(tmp_path):
    metrics = MetricsFile(tmp_path / "kadmin.prom", "p.json")
    metrics.close()
    assert not (tmp_path / "kadmin.prom").exists()
    # an election's events (reassign --elect, after the reassignment) are not counted
    metrics = MetricsFile(tmp_path / "elect.prom", "p.json")
    metrics(ExecutionPlanned("elect", 5, 0, 1))
    assert not (tmp_path / "elect.prom").exists()


def test_the_file_rules(tmp_path):
    os.mkfifo(tmp_path / "pipe.prom")
    with pytest.raises(InvalidInput, match="named pipe"):
        MetricsFile(tmp_path / "pipe.prom", "p.json")
    path = tmp_path / "kadmin.prom"
    metrics = MetricsFile(path, "p.json")
    metrics(ExecutionPlanned("reassign", 4, 0, 1))
    assert math.isnan(values(path)["kadmin_reassign_eta_seconds", None])
    (tmp_path / "elsewhere").write_text("kept\n")
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InvalidInput, match="symbolic link"):
        metrics(BatchSubmitted(1, 1, 4))
    assert (tmp_path / "elsewhere").read_text() == "kept\n"
    assert path.is_symlink()
