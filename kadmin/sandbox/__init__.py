"""A rehearsal cluster: a snapshot loaded into a real ZooKeeper, and a simulated Kafka controller.

Operators rehearse plans against it and kadmin's integration tests use it as the controller, so
the controller does to the three admin znodes exactly what Kafka's does (2.4-3.x by default,
or a release before 2.4 with ``kafka_version``; ZooKeeper mode, as ``KafkaController.scala``
does it) - including the
unkind parts: entries for unknown partitions are dropped, replicas on dead brokers wait, and an
empty or duplicate replica list leaves the reassignment znode behind forever.

The package, module by module:

- :mod:`.loading`: a snapshot written into ZooKeeper as a running cluster would have it;
- :mod:`.controller`: the simulated controller, its election and its worker thread;
- :mod:`.reassignment`, :mod:`.election`, :mod:`.deletion`: what it does with each admin znode;
- :mod:`.cluster`: the cluster as its handlers read and write it;
- :mod:`.copying`, :mod:`.configs`, :mod:`.clock`: the data model - partition bytes copied at
  the bandwidth or the throttle the brokers read from their config znodes, in simulated time;
- :mod:`.model`: its events and the state it keeps per moving partition;
- :mod:`.zkio`: pipelined ZooKeeper I/O;
- :mod:`.box`: the whole sandbox (ZooKeeper + loaded snapshot + controller).
"""

from kadmin.sandbox.box import Sandbox, SandboxSpec
from kadmin.sandbox.clock import ManualClock, ScaledClock
from kadmin.sandbox.controller import SimulatedController
from kadmin.sandbox.loading import controller_of, load_cluster
from kadmin.sandbox.model import ControllerEvent, read_events
from kadmin.sandbox.reassignment import TICK

__all__ = ["TICK", "ControllerEvent", "ManualClock", "Sandbox", "SandboxSpec", "ScaledClock",
           "SimulatedController", "controller_of", "load_cluster", "read_events"]
