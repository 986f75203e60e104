"""LBO back ends: ``jvm`` (real HotSpot JVMs on the host) and ``sim`` (the simulator; not yet)."""
