"""Lower-bound overhead (LBO) of garbage collection (Cai, Blackburn, Bond, Maas, ISPASS 2022).

- :mod:`.heaps` — minimum-heap bisection and running-ng's heap-sweep spacing rule;
- :mod:`.backend` — the back-end interface (``jvm`` now; ``sim`` once the runtime exists);
- :mod:`.sweep` — invocations interleaved across configurations (seeded shuffle), resumable;
- :mod:`.analysis` — distilled cost, minimum distilled cost, LBO with bootstrap CIs, geomeans;
- :mod:`.report` — tables ("1.169 ±2.58 %"), plots (PNG and SVG) and the Markdown report.
"""
