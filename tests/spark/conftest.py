"""The Spark session every Spark test shares: local[2], as on a 2-core CI machine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from kadmin.spark.session import spark_session


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with spark_session("local[2]") as session:
        yield session
