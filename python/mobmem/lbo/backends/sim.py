"""The simulator back end for LBO — not available yet.

It will run the simulator's collectors on a simulated app and on the simulated GCBench and take
costs from the runtime's attribution (pause time, GC-thread CPU, mutator time). That needs the
managed runtime (issue 3); until it has landed, constructing this back end raises a clear error.
"""

from __future__ import annotations

from mobmem.errors import MobmemError

NOT_AVAILABLE = "LBO back end 'sim' is not available yet: needs the runtime (issue 3); use --backend jvm"


class SimBackend:
    name = "sim"

    def __init__(self, **kw) -> None:
        raise MobmemError(NOT_AVAILABLE)
