"""Kill a ``kadmin ... --json`` process at a chosen point of its run (integration tests)."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Sequence
from typing import Any


def kill_when_submitted(command: Sequence[str], env: dict[str, str], batch: int) -> None:
    """Run ``command`` (a ``reassign --json``) and SIGKILL it as soon as it reports batch
    ``batch`` submitted (the batch is then in ZooKeeper); asserts it died of the signal."""
    process: subprocess.Popen[Any] = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                                      text=True)
    assert process.stdout is not None
    for line in process.stdout:
        event = json.loads(line)
        if event["event"] == "batch_submitted" and event["batch"] == batch:
            process.send_signal(signal.SIGKILL)
            break
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
