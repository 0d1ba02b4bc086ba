"""Minimal-movement balancing (docs/balancing.md): the fewest replica moves that balance
replicas over the target brokers, then the topics as even as those moves allow, then the
fewest reorderings that balance preferred leaders. Pure functions over plain data: no file, no
ZooKeeper, no Spark, no terminal. One front door: an :class:`objective.Objective` built once
from the request, and the stages of :mod:`.stages` that both planners run, on one machine
(:func:`rebalance.plan`, ``kadmin plan rebalance``) and over chunks of topics in Spark
(:func:`chunks.plan`, ``kadmin spark rebalance``).

What is asked, and the order of the work:

- :mod:`.objective`     the goals of one rebalance (replicas, leaders, racks, capacity, bytes, topics, limits)
- :mod:`.stages`        the stages in order (replicas -> topics -> cut -> leaders), run by both planners
- :mod:`.rebalance`     the front door on one machine; also ``--balance bytes`` and ``--replication-factor``
- :mod:`.machine`       the stages over the whole table (what ``plan rebalance`` runs)
- :mod:`.result`        what a one-machine rebalance returns
- :mod:`.chunks`        the stages over chunks of topics: the rounds the Spark driver runs
- :mod:`.driver`        the driver's view of the chunks: their counts, round after round
- :mod:`.part`          one chunk as a Spark task holds it, and the steps and questions it answers
- :mod:`.chunk_topics`  the topic stage over chunks: count step, prices, certificate, what it proves
- :mod:`.chunk_racks`   racks over chunks: the whole's rack-kept fewest moves, split, each chunk exact
- :mod:`.quotas`        one quota shared out over the chunks, round after round

The problem and its bounds:

- :mod:`.table`         the partitions flattened into parallel lists
- :mod:`.scope`         which brokers a rebalance targets, and their racks
- :mod:`.held`          partitions left as they are around unregistered targets
- :mod:`.targets`       balanced end states, groups and quotas, the closed-form fewest moves
- :mod:`.shares`        the one-machine quotas: replicas per broker, ranges with and without racks, leaders
- :mod:`.capacity`      broker capacities (``--capacity``) parsed, shares and use of capacity
- :mod:`.bound`         the lower bound of replica moves every command prints
- :mod:`.metrics`       the figures of balance (spreads, moves, leader changes)

Replicas and racks:

- :mod:`.flow`          min-cost balancing by successive shortest paths (the search both problems share)
- :mod:`.replicas`      which replicas move, and where: the fewest moves that meet a quota
- :mod:`.racks`         racks of unequal size: the end state, the racks kept, the rack-level program
- :mod:`.across`        the replica plan across racks of unequal size (exact programs, then the search)
- :mod:`.realise`       reaching given counts per broker with the fewest moves, racks kept (min-cost flow)
- :mod:`.classes`       racks kept exactly over classes of partitions: fewest moves, then topic spread
- :mod:`.classflow`     the class program's blocks: the linear program, a class's flow, the topic program
- :mod:`.weighted`      bytes per broker instead of replica counts (``--balance bytes``)
- :mod:`.factor`        replication factor changes with the fewest moves

Topics:

- :mod:`.topics`        the local search that spreads each topic among plans of the fewest moves
- :mod:`.evenness`      every topic even: the exact program, and the topic stage on one machine
- :mod:`.spreads`       topic spreads at any size, and the certificate's lower bound
- :mod:`.aggregate`     the topic x broker program that decides the least worst spread
- :mod:`.netflow`       a network linear program solved as a min-cost flow (OR-tools)

Leaders and partial plans:

- :mod:`.leaders`       the fewest leader changes that meet a leadership quota, by reordering
- :mod:`.demote`        leadership off some brokers (``kadmin plan demote``)
- :mod:`.replace`       brokers replaced one for one, each replica in its list's place (``plan replace``)
- :mod:`.budget`        the most useful part of a plan within a budget of moves
- :mod:`.cut`           what ``--max-moves`` and ``--max-leader-changes`` keep, on one machine and per chunk
"""
