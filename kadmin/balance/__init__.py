"""Minimal-movement balancing (spec section 7): the fewest replica moves that balance replicas
over the target brokers, then the fewest reorderings that balance preferred leaders. Pure
functions over plain data; the same functions run on one machine (``kadmin plan rebalance``)
and on chunks of topics in Spark."""

from kadmin.balance.rebalance import Limits, Rebalance, leader_quota, rebalance, replica_quota
from kadmin.balance.table import PartitionTable

__all__ = ["Limits", "PartitionTable", "Rebalance", "leader_quota", "rebalance", "replica_quota"]
