"""Znode paths: a state znode's path names its partition back, and nothing else does."""

from __future__ import annotations

import pytest

from kadmin.model import TopicPartition
from kadmin.zk import paths


def test_a_state_path_names_its_partition() -> None:
    assert paths.state_partition(paths.partition_state("web.logs_2", 17)) == TopicPartition(
        "web.logs_2", 17)


@pytest.mark.parametrize("path", [
    paths.partition("orders", 0), paths.topic("orders"), paths.broker(1),
    "/brokers/topics/orders/partitions/x/state", "/brokers/topics/orders/partitions/-1/state",
    "/other/topics/orders/partitions/0/state", "/brokers/topics/orders/parts/0/state",
    "/brokers/topics/orders/partitions/0/state/extra"])
def test_other_paths_name_no_partition(path: str) -> None:
    assert paths.state_partition(path) is None
