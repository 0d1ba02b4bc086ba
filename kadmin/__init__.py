"""kadmin: plan, validate and execute Kafka admin operations through ZooKeeper."""

__version__ = "0.1.0"
