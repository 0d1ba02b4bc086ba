"""Each topic's ``min.insync.replicas`` read live: its config znode, else the brokers' default
(:mod:`kadmin.min_insync` resolves them). One multiRead pass over the topics' config znodes."""

from __future__ import annotations

from collections.abc import Collection

from kazoo.client import KazooClient

from kadmin import min_insync
from kadmin.zk import codec, multiread, paths


def read_min_insync(client: KazooClient, topics: Collection[str]
                    ) -> dict[str, min_insync.MinInsync]:
    """Topic -> (value, source). A config znode that cannot be decoded counts as setting
    nothing (the next source applies, and the source named says which was used)."""
    configs: dict[str, dict[str, str]] = {}
    requests = [(paths.config(f"brokers/{min_insync.DEFAULT_ENTITY}"), None),
                *((paths.config(f"topics/{t}"), t) for t in sorted(set(topics)))]
    for _, topic, data in multiread.read(client, requests):
        try:
            configs["" if topic is None else "t:" + topic] = codec.decode_config(data)[1]
        except codec.DecodeError:
            continue
    default = configs.get("")
    return {t: min_insync.resolve(t, configs.get("t:" + t), default) for t in topics}
