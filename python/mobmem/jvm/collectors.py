"""HotSpot collectors as LBO configurations: Serial, Parallel, G1, ZGC, Shenandoah, and Epsilon as
the NoGC baseline (``-XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC``, equal -Xms/-Xmx,
``-XX:+AlwaysPreTouch``, a large fixed heap independent of the heap-size axis). Every other
collector gets -Xms = -Xmx = the heap size under study. Which collectors a JDK has is probed, not
assumed (:func:`mobmem.jvm.jdk.supports`). Left out: collector tuning flags, generational ZGC
modes (JDK 21–23 need -XX:+ZGenerational; JDK 24+ has only the generational one)."""

from __future__ import annotations

from dataclasses import dataclass

from mobmem.errors import MobmemError


@dataclass(frozen=True)
class Collector:
    name: str
    flags: tuple[str, ...]
    nogc: bool = False  # heap size is not an independent variable (Epsilon)

    def heap_flags(self, heap_mb: int) -> list[str]:
        return [f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m"] + (["-XX:+AlwaysPreTouch"] if self.nogc else [])


COLLECTORS: dict[str, Collector] = {
    "Serial": Collector("Serial", ("-XX:+UseSerialGC",)),
    "Parallel": Collector("Parallel", ("-XX:+UseParallelGC",)),
    "G1": Collector("G1", ("-XX:+UseG1GC",)),
    "ZGC": Collector("ZGC", ("-XX:+UseZGC",)),
    "Shenandoah": Collector("Shenandoah", ("-XX:+UseShenandoahGC",)),
    "Epsilon": Collector("Epsilon", ("-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC"), nogc=True),
}
_ALIASES = {c.lower(): c for c in COLLECTORS} | {
    "z": "ZGC",
    "nogc": "Epsilon",
    "g1gc": "G1",
    "serialgc": "Serial",
    "parallelgc": "Parallel",
    "shenandoahgc": "Shenandoah",
    "epsilongc": "Epsilon",
}


def get(name: str) -> Collector:
    key = _ALIASES.get(name.strip().lower())
    if key is None:
        raise MobmemError(f"unknown collector {name!r}; known: {', '.join(COLLECTORS)}")
    return COLLECTORS[key]
