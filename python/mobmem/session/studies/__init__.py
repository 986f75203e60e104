"""Studies: a paper's experiments re-run on the simulated phone, as one command that writes a
report (``mobmem report --study NAME``).

A study is a list of :class:`Experiment` — a shipped scenario run under named systems over seeds,
with the rows it reports — plus the text of its report. :func:`run` runs every experiment with
:func:`mobmem.session.compare.run_matrix` (worker processes, each run's files under
``OUT/EXPERIMENT/runs/SYSTEM/seed-N/`` as soon as it ends, ``--resume`` after an interruption)
and aggregates each row per system (mean and 95 % CI across seeds, ratio against the first
system with Welch's test). ``--quick`` runs a scaled-down set (fewer systems, one seed, every use
and wait duration scaled down) that finishes in minutes; its numbers show the mechanisms, not the
study's results.
"""

from __future__ import annotations

from mobmem.errors import MobmemError
from mobmem.session.studies.study import Experiment, Row, Study, fmt_stat, fmt_vs, plan, run, stats

__all__ = ["Experiment", "Row", "Study", "fmt_stat", "fmt_vs", "get", "plan", "registry", "run", "stats"]


def registry() -> dict[str, Study]:
    from mobmem.session.studies import acclaim, fleet, thesis

    return {s.name: s for s in (fleet.STUDY, acclaim.STUDY, thesis.STUDY)}


def get(name: str) -> Study:
    studies = registry()
    if name not in studies:
        raise MobmemError(f"--study: unknown study {name!r}; known: {', '.join(studies)}")
    return studies[name]
