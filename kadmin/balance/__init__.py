"""Minimal-movement balancing (docs/balancing.md): the fewest replica moves that balance replicas
over the target brokers, then the fewest reorderings that balance preferred leaders. Pure
functions over plain data; the same functions run on one machine (``kadmin plan rebalance``)
and on chunks of topics in Spark.

``table`` flattens the partitions, ``targets`` states the balanced end state and the lower bound,
``flow`` is the search both problems share, ``replicas`` and ``leaders`` are those problems,
``rebalance`` runs them in order, ``factor`` changes replication factors, ``budget`` cuts partial
plans, ``scope`` checks the target brokers, ``metrics`` reports the figures, ``demote`` is the
leader problem with some brokers barred from leading (``kadmin plan demote``); ``quotas`` and
``chunks`` split one quota over chunks of topics and run the rounds the Spark rebalancer runs;
``classes`` plans racks exactly over classes of interchangeable partitions (the fewest moves
keeping racks, then the least worst topic spread at those moves).
"""
