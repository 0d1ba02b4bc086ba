"""What an operator runs, one module each: a request value in, a result value out, used alike by
the command line (:mod:`kadmin.cli`) and the Spark entry points (:mod:`kadmin.spark`).

- :mod:`.source`     the cluster a command reads (snapshot file or ZooKeeper, and partition
                     sizes), its connection
- :mod:`.selection`  which topics and brokers an operation covers
- :mod:`.planfiles`  plan files: the one writer and reader (and :mod:`.folder`, plan folders)
- :mod:`.generate`   placement plans, election and deletion plans
- :mod:`.rebalance`  the fewest-moves rebalance (the request Spark's rebalance takes too)
- :mod:`.demote`     preferred leadership off some brokers
- :mod:`.validate`   plan validate (many plans in one run, a verdict each) and plan stats
- :mod:`.execute`    reassign, verify, elect, topics delete (wrapping :mod:`kadmin.executor`)
- :mod:`.throttle`   replication throttles in force, clearing them, changing their rate
- :mod:`.snapshot`   cluster snapshots
- :mod:`.status`     what ``kadmin status`` reports
- :mod:`.sandbox`    a rehearsal cluster, and :mod:`.demo`, the story ``kadmin demo`` tells

Nothing here prints: warnings go to a ``warn`` callable the caller gives
(:class:`.source.Warn`), progress to an ``emit`` one, and results come back as values for the
caller to render. Reading the cluster and the partition sizes, the execution settings and the
znode limits are the operations' own: the command line only parses options into requests.
"""
