"""The Spark session every Spark test shares (local[2], as on a 2-core CI machine) and the
small units its jobs are cut into."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from kadmin.operations import folder
from kadmin.spark import pipeline
from kadmin.spark.session import spark_session


@pytest.fixture(autouse=True)
def small_units(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Driver-side sizes, shrunk so that small clusters make many units: 16 KB input splits,
    the test module's ``PARTITIONS_PER_TASK`` (default 800) partitions per sorted Spark
    partition (a rebalance chunk), windows of 50 entries (so open batches are carried from
    window to window)."""
    monkeypatch.setattr(pipeline, "BYTES_PER_SPLIT", 16_384)
    monkeypatch.setattr(pipeline, "PARTITIONS_PER_TASK",
                        getattr(request.module, "PARTITIONS_PER_TASK", 800))
    monkeypatch.setattr(folder, "WINDOW_ENTRIES", 50)


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with spark_session("local[2]") as session:
        yield session
